/* test_arrival.c - tiebreak = arrival in core/: the config rules (with their
 * FILE:LINE messages), the layout's bit budget, the codec's view of an
 * arrival slot, and the script calls (ARGV[5] "arrival", the counters' key
 * in the board's slot). The script itself: tests/redis/test_arrival_script.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_admin_args.h"
#include "rc_codec.h"
#include "rc_conf.h"
#include "rc_err.h"
#include "rc_layout.h"
#include "rc_proto.h"
#include "rc_slot.h"
#include "rc_write_args.h"

static struct rc_conf *parse(const char *text, int *rc, struct rc_error *err)
{
    struct rc_conf *c = calloc(1, sizeof *c);
    assert_non_null(c);
    size_t len = strlen(text);
    char *copy = malloc(len + 1);
    assert_non_null(copy);
    memcpy(copy, text, len + 1);
    memset(err, 0, sizeof *err);
    *rc = rc_conf_parse("t.conf", copy, len, c, err);
    free(copy);
    return c;
}

static void arrival_board_loads_with_default_and_given_bits(void **s)
{
    (void)s;
    struct rc_error err;
    int rc;
    struct rc_conf *c = parse("[board a]\ntiebreak = arrival\n[board b]\norder = asc\ntiebreak = arrival\n"
                              "tiebreak_bits = 4\npoints_min = 0\npoints_max = 1000\n"
                              "[board p]\nperiod = day\ntiebreak = arrival\ntiebreak_bits = 30\n",
                              &rc, &err);
    if (rc)
        fail_msg("refused: %s", err.msg);
    const struct rc_board *a = rc_conf_board_find(c, "a");
    assert_int_equal(a->layout.tiebreak, RC_TB_ARRIVAL);
    assert_int_equal(a->layout.tb_bits, 20);
    /* |points| <= 2^(53-20) - 1 */
    assert_int_equal(a->layout.points_max, (INT64_C(1) << 33) - 1);
    assert_int_equal(a->layout.points_min, -((INT64_C(1) << 33) - 1));
    assert_int_equal(a->layout.tb_horizon_ms, 0);
    const struct rc_board *b = rc_conf_board_find(c, "b");
    assert_int_equal(b->layout.tb_bits, 4);
    assert_int_equal(b->layout.order, RC_ORDER_ASC);
    const struct rc_board *p = rc_conf_board_find(c, "p");
    assert_int_equal(p->layout.tb_bits, 30); /* a periodic board: no horizon from the period */
    assert_int_equal(p->layout.points_max, (INT64_C(1) << 23) - 1);
    free(c);
}

struct err_case {
    const char *text;
    int line;
    const char *want;
};

static const struct err_case err_cases[] = {
    {"[board x]\ntiebreak = arrival\ntiebreak_resolution = 1s\n", 1,
     "tiebreak_resolution does not apply with tiebreak = arrival (arrivals are counted, not timed"},
    {"[board x]\ntiebreak = arrival\ntiebreak_horizon = 1d\n", 1, "tiebreak_horizon does not apply with tiebreak = arrival"},
    {"[board x]\ntiebreak = arrival\ntiebreak_base = 2026-01-01T00:00:00Z\n", 1,
     "tiebreak_base does not apply with tiebreak = arrival"},
    {"[board x]\ntiebreak = none\ntiebreak_bits = 8\n", 1, "tiebreak_bits applies only to tiebreak = arrival"},
    {"[board x]\ntiebreak_horizon = 1d\ntiebreak_base = 2026-01-01T00:00:00Z\ntiebreak_bits = 8\n", 1,
     "tiebreak_bits applies only to tiebreak = arrival"},
    {"[board x]\ntiebreak = arrival\ntiebreak_bits = 0\n", 3, "tiebreak_bits"},
    {"[board x]\ntiebreak = arrival\ntiebreak_bits = 53\n", 3, "tiebreak_bits"},
    {"[board x]\nops = incr\ndecay = buckets\ntiebreak = arrival\n", 1,
     "tiebreak = arrival cannot be combined with decay"},
    {"[board x]\ndecay = scale\nscale_factor = 0.5\ntiebreak = arrival\n", 1,
     "tiebreak = arrival cannot be combined with decay"},
    {"[board x]\nfields = a desc 8, b asc 8\ntiebreak = arrival\n", 1,
     "tiebreak = arrival applies only to single-field boards"},
    {"[board x]\ntiebreak = arrival\ntiebreak_bits = 40\npoints_max = 10000\n", 1,
     "with a 40-bit arrival tie-break (tiebreak_bits) points must stay within -8191..8191"},
    {"[board x]\ntiebreak = arival\n", 2, "tiebreak must be earliest, latest, arrival or none, got 'arival'"},
};

