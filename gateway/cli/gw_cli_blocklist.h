/* gw_cli_blocklist.h - the blocklist side of an import's writes (lua/write.lua,
 * "Blocklists"): seeding a period's blocklist from the board's on the
 * period's first write, as redis/gw_write.c does for the gateway, and asking
 * the blocklist about a batch's members before it is sent. */
#ifndef GW_CLI_BLOCKLIST_H
#define GW_CLI_BLOCKLIST_H

#include <stddef.h>

#include "cli/gw_cli_redis.h"

/* Sends the write-script call `call` (KEYS[8] = period_list); when the script
 * answers { "unseeded" }, reads the board's blocklist `seed_from` and sends
 * the call again with it as the seed, then reads the board's list once more
 * and applies what changed meanwhile (a block or unblock made while we
 * seeded) to period_list, warning on stderr when it cannot. Returns the
 * final answer (the caller frees it), or NULL with err filled. */
redisReply *gw_cli_blocklist_write_seeded(struct gw_cli_redis *r, const struct gw_cli_cmd *call, const char *seed_from,
                                const char *period_list, char *err, size_t cap);

/* The index of the first of members[0..n) on the set `list` (SMISMEMBER,
 * one command), n when none. Returns 0, or -1 with err filled. */
int gw_cli_blocklist_first_blocked(struct gw_cli_redis *r, const char *list, const char *const *members, size_t n, size_t *at,
                         char *err, size_t cap);

#endif
