/* test_shard_read.c - a sharded board read through store/gw_read (merged
 * windows, docs/sharded.md "Reads") against a real redis-server, compared
 * with the truth merged in the test from every shard's rows; and read.lua's
 * `counts` and `near` kinds called directly. The shards' sets are filled
 * with ZADD (many equal composites, so ties cross shards). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <uv.h>

#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "store/gw_profile.h"
#include "store/gw_read.h"
#include "store/gw_store.h"
#include "rc_err.h"
#include "rc_lua.h"
#include "rc_places.h"
#include "rc_shard.h"
#include "rc_test_redis.h"
#include "rc_test_writer.h"

#define NMEMBERS 300

static const char *conf_text = "[board g4]\n"
                               "shards = 4\n"
                               "tiebreak_horizon = 3650d\n"
                               "tiebreak_base = 2026-01-01T00:00:00Z\n"
                               "[board a3]\n"
                               "shards = 3\n"
                               "order = asc\n"
                               "tiebreak_horizon = 3650d\n"
                               "tiebreak_base = 2026-01-01T00:00:00Z\n";

/* One member of the truth: its composite and shard. */
struct truth_row {
    char member[16];
    double c;
    unsigned shard;
};

struct board_truth {
    const struct rc_board *b;
    struct truth_row rows[NMEMBERS]; /* in the merged order */
    size_t n;
    int64_t seq;
    char epoch[RC_EPOCH_MAX + 1];
};

struct fixture {
    struct rc_test_redis redis;
    redisContext *sync;
    struct rc_conf *conf;
    uv_loop_t loop;
    struct gw_clock clock;
    struct gw_script read_script;
    struct gw_store store;
    struct board_truth g4, a3;
};

/* ---- the truth ------------------------------------------------------------- */

static int desc_of(const struct rc_board *b)
{
    return b->layout.order == RC_ORDER_DESC;
}

static struct board_truth *sort_board;

static int cmp_merged(const void *x, const void *y)
{
    const struct truth_row *a = x, *b = y;
    int desc = desc_of(sort_board->b);
    if (rc_shard_before(desc, a->c, a->shard, a->member, b->c, b->shard, b->member))
        return -1;
    return rc_shard_before(desc, b->c, b->shard, b->member, a->c, a->shard, a->member) ? 1 : 0;
}

static void command_ok(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    assert_non_null(r);
    if (r->type == REDIS_REPLY_ERROR)
        fail_msg("redis: %s", r->str);
    freeReplyObject(r);
}

/* Fills board `name`'s shards with NMEMBERS members: points from a small
 * range and one of three tie-break slots, so equal composites (and equal
 * points) cross shards; each shard gets a seq and an epoch. */
static void fill_board(struct fixture *f, struct board_truth *t, const char *name, unsigned seed)
{
    t->b = rc_conf_board_find(f->conf, name);
    assert_non_null(t->b);
    unsigned s = t->b->shards;
    double unit = rc_places_unit(t->b);
    const char *epochs[RC_SHARDS_MAX];
    char ep[RC_SHARDS_MAX][RC_EPOCH_MAX + 1];
    char shard[RC_SHARD_NAME_MAX + 1];
    for (unsigned i = 0; i < NMEMBERS; i++) {
        struct truth_row *r = &t->rows[i];
        snprintf(r->member, sizeof r->member, "m%03u", i);
        unsigned x = (i * 2654435761u + seed) >> 7;
        r->c = (double)(x % 12) * unit + (double)((x / 12) % 3);
        r->shard = rc_shard_of(r->member, s);
        assert_int_equal(rc_shard_name(shard, sizeof shard, name, r->shard), 0);
        command_ok(f->sync, "ZADD rc:{%s|}:z %.17g %s", shard, r->c, r->member);
    }
    t->n = NMEMBERS;
    t->seq = 0;
    for (unsigned j = 0; j < s; j++) {
        assert_int_equal(rc_shard_name(shard, sizeof shard, name, j), 0);
        command_ok(f->sync, "SET rc:{%s|}:seq %u", shard, 100 + 7 * j);
        t->seq += 100 + 7 * j;
        snprintf(ep[j], sizeof ep[j], "%sepoch%u", name, j);
        command_ok(f->sync, "HSET rc:{%s|}:epoch id %s", shard, ep[j]);
        epochs[j] = ep[j];
    }
    rc_shard_epoch(epochs, s, t->epoch);
    sort_board = t;
    qsort(t->rows, t->n, sizeof *t->rows, cmp_merged);
}

