/* test_moment_args.c - the wire and script sides of standings at a moment:
 * core/rc_moment_args (read.lua's "moment" call and reply), core/rc_proto_at
 * (get's "at", op history, the history reply, out_of_range with
 * oldest_seq) and ?at_seq= / ?at= / the history query (core/rc_query). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_err.h"
#include "rc_moment_args.h"
#include "rc_proto.h"
#include "rc_query.h"

#define S(x) {0, 0, x}
#define I(x) {1, x, NULL}
#define HEAD I(9), I(2), I(0), S("e1"), I(0), I(0), I(0), I(0)

static void builds_a_range_call_by_time(void **state)
{
    (void)state;
    int64_t t = 1763769600123;
    struct rc_moment_req req = {.by_time = 1, .audience = 1, .view = RC_MOMENT_RANGE, .first = 10, .count = 5,
                                .undo_max = 20000, .targets = &t, .ntargets = 1};
    struct rc_moment_args a;
    assert_int_equal(rc_moment_args_build("players", "", RC_ORDER_DESC, &req, &a), 0);
    assert_string_equal(a.keys[0], "rc:{players|}:z");
    assert_string_equal(a.keys[2], "rc:{players|}:log");
    /* ARGV[9] the cap on changes undone (history_undo_max), then the target */
    const char *want[] = {"moment", "desc", "1", "time", "1", "range", "10", "5", "20000", "1763769600123"};
    assert_int_equal(a.nargv, 10);
    for (unsigned i = 0; i < 10; i++)
        assert_string_equal(a.argv[i], want[i]);
    rc_moment_args_free(&a);
    /* points take many targets; range and around exactly one */
    req.ntargets = 2;
    assert_int_equal(rc_moment_args_build("players", "", RC_ORDER_DESC, &req, &a), RC_E_BAD_REQUEST);
    req.view = RC_MOMENT_AROUND;
    req.ntargets = 1;
    assert_int_equal(rc_moment_args_build("players", "", RC_ORDER_DESC, &req, &a), RC_E_BAD_REQUEST); /* no member */
    req.view = RC_MOMENT_RANGE;
    req.undo_max = -1;
    assert_int_equal(rc_moment_args_build("players", "", RC_ORDER_DESC, &req, &a), RC_E_BAD_REQUEST);
}

/* a segmented points read (docs/history.md, "Rank history at any span"):
 * ARGV[8] the seq every target lies at or before; a "redo" reply's changes
 * are numbered from its newest target up, so a point's changes to undo from
 * the checkpoint are those after 2 smax - seq */
static void builds_and_parses_a_segmented_points_read(void **state)
{
    (void)state;
    int64_t t[2] = {100, 200};
    struct rc_moment_req req = {.by_time = 1, .view = RC_MOMENT_POINTS, .member = "ann", .undo_max = 40,
                                .segmented = 1, .below = 57, .targets = t, .ntargets = 2};
    struct rc_moment_args a;
    assert_int_equal(rc_moment_args_build("players", "", RC_ORDER_DESC, &req, &a), 0);
    assert_string_equal(a.argv[5], "points");
    assert_string_equal(a.argv[6], "ann");
    assert_string_equal(a.argv[7], "57");
    rc_moment_args_free(&a);
    req.segmented = 0; /* unsegmented: "" as before */
    assert_int_equal(rc_moment_args_build("players", "", RC_ORDER_DESC, &req, &a), 0);
    assert_string_equal(a.argv[7], "");
    rc_moment_args_free(&a);
    req.segmented = 1;
    req.view = RC_MOMENT_RANGE; /* points only */
    req.ntargets = 1;
    assert_int_equal(rc_moment_args_build("players", "", RC_ORDER_DESC, &req, &a), RC_E_BAD_REQUEST);

    /* redone from checkpoint 5 for targets at seqs 6 and 8: the changes 8,
     * 7, 6 (newest first, new and old swapped) numbered 9, 10, 11 */
    struct rc_reply_item items[] = {
        HEAD, S("redo"), I(0), I(6),
        I(3),
        I(9), S("ann"), S("10"), S("30"),
        I(10), S("bob"), S("5"), S("7"),
        I(11), S("ann"), S("1"), S("10"),
        I(2), I(6), S("100"), S("10"), I(0), I(8), S("200"), S("30"), I(0),
    };
    struct rc_moment_reply r;
    assert_int_equal(rc_moment_args_parse(items, sizeof items / sizeof items[0], RC_MOMENT_POINTS, &r), 0);
    assert_int_equal(r.status, RC_MOMENT_OK);
    assert_true(r.redo);
    /* seq 8 (smax): every change back to the checkpoint; seq 6: the last one
     * only (change 6, numbered 11) */
    assert_int_equal(rc_moment_args_point_after(&r, &r.targets[1]), 0);
    assert_int_equal(rc_moment_args_point_after(&r, &r.targets[0]), 2);
    rc_moment_args_reply_free(&r);
    items[8] = (struct rc_reply_item)S("ok");
    assert_int_equal(rc_moment_args_parse(items, sizeof items / sizeof items[0], RC_MOMENT_POINTS, &r), 0);
    assert_false(r.redo);
    assert_int_equal(rc_moment_args_point_after(&r, &r.targets[0]), 0);
    rc_moment_args_reply_free(&r);
}

