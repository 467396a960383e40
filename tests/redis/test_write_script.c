/* test_write_script.c - lua/write.lua through the gateway's write path
 * (gw_write_submit, EVALSHA on async hiredis) against a real redis-server. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "rc_keys.h"
#include "rc_test_redis.h"
#include "rc_test_writer.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00Z */

static const char *conf_text =
    "[board tdesc]\n"
    "order = desc\n"
    "tiebreak = earliest\n"
    "tiebreak_resolution = 1ms\n"
    "tiebreak_horizon = 1d\n"
    "tiebreak_base = 2026-01-01T00:00:00Z\n"
    "points_min = -1000\n"
    "points_max = 1000\n"
    "idempotency_window = 60s\n"
    "log_cap = 5\n"
    "[board tdesc_latest]\n"
    "tiebreak = latest\n"
    "tiebreak_horizon = 1d\n"
    "tiebreak_base = 2026-01-01T00:00:00Z\n"
    "[board tasc]\n"
    "order = asc\n"
    "tiebreak_horizon = 1d\n"
    "tiebreak_base = 2026-01-01T00:00:00Z\n"
    "[board tasc_latest]\n"
    "order = asc\n"
    "tiebreak = latest\n"
    "tiebreak_horizon = 1d\n"
    "tiebreak_base = 2026-01-01T00:00:00Z\n"
    "[board laps]\n"
    "order = asc\n"
    "ops = best\n"
    "points_min = 0\n"
    "points_max = 3600000\n"
    "tiebreak_horizon = 1d\n"
    "tiebreak_base = 2026-01-01T00:00:00Z\n"
    "[board clears]\n"
    "fields = clears desc 16, revives asc 8, first_clear_ms asc 27\n"
    "tiebreak = none\n"
    "[board plain]\n"
    "tiebreak = none\n"
    "[board tday]\n"
    "period = day\n"
    "utc_offset = +08:00\n"
    "keep = 1\n"
    "[board hot]\n"
    "ops = incr\n"
    "decay = buckets\n"
    "bucket_span = 1h\n"
    "window = 4h\n"
    "[board cool]\n"
    "decay = scale\n"
    "scale_factor = 0.5\n";

struct fixture {
    struct rc_test_redis redis;
    struct rc_test_writer w;
    struct rc_conf *conf;
    redisContext *sync;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (rc_test_redis_start(&f->redis, NULL) != 0)
        return -1;
    if (rc_test_writer_open(&f->w, f->redis.port, 1) != 0)
        return -1;
    f->conf = rc_test_conf(conf_text);
    f->sync = rc_test_redis_connect(&f->redis);
    *state = f;
    return f->sync ? 0 : -1;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    redisFree(f->sync);
    rc_test_writer_close(&f->w);
    rc_test_redis_stop(&f->redis);
    free(f->conf);
    free(f);
    return 0;
}

