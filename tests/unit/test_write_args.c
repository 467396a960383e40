/* test_write_args.c - a decoded write becomes the right KEYS/ARGV for
 * lua/write.lua, and the script's reply decodes back; no Redis involved. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_codec.h"
#include "rc_conf.h"
#include "rc_slot.h"
#include "rc_write_args.h"

#define NOV22_0800 1763769600000LL /* 2025-11-22T00:00:00Z, 08:00 on Nov 22 at +08:00 */

static const char *text =
    "[board daily]\n"
    "period = day\n"
    "utc_offset = +08:00\n"
    "[board clears]\n"
    "fields = clears desc 16, revives asc 8, first_clear_ms asc 27\n"
    "tiebreak = none\n"
    "submit_mode = best\n"
    "[board laps]\n"
    "order = asc\n"
    "ops = best\n"
    "points_min = 0\n"
    "points_max = 3600000\n"
    "tiebreak_horizon = 1d\n"
    "tiebreak_base = 2026-01-01T00:00:00Z\n"
    "[board hot]\n"
    "decay = buckets\n"
    "bucket_span = 1h\n"
    "window = 24h\n"
    "[board cool]\n"
    "decay = scale\n"
    "scale_factor = 0.5\n"
    "[board demo]\n"
    "tiebreak = none\n"
    "[board players]\n"
    "tiebreak = none\n"
    "teams = squads\n";

static struct rc_conf *conf;

static int load(void **state)
{
    (void)state;
    struct rc_error err;
    conf = malloc(sizeof *conf);
    return rc_conf_parse("t.conf", text, strlen(text), conf, &err);
}

static int unload(void **state)
{
    (void)state;
    free(conf);
    return 0;
}

static int build(const char *json, int64_t now, struct rc_request *r, struct rc_period *p, struct rc_write_args *a,
                 struct rc_error *err)
{
    assert_int_equal(rc_proto_decode(json, strlen(json), r, err), 0);
    const struct rc_board *b = rc_conf_board_find(conf, r->board);
    assert_non_null(b);
    assert_int_equal(rc_period_select(&b->period, r->period, now, p), 0);
    return rc_write_args_build(b, r, p, now, 0, a, err);
}

/* A submit by member "a" to the multi-field board clears at NOV22_0800,
 * which must build; rest is the JSON after the member (fields, req). */
static void build_clears(const char *rest, struct rc_request *r, struct rc_period *p, struct rc_write_args *a,
                         struct rc_error *err)
{
    char json[512];
    snprintf(json, sizeof json, "{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"a\",%s}", rest);
    assert_int_equal(build(json, NOV22_0800, r, p, a, err), 0);
}

/* Every key of the call hashes to one cluster slot (Redis Cluster refuses a
 * script whose keys span two: CROSSSLOT). */
static void assert_one_slot(const struct rc_write_args *a)
{
    unsigned slot = rc_slot_of_key(a->keys[0], strlen(a->keys[0]));
    for (unsigned i = 1; i < a->nkeys; i++)
        if (rc_slot_of_key(a->keys[i], strlen(a->keys[i])) != slot)
            fail_msg("KEYS[%u] %s is in another slot than %s", i + 1, a->keys[i], a->keys[0]);
}

static void test_every_key_of_a_write_is_in_one_slot(void **state)
{
    (void)state;
    static const char *const writes[] = {
        "{\"op\":\"incr\",\"board\":\"daily\",\"member\":\"u:1\",\"delta\":5,\"req\":\"q1\"}",
        "{\"op\":\"incr\",\"board\":\"hot\",\"member\":\"u:1\",\"delta\":5}",
        "{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"u:1\",\"fields\":{\"clears\":3}}",
    };
    for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++) {
        struct rc_request r;
        struct rc_period p;
        struct rc_write_args a;
        struct rc_error err;
        if (build(writes[i], NOV22_0800, &r, &p, &a, &err) != 0)
            fail_msg("%s: %s", writes[i], err.msg);
        assert_int_equal(a.nkeys, RC_WRITE_NKEYS_PLAIN);
        assert_one_slot(&a);
        rc_proto_decode_free(&r);
    }
}

/* A board with teams (docs/teams.md): its team board's keys and the
 * membership hash are in the source's slot, for writes and team ops; the
 * team board itself takes neither. */
