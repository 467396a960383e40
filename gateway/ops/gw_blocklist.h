/* gw_blocklist.h - a periodic board's block and unblock beyond the period
 * the admin script changed.
 *
 * A periodic board has a blocklist per period, in the period's tag (a script
 * touches one slot), plus the board's list rc:{B|}:blocked that every new
 * period copies on its first write (lua/write.lua, "Blocklists"). After
 * lua/admin.lua blocked or unblocked a member in period P, this brings the
 * board's list, the current period's (when the admin named an earlier P)
 * and the next period's (which a gateway with a clock a little ahead may
 * have seeded already) in line:
 *   block    SADD rc:{B|}:blocked M, then SADD + PEXPIRE on the current
 *            and the next period's lists
 *   unblock  SREM rc:{B|}:blocked M, SREM on P's list again (a seed read
 *            before the first step may have put M back), then on the
 *            current and the next period's lists
 * one command after the other. A board without periods has one list, which
 * the admin script changed: nothing is left to do there. A sharded board's
 * lists are its member's shard's (rc:{B#i|}:blocked, rc:{B#i|P}:blocked,
 * docs/sharded.md): the steps run there.
 */
#ifndef GW_BLOCKLIST_H
#define GW_BLOCKLIST_H

#include <stdint.h>

#include "rc_conf.h"
#include "rc_period.h"
#include "redis/gw_redis.h"

/* code 0 when every step was answered, else RC_E_UNAVAILABLE. */
typedef void gw_blocklist_cb(int code, void *privdata);

/* Runs the steps above for member on board `board` (declared by b,
 * periodic), period p, at now_ms; add 1 blocks, 0 unblocks. Returns 0 (cb
 * runs once, later), or an RC_E_* when nothing was sent (cb does not run).
 * Copies what it keeps. */
int gw_blocklist_spread(struct gw_redis *redis, const struct rc_board *b, const char *board, const struct rc_period *p,
                        int64_t now_ms, const char *member, int add, gw_blocklist_cb *cb, void *privdata);

#endif