/* A write that must succeed: returns its result. */
static struct rc_write_result ok_write(struct fixture *f, int64_t now, const char *fmt, ...)
{
    char json[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(json, sizeof json, fmt, ap);
    va_end(ap);
    struct rc_write_result res;
    struct rc_error err = {0, ""};
    int rc = rc_test_write(&f->w, f->conf, json, now, &res, &err);
    if (rc != 0)
        fail_msg("write %s failed: %s %s", json, rc_err_code_name(rc), err.msg);
    assert_int_equal(res.status, 0);
    return res;
}

static long long redis_int(struct fixture *f, const char *fmt, const char *key)
{
    redisReply *r = redisCommand(f->sync, fmt, key);
    assert_non_null(r);
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer
                  : r->type == REDIS_REPLY_STRING ? atoll(r->str)
                                                   : -1;
    freeReplyObject(r);
    return v;
}

static void key_of(char *out, const char *board, const char *suffix)
{
    assert_int_equal(rc_keys_board(out, RC_KEY_MAX, board, "", suffix, NULL), 0);
}

static void test_retried_req_changes_nothing_and_answers_duplicate(void **state)
{
    struct fixture *f = *state;
    struct rc_write_result a = ok_write(f, T0 + 1, "{\"op\":\"incr\",\"board\":\"tdesc\",\"member\":\"u:1\",\"delta\":10,\"req\":\"r-1\"}");
    assert_false(a.duplicate);
    assert_true(a.changed);
    assert_int_equal((long long)a.score, 10);
    assert_int_equal(a.rank, 1);
    struct rc_write_result b = ok_write(f, T0 + 2, "{\"op\":\"incr\",\"board\":\"tdesc\",\"member\":\"u:1\",\"delta\":10,\"req\":\"r-1\"}");
    assert_true(b.duplicate);
    assert_false(b.changed);
    assert_int_equal((long long)b.score, 10);
    assert_int_equal(b.seq, a.seq);
    assert_int_equal(b.rank, 1);
    assert_string_equal(b.member, "u:1");
    char seq[RC_KEY_MAX];
    key_of(seq, "tdesc", "seq");
    assert_int_equal(redis_int(f, "GET %s", seq), a.seq);
    /* a new req is a new write */
    struct rc_write_result c = ok_write(f, T0 + 3, "{\"op\":\"incr\",\"board\":\"tdesc\",\"member\":\"u:1\",\"delta\":10,\"req\":\"r-2\"}");
    assert_false(c.duplicate);
    assert_int_equal((long long)c.score, 20);
    assert_int_equal(c.seq, a.seq + 1);
}

/* bob reaches 100 first (t+10), alice later (t+20): the tie-break decides. */
static void race_to_100(struct fixture *f, const char *board)
{
    ok_write(f, T0 + 1, "{\"op\":\"set\",\"board\":\"%s\",\"member\":\"alice\",\"value\":50}", board);
    ok_write(f, T0 + 10, "{\"op\":\"set\",\"board\":\"%s\",\"member\":\"bob\",\"value\":100}", board);
    struct rc_write_result a = ok_write(f, T0 + 20, "{\"op\":\"incr\",\"board\":\"%s\",\"member\":\"alice\",\"delta\":50}", board);
    assert_int_equal((long long)a.score, 100);
}

/* The member Redis itself puts at rank 1 (ZRANGE, REV for desc boards). */
static void assert_rank1(struct fixture *f, const char *board, int desc, const char *want)
{
    char z[RC_KEY_MAX];
    key_of(z, board, "z");
    redisReply *r = redisCommand(f->sync, desc ? "ZRANGE %s 0 0 REV" : "ZRANGE %s 0 0", z);
    assert_int_equal(r->elements, 1);
    assert_string_equal(r->element[0]->str, want);
    freeReplyObject(r);
}

static void test_earliest_to_reach_score_ranks_first_on_desc_board(void **state)
{
    struct fixture *f = *state;
    race_to_100(f, "tdesc");
    assert_rank1(f, "tdesc", 1, "bob");
    struct rc_write_result r = ok_write(f, T0 + 30, "{\"op\":\"incr\",\"board\":\"tdesc\",\"member\":\"alice\",\"delta\":0}");
    assert_int_equal(r.rank, 2); /* incr 0 keeps alice's reach time */
    assert_false(r.changed);
}

static void test_latest_to_reach_score_ranks_first_on_desc_board(void **state)
{
    struct fixture *f = *state;
    race_to_100(f, "tdesc_latest");
    assert_rank1(f, "tdesc_latest", 1, "alice");
}

static void test_earliest_to_reach_score_ranks_first_on_asc_board(void **state)
{
    struct fixture *f = *state;
    race_to_100(f, "tasc"); /* both hold 100: only the tie-break differs */
    assert_rank1(f, "tasc", 0, "bob");
}

static void test_latest_to_reach_score_ranks_first_on_asc_board(void **state)
{
    struct fixture *f = *state;
    race_to_100(f, "tasc_latest");
    assert_rank1(f, "tasc_latest", 0, "alice");
}

static void test_best_on_asc_board_keeps_lower_time_and_first_reach(void **state)
{
    struct fixture *f = *state;
    struct rc_write_result r;
    r = ok_write(f, T0 + 1, "{\"op\":\"best\",\"board\":\"laps\",\"member\":\"kimi\",\"value\":90000}");
    assert_int_equal((long long)r.score, 90000);
    int64_t seq = r.seq;
    r = ok_write(f, T0 + 2, "{\"op\":\"best\",\"board\":\"laps\",\"member\":\"kimi\",\"value\":95000}");
    assert_int_equal((long long)r.score, 90000); /* slower lap: kept the faster */
    assert_false(r.changed);
    assert_int_equal(r.seq, seq);
    r = ok_write(f, T0 + 3, "{\"op\":\"best\",\"board\":\"laps\",\"member\":\"kimi\",\"value\":85000}");
    assert_int_equal((long long)r.score, 85000);
    assert_true(r.changed);
    r = ok_write(f, T0 + 4, "{\"op\":\"best\",\"board\":\"laps\",\"member\":\"lewis\",\"value\":85000}");
    assert_int_equal(r.rank, 2); /* same lap time, set later */
    r = ok_write(f, T0 + 5, "{\"op\":\"best\",\"board\":\"laps\",\"member\":\"kimi\",\"value\":85000}");
    assert_false(r.changed); /* equalling your own best keeps the earlier time */
    assert_int_equal(r.rank, 1);
    r = ok_write(f, T0 + 6, "{\"op\":\"best\",\"board\":\"laps\",\"member\":\"lewis\",\"value\":84999}");
    assert_int_equal(r.rank, 1);
}

static void test_multi_field_board_ranks_clears_desc_revives_asc_time_asc(void **state)
{
    struct fixture *f = *state;
    ok_write(f, T0, "{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"a\",\"fields\":{\"clears\":5,\"revives\":2,\"first_clear_ms\":1000}}");
    ok_write(f, T0, "{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"b\",\"fields\":{\"clears\":5,\"revives\":1,\"first_clear_ms\":2000}}");
    ok_write(f, T0, "{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"c\",\"fields\":{\"clears\":5,\"revives\":1,\"first_clear_ms\":1500}}");
    struct rc_write_result d = ok_write(f, T0, "{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"d\",\"fields\":{\"clears\":6,\"revives\":9,\"first_clear_ms\":99999}}");
    assert_int_equal(d.rank, 1);
    assert_int_equal(d.nfields, 3);
    assert_int_equal(d.fields[0], 6);
    assert_int_equal(d.fields[1], 9);
    assert_int_equal(d.fields[2], 99999);
    assert_int_equal((long long)d.score, 6);
    char z[RC_KEY_MAX];
    key_of(z, "clears", "z");
    redisReply *r = redisCommand(f->sync, "ZRANGE %s 0 -1 REV", z);
    assert_int_equal(r->elements, 4);
    assert_string_equal(r->element[0]->str, "d");
    assert_string_equal(r->element[1]->str, "c");
    assert_string_equal(r->element[2]->str, "b");
    assert_string_equal(r->element[3]->str, "a");
    freeReplyObject(r);
    /* a partial submit merges with the stored fields */
    struct rc_write_result a = ok_write(f, T0, "{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"a\",\"fields\":{\"revives\":0}}");
    assert_int_equal(a.rank, 2);
    assert_int_equal(a.fields[0], 5);
    assert_int_equal(a.fields[1], 0);
    assert_int_equal(a.fields[2], 1000);
}

/* A member's fields are read back from its composite (lua/write.lua): no
 * per-member hash is written, so a reset (which frees the set) leaves
 * nothing behind, and a member off the set starts from zero fields. */
static void test_partial_submit_of_a_member_off_the_set_ignores_its_old_fields(void **state)
{
    struct fixture *f = *state;
    ok_write(f, T0, "{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"a\",\"fields\":{\"clears\":5,\"revives\":2,\"first_clear_ms\":1000}}");
    char z[RC_KEY_MAX], fk[RC_KEY_MAX];
    key_of(z, "clears", "z");
    assert_int_equal(rc_keys_board(fk, RC_KEY_MAX, "clears", "", "f", "a"), 0);
    assert_int_equal(redis_int(f, "EXISTS %s", fk), 0); /* no hash per member */
    assert_int_equal(redis_int(f, "DEL %s", z), 1); /* what a reset leaves: nothing of a */
    struct rc_write_result a = ok_write(f, T0, "{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"a\",\"fields\":{\"revives\":1}}");
    assert_int_equal(a.rank, 1);
    assert_int_equal(a.fields[0], 0);
    assert_int_equal(a.fields[1], 1);
    assert_int_equal(a.fields[2], 0);
    assert_int_equal(redis_int(f, "EXISTS %s", fk), 0);
}

/* Every field at its extremes survives the trip through the composite: a
 * partial submit keeps the others exactly (asc fields stored reversed). */
static void test_partial_submit_keeps_every_other_field_exactly(void **state)
{
    struct fixture *f = *state;
    /* clears desc 16, revives asc 8, first_clear_ms asc 27 (conf/rankcast.conf) */
    static const char *const cases[][3] = {
        {"65535", "255", "134217727"}, {"0", "0", "0"}, {"1", "254", "1"}, {"40000", "7", "99999999"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char w[256];
        snprintf(w, sizeof w,
                 "{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"x%zu\",\"fields\":{\"clears\":%s,"
                 "\"revives\":%s,\"first_clear_ms\":%s}}",
                 i, cases[i][0], cases[i][1], cases[i][2]);
        ok_write(f, T0, w);
        for (int k = 0; k < 3; k++) {
            static const char *const names[] = {"clears", "revives", "first_clear_ms"};
            snprintf(w, sizeof w, "{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"x%zu\",\"fields\":{\"%s\":%s}}",
                     i, names[k], cases[i][k]);
            struct rc_write_result a = ok_write(f, T0, w);
            for (int j = 0; j < 3; j++)
                assert_int_equal(a.fields[j], atoll(cases[i][j]));
        }
    }
}

static long long llen(struct fixture *f, const char *board)
{
    char k[RC_KEY_MAX];
    key_of(k, board, "log");
    return redis_int(f, "LLEN %s", k);
}

static void test_out_of_range_write_leaves_board_seq_and_log_untouched(void **state)
{
    struct fixture *f = *state;
    struct rc_write_result r = ok_write(f, T0 + 1, "{\"op\":\"set\",\"board\":\"tdesc\",\"member\":\"x\",\"value\":990}");
    char z[RC_KEY_MAX], seq[RC_KEY_MAX];
    key_of(z, "tdesc", "z");
    key_of(seq, "tdesc", "seq");
    long long len0 = llen(f, "tdesc");
    redisReply *before = redisCommand(f->sync, "ZSCORE %s x", z);
    char *score0 = strdup(before->str);
    freeReplyObject(before);

    struct rc_write_result res;
    struct rc_error err = {0, ""};
    /* incr past points_max: only the script can know (depends on the old score) */
    int rc = rc_test_write(&f->w, f->conf,
                           "{\"op\":\"incr\",\"board\":\"tdesc\",\"member\":\"x\",\"delta\":11,\"req\":\"oor-1\"}",
                           T0 + 2, &res, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(res.status, RC_E_OUT_OF_RANGE);
    assert_non_null(strstr(res.message, "outside"));
    /* set past points_max: refused before Redis is asked */
    rc = rc_test_write(&f->w, f->conf, "{\"op\":\"set\",\"board\":\"tdesc\",\"member\":\"y\",\"value\":1001}",
                       T0 + 3, &res, &err);
    assert_int_equal(rc, RC_E_OUT_OF_RANGE);
    /* a time outside the tie-break horizon */
    rc = rc_test_write(&f->w, f->conf, "{\"op\":\"set\",\"board\":\"tdesc\",\"member\":\"y\",\"value\":1}",
                       T0 + 86400000LL, &res, &err);
    assert_int_equal(rc, RC_E_OUT_OF_RANGE);

    redisReply *after = redisCommand(f->sync, "ZSCORE %s x", z);
    assert_string_equal(after->str, score0);
    freeReplyObject(after);
    assert_int_equal(redis_int(f, "ZCARD %s", z), 1); /* only x */
    redisReply *y = redisCommand(f->sync, "ZSCORE %s y", z);
    assert_int_equal(y->type, REDIS_REPLY_NIL);
    freeReplyObject(y);
    assert_int_equal(redis_int(f, "GET %s", seq), r.seq);
    assert_int_equal(llen(f, "tdesc"), len0);
    /* the refused req was not remembered: the corrected retry goes through */
    struct rc_write_result ok = ok_write(f, T0 + 4, "{\"op\":\"incr\",\"board\":\"tdesc\",\"member\":\"x\",\"delta\":10,\"req\":\"oor-1\"}");
    assert_false(ok.duplicate);
    assert_int_equal((long long)ok.score, 1000);
    free(score0);
}

static void test_change_log_never_exceeds_its_cap(void **state)
{
    struct fixture *f = *state;
    struct rc_write_result r = {0};
    for (int i = 0; i < 20; i++) {
        r = ok_write(f, T0 + i, "{\"op\":\"incr\",\"board\":\"tdesc\",\"member\":\"m%d\",\"delta\":%d}", i % 3, i + 1);
        assert_true(llen(f, "tdesc") <= 5);
    }
    assert_int_equal(llen(f, "tdesc"), 5);
    char k[RC_KEY_MAX];
    key_of(k, "tdesc", "log");
    redisReply *log = redisCommand(f->sync, "LRANGE %s 0 -1", k);
    for (size_t i = 0; i < log->elements; i++) {
        cJSON *e = cJSON_Parse(log->element[i]->str);
        assert_non_null(e);
        /* the newest five, oldest first */
        assert_int_equal(cJSON_GetObjectItem(e, "seq")->valuedouble, (double)(r.seq - 4 + (int64_t)i));
        cJSON_Delete(e);
    }
    freeReplyObject(log);
}

static void test_published_event_matches_reply(void **state)
{
    struct fixture *f = *state;
    redisContext *sub = rc_test_redis_connect(&f->redis);
    char ch[RC_KEY_MAX];
    key_of(ch, "plain", "ch");
    redisReply *r = redisCommand(sub, "SUBSCRIBE %s", ch);
    freeReplyObject(r);
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"plain\",\"member\":\"p:1\",\"value\":700}");
    struct rc_write_result w = ok_write(f, T0 + 5, "{\"op\":\"incr\",\"board\":\"plain\",\"member\":\"p:2\",\"delta\":900}");
    for (int n = 0; n < 2; n++) {
        assert_int_equal(redisGetReply(sub, (void **)&r), REDIS_OK);
        assert_int_equal(r->type, REDIS_REPLY_ARRAY);
        assert_string_equal(r->element[0]->str, "message");
        cJSON *e = cJSON_Parse(r->element[2]->str);
        assert_non_null(e);
        if (n == 1) {
            assert_int_equal(cJSON_GetObjectItem(e, "seq")->valuedouble, (double)w.seq);
            assert_string_equal(cJSON_GetObjectItem(e, "member")->valuestring, "p:2");
            assert_string_equal(cJSON_GetObjectItem(e, "op")->valuestring, "incr");
            assert_true(cJSON_GetObjectItem(e, "score")->valuedouble == w.score);
            assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "old_score")));
            assert_true(cJSON_GetObjectItem(e, "c")->valuedouble == w.composite);
            assert_int_equal(cJSON_GetObjectItem(e, "rank")->valuedouble, (double)w.rank);
            assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "old_rank")));
            assert_int_equal(cJSON_GetObjectItem(e, "at")->valuedouble, (double)(T0 + 5));
            assert_int_equal(w.rank, 1);
        }
        cJSON_Delete(e);
        freeReplyObject(r);
    }
    /* a move reports both ranks */
    ok_write(f, T0 + 6, "{\"op\":\"incr\",\"board\":\"plain\",\"member\":\"p:1\",\"delta\":300}");
    assert_int_equal(redisGetReply(sub, (void **)&r), REDIS_OK);
    cJSON *e = cJSON_Parse(r->element[2]->str);
    assert_int_equal(cJSON_GetObjectItem(e, "old_rank")->valuedouble, 2);
    assert_int_equal(cJSON_GetObjectItem(e, "rank")->valuedouble, 1);
    assert_int_equal(cJSON_GetObjectItem(e, "old_score")->valuedouble, 700);
    assert_int_equal(cJSON_GetObjectItem(e, "score")->valuedouble, 1000);
    cJSON_Delete(e);
    freeReplyObject(r);
    redisFree(sub);
}

