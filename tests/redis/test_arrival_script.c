/* test_arrival_script.c - tiebreak = arrival in lua/write.lua and
 * lua/admin.lua against a real redis-server: writes go through the
 * gateway's write path (gw_write_submit), admin actions are EVALed with the
 * keys and arguments core/rc_admin_args.c builds. Equal points rank in exact
 * arrival order whatever the write times; a value that ran out of arrivals
 * answers out_of_range and changes nothing; the per-value counters go when
 * nobody holds a value; remove, reverse and reset keep them consistent; and a
 * property test compares whole boards with a reference ordering by
 * (points, arrival) over random write sequences. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_admin_args.h"
#include "rc_keys.h"
#include "rc_lua.h"
#include "rc_test_redis.h"
#include "rc_test_writer.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00Z */

static const char *conf_text =
    "[board ar]\n"
    "tiebreak = arrival\n"
    "points_min = -1000\n"
    "points_max = 1000\n"
    "idempotency_window = 60s\n"
    "[board ara]\n"
    "order = asc\n"
    "tiebreak = arrival\n"
    "[board tiny]\n"
    "tiebreak = arrival\n"
    "tiebreak_bits = 2\n"
    "[board ard]\n"
    "period = day\n"
    "keep = 1\n"
    "tiebreak = arrival\n"
    "[board prop]\n"
    "tiebreak = arrival\n"
    "tiebreak_bits = 12\n"
    "points_min = -5\n"
    "points_max = 12\n"
    "[board propa]\n"
    "order = asc\n"
    "tiebreak = arrival\n"
    "tiebreak_bits = 12\n"
    "points_min = -5\n"
    "points_max = 12\n";

struct fixture {
    struct rc_test_redis redis;
    struct rc_test_writer w;
    struct rc_conf *conf;
    redisContext *sync;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f || rc_test_redis_start(&f->redis, NULL) != 0)
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

