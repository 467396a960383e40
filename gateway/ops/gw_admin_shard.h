/* gw_admin_shard.h - admin operations on a sharded board (`shards = S`,
 * docs/sharded.md, "Admin operations"), through lua/admin.lua on shard
 * names "B#i" as on any board:
 *   remove, unblock  the member's shard (its set, fields and blocklist);
 *   reverse          the shards in order until one holds the req's marker
 *                    (a req is remembered by the shard of the member it
 *                    wrote); none: bad_request as on any board;
 *   reset            every shard, one after the other; answered once all
 *                    are, with seq the sum of their seqs. A failure stops
 *                    it and says how many shards were reset: sending the
 *                    reset again resets them all and finishes the job.
 * After a remove, unblock or reverse the board's seq (and a reversal's
 * global rank) is read through store/gw_read on "B" (the merged read). If
 * that read fails the answer is unavailable, saying the operation was
 * applied: each of these is safe to send again (a second remove or unblock
 * changes nothing, a second reverse answers duplicate).
 */
#ifndef GW_ADMIN_SHARD_H
#define GW_ADMIN_SHARD_H

#include <stdint.h>

#include "rc_admin_args.h"
#include "rc_conf.h"
#include "rc_period.h"
#include "rc_proto.h"

struct gw_app;

/* code 0: res is the operation's answer for the whole board (seq merged;
 * res->status may be a refusal with res->detail). Otherwise an RC_E_* and
 * message says why. res and message are borrowed for the callback only. */
typedef void gw_admin_shard_cb(int code, const struct rc_admin_result *res, const char *message, void *privdata);

/* Runs r (remove, unblock, reverse or reset on board b, b->shards > 1,
 * period p) at now_ms with the reversal's slot and the period's ttl, as
 * above. Copies what it keeps of r and p; borrows app and b. Returns 0 (cb
 * runs once, later) or an RC_E_* with err filled (cb does not run). */
int gw_admin_shard_run(struct gw_app *app, const struct rc_board *b, const struct rc_request *r,
                       const struct rc_period *p, int64_t now_ms, uint64_t slot, int64_t ttl_ms,
                       gw_admin_shard_cb *cb, void *privdata, struct rc_error *err);

#endif