static void test_next_call_succeeds_after_script_flush(void **state)
{
    struct fixture *f = *state;
    ok_write(f, T0, "{\"op\":\"incr\",\"board\":\"plain\",\"member\":\"q\",\"delta\":1}");
    unsigned long reloads = f->w.script.reloads;
    redisReply *r = redisCommand(f->sync, "SCRIPT FLUSH");
    freeReplyObject(r);
    struct rc_write_result w = ok_write(f, T0, "{\"op\":\"incr\",\"board\":\"plain\",\"member\":\"q\",\"delta\":1}");
    assert_int_equal((long long)w.score, 2);
    assert_int_equal(f->w.script.reloads, reloads + 1);
}

static void test_op_not_declared_for_board_is_refused_before_redis(void **state)
{
    struct fixture *f = *state;
    struct rc_write_result res;
    struct rc_error err = {0, ""};
    int rc = rc_test_write(&f->w, f->conf, "{\"op\":\"incr\",\"board\":\"laps\",\"member\":\"a\",\"delta\":1}", T0,
                           &res, &err);
    assert_int_equal(rc, RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "not allowed"));
    rc = rc_test_write(&f->w, f->conf,
                       "{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"a\",\"fields\":{\"nope\":1}}", T0, &res,
                       &err);
    assert_int_equal(rc, RC_E_BAD_REQUEST);
    rc = rc_test_write(&f->w, f->conf,
                       "{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"a\",\"fields\":{\"revives\":256}}", T0,
                       &res, &err);
    assert_int_equal(rc, RC_E_OUT_OF_RANGE);
    char z[RC_KEY_MAX];
    key_of(z, "laps", "z");
    assert_int_equal(redis_int(f, "EXISTS %s", z), 0);
}