/* A write; returns 0, or RC_E_OUT_OF_RANGE (from the builder or the script). */
static int try_write(struct fixture *f, int64_t now, struct rc_write_result *res, const char *fmt, ...)
{
    char json[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(json, sizeof json, fmt, ap);
    va_end(ap);
    struct rc_error err = {0, ""};
    memset(res, 0, sizeof *res);
    int rc = rc_test_write(&f->w, f->conf, json, now, res, &err);
    if (rc == RC_E_OUT_OF_RANGE)
        return rc;
    if (rc != 0)
        fail_msg("write %s failed: %s %s", json, rc_err_code_name(rc), err.msg);
    if (res->status != 0 && res->status != RC_E_OUT_OF_RANGE)
        fail_msg("write %s: status %s %s", json, rc_err_code_name(res->status), res->message);
    return res->status;
}

static struct rc_write_result ok_write(struct fixture *f, int64_t now, const char *fmt, ...)
{
    char json[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(json, sizeof json, fmt, ap);
    va_end(ap);
    struct rc_write_result res;
    if (try_write(f, now, &res, "%s", json) != 0)
        fail_msg("write %s: out_of_range: %s", json, res.message);
    return res;
}

static void key_of(char *out, const char *board, const char *suffix)
{
    assert_int_equal(rc_keys_board(out, RC_KEY_MAX, board, "", suffix, NULL), 0);
}

/* The board's members best first, joined by ',' (REV for desc boards). */
static void board_order(struct fixture *f, const char *board, int desc, char *out, size_t cap)
{
    char z[RC_KEY_MAX];
    key_of(z, board, "z");
    redisReply *r = redisCommand(f->sync, desc ? "ZRANGE %s 0 -1 REV" : "ZRANGE %s 0 -1", z);
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    out[0] = '\0';
    for (size_t i = 0; i < r->elements; i++) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%s", i ? "," : "", r->element[i]->str);
    }
    freeReplyObject(r);
}

static void assert_order(struct fixture *f, const char *board, int desc, const char *want)
{
    char got[4096];
    board_order(f, board, desc, got, sizeof got);
    assert_string_equal(got, want);
}

/* HGET of the board's counters: -1 when the field is absent. */
static long long arr_field(struct fixture *f, const char *board, const char *field)
{
    char k[RC_KEY_MAX];
    key_of(k, board, "arr");
    redisReply *r = redisCommand(f->sync, "HGET %s %s", k, field);
    assert_non_null(r);
    long long v = r->type == REDIS_REPLY_STRING ? atoll(r->str) : -1;
    freeReplyObject(r);
    return v;
}

static long long arr_len(struct fixture *f, const char *board)
{
    char k[RC_KEY_MAX];
    key_of(k, board, "arr");
    redisReply *r = redisCommand(f->sync, "HLEN %s", k);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

static long long seq_of(struct fixture *f, const char *board)
{
    char k[RC_KEY_MAX];
    key_of(k, board, "seq");
    redisReply *r = redisCommand(f->sync, "GET %s", k);
    long long v = r->type == REDIS_REPLY_STRING ? atoll(r->str) : 0;
    freeReplyObject(r);
    return v;
}

/* EVAL admin.lua for op on an all-time board, as ops/gw_admin.c sends it.
 * Returns the reply (caller frees). */
static redisReply *admin(struct fixture *f, enum rc_op op, const char *board, const char *member, const char *req)
{
    struct rc_request r;
    struct rc_period p = {0};
    struct rc_admin_args a;
    struct rc_error err = {0, ""};
    memset(&r, 0, sizeof r);
    r.op = op;
    snprintf(r.board, sizeof r.board, "%s", board);
    snprintf(r.member, sizeof r.member, "%s", member);
    snprintf(r.req, sizeof r.req, "%s", req);
    const struct rc_board *b = rc_conf_board_find(f->conf, board);
    assert_non_null(b);
    assert_int_equal(rc_admin_args_build(b, &r, &p, T0, 0, 0, 0, &a, &err), 0);
    snprintf(a.epoch, sizeof a.epoch, "e1");
    a.lens[RC_ADMIN_NKEYS + RC_ADMIN_NARGV - 1] = strlen(a.epoch);
    const char *argv[3 + RC_ADMIN_NKEYS + RC_ADMIN_NARGV];
    size_t lens[3 + RC_ADMIN_NKEYS + RC_ADMIN_NARGV];
    char nk[8];
    snprintf(nk, sizeof nk, "%d", RC_ADMIN_NKEYS);
    argv[0] = "EVAL";
    argv[1] = rc_lua_admin;
    argv[2] = nk;
    for (int i = 0; i < 3; i++)
        lens[i] = strlen(argv[i]);
    for (int i = 0; i < RC_ADMIN_NKEYS + RC_ADMIN_NARGV; i++) {
        argv[3 + i] = a.words[i];
        lens[3 + i] = a.lens[i];
    }
    redisReply *rep = redisCommandArgv(f->sync, 3 + RC_ADMIN_NKEYS + RC_ADMIN_NARGV, argv, lens);
    assert_non_null(rep);
    if (rep->type == REDIS_REPLY_ERROR)
        fail_msg("admin script error: %s", rep->str);
    assert_int_equal(rep->type, REDIS_REPLY_ARRAY);
    return rep;
}

static void admin_ok(struct fixture *f, enum rc_op op, const char *board, const char *member, const char *req)
{
    redisReply *r = admin(f, op, board, member, req);
    assert_string_equal(r->element[0]->str, "ok");
    freeReplyObject(r);
}

/* ---- arrival order -------------------------------------------------------- */

static void test_equal_points_rank_in_arrival_order_at_one_instant(void **state)
{
    struct fixture *f = *state;
    /* every write at the same millisecond: time cannot tell them apart */
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"c\",\"value\":10}");
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"a\",\"value\":10}");
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"b\",\"value\":7}");
    struct rc_write_result r = ok_write(f, T0, "{\"op\":\"incr\",\"board\":\"ar\",\"member\":\"b\",\"delta\":3}");
    assert_int_equal((long long)r.score, 10);
    assert_int_equal(r.rank, 3);
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"d\",\"value\":11}");
    assert_order(f, "ar", 1, "d,c,a,b");
    /* a write decades later, or with a clock gone backwards, is just the next arrival */
    ok_write(f, T0 + 40LL * 365 * 86400000, "{\"op\":\"best\",\"board\":\"ar\",\"member\":\"e\",\"value\":10}");
    ok_write(f, T0 - 86400000, "{\"op\":\"incr\",\"board\":\"ar\",\"member\":\"f\",\"delta\":10}");
    assert_order(f, "ar", 1, "d,c,a,b,e,f");
    /* c leaves 10 and comes back: it arrives again, last */
    ok_write(f, T0, "{\"op\":\"incr\",\"board\":\"ar\",\"member\":\"c\",\"delta\":-1}");
    r = ok_write(f, T0, "{\"op\":\"incr\",\"board\":\"ar\",\"member\":\"c\",\"delta\":1}");
    assert_int_equal(r.rank, 6);
    assert_order(f, "ar", 1, "d,a,b,e,f,c");
}