static void test_a_board_with_teams_keeps_its_team_keys_in_its_slot(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "{\"op\":\"incr\",\"board\":\"players\",\"member\":\"u:1\",\"delta\":5}",
        "{\"op\":\"team\",\"board\":\"players\",\"member\":\"u:1\",\"team\":\"red\"}",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct rc_request r;
        struct rc_period p;
        struct rc_write_args a;
        struct rc_error err;
        if (build(ok[i], NOV22_0800, &r, &p, &a, &err) != 0)
            fail_msg("%s: %s", ok[i], err.msg);
        assert_int_equal(a.nkeys, RC_WRITE_NKEYS);
        assert_string_equal(a.keys[11], "rc:{players|}{squads}:z");
        assert_one_slot(&a);
        rc_proto_decode_free(&r);
    }
    static const char *const refused[] = {
        "{\"op\":\"incr\",\"board\":\"squads\",\"member\":\"red\",\"delta\":5}",
        "{\"op\":\"team\",\"board\":\"squads\",\"member\":\"red\",\"team\":\"x\"}",
        "{\"op\":\"team\",\"board\":\"demo\",\"member\":\"u:1\",\"team\":\"x\"}",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        struct rc_request r;
        struct rc_period p;
        struct rc_write_args a;
        struct rc_error err;
        assert_int_equal(build(refused[i], NOV22_0800, &r, &p, &a, &err), RC_E_BAD_REQUEST);
        rc_proto_decode_free(&r);
    }
}

/* A sharded board's write is built on its shard's keys ("B#i"), every one
 * of them in the shard's slot, while messages still name the board. */
static void test_write_built_as_a_shard_uses_the_shard_keys_only(void **state)
{
    (void)state;
    struct rc_request r;
    struct rc_period p;
    struct rc_write_args a;
    struct rc_error err;
    const int64_t JAN1_0100 = 1767229200000LL; /* inside laps's tie-break horizon */
    const char *json = "{\"op\":\"incr\",\"board\":\"laps\",\"member\":\"u:1\",\"delta\":5}";
    assert_int_equal(rc_proto_decode(json, strlen(json), &r, &err), 0);
    const struct rc_board *b = rc_conf_board_find(conf, "laps");
    assert_int_equal(rc_period_select(&b->period, "", JAN1_0100, &p), 0);
    /* laps takes only best: the refusal names the board, not the shard */
    assert_int_equal(rc_write_args_build_as(b, &r, &p, JAN1_0100, 1, "laps#3", &a, &err), RC_E_BAD_REQUEST);
    assert_null(strstr(err.msg, "#"));
    r.op = RC_OP_BEST;
    r.value = 1000;
    assert_int_equal(rc_write_args_build_as(b, &r, &p, JAN1_0100, 1, "laps#3", &a, &err), 0);
    for (unsigned i = 0; i < a.nkeys; i++)
        if (strncmp(a.keys[i], "rc:{laps#3|}:", 13) != 0)
            fail_msg("KEYS[%u] %s is not shard 3's", i + 1, a.keys[i]);
    assert_one_slot(&a);
    assert_string_equal(a.keys[3], "rc:{laps#3|}:req:");
    assert_string_equal(a.argv[1], "u:1");
    rc_proto_decode_free(&r);
}