static void parses_a_window_reply(void **state)
{
    (void)state;
    struct rc_reply_item items[] = {
        HEAD, S("ok"), I(0), I(7),
        I(2),                                   /* two changes after seq 7 */
        I(8), S("ann"), S("40"), S("10"),
        I(9), S("bob"), S(""), S("30"),
        I(1), I(7), S("1763769600123"), S(""), I(0), /* the target: seq 7 at its time */
        I(0), S("ann"), S("40"), S("cy"), S("20"),  /* the slice from rank 0 */
    };
    struct rc_moment_reply r;
    assert_int_equal(rc_moment_args_parse(items, sizeof items / sizeof items[0], RC_MOMENT_RANGE, &r), 0);
    assert_int_equal(r.status, RC_MOMENT_OK);
    assert_int_equal(r.nchanges, 2);
    assert_string_equal(r.changes[1].member, "bob");
    assert_false(r.changes[1].has_new);
    assert_true(r.changes[1].has_old);
    assert_int_equal(r.targets[0].seq, 7);
    assert_true(r.targets[0].has_at);
    assert_int_equal(r.targets[0].at, 1763769600123);
    assert_int_equal(r.nrows, 2);
    assert_int_equal(rc_moment_args_after(&r, 8), 1);
    /* rebuilt: ann 10, bob 30, cy 20 at seq 7 */
    struct rc_moment_in in = {.desc = 1, .slice = r.rows, .nslice = r.nrows, .lo = r.lo, .total = r.head.total,
                              .changes = r.changes, .nchanges = r.nchanges};
    struct rc_moment_out out;
    assert_int_equal(rc_moment_range(&in, 0, 10, &out), 0);
    assert_int_equal(out.n, 3);
    assert_string_equal(out.rows[0].member, "bob");
    assert_string_equal(out.rows[1].member, "cy");
    assert_string_equal(out.rows[2].member, "ann");
    rc_moment_out_free(&out);
    rc_moment_args_reply_free(&r);
}

/* a member list at a moment: the names joined by spaces for the script; the
 * reply's per-member composite and ahead, in the order asked */
static void builds_and_parses_a_member_list(void **state)
{
    (void)state;
    int64_t t = 7;
    const char names[] = "ann\0zed\0bob";
    struct rc_moment_req req = {.view = RC_MOMENT_LIST, .members = names, .nmembers = 3, .targets = &t,
                                .ntargets = 1};
    struct rc_moment_args a;
    assert_int_equal(rc_moment_args_build("players", "", RC_ORDER_DESC, &req, &a), 0);
    assert_int_equal(a.nargv, 10);
    assert_string_equal(a.argv[5], "list");
    assert_string_equal(a.argv[6], "ann zed bob");
    assert_string_equal(a.argv[7], "");
    assert_string_equal(a.argv[8], "0"); /* history_undo_max: no cap */
    assert_string_equal(a.argv[9], "7");
    rc_moment_args_free(&a);
    req.nmembers = 0;
    assert_int_equal(rc_moment_args_build("players", "", RC_ORDER_DESC, &req, &a), RC_E_BAD_REQUEST);
    struct rc_reply_item items[] = {
        HEAD, S("ok"), I(0), I(7),
        I(1), I(8), S("ann"), S("40"), S("10"),
        I(1), I(7), S("1763769600123"), S(""), I(0),
        S("10"), I(1), S(""), I(0), S("30"), I(0), /* ann 10 (one ahead), zed absent, bob 30 */
    };
    struct rc_moment_reply r;
    assert_int_equal(rc_moment_args_parse(items, sizeof items / sizeof items[0], RC_MOMENT_LIST, &r), 0);
    assert_int_equal(r.nlisted, 3);
    assert_true(r.listed[0].has_c && r.listed[0].c == 10 && r.listed[0].ahead == 1);
    assert_false(r.listed[1].has_c);
    assert_true(r.listed[2].has_c && r.listed[2].c == 30 && r.listed[2].ahead == 0);
    rc_moment_args_reply_free(&r);
    /* an odd tail is another shape */
    assert_int_equal(rc_moment_args_parse(items, sizeof items / sizeof items[0] - 1, RC_MOMENT_LIST, &r),
                     RC_E_INTERNAL);
}

