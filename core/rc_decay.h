/* rc_decay.h - the arithmetic of decaying boards (DESIGN.md, "Hot (decaying)
 * boards"): which bucket an instant falls in, the window's buckets and their
 * weights, the scale schedule, and the Redis keys. Pure: time is always a
 * parameter (ms since the Unix epoch, UTC).
 *
 * decay = buckets. Buckets are aligned on the epoch: bucket i covers
 * [i * bucket_span, (i + 1) * bucket_span), i = floor(t / bucket_span). The
 * window at `now` holds N = window / bucket_span buckets: the current one and
 * the N - 1 before it. A bucket's age is 0 for the current bucket, 1 for the
 * one before, ..., N - 1 for the oldest. Weights (newer heavier):
 *   linear     w(age) = (N - age) / N          newest 1, oldest 1/N
 *   halflife   w(age) = 0.5^(age * bucket_span / half_life)
 * A member's score on the read board is sum over the window of w(age) times
 * its points in that bucket.
 *
 * decay = scale. The board is multiplied by scale_factor once per scale_every.
 * The schedule starts when a gateway first sees the board (scaled_at is set,
 * nothing is scaled); from then on k = floor((now - scaled_at) / scale_every)
 * periods are due at `now`, the board is multiplied by factor^k, and
 * scaled_at moves on by k * scale_every (so the phase never drifts, and a
 * schedule missed while every gateway was down is caught up in one step).
 *
 * Keys, all with the board's hash tag {B|} so a cluster keeps them in one slot
 * (decaying boards have no periods, so P is always empty):
 *   rc:{B|}:b:<index>   a bucket (sorted set of points), expires window + span after its last write
 *   rc:{B|}:z           the read board, what viewers see (rebuilt; scaled in place)
 *   rc:{B|}:tmp         where a rebuild unions before it RENAMEs onto :z
 *   rc:{B|}:lock        the rebuild lock (value: the owner's token)
 *   rc:{B|}:rebuilds    how many rebuilds ran (a counter)
 *   rc:{B|}:scaled_at   when the scale schedule last moved (ms)
 *   rc:{B|}:seq         board version, bumped by each rebuild and scale
 */
#ifndef RC_DECAY_H
#define RC_DECAY_H

#include <stddef.h>
#include <stdint.h>

#include "rc_layout.h"

#define RC_DECAY_MAX_BUCKETS 1000 /* the config's bound on window / bucket_span */
#define RC_DECAY_LOCK_FACTOR 3    /* lock TTL = 3 x rebuild_every */

enum rc_decay_key {
    RC_DK_BUCKET = 0, /* rc:{B|}:b:<index> */
    RC_DK_READ,       /* rc:{B|}:z */
    RC_DK_TMP,        /* rc:{B|}:tmp */
    RC_DK_LOCK,       /* rc:{B|}:lock */
    RC_DK_REBUILDS,   /* rc:{B|}:rebuilds */
    RC_DK_SCALED_AT,  /* rc:{B|}:scaled_at */
    RC_DK_SEQ         /* rc:{B|}:seq */
};

/* One bucket of a window. */
struct rc_decay_bucket {
    int64_t index;  /* floor(t / bucket_span) */
    unsigned age;   /* 0 = current bucket */
    double weight;  /* see the banner */
};

/* The bucket that instant t_ms falls in (floor division, so instants before
 * 1970 work too). Returns 0, or RC_E_BAD_REQUEST when d is not a valid
 * decay = buckets spec. */
int rc_decay_bucket_of(const struct rc_decay_spec *d, int64_t t_ms, int64_t *index);

/* N = window / bucket_span (1..RC_DECAY_MAX_BUCKETS), or 0 when d is not a
 * valid decay = buckets spec. */
unsigned rc_decay_nbuckets(const struct rc_decay_spec *d);

/* The weight of a bucket of that age (0 .. N - 1); 0.0 for an age outside the
 * window or an invalid spec. */
double rc_decay_weight(const struct rc_decay_spec *d, unsigned age);

/* The window at now_ms, newest bucket first, into out[0..cap). Returns 0 with
 * *n = N, or RC_E_BAD_REQUEST (invalid spec, or cap < N; out untouched). */
int rc_decay_window(const struct rc_decay_spec *d, int64_t now_ms, struct rc_decay_bucket *out, unsigned cap,
                    unsigned *n);

/* How long a bucket lives after a write to it: window + bucket_span, so it
 * outlives the last rebuild that still counts it. */
int64_t rc_decay_bucket_ttl_ms(const struct rc_decay_spec *d);

/* The rebuild lock's TTL: RC_DECAY_LOCK_FACTOR x rebuild_every. An owner that
 * dies is replaced at most this long after its last renewal. */
int64_t rc_decay_lock_ttl_ms(const struct rc_decay_spec *d);

/* The scale schedule (decay = scale). last_ms is scaled_at, has_last 0 when
 * the schedule has not started. Sets *periods to the number of periods due at
 * now_ms (0: nothing to do; also 0 when the schedule has not started, which
 * the first call starts) and *next_ms to when the next one falls due. Returns
 * 0, or RC_E_BAD_REQUEST when d is not a valid decay = scale spec. */
int rc_decay_scale_due(const struct rc_decay_spec *d, int has_last, int64_t last_ms, int64_t now_ms,
                       int64_t *periods, int64_t *next_ms);

/* Writes the key `which` of board `board` into out[cap]; index is used by
 * RC_DK_BUCKET only. Returns 0, or RC_E_INTERNAL when it does not fit.
 * Borrows board. */
int rc_decay_key(char *out, size_t cap, const char *board, enum rc_decay_key which, int64_t index);

#endif