/* The place of truth row i (1 + the members with strictly better points)
 * and whether another member shares its points. */
static void truth_place(const struct board_truth *t, size_t i, int64_t *place, int *tied)
{
    double unit = rc_places_unit(t->b), k = rc_places_key(unit, t->rows[i].c);
    int64_t better = 0, same = 0;
    for (size_t j = 0; j < t->n; j++) {
        double kj = rc_places_key(unit, t->rows[j].c);
        if (kj == k)
            same++;
        else if (desc_of(t->b) ? kj > k : kj < k)
            better++;
    }
    *place = better + 1;
    *tied = same > 1;
}

/* ---- reads on the loop ----------------------------------------------------- */

struct got {
    int calls;
    int code;
    struct gw_window *w;
};

static void on_read(int code, struct gw_window *w, void *privdata)
{
    struct got *g = privdata;
    g->calls++;
    g->code = code;
    g->w = w;
}

/* gw_read, waited for. Returns its code (synchronous or through cb). */
static int read_now(struct fixture *f, const struct board_truth *t, const struct gw_read_spec *spec, struct got *g)
{
    memset(g, 0, sizeof *g);
    int rc = gw_read(&f->store, t->b, t->b->name, "", spec, on_read, g);
    if (rc)
        return rc;
    while (!g->calls)
        uv_run(&f->loop, UV_RUN_ONCE);
    uv_run(&f->loop, UV_RUN_NOWAIT);
    assert_int_equal(g->calls, 1);
    if (g->code)
        assert_null(g->w);
    return g->code;
}

/* w against the truth rows first..first+n-1 (0-based), and the head. */
static void expect_rows(const struct board_truth *t, const struct gw_window *w, int64_t first_rank, size_t from,
                        size_t n, int places)
{
    assert_int_equal(w->seq, t->seq);
    assert_int_equal(w->total, (int64_t)t->n);
    assert_string_equal(w->epoch, t->epoch);
    assert_int_equal(w->freeze.frozen, 0);
    assert_int_equal(w->first_rank, first_rank);
    if (w->n != n)
        fail_msg("%s from %zu: %zu rows, want %zu", t->b->name, from, w->n, n);
    for (size_t i = 0; i < n; i++) {
        const struct truth_row *r = &t->rows[from + i];
        if (strcmp(w->rows[i].member, r->member) != 0 || w->rows[i].c != r->c)
            fail_msg("%s row %zu (rank %zu): %s %.17g, want %s %.17g", t->b->name, i, from + i + 1,
                     w->rows[i].member, w->rows[i].c, r->member, r->c);
        int64_t place = 0;
        int tied = 0;
        if (places)
            truth_place(t, from + i, &place, &tied);
        if (w->rows[i].place != place || w->rows[i].tied != tied)
            fail_msg("%s rank %zu: place %lld tied %d, want %lld %d", t->b->name, from + i + 1,
                     (long long)w->rows[i].place, w->rows[i].tied, (long long)place, tied);
    }
}

/* ---- fixture --------------------------------------------------------------- */

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f || rc_test_redis_start(&f->redis, NULL) != 0 || !(f->sync = rc_test_redis_connect(&f->redis)))
        return -1;
    f->conf = rc_test_conf(conf_text);
    uv_loop_init(&f->loop);
    gw_script_init(&f->read_script, rc_lua_read);
    f->store.read_script = &f->read_script;
    f->store.clock = &f->clock;
    if (!(f->store.profiles = gw_profile_new(&f->store, 10000, 100000)))
        return -1;
    char seeds[32];
    snprintf(seeds, sizeof seeds, "127.0.0.1:%d", f->redis.port);
    struct gw_redis_opts o = {seeds, 50, 1000, 1000, 30000, 0, NULL, NULL};
    if (!(f->store.redis = gw_redis_start(&f->loop, &o, NULL)))
        return -1;
    gw_redis_add_script(f->store.redis, &f->read_script);
    uint64_t deadline = uv_now(&f->loop) + 30000;
    while (!gw_redis_is_up(f->store.redis)) {
        if (uv_now(&f->loop) > deadline)
            return -1;
        uv_run(&f->loop, UV_RUN_ONCE);
    }
    *state = f;
    fill_board(f, &f->g4, "g4", 11);
    fill_board(f, &f->a3, "a3", 5);
    command_ok(f->sync, "HSET rc:profile:m007 name Seven");
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    if (f->store.redis)
        gw_redis_stop(f->store.redis);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    gw_profile_free(f->store.profiles);
    int left = uv_loop_close(&f->loop);
    redisFree(f->sync);
    rc_test_redis_stop(&f->redis);
    free(f->conf);
    free(f);
    assert_int_equal(left, 0); /* nothing left open */
    return 0;
}

