/* test_decay.c - buckets, weights, the scale schedule and the keys of
 * decaying boards (core/rc_decay.c).
 *
 * The property test builds random hot boards (linear and halflife) and checks
 * the promise of a hot board on a simulated rebuild (the weighted sum over the
 * window, as lua/rebuild.lua's ZUNIONSTORE computes it): an item that got P
 * points k buckets ago ranks below an item with fewer points Q in the current
 * bucket exactly when Q > P * w(k). Its seed is printed and can be replaced
 * with RC_TEST_SEED=<n> to reproduce a failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rc_decay.h"
#include "rc_err.h"
#include "rc_keys.h"

#define SEC_MS INT64_C(1000)
#define HOUR_MS INT64_C(3600000)
#define DAY_MS INT64_C(86400000)
#define T2026 INT64_C(1767225600000) /* 2026-01-01T00:00:00Z */
#define PROPERTY_SAMPLES 20000

/* cmocka prints int64 mismatches as unsigned; this shows them signed. */
#define assert_i64(a, b)                                                                     \
    do {                                                                                     \
        int64_t got_ = (a), want_ = (b);                                                     \
        if (got_ != want_)                                                                   \
            fail_msg("%s is %lld, expected %lld", #a, (long long)got_, (long long)want_);   \
    } while (0)

#define assert_close(a, b)                                                                   \
    do {                                                                                     \
        double got_ = (a), want_ = (b);                                                      \
        if (got_ - want_ > 1e-12 || want_ - got_ > 1e-12)                                    \
            fail_msg("%s is %.17g, expected %.17g", #a, got_, want_);                        \
    } while (0)

/* The shipped `hot` board: hourly buckets over 24 h, linear. */
static struct rc_decay_spec hot(void)
{
    return (struct rc_decay_spec){
        .kind = RC_DECAY_BUCKETS,
        .bucket_ms = HOUR_MS,
        .window_ms = 24 * HOUR_MS,
        .weighting = RC_WEIGHT_LINEAR,
        .half_life_ms = 6 * HOUR_MS,
        .rebuild_ms = 5 * SEC_MS,
        .result_ttl_ms = 30 * SEC_MS,
    };
}

static struct rc_decay_spec scaled(double f, int64_t every)
{
    return (struct rc_decay_spec){.kind = RC_DECAY_SCALE, .scale_factor = f, .scale_every_ms = every};
}

/* ---- buckets --------------------------------------------------------------- */

static void test_bucket_index_is_floor_of_epoch_time_over_span(void **state)
{
    (void)state;
    struct rc_decay_spec d = hot();
    int64_t i;
    assert_int_equal(rc_decay_bucket_of(&d, 0, &i), 0);
    assert_i64(i, 0);
    assert_int_equal(rc_decay_bucket_of(&d, HOUR_MS - 1, &i), 0);
    assert_i64(i, 0);
    assert_int_equal(rc_decay_bucket_of(&d, HOUR_MS, &i), 0);
    assert_i64(i, 1);
    assert_int_equal(rc_decay_bucket_of(&d, T2026, &i), 0);
    assert_i64(i, 490896); /* 2026-01-01T00Z is hour 490,896 of the epoch */
    assert_int_equal(rc_decay_bucket_of(&d, T2026 - 1, &i), 0);
    assert_i64(i, 490895);
    /* before 1970: floor, not truncation */
    assert_int_equal(rc_decay_bucket_of(&d, -1, &i), 0);
    assert_i64(i, -1);
    assert_int_equal(rc_decay_bucket_of(&d, -HOUR_MS, &i), 0);
    assert_i64(i, -1);
    assert_int_equal(rc_decay_bucket_of(&d, -HOUR_MS - 1, &i), 0);
    assert_i64(i, -2);
    assert_int_equal(rc_decay_bucket_of(&d, INT64_MIN, &i), 0);
    assert_int_equal(rc_decay_bucket_of(&d, INT64_MAX, &i), 0);
    assert_i64(i, INT64_MAX / HOUR_MS);
}

static void test_invalid_specs_have_no_buckets(void **state)
{
    (void)state;
    int64_t i;
    struct rc_decay_bucket w[4];
    unsigned n;
    struct rc_decay_spec d = hot();
    d.kind = RC_DECAY_SCALE;
    assert_int_equal(rc_decay_bucket_of(&d, T2026, &i), RC_E_BAD_REQUEST);
    assert_int_equal(rc_decay_nbuckets(&d), 0);
    assert_true(rc_decay_weight(&d, 0) == 0.0);
    d = hot();
    d.window_ms = 90 * 60 * SEC_MS; /* not a multiple of the span */
    assert_int_equal(rc_decay_nbuckets(&d), 0);
    d = hot();
    d.bucket_ms = 0;
    assert_int_equal(rc_decay_bucket_of(&d, T2026, &i), RC_E_BAD_REQUEST);
    d = hot();
    d.window_ms = 1001 * HOUR_MS;
    assert_int_equal(rc_decay_nbuckets(&d), 0);
    d = hot();
    d.weighting = RC_WEIGHT_HALFLIFE;
    d.half_life_ms = 0;
    assert_int_equal(rc_decay_nbuckets(&d), 0);
    d = hot();
    assert_int_equal(rc_decay_bucket_of(NULL, T2026, &i), RC_E_BAD_REQUEST);
    assert_int_equal(rc_decay_bucket_of(&d, T2026, NULL), RC_E_BAD_REQUEST);
    /* cap below N: refused, out untouched */
    memset(w, 0x5a, sizeof w);
    assert_int_equal(rc_decay_window(&d, T2026, w, 4, &n), RC_E_BAD_REQUEST);
    assert_i64(w[0].index, 0x5a5a5a5a5a5a5a5aLL);
}

static void test_window_lists_current_bucket_and_the_ones_before_newest_first(void **state)
{
    (void)state;
    struct rc_decay_spec d = hot();
    struct rc_decay_bucket w[RC_DECAY_MAX_BUCKETS];
    unsigned n = 0;
    assert_int_equal(rc_decay_nbuckets(&d), 24);
    /* 13:59:59.999 on 2026-01-01 is in bucket 490896 + 13 */
    assert_int_equal(rc_decay_window(&d, T2026 + 14 * HOUR_MS - 1, w, RC_DECAY_MAX_BUCKETS, &n), 0);
    assert_int_equal(n, 24);
    for (unsigned age = 0; age < 24; age++) {
        assert_i64(w[age].index, 490909 - (int64_t)age);
        assert_int_equal(w[age].age, age);
    }
    /* one ms later a new bucket opens and the oldest leaves the window */
    assert_int_equal(rc_decay_window(&d, T2026 + 14 * HOUR_MS, w, RC_DECAY_MAX_BUCKETS, &n), 0);
    assert_i64(w[0].index, 490910);
    assert_i64(w[23].index, 490887);
    /* a window of one bucket */
    d.window_ms = d.bucket_ms;
    assert_int_equal(rc_decay_window(&d, T2026, w, 1, &n), 0);
    assert_int_equal(n, 1);
    assert_i64(w[0].index, 490896);
    assert_true(w[0].weight == 1.0);
}

static void test_linear_weights_run_from_one_down_to_one_over_n(void **state)
{
    (void)state;
    struct rc_decay_spec d = hot();
    struct rc_decay_bucket w[RC_DECAY_MAX_BUCKETS];
    unsigned n;
    assert_int_equal(rc_decay_window(&d, T2026, w, RC_DECAY_MAX_BUCKETS, &n), 0);
    assert_true(w[0].weight == 1.0);
    assert_close(w[1].weight, 23.0 / 24.0);
    assert_close(w[12].weight, 0.5);
    assert_close(w[23].weight, 1.0 / 24.0);
    for (unsigned age = 0; age < 24; age++)
        assert_close(w[age].weight, (24.0 - age) / 24.0);
    /* outside the window: weight 0 */
    assert_true(rc_decay_weight(&d, 24) == 0.0);
}

static void test_halflife_weights_halve_every_half_life(void **state)
{
    (void)state;
    struct rc_decay_spec d = hot();
    d.weighting = RC_WEIGHT_HALFLIFE;
    d.half_life_ms = 6 * HOUR_MS;
    assert_true(rc_decay_weight(&d, 0) == 1.0);
    assert_close(rc_decay_weight(&d, 6), 0.5);
    assert_close(rc_decay_weight(&d, 12), 0.25);
    assert_close(rc_decay_weight(&d, 18), 0.125);
    assert_close(rc_decay_weight(&d, 3), 0.70710678118654757); /* 2^-0.5 */
    /* a half-life shorter than a bucket: the previous bucket counts a quarter */
    d.half_life_ms = 30 * 60 * SEC_MS;
    assert_close(rc_decay_weight(&d, 1), 0.25);
    for (unsigned age = 1; age < 24; age++)
        assert_true(rc_decay_weight(&d, age) < rc_decay_weight(&d, age - 1));
}

static void test_ttls_of_buckets_and_lock(void **state)
{
    (void)state;
    struct rc_decay_spec d = hot();
    /* a bucket outlives the last rebuild that counts it */
    assert_i64(rc_decay_bucket_ttl_ms(&d), 25 * HOUR_MS);
    assert_i64(rc_decay_lock_ttl_ms(&d), 15 * SEC_MS);
    d.rebuild_ms = 200;
    assert_i64(rc_decay_lock_ttl_ms(&d), 600);
    d.kind = RC_DECAY_NONE;
    assert_i64(rc_decay_bucket_ttl_ms(&d), 0);
}

/* ---- scale schedule -------------------------------------------------------- */

static void test_scale_schedule_starts_at_first_look_without_scaling(void **state)
{
    (void)state;
    struct rc_decay_spec d = scaled(0.5, HOUR_MS);
    int64_t k = -1, next = 0;
    assert_int_equal(rc_decay_scale_due(&d, 0, 0, T2026 + 123, &k, &next), 0);
    assert_i64(k, 0);
    assert_i64(next, T2026 + 123 + HOUR_MS);
}

static void test_scale_is_due_once_per_period_and_keeps_its_phase(void **state)
{
    (void)state;
    struct rc_decay_spec d = scaled(0.5, HOUR_MS);
    int64_t k, next;
    int64_t last = T2026 + 5000;
    assert_int_equal(rc_decay_scale_due(&d, 1, last, last + HOUR_MS - 1, &k, &next), 0);
    assert_i64(k, 0);
    assert_i64(next, last + HOUR_MS);
    assert_int_equal(rc_decay_scale_due(&d, 1, last, last + HOUR_MS, &k, &next), 0);
    assert_i64(k, 1);
    assert_i64(next, last + 2 * HOUR_MS);
    /* late by 59 minutes: still one period, and the next one stays on the hour */
    assert_int_equal(rc_decay_scale_due(&d, 1, last, last + HOUR_MS + 59 * 60 * SEC_MS, &k, &next), 0);
    assert_i64(k, 1);
    assert_i64(next, last + 2 * HOUR_MS);
    /* every gateway was down for 2.5 periods: caught up in one step */
    assert_int_equal(rc_decay_scale_due(&d, 1, last, last + 5 * HOUR_MS / 2, &k, &next), 0);
    assert_i64(k, 2);
    assert_i64(next, last + 3 * HOUR_MS);
    /* a clock behind the last scale: nothing due */
    assert_int_equal(rc_decay_scale_due(&d, 1, last, last - DAY_MS, &k, &next), 0);
    assert_i64(k, 0);
    assert_i64(next, last + HOUR_MS);
}

static void test_scale_schedule_refuses_bad_specs_and_survives_extremes(void **state)
{
    (void)state;
    struct rc_decay_spec d = scaled(0.5, HOUR_MS);
    int64_t k, next;
    struct rc_decay_spec bad = hot();
    assert_int_equal(rc_decay_scale_due(&bad, 1, 0, 0, &k, &next), RC_E_BAD_REQUEST);
    bad = scaled(0.5, 0);
    assert_int_equal(rc_decay_scale_due(&bad, 1, 0, 0, &k, &next), RC_E_BAD_REQUEST);
    assert_int_equal(rc_decay_scale_due(&d, 1, INT64_MIN, INT64_MAX, &k, &next), 0);
    assert_true(k > 0);
    assert_i64(next, INT64_MAX);
    assert_int_equal(rc_decay_scale_due(&d, 0, 0, INT64_MAX, &k, &next), 0);
    assert_i64(next, INT64_MAX);
}

/* ---- keys ---------------------------------------------------------------------- */

static void test_keys_carry_the_board_hash_tag(void **state)
{
    (void)state;
    char k[RC_KEY_MAX];
    assert_int_equal(rc_decay_key(k, sizeof k, "hot", RC_DK_BUCKET, 490896), 0);
    assert_string_equal(k, "rc:{hot|}:b:490896");
    assert_int_equal(rc_decay_key(k, sizeof k, "hot", RC_DK_BUCKET, -3), 0);
    assert_string_equal(k, "rc:{hot|}:b:-3");
    assert_int_equal(rc_decay_key(k, sizeof k, "hot", RC_DK_READ, 0), 0);
    assert_string_equal(k, "rc:{hot|}:z");
    assert_int_equal(rc_decay_key(k, sizeof k, "hot", RC_DK_TMP, 0), 0);
    assert_string_equal(k, "rc:{hot|}:tmp");
    assert_int_equal(rc_decay_key(k, sizeof k, "hot", RC_DK_LOCK, 0), 0);
    assert_string_equal(k, "rc:{hot|}:lock");
    assert_int_equal(rc_decay_key(k, sizeof k, "hot", RC_DK_REBUILDS, 0), 0);
    assert_string_equal(k, "rc:{hot|}:rebuilds");
    assert_int_equal(rc_decay_key(k, sizeof k, "hot", RC_DK_SCALED_AT, 0), 0);
    assert_string_equal(k, "rc:{hot|}:scaled_at");
    assert_int_equal(rc_decay_key(k, sizeof k, "hot", RC_DK_SEQ, 0), 0);
    assert_string_equal(k, "rc:{hot|}:seq");
    /* too small a buffer, or an unknown key: refused */
    assert_int_equal(rc_decay_key(k, 10, "hot", RC_DK_LOCK, 0), RC_E_INTERNAL);
    assert_int_equal(rc_decay_key(k, sizeof k, "hot", (enum rc_decay_key)99, 0), RC_E_INTERNAL);
}

/* ---- property ---------------------------------------------------------------- */

struct rng {
    uint64_t s;
};

/* splitmix64: tiny, full-period, good enough to spread test inputs. */
static uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static int64_t rng_range(struct rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo));
}