static void arrival_rules_report_file_line_and_reason(void **s)
{
    (void)s;
    int bad = 0;
    for (size_t i = 0; i < sizeof err_cases / sizeof err_cases[0]; i++) {
        struct rc_error err;
        int rc;
        char prefix[32];
        struct rc_conf *c = parse(err_cases[i].text, &rc, &err);
        snprintf(prefix, sizeof prefix, "t.conf:%d: ", err_cases[i].line);
        if (rc != RC_E_BAD_REQUEST || strncmp(err.msg, prefix, strlen(prefix)) != 0 ||
            !strstr(err.msg, err_cases[i].want)) {
            print_error("case %zu: want '%s...%s', got '%s'\n", i, prefix, err_cases[i].want,
                        rc ? err.msg : "(accepted)");
            bad++;
        }
        free(c);
    }
    assert_int_equal(bad, 0);
}

static void layout_gives_points_what_the_tie_bits_leave(void **s)
{
    (void)s;
    struct rc_error err = {0, ""};
    for (unsigned t = 1; t <= 52; t++) {
        struct rc_layout l;
        memset(&l, 0, sizeof l);
        l.tiebreak = RC_TB_ARRIVAL;
        l.tb_arrival_bits = t;
        assert_int_equal(rc_layout_finish(&l, 0, 0, &err), 0);
        assert_int_equal(l.tb_bits, t);
        int64_t lim = (int64_t)((UINT64_C(1) << (53 - t)) - 1);
        assert_int_equal(l.points_max, lim);
        /* the largest composite, top points and the first arrival, is still safe */
        double c;
        uint64_t slot;
        assert_int_equal(rc_codec_tb_slot(&l, 0, 123456789, &slot), 0);
        assert_int_equal(slot, 0); /* the script picks the slot; time plays no part */
        assert_int_equal(rc_codec_encode_points(&l, lim, (UINT64_C(1) << t) - 1, &c, &err), 0);
        assert_true(c <= 9007199254740991.0);
        int64_t pts;
        uint64_t back;
        assert_int_equal(rc_codec_decode_points(&l, c, &pts, &back), 0);
        assert_int_equal(pts, lim);
        assert_int_equal(back, (UINT64_C(1) << t) - 1);
    }
    struct rc_layout l;
    memset(&l, 0, sizeof l);
    l.tiebreak = RC_TB_ARRIVAL;
    l.tb_arrival_bits = 53;
    assert_int_equal(rc_layout_finish(&l, 0, 0, &err), RC_E_BAD_REQUEST);
}

/* On a desc board the first arrival (slot 2^T - 1) must rank before the
 * second (2^T - 2); on asc the first (slot 0) before the second (1). */
static void arrival_slots_rank_earlier_first(void **s)
{
    (void)s;
    struct rc_error err = {0, ""};
    struct rc_layout d, a;
    memset(&d, 0, sizeof d);
    d.tiebreak = RC_TB_ARRIVAL;
    d.tb_arrival_bits = 4;
    a = d;
    a.order = RC_ORDER_ASC;
    assert_int_equal(rc_layout_finish(&d, 0, 0, &err), 0);
    assert_int_equal(rc_layout_finish(&a, 0, 0, &err), 0);
    double first, second;
    assert_int_equal(rc_codec_encode_points(&d, 7, 15 - 0, &first, &err), 0);
    assert_int_equal(rc_codec_encode_points(&d, 7, 15 - 1, &second, &err), 0);
    assert_true(rc_codec_composite_cmp(&d, first, second) < 0);
    assert_int_equal(rc_codec_encode_points(&a, 7, 0, &first, &err), 0);
    assert_int_equal(rc_codec_encode_points(&a, 7, 1, &second, &err), 0);
    assert_true(rc_codec_composite_cmp(&a, first, second) < 0);
}