/* ---- merged reads ---------------------------------------------------------- */

static void check_range(struct fixture *f, const struct board_truth *t, int64_t first, int64_t count, int places)
{
    struct gw_read_spec spec = {.kind = GW_READ_RANGE, .first = first, .count = count, .places = places};
    struct got g;
    assert_int_equal(read_now(f, t, &spec, &g), 0);
    size_t from = (size_t)first < t->n ? (size_t)first : t->n;
    size_t to = (size_t)(first + count) < t->n ? (size_t)(first + count) : t->n;
    expect_rows(t, g.w, first + 1, from, to - from, places);
    gw_window_free(g.w);
}

static void pages_equal_the_merged_truth(void **state)
{
    struct fixture *f = *state;
    static const int64_t pages[][2] = {{0, 1}, {0, 10}, {0, 300}, {7, 13}, {99, 50}, {150, 1}, {295, 10},
                                       {299, 1}, {300, 5}, {400, 10}, {5, 0}, {0, 9999}, {9990, 10}};
    const struct board_truth *boards[] = {&f->g4, &f->a3};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < sizeof pages / sizeof *pages; i++)
            for (int places = 0; places < 2; places++)
                check_range(f, boards[k], pages[i][0], pages[i][1], places);
}

static void a_page_past_rank_10000_is_refused(void **state)
{
    struct fixture *f = *state;
    struct gw_read_spec spec = {.kind = GW_READ_RANGE, .first = 9991, .count = 10};
    struct got g;
    assert_int_equal(read_now(f, &f->g4, &spec, &g), RC_E_BAD_REQUEST);
    assert_int_equal(g.calls, 0);
    assert_non_null(gw_read_shard_refusal(f->g4.b, &spec));
    spec.first = 9990;
    assert_null(gw_read_shard_refusal(f->g4.b, &spec)); /* ends at rank 10000 */
    spec = (struct gw_read_spec){.kind = GW_READ_RANGE, .first = INT64_MAX, .count = 2};
    assert_int_equal(read_now(f, &f->g4, &spec, &g), RC_E_BAD_REQUEST);
}

static void a_page_of_no_rows_reads_the_merged_head(void **state)
{
    struct fixture *f = *state;
    struct gw_read_spec spec = {.kind = GW_READ_RANGE, .first = 0, .count = 0, .places = 1};
    struct got g;
    assert_int_equal(read_now(f, &f->a3, &spec, &g), 0);
    expect_rows(&f->a3, g.w, 1, 0, 0, 1);
    gw_window_free(g.w);
}

static void every_members_rank_is_its_merged_rank(void **state)
{
    struct fixture *f = *state;
    const struct board_truth *boards[] = {&f->g4, &f->a3};
    for (size_t k = 0; k < 2; k++) {
        const struct board_truth *t = boards[k];
        for (size_t i = 0; i < t->n; i++) {
            struct gw_read_spec spec = {.kind = GW_READ_RANK, .member = t->rows[i].member};
            struct got g;
            assert_int_equal(read_now(f, t, &spec, &g), 0);
            expect_rows(t, g.w, (int64_t)i + 1, i, 1, 0);
            gw_window_free(g.w);
        }
    }
}

