/* gw_cli_teamseed.h - the command-line tools' (import, teams rebuild) seed
 * of a period's team membership, blocking: what redis/gw_teamseed.c does on
 * the gateway's loop (core/rc_team_args.h, "a period's membership"). */
#ifndef GW_CLI_TEAMSEED_H
#define GW_CLI_TEAMSEED_H

#include <stddef.h>
#include <stdint.h>

#include "cli/gw_cli_redis.h"
#include "rc_conf.h"
#include "rc_period.h"

/* 1 when reply rep of lua/write.lua or lua/teams.lua says the period's
 * membership is not seeded yet ("team_unseeded" first). */
int gw_cli_teamseed_asked(const redisReply *rep);

/* Seeds b's membership in period p from the latest earlier period's, unless
 * it exists (then nothing is written). Returns 0, or -1 with err filled. */
int gw_cli_teamseed_run(struct gw_cli_redis *r, const struct rc_board *b, const struct rc_period *p, int64_t now_ms,
                        char *err, size_t cap);

#endif