static void parses_refusals_and_refuses_other_shapes(void **state)
{
    (void)state;
    struct rc_reply_item gone[] = {HEAD, S("gone"), I(8)};
    struct rc_moment_reply r;
    assert_int_equal(rc_moment_args_parse(gone, 10, RC_MOMENT_RANGE, &r), 0);
    assert_int_equal(r.status, RC_MOMENT_GONE);
    assert_int_equal(r.oldest, 8);
    /* deeper than history_undo_max: oldest is the present minus the cap */
    struct rc_reply_item deep[] = {HEAD, S("deep"), I(70)};
    assert_int_equal(rc_moment_args_parse(deep, 10, RC_MOMENT_RANGE, &r), 0);
    assert_int_equal(r.status, RC_MOMENT_DEEP);
    assert_int_equal(r.oldest, 70);
    struct rc_reply_item beyond[] = {HEAD, S("beyond"), I(0)};
    assert_int_equal(rc_moment_args_parse(beyond, 10, RC_MOMENT_RANGE, &r), 0);
    assert_int_equal(r.status, RC_MOMENT_BEYOND);
    struct rc_reply_item odd[] = {HEAD, S("ok"), I(0), I(7), I(1), I(8), S("ann"), S("x"), S("")};
    assert_int_equal(rc_moment_args_parse(odd, sizeof odd / sizeof odd[0], RC_MOMENT_RANGE, &r), RC_E_INTERNAL);
    struct rc_reply_item what[] = {HEAD, S("maybe"), I(0)};
    assert_int_equal(rc_moment_args_parse(what, 10, RC_MOMENT_RANGE, &r), RC_E_INTERNAL);
    /* the time of the oldest change held: what a read by time can name */
    struct rc_reply_item timed[] = {HEAD, S("gone"), I(8), S("1795799603803")};
    assert_int_equal(rc_moment_args_parse(timed, 11, RC_MOMENT_RANGE, &r), 0);
    assert_int_equal(r.has_oldest_at, 1);
    assert_int_equal(r.oldest_at, 1795799603803);
    struct rc_reply_item untimed[] = {HEAD, S("deep"), I(8), S("")};
    assert_int_equal(rc_moment_args_parse(untimed, 11, RC_MOMENT_RANGE, &r), 0);
    assert_int_equal(r.has_oldest_at, 0);
    struct rc_reply_item more[] = {HEAD, S("gone"), I(8), S(""), I(1)};
    assert_int_equal(rc_moment_args_parse(more, 12, RC_MOMENT_RANGE, &r), RC_E_INTERNAL);
}

/* The other shards' calls of a sharded board's read at a moment. */
static void builds_counts_and_near_with_bounds(void **state)
{
    (void)state;
    int64_t targets[] = {5000, 6000};
    struct rc_moment_bound b[] = {{1, 40.5, 1}, {0, 0, 0}};
    struct rc_moment_req req = {.by_time = 1, .view = RC_MOMENT_COUNTS, .bounds = b, .targets = targets,
                                .ntargets = 2};
    struct rc_moment_args a;
    assert_int_equal(rc_moment_args_build("global#3", "", RC_ORDER_DESC, &req, &a), 0);
    assert_int_equal(a.nargv, 11);
    assert_string_equal(a.argv[5], "counts");
    assert_string_equal(a.argv[6], "40.5 -");
    assert_string_equal(a.argv[7], "");
    assert_string_equal(a.argv[10], "6000");
    rc_moment_args_free(&a);
    struct rc_moment_bound strict = {1, 7, 0};
    req = (struct rc_moment_req){.by_time = 0, .view = RC_MOMENT_NEAR, .bounds = &strict, .radius = 3,
                                 .targets = targets, .ntargets = 1};
    assert_int_equal(rc_moment_args_build("global#3", "", RC_ORDER_DESC, &req, &a), 0);
    assert_string_equal(a.argv[5], "near");
    assert_string_equal(a.argv[6], "(7");
    assert_string_equal(a.argv[7], "3");
    rc_moment_args_free(&a);
    req.bounds = NULL; /* a bound is required */
    assert_int_equal(rc_moment_args_build("global#3", "", RC_ORDER_DESC, &req, &a), RC_E_BAD_REQUEST);
    req.view = RC_MOMENT_NEAR;
    req.bounds = &strict;
    req.ntargets = 2; /* near is about one moment */
    assert_int_equal(rc_moment_args_build("global#3", "", RC_ORDER_DESC, &req, &a), RC_E_BAD_REQUEST);
}

