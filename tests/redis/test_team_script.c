/* test_team_script.c - team boards in lua/write.lua (docs/teams.md) through
 * the gateway's write path against a real redis-server: a property test of
 * random writes, joins, leaves and moves, checked after every step against a
 * reference model, and the edge cases one at a time. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_codec.h"
#include "rc_keys.h"
#include "rc_test_redis.h"
#include "rc_test_rng.h"
#include "rc_test_writer.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00Z */

static const char *conf_text =
    "[board p]\n"
    "order = desc\n"
    "tiebreak = earliest\n"
    "tiebreak_resolution = 1ms\n"
    "tiebreak_horizon = 1d\n"
    "tiebreak_base = 2026-01-01T00:00:00Z\n"
    "points_min = -100000\n"
    "points_max = 100000\n"
    "teams = s\n";

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

static struct rc_write_result do_op(struct fixture *f, int64_t now, const char *fmt, ...)
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
        fail_msg("%s failed: %s %s", json, rc_err_code_name(rc), err.msg);
    if (res.status != 0)
        fail_msg("%s answered %s: %s", json, rc_err_code_name(res.status), res.message);
    return res;
}

/* ---- the reference model -------------------------------------------------- */

#define NM 10 /* members m0..m9 */
#define NT 4  /* teams t0..t3 */

struct model {
    int has[NM];        /* the member is on p */
    int64_t pts[NM];
    int team[NM];       /* -1: none */
    int on[NT];         /* the team is on s */
    int64_t sum[NT];    /* its points on s */
    int64_t stamp[NT];  /* when it reached sum (the write's time): earlier ranks first */
};

static int members_of(const struct model *m, int t)
{
    int n = 0;
    for (int i = 0; i < NM; i++)
        n += m->team[i] == t;
    return n;
}

/* The team's sum as the sum of its members' points (what s must hold). */
static int64_t sum_of(const struct model *m, int t)
{
    int64_t s = 0;
    for (int i = 0; i < NM; i++)
        if (m->team[i] == t && m->has[i])
            s += m->pts[i];
    return s;
}

/* Puts team t at its members' sum as of `now` (the rule of "Teams" in
 * lua/write.lua: a changed sum takes the time, an unchanged one keeps it;
 * `enter` lets a team not on s come on). */
static void settle(struct model *m, int t, int64_t now, int enter)
{
    int64_t s = sum_of(m, t);
    if (!m->on[t]) {
        if (!enter)
            return;
        m->on[t] = 1;
        m->sum[t] = s;
        m->stamp[t] = now;
    } else if (s != m->sum[t]) {
        m->sum[t] = s;
        m->stamp[t] = now;
    }
}

/* Sum desc, then the earlier stamp; equal composites: Redis' reverse
 * lexicographic order of ZREVRANGE. */
static int before(const struct model *m, int a, int b)
{
    if (m->sum[a] != m->sum[b])
        return m->sum[a] > m->sum[b];
    if (m->stamp[a] != m->stamp[b])
        return m->stamp[a] < m->stamp[b];
    return a > b;
}

static int order(const struct model *m, int out[NT])
{
    int n = 0;
    for (int t = 0; t < NT; t++)
        if (m->on[t])
            out[n++] = t;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && before(m, out[j], out[j - 1]); j--) {
            int x = out[j];
            out[j] = out[j - 1];
            out[j - 1] = x;
        }
    return n;
}