static void test_asc_board_ranks_first_arrival_first(void **state)
{
    struct fixture *f = *state;
    ok_write(f, T0 + 5, "{\"op\":\"set\",\"board\":\"ara\",\"member\":\"x\",\"value\":42}");
    ok_write(f, T0 + 1, "{\"op\":\"set\",\"board\":\"ara\",\"member\":\"y\",\"value\":42}");
    ok_write(f, T0 + 9, "{\"op\":\"best\",\"board\":\"ara\",\"member\":\"z\",\"value\":41}");
    ok_write(f, T0, "{\"op\":\"best\",\"board\":\"ara\",\"member\":\"w\",\"value\":42}");
    assert_order(f, "ara", 0, "z,x,y,w");
}

static void test_rewrite_to_same_points_keeps_its_arrival(void **state)
{
    struct fixture *f = *state;
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"a\",\"value\":10}");
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"b\",\"value\":10}");
    long long seq = seq_of(f, "ar");
    struct rc_write_result r = ok_write(f, T0 + 1, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"a\",\"value\":10}");
    assert_false(r.changed);
    r = ok_write(f, T0 + 2, "{\"op\":\"best\",\"board\":\"ar\",\"member\":\"a\",\"value\":3}");
    assert_false(r.changed);
    r = ok_write(f, T0 + 3, "{\"op\":\"incr\",\"board\":\"ar\",\"member\":\"a\",\"delta\":0}");
    assert_false(r.changed);
    assert_int_equal(r.rank, 1);
    assert_int_equal(seq_of(f, "ar"), seq);
    assert_order(f, "ar", 1, "a,b");
    assert_int_equal(arr_field(f, "ar", "a:10"), 2); /* no arrival taken */
    assert_int_equal(arr_field(f, "ar", "h:10"), 2);
}

/* ---- running out, cleaning up ----------------------------------------------- */

static void test_value_out_of_arrivals_is_out_of_range_and_changes_nothing(void **state)
{
    struct fixture *f = *state;
    struct rc_write_result r;
    /* tiny: 2 tie bits, 4 arrivals per value */
    for (int i = 0; i < 4; i++)
        ok_write(f, T0, "{\"op\":\"set\",\"board\":\"tiny\",\"member\":\"m%d\",\"value\":5}", i);
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"tiny\",\"member\":\"late\",\"value\":4}");
    long long seq = seq_of(f, "tiny");
    assert_int_equal(try_write(f, T0, &r, "{\"op\":\"set\",\"board\":\"tiny\",\"member\":\"new\",\"value\":5}"),
                     RC_E_OUT_OF_RANGE);
    assert_non_null(strstr(r.message, "has had 4 arrivals"));
    assert_int_equal(try_write(f, T0, &r, "{\"op\":\"incr\",\"board\":\"tiny\",\"member\":\"late\",\"delta\":1,"
                                          "\"req\":\"q1\"}"),
                     RC_E_OUT_OF_RANGE);
    assert_int_equal(seq_of(f, "tiny"), seq);
    assert_order(f, "tiny", 1, "m0,m1,m2,m3,late"); /* nothing moved, nobody new */
    assert_int_equal(arr_field(f, "tiny", "a:5"), 4);
    assert_int_equal(arr_field(f, "tiny", "h:4"), 1);
    /* one holder leaves: the value is still held, its count stays spent */
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"tiny\",\"member\":\"m0\",\"value\":6}");
    assert_int_equal(try_write(f, T0, &r, "{\"op\":\"set\",\"board\":\"tiny\",\"member\":\"new\",\"value\":5}"),
                     RC_E_OUT_OF_RANGE);
    /* the last holders leave: the value's counters go, and it takes arrivals again */
    for (int i = 1; i < 4; i++)
        ok_write(f, T0, "{\"op\":\"incr\",\"board\":\"tiny\",\"member\":\"m%d\",\"delta\":2}", i);
    assert_int_equal(arr_field(f, "tiny", "a:5"), -1);
    assert_int_equal(arr_field(f, "tiny", "h:5"), -1);
    /* the refused req was not consumed: the same req now applies */
    r = ok_write(f, T0, "{\"op\":\"incr\",\"board\":\"tiny\",\"member\":\"late\",\"delta\":1,\"req\":\"q1\"}");
    assert_false(r.duplicate);
    assert_int_equal((long long)r.score, 5);
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"tiny\",\"member\":\"new\",\"value\":5}");
    assert_order(f, "tiny", 1, "m1,m2,m3,m0,late,new");
    assert_int_equal(arr_field(f, "tiny", "h:4"), -1);
    assert_int_equal(arr_field(f, "tiny", "a:7"), 3);
}