static void test_periodic_keys_expire_keep_periods_after_their_period(void **state)
{
    struct fixture *f = *state;
    /* T0 is 08:00 on 2026-01-01 at +08:00: the day ends in 16 h, keep = 1 adds a day */
    ok_write(f, T0, "{\"op\":\"incr\",\"board\":\"tday\",\"member\":\"a\",\"delta\":1}");
    const char *keys[] = {"rc:{tday|2026-01-01}:z", "rc:{tday|2026-01-01}:seq", "rc:{tday|2026-01-01}:log",
                          "rc:{tday|2026-01-01}:epoch"};
    for (int i = 0; i < 4; i++) {
        long long ttl = redis_int(f, "PTTL %s", keys[i]);
        assert_true(ttl > (16 + 24) * 3600000LL - 60000 && ttl <= (16 + 24) * 3600000LL);
    }
    /* all-time boards never expire */
    ok_write(f, T0, "{\"op\":\"incr\",\"board\":\"plain\",\"member\":\"a\",\"delta\":1}");
    assert_int_equal(redis_int(f, "PTTL %s", "rc:{plain|}:z"), -1);
}

/* The board's epoch id (HGET rc:{B|}:epoch id) into out, "" when none. */
static void epoch_of(struct fixture *f, const char *board, char *out, size_t cap)
{
    char key[RC_KEY_MAX];
    key_of(key, board, "epoch");
    redisReply *r = redisCommand(f->sync, "HGET %s id", key);
    assert_non_null(r);
    snprintf(out, cap, "%s", r->type == REDIS_REPLY_STRING ? r->str : "");
    freeReplyObject(r);
}