static void an_absent_member_has_no_rank_and_the_whole_head(void **state)
{
    struct fixture *f = *state;
    struct gw_read_spec spec = {.kind = GW_READ_RANK, .member = "nobody"};
    struct got g;
    assert_int_equal(read_now(f, &f->g4, &spec, &g), 0);
    expect_rows(&f->g4, g.w, 0, 0, 0, 0);
    gw_window_free(g.w);
    spec = (struct gw_read_spec){.kind = GW_READ_AROUND, .member = "nobody", .radius = 3, .places = 1};
    assert_int_equal(read_now(f, &f->a3, &spec, &g), 0);
    expect_rows(&f->a3, g.w, 0, 0, 0, 0);
    gw_window_free(g.w);
}

static void check_around(struct fixture *f, const struct board_truth *t, size_t i, int64_t radius, int places)
{
    struct gw_read_spec spec = {.kind = GW_READ_AROUND, .member = t->rows[i].member, .radius = radius,
                                .places = places};
    struct got g;
    assert_int_equal(read_now(f, t, &spec, &g), 0);
    size_t from = i > (size_t)radius ? i - (size_t)radius : 0;
    size_t to = i + (size_t)radius + 1 < t->n ? i + (size_t)radius + 1 : t->n;
    expect_rows(t, g.w, (int64_t)from + 1, from, to - from, places);
    gw_window_free(g.w);
}

static void around_equals_the_merged_truth(void **state)
{
    struct fixture *f = *state;
    const struct board_truth *boards[] = {&f->g4, &f->a3};
    static const int64_t radii[] = {0, 1, 5};
    for (size_t k = 0; k < 2; k++) {
        const struct board_truth *t = boards[k];
        for (size_t i = 0; i < t->n; i++) {
            /* the top, the bottom and about 50 between */
            if (i > 6 && i < t->n - 7 && i % 6 != 0)
                continue;
            for (size_t r = 0; r < 3; r++)
                for (int places = 0; places < 2; places++)
                    check_around(f, t, i, radii[r], places);
        }
    }
}

static void rows_are_joined_with_profiles(void **state)
{
    struct fixture *f = *state;
    struct gw_read_spec spec = {.kind = GW_READ_RANK, .member = "m007"};
    struct got g;
    assert_int_equal(read_now(f, &f->g4, &spec, &g), 0);
    assert_int_equal(g.w->n, 1);
    assert_non_null(g.w->rows[0].profile);
    assert_int_equal(g.w->rows[0].profile->n, 1);
    assert_string_equal(g.w->rows[0].profile->kv[0].value, "Seven");
    gw_window_free(g.w);
}

/* ---- gw_read_call_counts -------------------------------------------------------- */

struct counted {
    int calls;
    int code;
    struct rc_read_head head;
    int64_t counts[4];
    size_t n;
};

static void on_counts(int code, const struct rc_read_head *head, const int64_t *counts, size_t n, void *privdata)
{
    struct counted *k = privdata;
    k->calls++;
    k->code = code;
    k->n = n;
    if (head)
        k->head = *head;
    for (size_t i = 0; i < n && i < 4; i++)
        k->counts[i] = counts[i];
}

static void counts_of_one_shard_match_zcount(void **state)
{
    struct fixture *f = *state;
    const struct board_truth *t = &f->g4;
    double c = t->rows[100].c;
    const double bounds[] = {c, c};
    const int incl[] = {0, 1};
    int64_t strict = 0, or_equal = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].shard == 2) {
            strict += t->rows[i].c > c;
            or_equal += t->rows[i].c >= c;
        }
    struct counted k = {0};
    assert_int_equal(gw_read_call_counts(&f->store, t->b, "g4#2", "", bounds, incl, 2, on_counts, &k), 0);
    while (!k.calls)
        uv_run(&f->loop, UV_RUN_ONCE);
    assert_int_equal(k.code, 0);
    assert_int_equal(k.n, 2);
    assert_int_equal(k.counts[0], strict);
    assert_int_equal(k.counts[1], or_equal);
    assert_true(or_equal > strict); /* the bound is some member's composite */
    assert_int_equal(k.head.seq, 100 + 7 * 2);
    /* no pairs: just the head */
    memset(&k, 0, sizeof k);
    assert_int_equal(gw_read_call_counts(&f->store, t->b, "g4#2", "", NULL, NULL, 0, on_counts, &k), 0);
    while (!k.calls)
        uv_run(&f->loop, UV_RUN_ONCE);
    assert_int_equal(k.code, 0);
    assert_int_equal(k.n, 0);
    assert_true(k.head.total > 0);
}