static void test_periodic_write_keys_carry_board_and_local_day_tag(void **state)
{
    (void)state;
    struct rc_request r;
    struct rc_period p;
    struct rc_write_args a;
    struct rc_error err;
    /* 15:59:59.999Z on Nov 21 is still Nov 21 at +08:00; a ms later it is Nov 22 */
    int64_t now = NOV22_0800 - 8 * 3600000LL - 1;
    assert_int_equal(build("{\"op\":\"incr\",\"board\":\"daily\",\"member\":\"u:1\",\"delta\":5,\"req\":\"q1\"}", now, &r,
                           &p, &a, &err), 0);
    assert_string_equal(a.keys[0], "rc:{daily|2025-11-21}:z");
    assert_string_equal(a.keys[1], "rc:{daily|2025-11-21}:seq");
    assert_string_equal(a.keys[2], "rc:{daily|2025-11-21}:log");
    assert_string_equal(a.keys[3], "rc:{daily|2025-11-21}:req:q1");
    assert_string_equal(a.keys[4], "rc:{daily|2025-11-21}:f:u:1");
    assert_string_equal(a.keys[5], "rc:{daily|2025-11-21}:ch");
    assert_string_equal(a.argv[0], "incr");
    assert_string_equal(a.argv[1], "u:1");
    assert_string_equal(a.argv[2], "5");
    /* earliest on desc: the last ms of the day has the smallest slot */
    assert_string_equal(a.argv[4], "47817728"); /* 2^27 - 1 - 86399999 */
    assert_string_equal(a.argv[5], "134217728");
    assert_string_equal(a.argv[6], "desc");
    assert_string_equal(a.argv[9], "q1");
    assert_string_equal(a.argv[10], "600");
    assert_string_equal(a.argv[11], "1000");
    /* keys live to the end of the day 2 days later (keep = 2): 1 ms + 2 days */
    assert_string_equal(a.argv[13], "172800001");
    assert_string_equal(a.argv[a.nargv - 4], "PUBLISH"); /* one Redis: plain pub/sub */
    assert_string_equal(a.argv[a.nargv - 3], "1");       /* a period: its blocklist is seeded on first write */
    assert_non_null(strstr(a.keys[7], p.id));            /* the period's own blocklist, in its slot */
    assert_string_equal(a.seed_from, "rc:{daily|}:blocked");
    assert_string_equal(a.argv[14], "0");
    assert_string_equal(a.argv[15], "0"); /* not a hot board: no bucket */
    assert_int_equal(a.nargv, 20); /* ARGV[17 + 4F]: the publish command, the seed flag, the epoch, no new record */
    assert_string_equal(a.argv[18], ""); /* the caller fills in a random epoch id */
    assert_true(a.argv[18] == a.epoch);
    assert_string_equal(a.argv[19], "0"); /* records may be made */
    assert_int_equal(a.nkeys, 10);
    assert_string_equal(a.keys[8], "rc:{daily|2025-11-21}:epoch"); /* the epoch: same slot */
    assert_string_equal(a.keys[9], "rc:{daily|2025-11-21}:arr"); /* arrival counters: same slot */
    assert_string_equal(a.keys[7], "rc:{daily|2025-11-21}:blocked"); /* the period's own: one slot */
    rc_proto_decode_free(&r);

    assert_int_equal(build("{\"op\":\"incr\",\"board\":\"daily\",\"member\":\"u:1\",\"delta\":5}", now + 1, &r, &p, &a,
                           &err), 0);
    assert_string_equal(a.keys[0], "rc:{daily|2025-11-22}:z");
    assert_string_equal(a.argv[4], "134217727"); /* first ms of the new day: best slot */
    assert_string_equal(a.argv[9], "");
    rc_proto_decode_free(&r);
}

static void test_multi_field_args_list_fields_in_declared_order(void **state)
{
    (void)state;
    struct rc_request r;
    struct rc_period p;
    struct rc_write_args a;
    struct rc_error err;
    build_clears("\"fields\":{\"first_clear_ms\":77,\"clears\":3}", &r, &p, &a, &err);
    assert_string_equal(a.argv[12], "best");
    assert_string_equal(a.argv[13], "0"); /* all-time: no expiry */
    assert_string_equal(a.argv[14], "3");
    const char *want[] = {"clears", "16", "0", "3", "revives", "8", "1", "", "first_clear_ms", "27", "1", "77"};
    for (unsigned i = 0; i < 12; i++)
        assert_string_equal(a.argv[15 + i], want[i]);
    assert_string_equal(a.argv[27], "0"); /* ARGV[16 + 4F]: no bucket */
    assert_int_equal(a.nargv, 32);
    assert_string_equal(a.argv[31], "0"); /* ARGV[20 + 4F]: records may be made */
    rc_proto_decode_free(&r);
}

static void test_refusals_before_redis(void **state)
{
    (void)state;
    struct rc_request r;
    struct rc_period p;
    struct rc_write_args a;
    struct rc_error err;
    assert_int_equal(build("{\"op\":\"set\",\"board\":\"laps\",\"member\":\"a\",\"value\":1}", NOV22_0800, &r, &p, &a, &err),
                     RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "not allowed"));
    rc_proto_decode_free(&r);
    assert_int_equal(build("{\"op\":\"best\",\"board\":\"laps\",\"member\":\"a\",\"value\":3600001}", 1767225600000LL, &r,
                           &p, &a, &err), RC_E_OUT_OF_RANGE);
    rc_proto_decode_free(&r);
    assert_int_equal(build("{\"op\":\"best\",\"board\":\"laps\",\"member\":\"a\",\"value\":-1}", 1767225600000LL, &r, &p,
                           &a, &err), RC_E_OUT_OF_RANGE);
    rc_proto_decode_free(&r);
    /* before the tie-break base: the slot would be negative */
    assert_int_equal(build("{\"op\":\"best\",\"board\":\"laps\",\"member\":\"a\",\"value\":5}", NOV22_0800, &r, &p, &a,
                           &err), RC_E_OUT_OF_RANGE);
    rc_proto_decode_free(&r);
    assert_int_equal(build("{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"a\",\"fields\":{\"clears\":65536}}",
                           NOV22_0800, &r, &p, &a, &err), RC_E_OUT_OF_RANGE);
    rc_proto_decode_free(&r);
    assert_int_equal(build("{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"a\",\"fields\":{\"bogus\":1}}",
                           NOV22_0800, &r, &p, &a, &err), RC_E_BAD_REQUEST);
    rc_proto_decode_free(&r);
    assert_int_equal(build("{\"op\":\"incr\",\"board\":\"clears\",\"member\":\"a\",\"delta\":1}", NOV22_0800, &r, &p, &a,
                           &err), RC_E_BAD_REQUEST);
    rc_proto_decode_free(&r);
}

