/* rc_decay.c - buckets, weights, the scale schedule and the keys of decaying
 * boards (see rc_decay.h). int64 throughout, floor division, and overflow
 * checked wherever a caller-given instant meets a span, so an absurd clock
 * gives an error or a clamped answer, never undefined behaviour. */
#include "rc_decay.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "rc_err.h"
#include "rc_keys.h"

/* C division truncates toward zero; buckets need floor (b > 0). */
static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if (a % b < 0)
        q--;
    return q;
}

static int buckets_valid(const struct rc_decay_spec *d)
{
    return d && d->kind == RC_DECAY_BUCKETS && d->bucket_ms > 0 && d->window_ms >= d->bucket_ms &&
           d->window_ms % d->bucket_ms == 0 && d->window_ms / d->bucket_ms <= RC_DECAY_MAX_BUCKETS &&
           (d->weighting != RC_WEIGHT_HALFLIFE || d->half_life_ms > 0);
}

int rc_decay_bucket_of(const struct rc_decay_spec *d, int64_t t_ms, int64_t *index)
{
    if (!buckets_valid(d) || !index)
        return RC_E_BAD_REQUEST;
    *index = floor_div(t_ms, d->bucket_ms);
    return 0;
}

unsigned rc_decay_nbuckets(const struct rc_decay_spec *d)
{
    return buckets_valid(d) ? (unsigned)(d->window_ms / d->bucket_ms) : 0;
}

double rc_decay_weight(const struct rc_decay_spec *d, unsigned age)
{
    unsigned n = rc_decay_nbuckets(d);
    if (age >= n)
        return 0.0;
    if (d->weighting == RC_WEIGHT_HALFLIFE)
        return pow(0.5, (double)age * (double)d->bucket_ms / (double)d->half_life_ms);
    return (double)(n - age) / (double)n;
}

int rc_decay_window(const struct rc_decay_spec *d, int64_t now_ms, struct rc_decay_bucket *out, unsigned cap,
                    unsigned *n)
{
    unsigned nb = rc_decay_nbuckets(d);
    int64_t cur;
    if (nb == 0 || !out || !n || cap < nb || rc_decay_bucket_of(d, now_ms, &cur) != 0)
        return RC_E_BAD_REQUEST;
    /* the oldest index, cur - (nb - 1), must not wrap (only reachable with
     * tiny spans near the start of int64 time) */
    if (cur < INT64_MIN + (int64_t)nb)
        return RC_E_BAD_REQUEST;
    for (unsigned age = 0; age < nb; age++) {
        out[age].index = cur - (int64_t)age;
        out[age].age = age;
        out[age].weight = rc_decay_weight(d, age);
    }
    *n = nb;
    return 0;
}

int64_t rc_decay_bucket_ttl_ms(const struct rc_decay_spec *d)
{
    return buckets_valid(d) ? d->window_ms + d->bucket_ms : 0;
}

int64_t rc_decay_lock_ttl_ms(const struct rc_decay_spec *d)
{
    return d && d->rebuild_ms > 0 ? RC_DECAY_LOCK_FACTOR * d->rebuild_ms : 0;
}

int rc_decay_scale_due(const struct rc_decay_spec *d, int has_last, int64_t last_ms, int64_t now_ms,
                       int64_t *periods, int64_t *next_ms)
{
    int64_t every, elapsed, k, next;
    if (!d || d->kind != RC_DECAY_SCALE || d->scale_every_ms <= 0 || !periods || !next_ms)
        return RC_E_BAD_REQUEST;
    every = d->scale_every_ms;
    if (!has_last) {
        /* the first look starts the schedule: nothing is due yet */
        *periods = 0;
        *next_ms = __builtin_add_overflow(now_ms, every, &next) ? INT64_MAX : next;
        return 0;
    }
    if (now_ms < last_ms || __builtin_sub_overflow(now_ms, last_ms, &elapsed))
        elapsed = now_ms < last_ms ? -1 : INT64_MAX;
    k = elapsed < 0 ? 0 : elapsed / every;
    /* next = last + (k + 1) * every, clamped */
    if (__builtin_mul_overflow(k + 1, every, &next) || __builtin_add_overflow(last_ms, next, &next))
        next = INT64_MAX;
    *periods = k;
    *next_ms = next;
    return 0;
}

int rc_decay_key(char *out, size_t cap, const char *board, enum rc_decay_key which, int64_t index)
{
    static const char *const suffix[] = {
        [RC_DK_BUCKET] = "b",          [RC_DK_READ] = "z",          [RC_DK_TMP] = "tmp",
        [RC_DK_LOCK] = "lock",         [RC_DK_REBUILDS] = "rebuilds", [RC_DK_SCALED_AT] = "scaled_at",
        [RC_DK_SEQ] = "seq",
    };
    char num[24];
    if (!out || !board || (unsigned)which > RC_DK_SEQ)
        return RC_E_INTERNAL;
    if (which != RC_DK_BUCKET)
        return rc_keys_board(out, cap, board, "", suffix[which], NULL);
    snprintf(num, sizeof num, "%" PRId64, index);
    return rc_keys_board(out, cap, board, "", suffix[which], num);
}