/* The change log's entries of board, joined by "\n". */
static void log_of(struct fixture *f, const char *board, char *out, size_t cap)
{
    char key[RC_KEY_MAX];
    key_of(key, board, "log");
    redisReply *r = redisCommand(f->sync, "LRANGE %s 0 -1", key);
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    out[0] = '\0';
    for (size_t i = 0; i < r->elements; i++) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%s", i ? "\n" : "", r->element[i]->str);
    }
    freeReplyObject(r);
}

/* The first write that changes a board creates its epoch (a random id from
 * the gateway) and names it in its event; later writes keep it and their
 * events do not repeat it; a write that changes nothing creates none. */
static void test_first_write_creates_the_epoch_once(void **state)
{
    struct fixture *f = *state;
    char e1[64], e2[64], log[2048];
    ok_write(f, T0 + 1, "{\"op\":\"set\",\"board\":\"plain\",\"member\":\"a\",\"value\":0}");
    epoch_of(f, "plain", e1, sizeof e1);
    assert_int_equal(strlen(e1), 16);
    log_of(f, "plain", log, sizeof log);
    char want[96];
    snprintf(want, sizeof want, ",\"epoch\":\"%s\"}", e1);
    assert_non_null(strstr(log, want));
    ok_write(f, T0 + 2, "{\"op\":\"incr\",\"board\":\"plain\",\"member\":\"b\",\"delta\":5}");
    ok_write(f, T0 + 3, "{\"op\":\"incr\",\"board\":\"plain\",\"member\":\"b\",\"delta\":0}"); /* no change */
    epoch_of(f, "plain", e2, sizeof e2);
    assert_string_equal(e1, e2);
    log_of(f, "plain", log, sizeof log);
    const char *at = strstr(log, want);
    assert_non_null(at);
    assert_null(strstr(at + strlen(want), "epoch")); /* only the first event names it */
    assert_ptr_equal(strstr(log, "epoch"), at + 2);
    /* a refused write on another board creates nothing */
    char dup[64];
    epoch_of(f, "tdesc", dup, sizeof dup);
    assert_string_equal(dup, "");
}