struct write {
    int64_t at_ms;
    double points;
};

/* A member's score after a rebuild at now: the weighted sum of the points it
 * got in each bucket of the window (ZUNIONSTORE ... WEIGHTS, AGGREGATE SUM). */
static double rebuilt_score(const struct rc_decay_spec *d, int64_t now, const struct write *w, size_t nw)
{
    struct rc_decay_bucket win[RC_DECAY_MAX_BUCKETS];
    unsigned n;
    double sum = 0;
    assert_int_equal(rc_decay_window(d, now, win, RC_DECAY_MAX_BUCKETS, &n), 0);
    for (unsigned b = 0; b < n; b++) {
        double in_bucket = 0;
        for (size_t i = 0; i < nw; i++) {
            int64_t idx;
            assert_int_equal(rc_decay_bucket_of(d, w[i].at_ms, &idx), 0);
            if (idx == win[b].index)
                in_bucket += w[i].points;
        }
        sum += win[b].weight * in_bucket;
    }
    return sum;
}

static struct rc_decay_spec random_hot(struct rng *r)
{
    struct rc_decay_spec d = hot();
    static const int64_t spans[] = {SEC_MS, 60 * SEC_MS, 5 * 60 * SEC_MS, HOUR_MS, DAY_MS};
    d.bucket_ms = spans[rng_next(r) % 5];
    d.window_ms = d.bucket_ms * rng_range(r, 2, 200);
    if (rng_next(r) % 2) {
        d.weighting = RC_WEIGHT_HALFLIFE;
        d.half_life_ms = rng_range(r, 1, 50) * d.bucket_ms / rng_range(r, 1, 5);
        if (d.half_life_ms < SEC_MS)
            d.half_life_ms = SEC_MS;
    }
    return d;
}