/* s in Redis, member by member in rank order, against the model. */
static void check(struct fixture *f, const struct model *m, int step)
{
    const struct rc_board *b = rc_conf_board_find(f->conf, "s");
    char z[RC_KEY_MAX];
    assert_int_equal(rc_keys_board(z, sizeof z, "s", "", "z", NULL), 0);
    int want[NT];
    int n = order(m, want);
    redisReply *r = redisCommand(f->sync, "ZRANGE %s 0 -1 REV WITHSCORES", z);
    assert_non_null(r);
    if ((int)r->elements != 2 * n)
        fail_msg("step %d: s holds %zu teams, the model %d", step, r->elements / 2, n);
    for (int i = 0; i < n; i++) {
        char name[8];
        snprintf(name, sizeof name, "t%d", want[i]);
        int64_t pts;
        uint64_t slot;
        assert_int_equal(rc_codec_decode_points(&b->layout, strtod(r->element[2 * i + 1]->str, NULL), &pts, &slot), 0);
        if (strcmp(r->element[2 * i]->str, name) != 0 || pts != m->sum[want[i]])
            fail_msg("step %d: rank %d is %s=%lld, the model's %s=%lld", step, i + 1, r->element[2 * i]->str,
                     (long long)pts, name, (long long)m->sum[want[i]]);
        /* the invariant itself: a team's points are its members' sum */
        assert_int_equal(pts, sum_of(m, want[i]));
    }
    freeReplyObject(r);
}

static int rank_in_model(const struct model *m, int t)
{
    int o[NT];
    int n = order(m, o);
    for (int i = 0; i < n; i++)
        if (o[i] == t)
            return i + 1;
    return 0;
}

/* Random incr / set / join / move / leave, 1500 steps, each at its own ms;
 * after every step s equals the model, and every write's ack names the
 * member's team with its score and rank. */
static void test_random_writes_and_moves_keep_every_team_sum_and_rank(void **state)
{
    struct fixture *f = *state;
    struct model m;
    memset(&m, 0, sizeof m);
    for (int i = 0; i < NM; i++)
        m.team[i] = -1;
    struct rng g = {0x7ea45};
    for (int step = 0; step < 1500; step++) {
        int64_t now = T0 + 1 + step;
        int i = (int)below(&g, NM);
        size_t k = below(&g, 10);
        if (k < 5) {
            /* a write: incr (often 0-sum ties) or set */
            int64_t v = (int64_t)below(&g, 21) - 10;
            int set = k == 4;
            struct rc_write_result r = set ? do_op(f, now, "{\"op\":\"set\",\"board\":\"p\",\"member\":\"m%d\",\"value\":%lld}", i, (long long)v)
                                           : do_op(f, now, "{\"op\":\"incr\",\"board\":\"p\",\"member\":\"m%d\",\"delta\":%lld}", i, (long long)v);
            int64_t before_pts = m.pts[i];
            int was = m.has[i];
            m.pts[i] = set ? v : m.pts[i] + v;
            m.has[i] = 1;
            int changed = !was || m.pts[i] != before_pts;
            if (m.team[i] >= 0 && changed)
                settle(&m, m.team[i], now, 1);
            assert_true(r.teams_board);
            if (m.team[i] < 0) {
                assert_false(r.has_team);
            } else {
                char name[8];
                snprintf(name, sizeof name, "t%d", m.team[i]);
                assert_string_equal(r.team, name);
                assert_int_equal(r.has_team_score, m.on[m.team[i]]);
                if (m.on[m.team[i]]) {
                    assert_int_equal((int64_t)r.team_score, m.sum[m.team[i]]);
                    assert_int_equal(r.team_rank, rank_in_model(&m, m.team[i]));
                }
            }
        } else {
            /* join, move or leave (k == 9: leave) */
            int t = k == 9 ? -1 : (int)below(&g, NT);
            char team[16];
            snprintf(team, sizeof team, t < 0 ? "null" : "\"t%d\"", t);
            struct rc_write_result r = do_op(f, now, "{\"op\":\"team\",\"board\":\"p\",\"member\":\"m%d\",\"team\":%s}", i, team);
            assert_true(r.teamed);
            int old = m.team[i];
            m.team[i] = t;
            if (old != t) {
                if (old >= 0) {
                    if (members_of(&m, old) == 0)
                        m.on[old] = 0; /* its last member left */
                    else
                        settle(&m, old, now, 0);
                }
                if (t >= 0)
                    settle(&m, t, now, m.has[i]);
            }
            assert_int_equal(r.changed, old != t);
        }
        check(f, &m, step);
    }
}