/* A set deleted from outside (DEL from redis-cli) ends the board's history:
 * the next write starts a new one with a new epoch and drops the old log;
 * seq goes on growing. */
static void test_a_set_deleted_from_outside_starts_a_new_epoch_on_the_next_write(void **state)
{
    struct fixture *f = *state;
    char e1[64], e2[64], log[2048], z[RC_KEY_MAX];
    ok_write(f, T0 + 1, "{\"op\":\"incr\",\"board\":\"plain\",\"member\":\"a\",\"delta\":1}");
    ok_write(f, T0 + 2, "{\"op\":\"incr\",\"board\":\"plain\",\"member\":\"b\",\"delta\":2}");
    epoch_of(f, "plain", e1, sizeof e1);
    key_of(z, "plain", "z");
    assert_int_equal(redis_int(f, "DEL %s", z), 1);
    struct rc_write_result r =
        ok_write(f, T0 + 3, "{\"op\":\"incr\",\"board\":\"plain\",\"member\":\"c\",\"delta\":3}");
    assert_int_equal(r.seq, 3);
    assert_int_equal(r.rank, 1);
    epoch_of(f, "plain", e2, sizeof e2);
    assert_int_equal(strlen(e2), 16);
    assert_string_not_equal(e1, e2);
    log_of(f, "plain", log, sizeof log);
    assert_null(strchr(log, '\n')); /* one event: the new history's first */
    assert_non_null(strstr(log, "\"member\":\"c\""));
    assert_non_null(strstr(log, e2));
    /* the same for a flushed Redis: a new history from seq 1 */
    redisReply *fl = redisCommand(f->sync, "FLUSHALL");
    freeReplyObject(fl);
    r = ok_write(f, T0 + 4, "{\"op\":\"incr\",\"board\":\"plain\",\"member\":\"d\",\"delta\":4}");
    assert_int_equal(r.seq, 1);
    epoch_of(f, "plain", e1, sizeof e1);
    assert_int_equal(strlen(e1), 16);
    assert_string_not_equal(e1, e2);
}

/* The members of a set, sorted, joined by ",", the sentinel "" shown as "''". */
static void set_members(struct fixture *f, const char *key, char *out, size_t cap)
{
    redisReply *r = redisCommand(f->sync, "SORT %s ALPHA", key);
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    out[0] = '\0';
    for (size_t i = 0; i < r->elements; i++) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%s", i ? "," : "", r->element[i]->len ? r->element[i]->str : "''");
    }
    freeReplyObject(r);
}

static int write_status(struct fixture *f, int64_t now, const char *member)
{
    char json[256];
    struct rc_write_result res;
    struct rc_error err = {0, ""};
    snprintf(json, sizeof json, "{\"op\":\"incr\",\"board\":\"tday\",\"member\":\"%s\",\"delta\":1}", member);
    assert_int_equal(rc_test_write(&f->w, f->conf, json, now, &res, &err), 0);
    return res.status;
}

/* A periodic board's blocklist lives in each period's slot (no script
 * touches two slots, as a cluster demands): the first write of a period
 * copies the board's list rc:{B|}:blocked into it, with the sentinel "", and
 * gives it the period's lifetime; later changes of the board's list alone
 * reach only periods not seeded yet (an admin's block or unblock also
 * changes the current and next period: ops/gw_blocklist.c). */