static const char *calls_conf = "[board arena]\ntiebreak = arrival\n[board ad]\nperiod = day\n"
                                "tiebreak = arrival\ntiebreak_bits = 8\n";

static void script_calls_ask_for_arrival_and_name_the_counters_in_one_slot(void **s)
{
    (void)s;
    struct rc_error err;
    int rc;
    struct rc_conf *c = parse(calls_conf, &rc, &err);
    assert_int_equal(rc, 0);
    const char *names[] = {"arena", "ad"};
    for (int i = 0; i < 2; i++) {
        struct rc_request r;
        struct rc_period p = {0};
        struct rc_write_args a;
        char json[160];
        snprintf(json, sizeof json, "{\"op\":\"set\",\"board\":\"%s\",\"member\":\"u1\",\"value\":5}", names[i]);
        assert_int_equal(rc_proto_decode(json, strlen(json), &r, &err), 0);
        const struct rc_board *b = rc_conf_board_find(c, names[i]);
        assert_int_equal(rc_period_select(&b->period, "", 1767225600000LL, &p), 0);
        assert_int_equal(rc_write_args_build(b, &r, &p, 1767225600000LL, 0, &a, &err), 0);
        assert_int_equal(a.nkeys, RC_WRITE_NKEYS_PLAIN);
        assert_string_equal(a.argv[4], "arrival");
        assert_string_equal(a.argv[5], i == 0 ? "1048576" : "256");
        assert_non_null(strstr(a.keys[9], ":arr"));
        for (unsigned k = 1; k < a.nkeys; k++)
            assert_int_equal(rc_slot_of_key(a.keys[k], strlen(a.keys[k])), rc_slot_of_key(a.keys[0], strlen(a.keys[0])));

        struct rc_admin_args aa;
        r.op = RC_OP_REVERSE;
        snprintf(r.req, sizeof r.req, "w1");
        assert_int_equal(rc_admin_args_build(b, &r, &p, 1767225600000LL, 0, 0, 0, &aa, &err), 0);
        assert_string_equal(aa.words[RC_ADMIN_NKEYS + 5], "arrival"); /* ARGV[6] */
        assert_non_null(strstr(aa.words[8], ":arr"));
        for (unsigned k = 1; k < RC_ADMIN_NKEYS; k++)
            assert_int_equal(rc_slot_of_key(aa.words[k], aa.lens[k]), rc_slot_of_key(aa.words[0], aa.lens[0]));
        rc_proto_decode_free(&r);
    }
    free(c);
}

static void shipped_arena_board_orders_by_arrival(void **s)
{
    (void)s;
    const char *dir = getenv("RC_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/conf/rankcast.conf", dir && *dir ? dir : ".");
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s (set RC_SOURCE_DIR)", path);
    static char text[1 << 17];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    struct rc_conf *c = calloc(1, sizeof *c);
    struct rc_error err;
    memset(&err, 0, sizeof err);
    if (rc_conf_parse(path, text, n, c, &err) != 0)
        fail_msg("shipped config refused: %s", err.msg);
    const struct rc_board *b = rc_conf_board_find(c, "arena");
    assert_non_null(b);
    assert_int_equal(b->layout.tiebreak, RC_TB_ARRIVAL);
    assert_int_equal(b->layout.order, RC_ORDER_DESC);
    assert_int_equal(b->period.kind, RC_PERIOD_NONE);
    assert_true(b->ops & RC_OPF_INCR);
    assert_int_equal(b->layout.tb_bits, 20);
    assert_int_equal(b->layout.points_max, 8589934591LL);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arrival_board_loads_with_default_and_given_bits),
        cmocka_unit_test(arrival_rules_report_file_line_and_reason),
        cmocka_unit_test(layout_gives_points_what_the_tie_bits_leave),
        cmocka_unit_test(arrival_slots_rank_earlier_first),
        cmocka_unit_test(script_calls_ask_for_arrival_and_name_the_counters_in_one_slot),
        cmocka_unit_test(shipped_arena_board_orders_by_arrival),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
