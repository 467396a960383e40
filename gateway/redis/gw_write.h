/* gw_write.h - one score write: request -> lua/write.lua by EVALSHA -> result.
 * The glue between core/rc_write_args (pure) and a Redis connection. */
#ifndef GW_WRITE_H
#define GW_WRITE_H

#include <stdint.h>

#include <hiredis/hiredis.h>
#include <hiredis/async.h>

#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_write_args.h"

/* code 0: res holds the answer (res->status may still be out_of_range or
 * bad_request from the script, with res->message); otherwise code is an
 * RC_E_* and err says why (RC_E_UNAVAILABLE when the connection dropped
 * before an answer). res and err are borrowed for the callback only. */
typedef void gw_write_cb(int code, const struct rc_write_result *res, const struct rc_error *err,
                         void *privdata);

/* Validates r against board b, then sends the script call (routed by the
 * board's keys). Returns 0
 * when sent (cb will run exactly once), or an RC_E_* with err filled when the
 * request was refused before Redis was asked (cb does not run). b must
 * outlive the call (boards live in the loaded config). */
int gw_write_submit(struct gw_redis *redis, struct gw_script *s, const struct rc_board *b,
                    const struct rc_request *r, const struct rc_period *p, int64_t now_ms, gw_write_cb *cb,
                    void *privdata, struct rc_error *err);

/* As gw_write_submit, and the ack waits until `replicas` replicas have the
 * write (WAIT, at most replicas_timeout_ms): res->replicas says how many
 * did (-1: unknown). replicas 0: no WAIT, res->replicas -1. */
int gw_write_submit_acked(struct gw_redis *redis, struct gw_script *s, const struct rc_board *b,
                          const struct rc_request *r, const struct rc_period *p, int64_t now_ms, int replicas,
                          int64_t replicas_timeout_ms, gw_write_cb *cb, void *privdata, struct rc_error *err);

/* Flags of gw_write_submit_as (and gw_enqueue_submit). */
#define GW_WRITE_F_NO_NEW_RECORD (1u << 0) /* the writer is at its idempotency cap: only a req with a
                                              record is answered, else res->no_record and nothing
                                              written (rc_write_args_no_new_record) */

/* As gw_write_submit_acked, on the keys of the board stored as `store`
 * (borrowed for the call): a sharded board's member's shard "B#i"
 * (core/rc_shard.h), with flags GW_WRITE_F_*. The call and its WAIT are
 * routed by those keys, so they reach the shard's node.
 * gw_write_submit_acked is this with store = r->board and no flags. */
int gw_write_submit_as(struct gw_redis *redis, struct gw_script *s, const struct rc_board *b,
                       const struct rc_request *r, const struct rc_period *p, const char *store, int64_t now_ms,
                       int replicas, int64_t replicas_timeout_ms, unsigned flags, gw_write_cb *cb, void *privdata,
                       struct rc_error *err);

/* Writes a fresh random epoch id (core/rc_epoch.h, 2 * RC_EPOCH_RANDOM_BYTES
 * hex characters and a NUL) into out, for a script that may start a board's
 * history (lua/write.lua, lua/admin.lua). Without randomness (uv_random
 * failed) out is "" and the script makes an id from the server's time. */
void gw_write_new_epoch(char *out);

/* Decodes the script's reply (borrowed) into res. Returns 0, or RC_E_INTERNAL
 * (err filled) when Redis answered an error or a reply of the wrong shape.
 * Used by gw_write_submit and by tests that call the script directly. */
int gw_write_parse_reply(const struct rc_board *b, const redisReply *reply, struct rc_write_result *res,
                         struct rc_error *err);

#endif