static void test_periodic_blocklist_is_seeded_from_the_boards_on_a_periods_first_write(void **state)
{
    struct fixture *f = *state;
    char got[256];
    freeReplyObject(redisCommand(f->sync, "SADD rc:{tday|}:blocked cheat"));
    assert_int_equal(write_status(f, T0, "cheat"), RC_E_FORBIDDEN);
    assert_int_equal(redis_int(f, "EXISTS %s", "rc:{tday|2026-01-01}:z"), 0); /* nothing written */
    set_members(f, "rc:{tday|2026-01-01}:blocked", got, sizeof got);
    assert_string_equal(got, "'',cheat");
    long long ttl = redis_int(f, "PTTL %s", "rc:{tday|2026-01-01}:blocked");
    assert_true(ttl > (16 + 24) * 3600000LL - 60000 && ttl <= (16 + 24) * 3600000LL);
    assert_int_equal(write_status(f, T0, "fair"), 0);
    /* the board's list changed alone: the seeded period keeps its own */
    freeReplyObject(redisCommand(f->sync, "SREM rc:{tday|}:blocked cheat"));
    assert_int_equal(write_status(f, T0 + 1000, "cheat"), RC_E_FORBIDDEN);
    /* the next day is seeded from the board's list as it is then */
    int64_t day2 = T0 + 24 * 3600000LL;
    assert_int_equal(write_status(f, day2, "cheat"), 0);
    set_members(f, "rc:{tday|2026-01-02}:blocked", got, sizeof got);
    assert_string_equal(got, "''");
    /* boards without periods check their one list and seed nothing */
    freeReplyObject(redisCommand(f->sync, "SADD rc:{plain|}:blocked cheat"));
    char json[] = "{\"op\":\"incr\",\"board\":\"plain\",\"member\":\"cheat\",\"delta\":1}";
    struct rc_write_result res;
    struct rc_error err = {0, ""};
    assert_int_equal(rc_test_write(&f->w, f->conf, json, T0, &res, &err), 0);
    assert_int_equal(res.status, RC_E_FORBIDDEN);
    set_members(f, "rc:{plain|}:blocked", got, sizeof got);
    assert_string_equal(got, "cheat");
}

/* How many times PUBLISH ran on the server (scripts' calls count too). */
static long long publishes(struct fixture *f)
{
    redisReply *r = redisCommand(f->sync, "INFO commandstats");
    assert_non_null(r);
    const char *at = strstr(r->str, "cmdstat_publish:calls=");
    long long n = at ? atoll(at + strlen("cmdstat_publish:calls=")) : 0;
    freeReplyObject(r);
    return n;
}

static double zscore_of(struct fixture *f, const char *key, const char *member)
{
    redisReply *r = redisCommand(f->sync, "ZSCORE %s %s", key, member);
    assert_non_null(r);
    double v = r->type == REDIS_REPLY_STRING ? strtod(r->str, NULL) : -1;
    freeReplyObject(r);
    return v;
}