static void test_counters_go_when_nobody_holds_a_value(void **state)
{
    struct fixture *f = *state;
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"a\",\"value\":10}");
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"b\",\"value\":10}");
    assert_int_equal(arr_field(f, "ar", "a:10"), 2);
    assert_int_equal(arr_field(f, "ar", "h:10"), 2);
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"a\",\"value\":11}");
    assert_int_equal(arr_field(f, "ar", "h:10"), 1);
    assert_int_equal(arr_field(f, "ar", "a:10"), 2);
    ok_write(f, T0, "{\"op\":\"incr\",\"board\":\"ar\",\"member\":\"b\",\"delta\":1}");
    assert_int_equal(arr_field(f, "ar", "a:10"), -1);
    assert_int_equal(arr_field(f, "ar", "h:10"), -1);
    assert_int_equal(arr_field(f, "ar", "h:11"), 2);
    assert_int_equal(arr_len(f, "ar"), 2); /* a:11 and h:11, nothing else */
}

/* ---- admin -------------------------------------------------------------- */

static void test_remove_reverse_reset_keep_the_counters(void **state)
{
    struct fixture *f = *state;
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"a\",\"value\":0}");
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"b\",\"value\":0}");
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"c\",\"value\":0}");
    ok_write(f, T0, "{\"op\":\"incr\",\"board\":\"ar\",\"member\":\"a\",\"delta\":10,\"req\":\"w1\"}");
    assert_int_equal(arr_field(f, "ar", "h:0"), 2);
    assert_int_equal(arr_field(f, "ar", "h:10"), 1);
    /* reverse: a arrives at 0 again, after b and c */
    redisReply *r = admin(f, RC_OP_REVERSE, "ar", "", "w1");
    assert_string_equal(r->element[0]->str, "ok");
    assert_string_equal(r->element[3]->str, "0");
    assert_int_equal(r->element[4]->integer, 3);
    freeReplyObject(r);
    assert_order(f, "ar", 1, "b,c,a");
    assert_int_equal(arr_field(f, "ar", "h:10"), -1);
    assert_int_equal(arr_field(f, "ar", "a:10"), -1);
    assert_int_equal(arr_field(f, "ar", "h:0"), 3);
    assert_int_equal(arr_field(f, "ar", "a:0"), 4);
    /* remove: the member leaves its value's holders; the last one takes the fields */
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"d\",\"value\":9}");
    admin_ok(f, RC_OP_REMOVE, "ar", "b", "");
    assert_int_equal(arr_field(f, "ar", "h:0"), 2);
    admin_ok(f, RC_OP_REMOVE, "ar", "d", "");
    assert_int_equal(arr_field(f, "ar", "h:9"), -1);
    assert_int_equal(arr_field(f, "ar", "a:9"), -1);
    admin_ok(f, RC_OP_REMOVE, "ar", "a", "");
    admin_ok(f, RC_OP_REMOVE, "ar", "c", "");
    assert_int_equal(arr_len(f, "ar"), 0);
    /* reset drops the counters with the set */
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"a\",\"value\":1}");
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"b\",\"value\":1}");
    admin_ok(f, RC_OP_RESET, "ar", "", "");
    assert_int_equal(arr_len(f, "ar"), 0);
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"b\",\"value\":1}");
    ok_write(f, T0, "{\"op\":\"set\",\"board\":\"ar\",\"member\":\"a\",\"value\":1}");
    assert_order(f, "ar", 1, "b,a");
    assert_int_equal(arr_field(f, "ar", "a:1"), 2);
}