/* ---- read.lua's counts and near, called directly ---------------------------- */

/* EVALSHA of read.lua on board "s" (keys rc:{s|}:*) with args. */
static redisReply *read_lua(struct fixture *f, const char *const *args, size_t nargs)
{
    static char sha[41];
    if (!sha[0]) {
        redisReply *r = redisCommand(f->sync, "SCRIPT LOAD %s", rc_lua_read);
        assert_non_null(r);
        assert_int_equal(r->type, REDIS_REPLY_STRING);
        snprintf(sha, sizeof sha, "%s", r->str);
        freeReplyObject(r);
    }
    static const char *const head[] = {"EVALSHA", "", "6", "rc:{s|}:z", "rc:{s|}:seq", "rc:{s|}:log",
                                       "rc:{s|}:epoch", "rc:{s|}:frz", "rc:{s|}:fz"};
    size_t n = sizeof head / sizeof *head;
    const char **argv = malloc((n + nargs) * sizeof *argv);
    assert_non_null(argv);
    memcpy(argv, head, sizeof head);
    argv[1] = sha;
    for (size_t i = 0; i < nargs; i++)
        argv[n + i] = args[i];
    redisReply *r = redisCommandArgv(f->sync, (int)(n + nargs), argv, NULL);
    free(argv);
    assert_non_null(r);
    return r;
}

/* The set: a 10, b c d 20, e 30, f 40. */
static void small_set(struct fixture *f)
{
    command_ok(f->sync, "DEL rc:{s|}:z");
    command_ok(f->sync, "ZADD rc:{s|}:z 10 a 20 b 20 c 20 d 30 e 40 f");
}

/* The reply's items from index 8 on as text ("5 c:20 b:20 ..."). */
static void tail_text(const redisReply *r, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    for (size_t i = 8; i < r->elements && at < cap; i++) {
        const redisReply *e = r->element[i];
        int w;
        if (e->type == REDIS_REPLY_INTEGER)
            w = snprintf(out + at, cap - at, "%s%lld", at ? " " : "", e->integer);
        else if (i + 1 < r->elements && r->element[i + 1]->type == REDIS_REPLY_STRING)
            w = snprintf(out + at, cap - at, "%s%s:%s", at ? " " : "", e->str, r->element[++i]->str);
        else
            w = snprintf(out + at, cap - at, "%s%s", at ? " " : "", e->str);
        at += (size_t)w;
    }
}

static void expect_read_lua(struct fixture *f, const char *const *args, size_t nargs, const char *want)
{
    char text[256];
    redisReply *r = read_lua(f, args, nargs);
    if (r->type == REDIS_REPLY_ERROR)
        fail_msg("read.lua %s: %s", args[0], r->str);
    tail_text(r, text, sizeof text);
    if (strcmp(text, want) != 0)
        fail_msg("read.lua %s %s %s %s: \"%s\", want \"%s\"", args[0], args[1], nargs > 3 ? args[3] : "",
                 nargs > 4 ? args[4] : "", text, want);
    freeReplyObject(r);
}

static void counts_are_strict_or_inclusive_on_both_orders(void **state)
{
    struct fixture *f = *state;
    small_set(f);
    expect_read_lua(f, (const char *[]){"counts", "desc", "0", "20", "0", "20", "1", "", "1", "40", "1", "45", "0"},
                    13, "2 5 0 1 0");
    expect_read_lua(f, (const char *[]){"counts", "asc", "0", "20", "0", "20", "1", "10", "0", "5", "1"}, 11,
                    "1 4 0 0");
    expect_read_lua(f, (const char *[]){"counts", "desc", "0"}, 3, ""); /* just the head */
}