static int decode(const char *text, struct rc_request *r)
{
    struct rc_error err = {0, ""};
    int rc = rc_proto_decode(text, strlen(text), r, &err);
    return rc;
}

static void decodes_get_and_history(void **state)
{
    (void)state;
    struct rc_request r;
    assert_int_equal(decode("{\"op\":\"get\",\"board\":\"b\",\"view\":{\"top\":3},\"at\":{\"seq\":7}}", &r), 0);
    assert_int_equal(r.op, RC_OP_GET);
    assert_int_equal(r.at_kind, RC_AT_SEQ);
    assert_int_equal(r.at, 7);
    rc_proto_decode_free(&r);
    assert_int_equal(decode("{\"op\":\"get\",\"board\":\"b\",\"view\":{\"top\":3}}", &r), 0);
    assert_int_equal(r.at_kind, RC_AT_NONE);
    rc_proto_decode_free(&r);
    const char *bad[] = {
        "{\"op\":\"get\",\"board\":\"b\",\"view\":{\"top\":3},\"at\":{\"seq\":7,\"time\":5}}",
        "{\"op\":\"get\",\"board\":\"b\",\"view\":{\"top\":3},\"at\":{}}",
        "{\"op\":\"get\",\"board\":\"b\",\"view\":{\"top\":3},\"at\":{\"seq\":-1}}",
        "{\"op\":\"get\",\"board\":\"b\",\"view\":{\"top\":3},\"at\":7}",
        "{\"op\":\"get\",\"board\":\"b\",\"view\":{\"feed\":true},\"at\":{\"seq\":7}}",
        "{\"op\":\"history\",\"board\":\"b\",\"member\":\"m\",\"from\":0,\"to\":1000,\"step\":1}",
        "{\"op\":\"history\",\"board\":\"b\",\"member\":\"m\",\"from\":10,\"to\":5,\"step\":1}",
        "{\"op\":\"history\",\"board\":\"b\",\"member\":\"m\",\"from\":0,\"to\":5,\"step\":0}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(decode(bad[i], &r), RC_E_BAD_REQUEST);
        rc_proto_decode_free(&r);
    }
    /* 1000 points is the most */
    assert_int_equal(decode("{\"op\":\"history\",\"board\":\"b\",\"member\":\"m\",\"from\":0,\"to\":999,\"step\":1}", &r), 0);
    assert_int_equal(r.op, RC_OP_HISTORY);
    assert_int_equal(r.to_ms, 999);
    rc_proto_decode_free(&r);
}

static void decodes_replay(void **state)
{
    (void)state;
    struct rc_request r;
    assert_int_equal(decode("{\"op\":\"subscribe\",\"board\":\"b\",\"view\":{\"top\":3},"
                            "\"replay\":{\"from\":{\"time\":5},\"speed\":0.25}}", &r), 0);
    assert_true(r.has_replay);
    assert_int_equal(r.replay_kind, RC_AT_TIME);
    assert_int_equal(r.replay_from, 5);
    assert_true(r.replay_speed == 0.25);
    rc_proto_decode_free(&r);
    assert_int_equal(decode("{\"op\":\"subscribe\",\"board\":\"b\",\"view\":{\"top\":3},"
                            "\"replay\":{\"from\":{\"seq\":2}}}", &r), 0);
    assert_true(r.replay_speed == 1); /* the default */
    rc_proto_decode_free(&r);
    /* a feed replays its events (docs/history.md) */
    assert_int_equal(decode("{\"op\":\"subscribe\",\"board\":\"b\",\"view\":{\"feed\":true},"
                            "\"replay\":{\"from\":{\"seq\":2}}}", &r), 0);
    assert_true(r.has_replay);
    rc_proto_decode_free(&r);
    const char *bad[] = {
        "{\"op\":\"subscribe\",\"board\":\"b\",\"view\":{\"top\":3},\"replay\":{\"from\":{\"seq\":2},\"speed\":65}}",
        "{\"op\":\"subscribe\",\"board\":\"b\",\"view\":{\"top\":3},\"replay\":{\"from\":{\"seq\":2},\"speed\":0.2}}",
        "{\"op\":\"subscribe\",\"board\":\"b\",\"view\":{\"top\":3},\"replay\":{\"from\":{}}}",
        "{\"op\":\"subscribe\",\"board\":\"b\",\"view\":{\"top\":3},\"replay\":{\"speed\":2}}",
        "{\"op\":\"subscribe\",\"board\":\"b\",\"view\":{\"top\":3},\"replay\":{\"from\":{\"seq\":2}},"
        "\"since\":{\"seq\":1}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(decode(bad[i], &r), RC_E_BAD_REQUEST);
        rc_proto_decode_free(&r);
    }
    char *s = rc_proto_at_encode_live("v1", 12);
    assert_string_equal(s, "{\"op\":\"live\",\"sub\":\"v1\",\"seq\":12}");
    free(s);
    s = rc_proto_at_encode_live_reset("v1", 9);
    assert_string_equal(s, "{\"op\":\"live\",\"sub\":\"v1\",\"seq\":9,\"reset\":true}");
    free(s);
}

