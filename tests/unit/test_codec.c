/* test_codec.c - exact score layout: fits-53-bits checks, encode/decode round
 * trips and ranking order, by example and by property over random values. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_codec.h"

#define DAY_MS 86400000LL

static struct rc_layout layout(enum rc_order order, enum rc_tiebreak tb, int64_t res, int64_t horizon)
{
    struct rc_layout l;
    memset(&l, 0, sizeof l);
    l.order = order;
    l.tiebreak = tb;
    l.tb_resolution_ms = res;
    l.tb_horizon_ms = horizon;
    return l;
}

static void test_daily_ms_tiebreak_leaves_26_bits_of_points(void **state)
{
    (void)state;
    struct rc_layout l = layout(RC_ORDER_DESC, RC_TB_EARLIEST, 1, DAY_MS);
    struct rc_error err;
    assert_int_equal(rc_layout_finish(&l, 0, 0, &err), 0);
    assert_int_equal(l.tb_bits, 27); /* 86,400,000 slots < 2^27 */
    assert_int_equal(l.points_max, 67108863);
    assert_int_equal(l.points_min, -67108863);
}

static void test_layout_over_53_bits_is_refused_with_reason(void **state)
{
    (void)state;
    struct rc_layout l = layout(RC_ORDER_DESC, RC_TB_EARLIEST, 1, DAY_MS);
    struct rc_error err;
    l.points_min = 0;
    l.points_max = 1000000000; /* needs 30 bits; only 26 left */
    assert_int_equal(rc_layout_finish(&l, 1, 1, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "53 bits"));
    assert_non_null(strstr(err.msg, "67108863"));

    struct rc_layout t = layout(RC_ORDER_DESC, RC_TB_EARLIEST, 1, 1LL << 53);
    assert_int_equal(rc_layout_finish(&t, 0, 0, &err), RC_E_BAD_REQUEST); /* tie-break alone > 53 */
    assert_non_null(strstr(err.msg, "53 bits"));

    struct rc_layout f = layout(RC_ORDER_DESC, RC_TB_NONE, 0, 0);
    f.nfields = 3;
    strcpy(f.fields[0].name, "a");
    f.fields[0].bits = 30;
    strcpy(f.fields[1].name, "b");
    f.fields[1].bits = 20;
    strcpy(f.fields[2].name, "c");
    f.fields[2].bits = 4;
    assert_int_equal(rc_layout_finish(&f, 0, 0, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "54 bits") ? err.msg : strstr(err.msg, "53 bits"));
    f.fields[2].bits = 3;
    assert_int_equal(rc_layout_finish(&f, 0, 0, &err), 0);
}

static void test_missing_horizon_and_min_over_max_are_refused(void **state)
{
    (void)state;
    struct rc_error err;
    struct rc_layout l = layout(RC_ORDER_DESC, RC_TB_EARLIEST, 1, 0);
    assert_int_equal(rc_layout_finish(&l, 0, 0, &err), RC_E_BAD_REQUEST);
    struct rc_layout m = layout(RC_ORDER_DESC, RC_TB_NONE, 0, 0);
    m.points_min = 5;
    m.points_max = 4;
    assert_int_equal(rc_layout_finish(&m, 1, 1, &err), RC_E_BAD_REQUEST);
}

static void test_encode_out_of_range_reports_instead_of_clamping(void **state)
{
    (void)state;
    struct rc_layout l = layout(RC_ORDER_DESC, RC_TB_NONE, 0, 0);
    struct rc_error err;
    double c = 42;
    l.points_min = 0;
    l.points_max = 100;
    assert_int_equal(rc_layout_finish(&l, 1, 1, &err), 0);
    assert_int_equal(rc_codec_encode_points(&l, 101, 0, &c, &err), RC_E_OUT_OF_RANGE);
    assert_true(c == 42); /* untouched */
    assert_int_equal(rc_codec_encode_points(&l, -1, 0, &c, &err), RC_E_OUT_OF_RANGE);
    assert_int_equal(rc_codec_encode_points(&l, 100, 0, &c, &err), 0);
    assert_true(c == 100);
    int64_t p;
    uint64_t s;
    assert_int_equal(rc_codec_decode_points(&l, 100.5, &p, &s), RC_E_OUT_OF_RANGE);
    assert_int_equal(rc_codec_decode_points(&l, 1e300, &p, &s), RC_E_OUT_OF_RANGE);
}