static void counts_refuses_too_many_pairs_and_bad_bounds(void **state)
{
    struct fixture *f = *state;
    small_set(f);
    const char *args[3 + 2 * 513];
    args[0] = "counts";
    args[1] = "desc";
    args[2] = "0";
    for (size_t i = 0; i < 513; i++) {
        args[3 + 2 * i] = "20";
        args[4 + 2 * i] = "0";
    }
    redisReply *r = read_lua(f, args, 3 + 2 * 512);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 8 + 512);
    freeReplyObject(r);
    r = read_lua(f, args, 3 + 2 * 513);
    assert_int_equal(r->type, REDIS_REPLY_ERROR);
    freeReplyObject(r);
    r = read_lua(f, (const char *[]){"counts", "desc", "0", "(20", "0"}, 5);
    assert_int_equal(r->type, REDIS_REPLY_ERROR);
    freeReplyObject(r);
    r = read_lua(f, (const char *[]){"counts", "desc", "0", "20"}, 4); /* half a pair */
    assert_int_equal(r->type, REDIS_REPLY_ERROR);
    freeReplyObject(r);
}

static void near_returns_the_nearest_rows_in_board_order(void **state)
{
    struct fixture *f = *state;
    small_set(f);
    /* desc: f40 e30 d20 c20 b20 a10 */
    expect_read_lua(f, (const char *[]){"near", "desc", "0", "20", "1", "2"}, 6, "5 2 c:20 b:20 a:10");
    expect_read_lua(f, (const char *[]){"near", "desc", "0", "20", "0", "2"}, 6, "2 2 f:40 e:30 d:20 c:20 b:20");
    expect_read_lua(f, (const char *[]){"near", "desc", "0", "20", "0", "1"}, 6, "2 1 e:30 d:20 c:20");
    expect_read_lua(f, (const char *[]){"near", "desc", "0", "40", "0", "0"}, 6, "0 0 f:40");
    expect_read_lua(f, (const char *[]){"near", "desc", "0", "5", "0", "3"}, 6, "6 3 c:20 b:20 a:10");
    /* asc: a10 b20 c20 d20 e30 f40 */
    expect_read_lua(f, (const char *[]){"near", "asc", "0", "20", "0", "2"}, 6, "1 1 a:10 b:20 c:20 d:20");
    expect_read_lua(f, (const char *[]){"near", "asc", "0", "20", "1", "2"}, 6, "4 2 c:20 d:20 e:30 f:40");
    expect_read_lua(f, (const char *[]){"near", "asc", "0", "20", "1", "0"}, 6, "4 0 e:30");
    expect_read_lua(f, (const char *[]){"near", "asc", "0", "99", "1", "1"}, 6, "6 1 f:40");
    redisReply *r = read_lua(f, (const char *[]){"near", "asc", "0", "x", "1", "1"}, 6);
    assert_int_equal(r->type, REDIS_REPLY_ERROR);
    freeReplyObject(r);
    r = read_lua(f, (const char *[]){"near", "asc", "0", "20", "1", "-1"}, 6);
    assert_int_equal(r->type, REDIS_REPLY_ERROR);
    freeReplyObject(r);
}

/* ---- failure ----------------------------------------------------------------- */

static void a_read_while_redis_is_down_fails_once_with_unavailable(void **state)
{
    struct fixture *f = *state;
    struct gw_read_spec specs[] = {
        {.kind = GW_READ_RANGE, .first = 0, .count = 10, .places = 1},
        {.kind = GW_READ_RANK, .member = "m001"},
        {.kind = GW_READ_AROUND, .member = "m001", .radius = 2, .places = 1},
    };
    rc_test_redis_kill(&f->redis);
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        struct got g;
        assert_int_equal(read_now(f, &f->g4, &specs[i], &g), RC_E_UNAVAILABLE);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pages_equal_the_merged_truth),
        cmocka_unit_test(a_page_past_rank_10000_is_refused),
        cmocka_unit_test(a_page_of_no_rows_reads_the_merged_head),
        cmocka_unit_test(every_members_rank_is_its_merged_rank),
        cmocka_unit_test(an_absent_member_has_no_rank_and_the_whole_head),
        cmocka_unit_test(around_equals_the_merged_truth),
        cmocka_unit_test(rows_are_joined_with_profiles),
        cmocka_unit_test(counts_of_one_shard_match_zcount),
        cmocka_unit_test(counts_are_strict_or_inclusive_on_both_orders),
        cmocka_unit_test(counts_refuses_too_many_pairs_and_bad_bounds),
        cmocka_unit_test(near_returns_the_nearest_rows_in_board_order),
        cmocka_unit_test(a_read_while_redis_is_down_fails_once_with_unavailable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
