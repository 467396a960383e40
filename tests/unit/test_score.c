/* test_score.c - rc_score_decode: the score a viewer sees for a stored
 * composite, exactly, for desc and asc boards with tie-break bits, boards
 * without them, decayed boards, and multi-field boards (ascending fields,
 * values written out of band). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rc_codec.h"
#include "rc_err.h"
#include "rc_score.h"

#define DAY_MS 86400000LL

static struct rc_layout single(enum rc_order order, enum rc_tiebreak tb, int64_t res)
{
    struct rc_layout l;
    struct rc_error err;
    memset(&l, 0, sizeof l);
    l.order = order;
    l.tiebreak = tb;
    l.tb_resolution_ms = res;
    l.tb_horizon_ms = tb == RC_TB_NONE ? 0 : DAY_MS;
    assert_int_equal(rc_layout_finish(&l, 0, 0, &err), 0);
    return l;
}

/* Points come back exactly, the tie-break slot stripped, at the edges too. */
static void check_points(const struct rc_layout *l)
{
    const int64_t pts[] = {0, 1, -1, 12345, l->points_max, l->points_min};
    const uint64_t slots[] = {0, 1, ((uint64_t)1 << l->tb_bits) - 1};
    for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++)
        for (size_t k = 0; k < (l->tb_bits ? 3u : 1u); k++) {
            double c, score = -99;
            int64_t f[RC_MAX_FIELDS];
            unsigned nf = 7;
            struct rc_error err;
            assert_int_equal(rc_codec_encode_points(l, pts[i], slots[k], &c, &err), 0);
            assert_int_equal(rc_score_decode(l, RC_DECAY_NONE, c, &score, f, &nf), 0);
            assert_true(score == (double)pts[i]);
            assert_int_equal(nf, 0);
        }
}

static void test_desc_with_tie_bits(void **state)
{
    (void)state;
    struct rc_layout l = single(RC_ORDER_DESC, RC_TB_EARLIEST, 1);
    assert_true(l.tb_bits > 0);
    check_points(&l);
}

static void test_asc_with_tie_bits(void **state)
{
    (void)state;
    struct rc_layout l = single(RC_ORDER_ASC, RC_TB_EARLIEST, 1000);
    assert_true(l.tb_bits > 0);
    check_points(&l);
}

static void test_no_tie_bits_and_decay_show_the_stored_value(void **state)
{
    (void)state;
    struct rc_layout l = single(RC_ORDER_DESC, RC_TB_NONE, 0);
    double score;
    int64_t f[RC_MAX_FIELDS];
    unsigned nf;
    assert_int_equal(rc_score_decode(&l, RC_DECAY_NONE, 42.0, &score, f, &nf), 0);
    assert_true(score == 42.0);
    struct rc_layout t = single(RC_ORDER_DESC, RC_TB_EARLIEST, 1);
    assert_int_equal(rc_score_decode(&t, RC_DECAY_BUCKETS, 3.75, &score, f, &nf), 0);
    assert_true(score == 3.75); /* a decayed score is not a packed composite */
    assert_int_equal(rc_score_decode(&t, RC_DECAY_SCALE, 1e6, &score, f, &nf), 0);
    assert_true(score == 1e6);
}

static void test_multi_field(void **state)
{
    (void)state;
    struct rc_layout l;
    struct rc_error err;
    memset(&l, 0, sizeof l);
    l.order = RC_ORDER_DESC;
    l.tiebreak = RC_TB_EARLIEST;
    l.tb_resolution_ms = 1000;
    l.tb_horizon_ms = DAY_MS;
    l.nfields = 3;
    strcpy(l.fields[0].name, "wins");
    l.fields[0].bits = 10;
    strcpy(l.fields[1].name, "time");
    l.fields[1].bits = 12;
    l.fields[1].ascending = 1;
    strcpy(l.fields[2].name, "bonus");
    l.fields[2].bits = 4;
    assert_int_equal(rc_layout_finish(&l, 0, 0, &err), 0);
    const int64_t cases[][3] = {{0, 0, 0}, {1023, 4095, 15}, {7, 300, 2}, {512, 0, 15}};
    for (size_t i = 0; i < 4; i++) {
        double c, score;
        int64_t f[RC_MAX_FIELDS];
        unsigned nf;
        assert_int_equal(rc_codec_encode_fields(&l, cases[i], 5, &c, &err), 0);
        assert_int_equal(rc_score_decode(&l, RC_DECAY_NONE, c, &score, f, &nf), 0);
        assert_int_equal(nf, 3);
        assert_int_equal(f[0], cases[i][0]);
        assert_int_equal(f[1], cases[i][1]);
        assert_int_equal(f[2], cases[i][2]);
        assert_true(score == (double)cases[i][0]);
    }
    /* A value written out of band (not an integer) is shown as stored. */
    double score;
    int64_t f[RC_MAX_FIELDS];
    unsigned nf = 9;
    assert_int_equal(rc_score_decode(&l, RC_DECAY_NONE, 0.5, &score, f, &nf), RC_E_BAD_REQUEST);
    assert_true(score == 0.5);
    assert_int_equal(nf, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_desc_with_tie_bits),
        cmocka_unit_test(test_asc_with_tie_bits),
        cmocka_unit_test(test_no_tie_bits_and_decay_show_the_stored_value),
        cmocka_unit_test(test_multi_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