static void test_reverse_into_a_spent_value_is_out_of_range(void **state)
{
    struct fixture *f = *state;
    for (int i = 0; i < 4; i++)
        ok_write(f, T0, "{\"op\":\"set\",\"board\":\"tiny\",\"member\":\"m%d\",\"value\":5}", i);
    ok_write(f, T0, "{\"op\":\"incr\",\"board\":\"tiny\",\"member\":\"m0\",\"delta\":1,\"req\":\"rr\"}");
    long long seq = seq_of(f, "tiny");
    redisReply *r = admin(f, RC_OP_REVERSE, "tiny", "", "rr");
    assert_string_equal(r->element[0]->str, "out_of_range");
    assert_non_null(strstr(r->element[5]->str, "has had 4 arrivals"));
    freeReplyObject(r);
    assert_int_equal(seq_of(f, "tiny"), seq);
    assert_order(f, "tiny", 1, "m0,m1,m2,m3");
    assert_int_equal(arr_field(f, "tiny", "h:6"), 1);
    assert_int_equal(arr_field(f, "tiny", "h:5"), 3);
}

static void test_periodic_counters_expire_with_the_period(void **state)
{
    struct fixture *f = *state;
    ok_write(f, T0 + 1000, "{\"op\":\"set\",\"board\":\"ard\",\"member\":\"a\",\"value\":3}");
    ok_write(f, T0 + 2000, "{\"op\":\"set\",\"board\":\"ard\",\"member\":\"b\",\"value\":3}");
    redisReply *keys = redisCommand(f->sync, "KEYS rc:{ard|*}:arr");
    assert_int_equal(keys->elements, 1);
    char arr[RC_KEY_MAX], z[RC_KEY_MAX];
    snprintf(arr, sizeof arr, "%s", keys->element[0]->str);
    freeReplyObject(keys);
    snprintf(z, sizeof z, "%.*sz", (int)(strlen(arr) - 3), arr);
    redisReply *a = redisCommand(f->sync, "PTTL %s", arr);
    redisReply *b = redisCommand(f->sync, "PTTL %s", z);
    assert_true(a->integer > 0);
    assert_true(b->integer > 0);
    /* both renewed by the same write: within a few seconds of each other */
    assert_true(llabs(a->integer - b->integer) < 60000);
    freeReplyObject(a);
    freeReplyObject(b);
}

/* ---- property: random sequences against a reference ------------------------ */

#define PM 10 /* members */

struct ref {
    int present[PM];
    long long points[PM];
    long long stamp[PM]; /* when the member arrived at its points */
    long long clock;
};

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int ref_cmp_desc;
static const struct ref *ref_cur;
static int ref_cmp(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    const struct ref *r = ref_cur;
    if (r->points[a] != r->points[b])
        return (r->points[a] > r->points[b]) == ref_cmp_desc ? -1 : 1;
    return r->stamp[a] < r->stamp[b] ? -1 : 1;
}

static void ref_order(const struct ref *r, int desc, char *out, size_t cap)
{
    int idx[PM], n = 0;
    for (int i = 0; i < PM; i++)
        if (r->present[i])
            idx[n++] = i;
    ref_cur = r;
    ref_cmp_desc = desc;
    qsort(idx, (size_t)n, sizeof idx[0], ref_cmp);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%sp%d", i ? "," : "", idx[i]);
    }
}

/* The counters hold exactly the values someone holds, h = their holders. */
static void check_counters(struct fixture *f, const char *board, const struct ref *r)
{
    long long held[32] = {0};
    int nvals = 0;
    for (int i = 0; i < PM; i++)
        if (r->present[i])
            held[r->points[i] + 5]++;
    for (int v = 0; v < 32; v++) {
        char h[16], a[16];
        snprintf(h, sizeof h, "h:%d", v - 5);
        snprintf(a, sizeof a, "a:%d", v - 5);
        long long hv = arr_field(f, board, h), av = arr_field(f, board, a);
        if (held[v]) {
            nvals++;
            assert_int_equal(hv, held[v]);
            assert_true(av >= held[v]);
        } else {
            assert_int_equal(hv, -1);
            assert_int_equal(av, -1);
        }
    }
    assert_int_equal(arr_len(f, board), 2 * nvals);
}