static void reads_at_from_the_query(void **state)
{
    (void)state;
    struct rc_error err = {0, ""};
    struct rc_request r;
    const char *a1[] = {"top=10", "at_seq=42"};
    struct rc_query q = {a1, 2};
    memset(&r, 0, sizeof r);
    assert_int_equal(rc_query_view(&q, &r, &err), 0);
    assert_int_equal(r.at_kind, RC_AT_SEQ);
    assert_int_equal(r.at, 42);
    const char *a2[] = {"at=1763769600123"};
    q = (struct rc_query){a2, 1};
    memset(&r, 0, sizeof r);
    assert_int_equal(rc_query_view(&q, &r, &err), 0);
    assert_int_equal(r.at_kind, RC_AT_TIME);
    const char *a3[] = {"at=1", "at_seq=2"};
    q = (struct rc_query){a3, 2};
    assert_int_equal(rc_query_view(&q, &r, &err), RC_E_BAD_REQUEST);
    const char *a4[] = {"at_seq=-2"};
    q = (struct rc_query){a4, 1};
    assert_int_equal(rc_query_view(&q, &r, &err), RC_E_BAD_REQUEST);
    const char *h1[] = {"from=0", "to=5000", "step=5"};
    q = (struct rc_query){h1, 3};
    assert_int_equal(rc_query_history(&q, &r, &err), RC_E_BAD_REQUEST);
    const char *h2[] = {"from=0", "to=5000"};
    q = (struct rc_query){h2, 2};
    assert_int_equal(rc_query_history(&q, &r, &err), RC_E_BAD_REQUEST);
    const char *h3[] = {"from=0", "to=5000", "step=10"};
    q = (struct rc_query){h3, 3};
    assert_int_equal(rc_query_history(&q, &r, &err), 0);
    assert_int_equal(r.step_ms, 10);
}

static void encodes_history_and_gone(void **state)
{
    (void)state;
    struct rc_history_point pts[] = {{1000, 0, 0, 0, 0}, {2000, 3, 1, 40, 2}};
    char *s = rc_proto_at_encode_history("7", "players", "ann", NULL, pts, 2, 0);
    assert_string_equal(s, "{\"op\":\"history\",\"id\":7,\"board\":\"players\",\"member\":\"ann\",\"points\":["
                           "{\"at\":1000,\"seq\":0,\"score\":null,\"rank\":null},{\"at\":2000,\"seq\":3,\"score\":40,"
                           "\"rank\":2}]}");
    free(s);
    s = rc_proto_at_encode_gone(NULL, "gone", 8);
    assert_string_equal(s, "{\"op\":\"error\",\"code\":\"out_of_range\",\"message\":\"gone\",\"oldest_seq\":8}");
    free(s);
    s = rc_proto_at_encode_gone_time("3", "gone", 8, 1, 1795799603803);
    assert_string_equal(s, "{\"op\":\"error\",\"id\":3,\"code\":\"out_of_range\",\"message\":\"gone\","
                           "\"oldest_seq\":8,\"oldest_time\":1795799603803}");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builds_a_range_call_by_time),
        cmocka_unit_test(builds_and_parses_a_segmented_points_read),
        cmocka_unit_test(parses_a_window_reply),
        cmocka_unit_test(builds_and_parses_a_member_list),
        cmocka_unit_test(parses_refusals_and_refuses_other_shapes),
        cmocka_unit_test(decodes_get_and_history),
        cmocka_unit_test(decodes_replay),
        cmocka_unit_test(reads_at_from_the_query),
        cmocka_unit_test(encodes_history_and_gone),
        cmocka_unit_test(builds_counts_and_near_with_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