static void test_tiebreak_slot_outside_horizon_is_out_of_range(void **state)
{
    (void)state;
    struct rc_layout l = layout(RC_ORDER_DESC, RC_TB_EARLIEST, 1000, DAY_MS);
    struct rc_error err;
    uint64_t s;
    assert_int_equal(rc_layout_finish(&l, 0, 0, &err), 0);
    assert_int_equal(rc_codec_tb_slot(&l, 1000000, 999999, &s), RC_E_OUT_OF_RANGE);
    assert_int_equal(rc_codec_tb_slot(&l, 1000000, 1000000 + DAY_MS, &s), RC_E_OUT_OF_RANGE);
    assert_int_equal(rc_codec_tb_slot(&l, 1000000, 1000000 + DAY_MS - 1, &s), 0);
    assert_int_equal(rc_codec_tb_slot_time(&l, 1000000, s), 1000000 + DAY_MS - 1000);
}

static void test_full_53_bit_fields_layout_round_trips_at_the_edge(void **state)
{
    (void)state;
    struct rc_layout l = layout(RC_ORDER_DESC, RC_TB_NONE, 0, 0);
    struct rc_error err;
    l.nfields = 2;
    strcpy(l.fields[0].name, "hi");
    l.fields[0].bits = 52;
    strcpy(l.fields[1].name, "lo");
    l.fields[1].bits = 1;
    l.fields[1].ascending = 1;
    assert_int_equal(rc_layout_finish(&l, 0, 0, &err), 0);
    int64_t v[2] = {(1LL << 52) - 1, 0}, out[2];
    double c;
    uint64_t s;
    assert_int_equal(rc_codec_encode_fields(&l, v, 0, &c, &err), 0);
    assert_true(c == 9007199254740991.0);
    assert_int_equal(rc_codec_decode_fields(&l, c, out, &s), 0);
    assert_int_equal(out[0], v[0]);
    assert_int_equal(out[1], 0);
    v[1] = 2;
    assert_int_equal(rc_codec_encode_fields(&l, v, 0, &c, &err), RC_E_OUT_OF_RANGE);
}

/* ---- properties --------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int64_t rnd_in(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* Random points in range, biased towards the edges and equal values. */
static int64_t rnd_points(const struct rc_layout *l)
{
    switch (rnd() % 6) {
    case 0: return l->points_min;
    case 1: return l->points_max;
    case 2: {
        int64_t v = rnd_in(-3, 3); /* near zero, where the sign flips */
        return v < l->points_min ? l->points_min : v > l->points_max ? l->points_max : v;
    }
    default: return rnd_in(l->points_min, l->points_max);
    }
}

/* The intended ranking: +1 when (pa, ta) must rank before (pb, tb). */
static int intended(const struct rc_layout *l, int64_t pa, int64_t ta, int64_t pb, int64_t tb)
{
    if (pa != pb)
        return (l->order == RC_ORDER_DESC) == (pa > pb) ? 1 : -1;
    if (l->tiebreak == RC_TB_NONE || ta == tb)
        return 0;
    int earlier = ta < tb;
    return (l->tiebreak == RC_TB_EARLIEST) == earlier ? 1 : -1;
}

static void test_points_round_trip_and_order_property(void **state)
{
    (void)state;
    unsigned long cases = 0;
    printf("seed 0x%llx\n", (unsigned long long)rng_state);
    for (int iter = 0; iter < 3000; iter++) {
        enum rc_tiebreak tb = (enum rc_tiebreak)(rnd() % 3);
        int64_t res = (int64_t[]){1, 10, 1000, 60000}[rnd() % 4];
        int64_t horizon = res * rnd_in(1, (int64_t)1 << rnd_in(1, 40));
        struct rc_layout l = layout(rnd() % 2 ? RC_ORDER_ASC : RC_ORDER_DESC, tb, res, horizon);
        struct rc_error err;
        int has = rnd() % 2;
        if (rc_layout_finish(&l, 0, 0, &err) != 0)
            continue; /* tie-break alone too wide: refused, fine */
        if (has) {   /* a narrower declared range, possibly all negative */
            int64_t a = rnd_points(&l), b = rnd_points(&l);
            l.points_min = a < b ? a : b;
            l.points_max = a < b ? b : a;
            assert_int_equal(rc_layout_finish(&l, 1, 1, &err), 0);
        }
        int64_t base = rnd_in(-DAY_MS * 365 * 50, DAY_MS * 365 * 50);
        for (int k = 0; k < 50; k++) {
            int64_t pa = rnd_points(&l), pb = rnd() % 4 ? rnd_points(&l) : pa;
            int64_t ta = base + rnd_in(0, horizon - 1), tb_ = rnd() % 3 ? base + rnd_in(0, horizon - 1) : ta;
            uint64_t sa, sb, sd;
            double ca, cb;
            int64_t pd;
            assert_int_equal(rc_codec_tb_slot(&l, base, ta, &sa), 0);
            assert_int_equal(rc_codec_tb_slot(&l, base, tb_, &sb), 0);
            assert_int_equal(rc_codec_encode_points(&l, pa, sa, &ca, &err), 0);
            assert_int_equal(rc_codec_encode_points(&l, pb, sb, &cb, &err), 0);
            assert_true(ca >= -9007199254740991.0 && ca <= 9007199254740991.0);
            assert_int_equal(rc_codec_decode_points(&l, ca, &pd, &sd), 0);
            assert_int_equal(pd, pa);
            assert_int_equal(sd, sa);
            if (l.tiebreak != RC_TB_NONE)
                assert_int_equal(rc_codec_tb_slot_time(&l, base, sd), base + (ta - base) / res * res);
            /* same slot means same resolution bucket: equal for ranking */
            int64_t qa = l.tiebreak == RC_TB_NONE ? 0 : (ta - base) / res;
            int64_t qb = l.tiebreak == RC_TB_NONE ? 0 : (tb_ - base) / res;
            int want = intended(&l, pa, qa, pb, qb);
            int got = -rc_codec_composite_cmp(&l, ca, cb); /* cmp < 0: a ranks first */
            got = got > 0 ? 1 : got < 0 ? -1 : 0;
            assert_int_equal(got, want);
            cases++;
        }
    }
    printf("%lu encoded pairs checked\n", cases);
}