static void test_property_hot_now_beats_more_points_long_ago(void **state)
{
    (void)state;
    const char *env = getenv("RC_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : UINT64_C(20260101);
    struct rng r = {seed};
    unsigned checked = 0;
    printf("test_decay: property seed %llu (set RC_TEST_SEED to change)\n", (unsigned long long)seed);
    for (int i = 0; i < PROPERTY_SAMPLES; i++) {
        struct rc_decay_spec d = random_hot(&r);
        unsigned n = rc_decay_nbuckets(&d);
        assert_true(n >= 2);
        unsigned k = (unsigned)rng_range(&r, 1, n);          /* the old item's age, in buckets */
        int64_t now = rng_range(&r, T2026, T2026 + 3650 * DAY_MS);
        int64_t offset = now - (now / d.bucket_ms) * d.bucket_ms; /* same place in its bucket */
        int64_t then = now - (int64_t)k * d.bucket_ms;
        assert_true(then - (then / d.bucket_ms) * d.bucket_ms == offset);
        double wk = rc_decay_weight(&d, k);
        assert_true(wk > 0 && wk < 1);
        double p = (double)rng_range(&r, 2, 1000000);
        /* a fresh item with fewer points than the old one got: P * w(k) < Q < P */
        double q_lo = (double)(int64_t)(p * wk) + 1;
        if (q_lo >= p)
            continue;
        double q = (double)rng_range(&r, (int64_t)q_lo, (int64_t)p);
        struct write old_item[] = {{then, p}};
        struct write new_item[] = {{now, q}};
        double old_score = rebuilt_score(&d, now, old_item, 1);
        double new_score = rebuilt_score(&d, now, new_item, 1);
        if (!(q > p * wk) || !(new_score > old_score))
            fail_msg("seed %llu sample %d: Q=%.0f P=%.0f k=%u w=%.17g scores %.17g vs %.17g",
                     (unsigned long long)seed, i, q, p, k, wk, new_score, old_score);
        assert_true(q < p);
        /* and the other way round: fewer than P * w(k) fresh points lose */
        double q_small = (double)(int64_t)(p * wk);
        if (q_small >= 1 && q_small < p * wk) {
            struct write small_item[] = {{now, q_small}};
            assert_true(rebuilt_score(&d, now, small_item, 1) < old_score);
        }
        /* the old points leave the board once their bucket leaves the window */
        assert_true(rebuilt_score(&d, then + d.window_ms, old_item, 1) == 0.0);
        checked++;
    }
    assert_true(checked > PROPERTY_SAMPLES / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket_index_is_floor_of_epoch_time_over_span),
        cmocka_unit_test(test_invalid_specs_have_no_buckets),
        cmocka_unit_test(test_window_lists_current_bucket_and_the_ones_before_newest_first),
        cmocka_unit_test(test_linear_weights_run_from_one_down_to_one_over_n),
        cmocka_unit_test(test_halflife_weights_halve_every_half_life),
        cmocka_unit_test(test_ttls_of_buckets_and_lock),
        cmocka_unit_test(test_scale_schedule_starts_at_first_look_without_scaling),
        cmocka_unit_test(test_scale_is_due_once_per_period_and_keeps_its_phase),
        cmocka_unit_test(test_scale_schedule_refuses_bad_specs_and_survives_extremes),
        cmocka_unit_test(test_keys_carry_the_board_hash_tag),
        cmocka_unit_test(test_property_hot_now_beats_more_points_long_ago),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
