/* gw_write_shard.h - a write to a sharded board (`shards = S`,
 * docs/sharded.md, "Writes").
 *
 * The write runs lua/write.lua on the member's shard "B#i" (i =
 * rc_shard_of(member, S)), exactly as a write to a board of that name:
 * operators, ranges, ties and `req` stay atomic per member, and with
 * ack_replicas the WAIT goes to the shard's node. When the script applied
 * it (ok or duplicate), the member's global rank and the board's seq (the
 * sum of the shards' seqs) are read through store/gw_read on "B" (the
 * merged read), and the result handed on carries the script's score and
 * duplicate flag with that rank and seq. When that read fails the write
 * still stands: the result says rank_unknown (the ack says "rank": null,
 * "rank_unknown": true), never a shard's rank passed off as the board's.
 * Refusals of the script (out_of_range, bad_request, forbidden, and
 * no_record at the writer's idempotency cap: the req's record lives on its
 * member's shard, so a retry with the same member finds it) and errors
 * are handed on as they came.
 */
#ifndef GW_WRITE_SHARD_H
#define GW_WRITE_SHARD_H

#include "redis/gw_write.h"
#include "rc_conf.h"
#include "rc_period.h"
#include "rc_proto.h"

struct gw_app;

/* Sends r (a write to board b, b->shards > 1, period p) to its member's
 * shard, with flags GW_WRITE_F_* (redis/gw_write.h). Borrows app, b, r and p for the call; cb runs exactly once, later,
 * when it returns 0 (with res and err borrowed for the callback only).
 * Otherwise returns an RC_E_* with err filled and cb does not run. */
int gw_write_shard_submit(struct gw_app *app, const struct rc_board *b, const struct rc_request *r,
                          const struct rc_period *p, unsigned flags, gw_write_cb *cb, void *privdata,
                          struct rc_error *err);

#endif