static void test_hot_board_write_goes_to_the_bucket_of_now(void **state)
{
    (void)state;
    struct rc_request r;
    struct rc_period p;
    struct rc_write_args a;
    struct rc_error err;
    /* 13:30 on 2025-11-22 UTC: hour 489,936 + 13 of the epoch */
    int64_t now = NOV22_0800 + 13 * 3600000LL + 30 * 60000LL;
    assert_int_equal(build("{\"op\":\"incr\",\"board\":\"hot\",\"member\":\"u:1\",\"delta\":5,\"req\":\"h1\"}", now,
                           &r, &p, &a, &err), 0);
    assert_int_equal(a.nkeys, 10);
    assert_string_equal(a.keys[0], "rc:{hot|}:z"); /* the read board: score and rank come from there */
    assert_string_equal(a.keys[3], "rc:{hot|}:req:h1");
    assert_string_equal(a.keys[6], "rc:{hot|}:b:489949");
    assert_string_equal(a.argv[0], "incr");
    assert_string_equal(a.argv[5], "1"); /* no tie-break: 2^0 */
    assert_string_equal(a.argv[13], "0");  /* all-time: the board itself never expires */
    assert_string_equal(a.argv[14], "0");  /* no fields */
    assert_string_equal(a.argv[15], "90000000"); /* the bucket lives window + span: 25 h */
    assert_int_equal(a.nargv, 20);
    assert_string_equal(a.argv[17], "0"); /* no periods: one blocklist, nothing to seed */
    assert_string_equal(a.seed_from, "");
    rc_proto_decode_free(&r);
    /* one ms before the hour: the previous bucket */
    assert_int_equal(build("{\"op\":\"incr\",\"board\":\"hot\",\"member\":\"u:1\",\"delta\":5}",
                           NOV22_0800 + 13 * 3600000LL - 1, &r, &p, &a, &err), 0);
    assert_string_equal(a.keys[6], "rc:{hot|}:b:489948");
    rc_proto_decode_free(&r);
    /* only incr applies to a hot board */
    assert_int_equal(build("{\"op\":\"set\",\"board\":\"hot\",\"member\":\"u:1\",\"value\":5}", now, &r, &p, &a,
                           &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "only incr"));
    rc_proto_decode_free(&r);
}

static void test_scaled_board_write_is_an_ordinary_write(void **state)
{
    (void)state;
    struct rc_request r;
    struct rc_period p;
    struct rc_write_args a;
    struct rc_error err;
    assert_int_equal(build("{\"op\":\"set\",\"board\":\"cool\",\"member\":\"u:1\",\"value\":5}", NOV22_0800, &r,
                           &p, &a, &err), 0);
    assert_int_equal(a.nkeys, 10);
    assert_string_equal(a.keys[0], "rc:{cool|}:z");
    assert_string_equal(a.argv[15], "0");
    rc_proto_decode_free(&r);
}

static void test_reply_of_a_scaled_board_keeps_the_fraction(void **state)
{
    (void)state;
    const struct rc_board *b = rc_conf_board_find(conf, "cool");
    struct rc_write_result res;
    struct rc_reply_item ok[8] = {{0, 0, "ok"}, {0, 0, "12.5"}, {1, 1, NULL},   {1, 4, NULL},
                                  {0, 0, "12.5"}, {1, 1, NULL}, {0, 0, "u:1"}, {1, 1, NULL}};
    assert_int_equal(rc_write_args_result_parse(b, ok, 8, &res), 0);
    assert_true(res.score == 12.5);
    assert_true(res.composite == 12.5);
}

