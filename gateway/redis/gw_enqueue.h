/* gw_enqueue.h - one write to a write_mode = queued board: request ->
 * lua/enqueue.lua by EVALSHA -> queued, duplicate, full or blocked. The glue
 * between core/rc_queue (pure) and a Redis connection; the consumer that
 * applies the entries is jobs/gw_queue.c. */
#ifndef GW_ENQUEUE_H
#define GW_ENQUEUE_H

#include <stdint.h>

#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_queue.h"

/* code 0: res holds the answer (res->status says queued, duplicate, full or
 * forbidden); otherwise an RC_E_* with err filled (RC_E_UNAVAILABLE: the
 * connection dropped before an answer, and the write may or may not be
 * queued: a retry with the same req is answered duplicate if it was).
 * replicas: how many replicas confirmed the entry (-1 when not asked or not
 * known). res and err are borrowed for the callback only. */
typedef void gw_enqueue_cb(int code, const struct rc_queue_result *res, int replicas, const struct rc_error *err,
                           void *privdata);

/* Validates r against queued board b and sends the enqueue call (routed by
 * the board's slot), with flags GW_WRITE_F_* (redis/gw_write.h: at the
 * idempotency cap, RC_QUEUE_NO_RECORD for a req without a record); with replicas > 0 the answer waits for that many
 * replicas (WAIT, at most replicas_timeout_ms). Returns 0 when sent (cb runs
 * exactly once), or an RC_E_* with err filled when refused before Redis was
 * asked (cb does not run). b must outlive the call. */
int gw_enqueue_submit(struct gw_redis *redis, struct gw_script *s, const struct rc_board *b,
                      const struct rc_request *r, int64_t now_ms, int replicas, int64_t replicas_timeout_ms,
                      unsigned flags, gw_enqueue_cb *cb, void *privdata, struct rc_error *err);

#endif