static void run_property(struct fixture *f, const char *board, int desc, unsigned seed)
{
    struct ref r;
    memset(&r, 0, sizeof r);
    rng = 0x9e3779b97f4a7c15ULL ^ seed;
    const long long pmin = -5, pmax = 12;
    for (int step = 0; step < 600; step++) {
        int m = (int)(rnd() % PM);
        int kind = (int)(rnd() % 20);
        /* any time at all, forwards or backwards: arrival ignores it */
        int64_t now = T0 + (int64_t)(rnd() % 1000000) - 500000;
        struct rc_write_result res;
        if (kind == 0) {
            char name[8];
            snprintf(name, sizeof name, "p%d", m);
            admin_ok(f, RC_OP_REMOVE, board, name, "");
            r.present[m] = 0;
            continue;
        }
        long long v = (long long)(rnd() % 8); /* few values: many ties */
        long long oldp = r.present[m] ? r.points[m] : 0, newp;
        const char *op;
        if (kind < 9) {
            op = "incr";
            v = (long long)(rnd() % 5) - 2;
            newp = oldp + v;
        } else if (kind < 15) {
            op = "set";
            newp = v;
        } else {
            op = "best";
            newp = !r.present[m] || (desc ? v > oldp : v < oldp) ? v : oldp;
        }
        int rc = try_write(f, now, &res, "{\"op\":\"%s\",\"board\":\"%s\",\"member\":\"p%d\",\"%s\":%lld}", op,
                           board, m, kind < 9 ? "delta" : "value", v);
        if (newp < pmin || newp > pmax) {
            assert_int_equal(rc, RC_E_OUT_OF_RANGE);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_int_equal((long long)res.score, newp);
        if (!r.present[m] || newp != r.points[m]) {
            r.present[m] = 1;
            r.points[m] = newp;
            r.stamp[m] = ++r.clock;
            assert_true(res.changed);
        } else {
            assert_false(res.changed);
        }
        char want[512], got[512];
        ref_order(&r, desc, want, sizeof want);
        board_order(f, board, desc, got, sizeof got);
        if (strcmp(want, got) != 0)
            fail_msg("step %d (%s p%d %lld): board %s, reference %s", step, op, m, v, got, want);
        /* the rank the write answered is the member's place in the reference */
        char needle[8];
        snprintf(needle, sizeof needle, "p%d", m);
        long long pos = 1;
        for (const char *c = want; *c && strncmp(c, needle, strlen(needle)) != 0; c++)
            if (*c == ',')
                pos++;
        assert_int_equal(res.rank, pos);
        if (step % 50 == 0)
            check_counters(f, board, &r);
    }
    check_counters(f, board, &r);
}

static void test_property_desc_board_matches_points_then_arrival(void **state)
{
    for (unsigned seed = 1; seed <= 3; seed++) {
        struct fixture *f = *state;
        run_property(f, "prop", 1, seed);
        admin_ok(f, RC_OP_RESET, "prop", "", "");
    }
}

static void test_property_asc_board_matches_points_then_arrival(void **state)
{
    for (unsigned seed = 11; seed <= 13; seed++) {
        struct fixture *f = *state;
        run_property(f, "propa", 0, seed);
        admin_ok(f, RC_OP_RESET, "propa", "", "");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_equal_points_rank_in_arrival_order_at_one_instant, setup, teardown),
        cmocka_unit_test_setup_teardown(test_asc_board_ranks_first_arrival_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_to_same_points_keeps_its_arrival, setup, teardown),
        cmocka_unit_test_setup_teardown(test_value_out_of_arrivals_is_out_of_range_and_changes_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_counters_go_when_nobody_holds_a_value, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remove_reverse_reset_keep_the_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reverse_into_a_spent_value_is_out_of_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_periodic_counters_expire_with_the_period, setup, teardown),
        cmocka_unit_test_setup_teardown(test_property_desc_board_matches_points_then_arrival, setup, teardown),
        cmocka_unit_test_setup_teardown(test_property_asc_board_matches_points_then_arrival, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