static void test_reply_decodes_score_from_composite(void **state)
{
    (void)state;
    const struct rc_board *b = rc_conf_board_find(conf, "daily");
    struct rc_write_result res;
    double c;
    struct rc_error err;
    assert_int_equal(rc_codec_encode_points(&b->layout, 1234, 99, &c, &err), 0);
    char cs[32];
    snprintf(cs, sizeof cs, "%.17g", c);
    struct rc_reply_item ok[8] = {{0, 0, "ok"}, {0, 0, "1234"}, {1, 3, NULL}, {1, 17, NULL},
                                  {0, 0, cs},   {1, 9, NULL},   {0, 0, "u:1"}, {1, 1, NULL}};
    assert_int_equal(rc_write_args_result_parse(b, ok, 8, &res), 0);
    assert_int_equal(res.status, 0);
    assert_true(res.score == 1234);
    assert_int_equal(res.rank, 3);
    assert_int_equal(res.seq, 17);
    assert_int_equal(res.old_rank, 9);
    assert_true(res.changed);
    assert_false(res.duplicate);
    assert_string_equal(res.member, "u:1");

    struct rc_reply_item oor[2] = {{0, 0, "out_of_range"}, {0, 0, "score 9 is outside"}};
    assert_int_equal(rc_write_args_result_parse(b, oor, 2, &res), 0);
    assert_int_equal(res.status, RC_E_OUT_OF_RANGE);
    assert_string_equal(res.message, "score 9 is outside");

    struct rc_reply_item weird[3] = {{0, 0, "ok"}, {1, 1, NULL}, {1, 1, NULL}};
    assert_int_equal(rc_write_args_result_parse(b, weird, 3, &res), RC_E_INTERNAL);
    ok[2].is_int = 0;
    ok[2].str = "3";
    assert_int_equal(rc_write_args_result_parse(b, ok, 8, &res), RC_E_INTERNAL);
}

/* A writer at its idempotency cap: the flag ARGV[20 + 4F] says "no new
 * record", past the fields and before any seed the gateway appends. */
static void test_no_new_record_sets_its_flag_after_the_fields(void **state)
{
    (void)state;
    struct rc_request r;
    struct rc_period p;
    struct rc_write_args a;
    struct rc_error err;
    build_clears("\"fields\":{\"clears\":3},\"req\":\"c-1\"", &r, &p, &a, &err);
    rc_write_args_no_new_record(&a);
    assert_int_equal(a.nargv, 32);
    assert_string_equal(a.argv[31], "1"); /* ARGV[20 + 4F], F = 3 */
    assert_true(a.argv[30] == a.epoch);   /* the rest as built */
    rc_proto_decode_free(&r);
    assert_int_equal(build("{\"op\":\"incr\",\"board\":\"daily\",\"member\":\"u:1\",\"delta\":5,\"req\":\"q1\"}",
                           NOV22_0800, &r, &p, &a, &err), 0);
    rc_write_args_no_new_record(&a);
    assert_int_equal(a.nargv, 20);
    assert_string_equal(a.argv[19], "1"); /* ARGV[20], F = 0 */
    assert_string_equal(a.argv[17], "1"); /* the seed flag stays */
    rc_proto_decode_free(&r);
}

/* The script's "no_record": nothing was written, refused as rate_limited. */
static void test_reply_no_record_is_a_rate_limited_refusal(void **state)
{
    (void)state;
    const struct rc_board *b = rc_conf_board_find(conf, "daily");
    struct rc_write_result res;
    struct rc_reply_item nr[1] = {{0, 0, "no_record"}};
    assert_int_equal(rc_write_args_result_parse(b, nr, 1, &res), 0);
    assert_int_equal(res.status, RC_E_RATE_LIMITED);
    assert_true(res.no_record);
    assert_false(res.duplicate);
    assert_false(res.unseeded);
    assert_non_null(strstr(res.message, "nothing was written"));
    struct rc_reply_item other[1] = {{0, 0, "no_such"}};
    assert_int_equal(rc_write_args_result_parse(b, other, 1, &res), RC_E_INTERNAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_periodic_write_keys_carry_board_and_local_day_tag),
        cmocka_unit_test(test_every_key_of_a_write_is_in_one_slot),
        cmocka_unit_test(test_a_board_with_teams_keeps_its_team_keys_in_its_slot),
        cmocka_unit_test(test_write_built_as_a_shard_uses_the_shard_keys_only),
        cmocka_unit_test(test_multi_field_args_list_fields_in_declared_order),
        cmocka_unit_test(test_refusals_before_redis),
        cmocka_unit_test(test_reply_decodes_score_from_composite),
        cmocka_unit_test(test_hot_board_write_goes_to_the_bucket_of_now),
        cmocka_unit_test(test_scaled_board_write_is_an_ordinary_write),
        cmocka_unit_test(test_reply_of_a_scaled_board_keeps_the_fraction),
        cmocka_unit_test(test_no_new_record_sets_its_flag_after_the_fields),
        cmocka_unit_test(test_reply_no_record_is_a_rate_limited_refusal),
    };
    return cmocka_run_group_tests_name("write_args", tests, load, unload);
}