static void test_fields_round_trip_and_order_property(void **state)
{
    (void)state;
    unsigned long cases = 0;
    for (int iter = 0; iter < 3000; iter++) {
        struct rc_layout l = layout(RC_ORDER_DESC, (enum rc_tiebreak)(rnd() % 3), 1, rnd_in(1, 1 << 20));
        struct rc_error err;
        unsigned budget = 53;
        l.nfields = (unsigned)rnd_in(1, 4);
        for (unsigned i = 0; i < l.nfields; i++) {
            snprintf(l.fields[i].name, sizeof l.fields[i].name, "f%u", i);
            l.fields[i].bits = (unsigned)rnd_in(1, 16);
            l.fields[i].ascending = rnd() % 2;
            budget -= l.fields[i].bits;
        }
        if (rc_layout_finish(&l, 0, 0, &err) != 0) {
            assert_true(l.field_bits + l.tb_bits > 53);
            continue;
        }
        for (int k = 0; k < 50; k++) {
            int64_t a[RC_MAX_FIELDS], b[RC_MAX_FIELDS], d[RC_MAX_FIELDS];
            for (unsigned i = 0; i < l.nfields; i++) {
                int64_t max = ((int64_t)1 << l.fields[i].bits) - 1;
                a[i] = rnd() % 3 ? rnd_in(0, max) : (rnd() % 2 ? max : 0);
                b[i] = rnd() % 2 ? a[i] : rnd_in(0, max);
            }
            int64_t ta = rnd_in(0, l.tb_horizon_ms - 1), tb_ = rnd() % 2 ? ta : rnd_in(0, l.tb_horizon_ms - 1);
            uint64_t sa, sb, sd;
            double ca, cb;
            assert_int_equal(rc_codec_tb_slot(&l, 0, ta, &sa), 0);
            assert_int_equal(rc_codec_tb_slot(&l, 0, tb_, &sb), 0);
            assert_int_equal(rc_codec_encode_fields(&l, a, sa, &ca, &err), 0);
            assert_int_equal(rc_codec_encode_fields(&l, b, sb, &cb, &err), 0);
            assert_int_equal(rc_codec_decode_fields(&l, ca, d, &sd), 0);
            assert_memory_equal(d, a, l.nfields * sizeof a[0]);
            assert_int_equal(sd, sa);
            /* intended: fields in order, each in its direction, then time */
            int want = 0;
            for (unsigned i = 0; i < l.nfields && !want; i++)
                if (a[i] != b[i])
                    want = (a[i] > b[i]) != l.fields[i].ascending ? 1 : -1;
            if (!want && l.tiebreak != RC_TB_NONE && ta != tb_)
                want = (l.tiebreak == RC_TB_EARLIEST) == (ta < tb_) ? 1 : -1;
            int got = -rc_codec_composite_cmp(&l, ca, cb);
            got = got > 0 ? 1 : got < 0 ? -1 : 0;
            assert_int_equal(got, want);
            cases++;
        }
        (void)budget;
    }
    printf("%lu multi-field pairs checked\n", cases);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daily_ms_tiebreak_leaves_26_bits_of_points),
        cmocka_unit_test(test_layout_over_53_bits_is_refused_with_reason),
        cmocka_unit_test(test_missing_horizon_and_min_over_max_are_refused),
        cmocka_unit_test(test_encode_out_of_range_reports_instead_of_clamping),
        cmocka_unit_test(test_tiebreak_slot_outside_horizon_is_out_of_range),
        cmocka_unit_test(test_full_53_bit_fields_layout_round_trips_at_the_edge),
        cmocka_unit_test(test_points_round_trip_and_order_property),
        cmocka_unit_test(test_fields_round_trip_and_order_property),
    };
    return cmocka_run_group_tests_name("codec", tests, NULL, NULL);
}