/* A move takes two consecutive seqs of s, one event per team, in the log. */
static void test_a_move_is_two_consecutive_events_on_the_team_board(void **state)
{
    struct fixture *f = *state;
    char log[RC_KEY_MAX], seq[RC_KEY_MAX];
    assert_int_equal(rc_keys_board(log, sizeof log, "s", "", "log", NULL), 0);
    assert_int_equal(rc_keys_board(seq, sizeof seq, "s", "", "seq", NULL), 0);
    do_op(f, T0 + 1, "{\"op\":\"team\",\"board\":\"p\",\"member\":\"a\",\"team\":\"red\"}");
    do_op(f, T0 + 2, "{\"op\":\"team\",\"board\":\"p\",\"member\":\"b\",\"team\":\"red\"}");
    do_op(f, T0 + 3, "{\"op\":\"incr\",\"board\":\"p\",\"member\":\"a\",\"delta\":5}");
    do_op(f, T0 + 4, "{\"op\":\"incr\",\"board\":\"p\",\"member\":\"b\",\"delta\":3}");
    struct rc_write_result r = do_op(f, T0 + 5, "{\"op\":\"team\",\"board\":\"p\",\"member\":\"a\",\"team\":\"blue\"}");
    assert_int_equal(r.team_seq, 4);
    redisReply *l = redisCommand(f->sync, "LRANGE %s -2 -1", log);
    assert_int_equal(l->elements, 2);
    assert_non_null(strstr(l->element[0]->str, "\"seq\":3,\"member\":\"red\",\"op\":\"team\",\"score\":3,\"old_score\":8"));
    assert_non_null(strstr(l->element[1]->str, "\"seq\":4,\"member\":\"blue\",\"op\":\"team\",\"score\":5,\"old_score\":null"));
    freeReplyObject(l);
    /* b leaves: red's last member, red goes (c null) */
    r = do_op(f, T0 + 6, "{\"op\":\"team\",\"board\":\"p\",\"member\":\"b\",\"team\":null}");
    assert_int_equal(r.team_seq, 5);
    l = redisCommand(f->sync, "LRANGE %s -1 -1", log);
    assert_non_null(strstr(l->element[0]->str, "\"member\":\"red\",\"op\":\"team\",\"score\":null,\"old_score\":3,\"c\":null"));
    freeReplyObject(l);
}

/* A write that would take its team's sum out of the range writes nothing. */
static void test_a_team_sum_out_of_range_writes_nothing(void **state)
{
    struct fixture *f = *state;
    do_op(f, T0 + 1, "{\"op\":\"team\",\"board\":\"p\",\"member\":\"x\",\"team\":\"big\"}");
    do_op(f, T0 + 2, "{\"op\":\"team\",\"board\":\"p\",\"member\":\"y\",\"team\":\"big\"}");
    do_op(f, T0 + 3, "{\"op\":\"set\",\"board\":\"p\",\"member\":\"x\",\"value\":90000}");
    struct rc_write_result res;
    struct rc_error err = {0, ""};
    assert_int_equal(rc_test_write(&f->w, f->conf, "{\"op\":\"set\",\"board\":\"p\",\"member\":\"y\",\"value\":20000}",
                                   T0 + 4, &res, &err), 0);
    assert_int_equal(res.status, RC_E_OUT_OF_RANGE);
    char z[RC_KEY_MAX];
    assert_int_equal(rc_keys_board(z, sizeof z, "p", "", "z", NULL), 0);
    redisReply *r = redisCommand(f->sync, "ZSCORE %s y", z);
    assert_int_equal(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_random_writes_and_moves_keep_every_team_sum_and_rank, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_move_is_two_consecutive_events_on_the_team_board, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_team_sum_out_of_range_writes_nothing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