static void test_hot_board_write_lands_in_the_current_bucket_without_an_event(void **state)
{
    struct fixture *f = *state;
    char z[RC_KEY_MAX], seq[RC_KEY_MAX], log[RC_KEY_MAX], b0[RC_KEY_MAX], b1[RC_KEY_MAX];
    key_of(z, "hot", "z");
    key_of(seq, "hot", "seq");
    key_of(log, "hot", "log");
    snprintf(b0, sizeof b0, "rc:{hot|}:b:%lld", (long long)(T0 / 3600000));
    snprintf(b1, sizeof b1, "rc:{hot|}:b:%lld", (long long)(T0 / 3600000 + 1));
    long long pub0 = publishes(f);

    /* before any rebuild: the answer is the member's points in the bucket */
    struct rc_write_result r = ok_write(f, T0 + 10, "{\"op\":\"incr\",\"board\":\"hot\",\"member\":\"a\",\"delta\":5,\"req\":\"h-1\"}");
    assert_false(r.duplicate);
    assert_false(r.changed);
    assert_true(r.score == 5);
    assert_int_equal(r.rank, 0);
    assert_int_equal(r.seq, 0);
    r = ok_write(f, T0 + 20, "{\"op\":\"incr\",\"board\":\"hot\",\"member\":\"a\",\"delta\":3}");
    assert_true(r.score == 8);
    assert_true(zscore_of(f, b0, "a") == 8);
    /* the bucket lives window + span (5 h), set relative to now */
    long long pttl = redis_int(f, "PTTL %s", b0);
    assert_true(pttl > 4 * 3600000LL && pttl <= 5 * 3600000LL);
    /* the read board, seq, log and channel are untouched */
    assert_int_equal(redis_int(f, "EXISTS %s", z), 0);
    assert_int_equal(redis_int(f, "EXISTS %s", seq), 0);
    assert_int_equal(redis_int(f, "EXISTS %s", log), 0);
    assert_int_equal(publishes(f), pub0);

    /* a retry counts once */
    r = ok_write(f, T0 + 30, "{\"op\":\"incr\",\"board\":\"hot\",\"member\":\"a\",\"delta\":5,\"req\":\"h-1\"}");
    assert_true(r.duplicate);
    assert_true(zscore_of(f, b0, "a") == 8);

    /* the next hour opens the next bucket */
    ok_write(f, T0 + 3600000LL, "{\"op\":\"incr\",\"board\":\"hot\",\"member\":\"a\",\"delta\":2}");
    assert_true(zscore_of(f, b1, "a") == 2);
    assert_true(zscore_of(f, b0, "a") == 8);

    /* once a rebuild put the member on the read board, the answer is from there */
    freeReplyObject(redisCommand(f->sync, "ZADD %s 6.5 a 100 b", z));
    freeReplyObject(redisCommand(f->sync, "SET %s 12", seq));
    r = ok_write(f, T0 + 3600001LL, "{\"op\":\"incr\",\"board\":\"hot\",\"member\":\"a\",\"delta\":1}");
    assert_true(r.score == 6.5);
    assert_int_equal(r.rank, 2);
    assert_int_equal(r.seq, 12);
    assert_true(zscore_of(f, z, "a") == 6.5); /* the read board changes only at rebuilds */
    assert_int_equal(redis_int(f, "GET %s", seq), 12);

    /* only incr applies, and a hot board's range still holds */
    struct rc_write_result res;
    struct rc_error err = {0, ""};
    assert_int_equal(rc_test_write(&f->w, f->conf, "{\"op\":\"set\",\"board\":\"hot\",\"member\":\"a\",\"value\":1}",
                                   T0, &res, &err), RC_E_BAD_REQUEST);
    assert_int_equal(rc_test_write(&f->w, f->conf,
                                   "{\"op\":\"incr\",\"board\":\"hot\",\"member\":\"a\",\"delta\":9007199254740991}",
                                   T0, &res, &err), 0);
    assert_int_equal(res.status, RC_E_OUT_OF_RANGE);
    assert_true(zscore_of(f, b0, "a") == 8);
    assert_int_equal(publishes(f), pub0);
}

static void test_scaled_board_incr_adds_to_the_fractional_score(void **state)
{
    struct fixture *f = *state;
    char z[RC_KEY_MAX];
    key_of(z, "cool", "z");
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"cool\",\"member\":\"a\",\"value\":5}");
    /* what lua/scale.lua does once a period is due */
    freeReplyObject(redisCommand(f->sync, "ZUNIONSTORE %s 1 %s WEIGHTS 0.5", z, z));
    struct rc_write_result r = ok_write(f, T0, "{\"op\":\"incr\",\"board\":\"cool\",\"member\":\"a\",\"delta\":1}");
    assert_true(r.score == 3.5);
    assert_true(r.composite == 3.5);
    assert_true(r.changed);
    assert_true(zscore_of(f, z, "a") == 3.5);
    r = ok_write(f, T0, "{\"op\":\"best\",\"board\":\"cool\",\"member\":\"a\",\"value\":3}");
    assert_true(r.score == 3.5); /* not better: kept */
    assert_false(r.changed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_retried_req_changes_nothing_and_answers_duplicate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_earliest_to_reach_score_ranks_first_on_desc_board, setup, teardown),
        cmocka_unit_test_setup_teardown(test_latest_to_reach_score_ranks_first_on_desc_board, setup, teardown),
        cmocka_unit_test_setup_teardown(test_earliest_to_reach_score_ranks_first_on_asc_board, setup, teardown),
        cmocka_unit_test_setup_teardown(test_latest_to_reach_score_ranks_first_on_asc_board, setup, teardown),
        cmocka_unit_test_setup_teardown(test_best_on_asc_board_keeps_lower_time_and_first_reach, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multi_field_board_ranks_clears_desc_revives_asc_time_asc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_submit_keeps_every_other_field_exactly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_submit_of_a_member_off_the_set_ignores_its_old_fields, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_out_of_range_write_leaves_board_seq_and_log_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_change_log_never_exceeds_its_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_published_event_matches_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_next_call_succeeds_after_script_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(test_op_not_declared_for_board_is_refused_before_redis, setup, teardown),
        cmocka_unit_test_setup_teardown(test_periodic_keys_expire_keep_periods_after_their_period, setup, teardown),
        cmocka_unit_test_setup_teardown(test_periodic_blocklist_is_seeded_from_the_boards_on_a_periods_first_write,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_hot_board_write_lands_in_the_current_bucket_without_an_event, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_scaled_board_incr_adds_to_the_fractional_score, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_write_creates_the_epoch_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_set_deleted_from_outside_starts_a_new_epoch_on_the_next_write, setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("write_script", tests, NULL, NULL);
}
