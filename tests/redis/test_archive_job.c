/* test_archive_job.c - the archive job (jobs/gw_archive) against a real
 * redis-server and a real SQLite file in a temp dir: a finished period of
 * 2,500 members (three pages) is archived with exactly the rows Redis held,
 * the lock is released afterwards, and a second run (marker gone) finds the
 * period in the file and archives nothing again. A job stopped in the middle
 * of a run (some pages in the file, no marker) completes on restart with each
 * row once; and of two jobs started together (two gateways, a file each),
 * one archives and the other, seeing the lock and then the marker, copies
 * nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <uv.h>

#include "gw_app.h"
#include "jobs/gw_archive.h"
#include "redis/gw_redis.h"
#include "rc_err.h"
#include "rc_lua.h"
#include "rc_period.h"
#include "rc_test_redis.h"

#define N 2500
#define DEADLINE_MS 30000

/* A second gateway: its own configuration, Redis connection and file. */
struct other {
    struct rc_conf conf;
    struct gw_app app;
    char db[128];
};

struct fixture {
    struct rc_test_redis redis;
    char seeds[32];
    redisContext *sync;
    uv_loop_t loop;
    uv_timer_t tick;
    struct rc_conf conf;
    struct gw_app app;
    char dir[64], db[128];
    struct rc_period prev;
    struct other *other;          /* NULL unless a test starts it */
};

static void on_tick(uv_timer_t *t)
{
    (void)t;
}

static void on_up(void *data)
{
    (void)data;
}

static void on_down(void *data, const char *reason)
{
    (void)data;
    (void)reason;
}

static void on_message(void *data, const char *p, const char *c, const char *m, size_t len)
{
    (void)data, (void)p, (void)c, (void)m, (void)len;
}

static uint64_t ms(void)
{
    return uv_hrtime() / 1000000;
}

/* One value of a query on the archive file `path` (-1 when no row, no file
 * or the file is busy). */
static int64_t sql_int_at(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return -1;
    }
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return v;
}

static int64_t sql_int(struct fixture *f, const char *sql)
{
    return sql_int_at(f->db, sql);
}

static int marker_set(struct fixture *f)
{
    redisReply *r = redisCommand(f->sync, "EXISTS rc:{daily|%s}:archived", f->prev.id);
    int set = r && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    return set;
}

/* Runs the loop until the marker is set (fails after DEADLINE_MS). */
static void wait_marker(struct fixture *f)
{
    uint64_t end = ms() + DEADLINE_MS;
    while (!marker_set(f) && ms() < end)
        uv_run(&f->loop, UV_RUN_ONCE);
    assert_true(marker_set(f));
}

static void stop_archive(struct fixture *f)
{
    gw_archive_stop(&f->app);
    /* the archive frees itself once its queued jobs ran */
    uint64_t end = ms() + 2000;
    while (ms() < end)
        uv_run(&f->loop, UV_RUN_NOWAIT);
}

/* A gateway's wiring as far as the archive job needs it: the configuration
 * (archive file `db`), a Redis connection and the read script. */
static int app_open(struct fixture *f, struct gw_app *app, struct rc_conf *conf, const char *db)
{
    struct rc_error err;
    char text[512];
    snprintf(text, sizeof text,
             "[server]\narchive_path = %s\n\n[board daily]\norder = desc\nperiod = day\n"
             "tiebreak = earliest\ntiebreak_resolution = 1ms\nkeep = 7\n",
             db);
    if (rc_conf_parse("test.conf", text, strlen(text), conf, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    app->loop = &f->loop;
    app->conf = conf;
    snprintf(f->seeds, sizeof f->seeds, "127.0.0.1:%d", f->redis.port);
    struct gw_redis_opts o = {.seeds = f->seeds, .backoff_min_ms = 50,
                              .backoff_max_ms = 1000, .ping_every_ms = 1000, .ping_timeout_ms = 5000};
    struct gw_redis_hooks h = {.data = f, .on_up = on_up, .on_down = on_down, .on_message = on_message};
    gw_script_init(&app->read_script, rc_lua_read);
    if (!(app->redis = gw_redis_start(&f->loop, &o, &h)))
        return -1;
    gw_redis_add_script(app->redis, &app->read_script);
    return 0;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f || rc_test_redis_start(&f->redis, NULL) != 0 || !(f->sync = rc_test_redis_connect(&f->redis)))
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/rc-archive-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->db, sizeof f->db, "%s/archive.sqlite3", f->dir);
    uv_loop_init(&f->loop);
    uv_timer_init(&f->loop, &f->tick);
    uv_timer_start(&f->tick, on_tick, 20, 20);
    if (app_open(f, &f->app, &f->conf, f->db) != 0)
        return -1;
    /* the period the job looks at: the last one over (2 s grace) */
    const struct rc_board *b = rc_conf_board_find(&f->conf, "daily");
    struct rc_period cur;
    if (!b || rc_period_at(&b->period, gw_now_ms(&f->app) - 2000, &cur) || rc_period_prev(&b->period, &cur, &f->prev))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    gw_archive_stop(&f->app); /* a failed test may leave it running */
    gw_redis_stop(f->app.redis);
    if (f->other) {
        gw_archive_stop(&f->other->app);
        gw_redis_stop(f->other->app.redis);
    }
    uv_close((uv_handle_t *)&f->tick, NULL);
    uint64_t end = ms() + 10000;
    while (uv_run(&f->loop, UV_RUN_NOWAIT) && ms() < end)
        ;
    uv_loop_close(&f->loop);
    free(f->other);
    redisFree(f->sync);
    rc_test_redis_stop(&f->redis);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", f->dir);
    free(f);
    return 0;
}

static void test_archived_once_with_the_rows_redis_held(void **state)
{
    struct fixture *f = *state;
    const char *id = f->prev.id;
    /* N members, distinct scores, and a seq, as writes leave them */
    for (int i = 0; i < N; i++) {
        redisReply *r = redisCommand(f->sync, "ZADD rc:{daily|%s}:z %d m%d", id, (i * 7919) % 100003, i);
        freeReplyObject(r);
    }
    freeReplyObject(redisCommand(f->sync, "SET rc:{daily|%s}:seq 4242", id));

    assert_int_equal(gw_archive_start(&f->app), 0);
    wait_marker(f);

    char q[256];
    snprintf(q, sizeof q, "SELECT total FROM archived_periods WHERE board = 'daily' AND period = '%s'", id);
    assert_int_equal(sql_int(f, q), N);
    snprintf(q, sizeof q, "SELECT seq FROM archived_periods WHERE board = 'daily' AND period = '%s'", id);
    assert_int_equal(sql_int(f, q), 4242);
    snprintf(q, sizeof q, "SELECT count(*) FROM archived_rows WHERE board = 'daily' AND period = '%s'", id);
    assert_int_equal(sql_int(f, q), N);
    /* every rank holds what Redis holds at that rank (desc) */
    redisReply *z = redisCommand(f->sync, "ZREVRANGE rc:{daily|%s}:z 0 -1 WITHSCORES", id);
    assert_non_null(z);
    assert_int_equal(z->elements, 2 * N);
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(f->db, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT rank, member, composite FROM archived_rows WHERE board = 'daily'"
                                        " AND period = ?1 ORDER BY rank",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int64(st, 0), (int64_t)i + 1);
        assert_string_equal((const char *)sqlite3_column_text(st, 1), z->element[2 * i]->str);
        assert_true(sqlite3_column_double(st, 2) == strtod(z->element[2 * i + 1]->str, NULL));
    }
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
    freeReplyObject(z);

    /* the lock is given back (the release follows the marker) */
    long long held = 1;
    for (uint64_t end = ms() + DEADLINE_MS; held && ms() < end;) {
        uv_run(&f->loop, UV_RUN_ONCE);
        redisReply *l = redisCommand(f->sync, "EXISTS rc:{daily|%s}:archiving", id);
        held = l->integer;
        freeReplyObject(l);
    }
    assert_int_equal(held, 0);

    /* Run again with the marker gone: the period row is found in the file,
     * the marker comes back, nothing is written again. */
    snprintf(q, sizeof q, "SELECT archived_at FROM archived_periods WHERE board = 'daily' AND period = '%s'", id);
    int64_t at = sql_int(f, q);
    stop_archive(f);
    freeReplyObject(redisCommand(f->sync, "DEL rc:{daily|%s}:archived", id));
    freeReplyObject(redisCommand(f->sync, "ZADD rc:{daily|%s}:z 1 late-write", id)); /* would show if re-copied */
    assert_int_equal(gw_archive_start(&f->app), 0);
    wait_marker(f);
    assert_int_equal(sql_int(f, q), at);
    snprintf(q, sizeof q, "SELECT count(*) FROM archived_rows WHERE board = 'daily' AND period = '%s'", id);
    assert_int_equal(sql_int(f, q), N);
    stop_archive(f);
}

/* Fills the finished period with n members (distinct scores, 500 per
 * command) and a seq, as writes leave them. */
static void fill(struct fixture *f, int n)
{
    char key[96], sc[500][16], mb[500][16];
    const char *argv[2 + 1000];
    snprintf(key, sizeof key, "rc:{daily|%s}:z", f->prev.id);
    for (int i = 0; i < n;) {
        int k = 0;
        argv[0] = "ZADD";
        argv[1] = key;
        for (; k < 500 && i < n; k++, i++) {
            snprintf(sc[k], sizeof sc[k], "%d", (int)(((int64_t)i * 7919) % 1000003));
            snprintf(mb[k], sizeof mb[k], "m%d", i);
            argv[2 + 2 * k] = sc[k];
            argv[3 + 2 * k] = mb[k];
        }
        freeReplyObject(redisCommandArgv(f->sync, 2 + 2 * k, argv, NULL));
    }
    freeReplyObject(redisCommand(f->sync, "SET rc:{daily|%s}:seq 4242", f->prev.id));
}

static int64_t period_count(const char *path, const char *sql_fmt, const char *id)
{
    char q[256];
    snprintf(q, sizeof q, sql_fmt, id);
    return sql_int_at(path, q);
}

#define ROWS "SELECT count(*) FROM archived_rows WHERE board = 'daily' AND period = '%s'"
#define RANKS "SELECT count(DISTINCT rank) FROM archived_rows WHERE board = 'daily' AND period = '%s'"
#define MEMBERS "SELECT count(DISTINCT member) FROM archived_rows WHERE board = 'daily' AND period = '%s'"
#define PERIODS "SELECT count(*) FROM archived_periods WHERE board = 'daily' AND period = '%s'"
#define TOTAL "SELECT total FROM archived_periods WHERE board = 'daily' AND period = '%s'"

static int lock_held(struct fixture *f)
{
    redisReply *l = redisCommand(f->sync, "EXISTS rc:{daily|%s}:archiving", f->prev.id);
    int held = l && l->type == REDIS_REPLY_INTEGER && l->integer == 1;
    freeReplyObject(l);
    return held;
}

/* The file at path holds the period once, with n rows, each rank and member
 * once, as Redis holds them (the best and the last rank checked). */
static void assert_archived_once(struct fixture *f, const char *path, int64_t n)
{
    const char *id = f->prev.id;
    assert_int_equal(period_count(path, PERIODS, id), 1);
    assert_int_equal(period_count(path, TOTAL, id), n);
    assert_int_equal(period_count(path, ROWS, id), n);
    assert_int_equal(period_count(path, RANKS, id), n);
    assert_int_equal(period_count(path, MEMBERS, id), n);
    redisReply *z = redisCommand(f->sync, "ZREVRANGE rc:{daily|%s}:z 0 0", id);
    char q[256];
    snprintf(q, sizeof q,
             "SELECT count(*) FROM archived_rows WHERE board = 'daily' AND period = '%s' AND rank = 1 AND member = '%s'",
             id, z->element[0]->str);
    assert_int_equal(sql_int_at(path, q), 1);
    freeReplyObject(z);
    z = redisCommand(f->sync, "ZRANGE rc:{daily|%s}:z 0 0", id);
    snprintf(q, sizeof q,
             "SELECT count(*) FROM archived_rows WHERE board = 'daily' AND period = '%s' AND rank = %lld AND member = '%s'",
             id, (long long)n, z->element[0]->str);
    assert_int_equal(sql_int_at(path, q), 1);
    freeReplyObject(z);
}

#define BIG 20000 /* twenty pages: a stop lands between two of them */

static void test_stopped_mid_run_completes_once_on_restart(void **state)
{
    struct fixture *f = *state;
    const char *id = f->prev.id;
    fill(f, BIG);
    assert_int_equal(gw_archive_start(&f->app), 0);
    /* run until the first page is in the file, then stop */
    int64_t rows = -1;
    for (uint64_t end = ms() + DEADLINE_MS; rows <= 0 && ms() < end;) {
        uv_run(&f->loop, UV_RUN_ONCE);
        rows = period_count(f->db, ROWS, id);
    }
    stop_archive(f);
    /* stopped mid-run: some pages, no period row, no marker, no lock left */
    rows = period_count(f->db, ROWS, id);
    assert_true(rows > 0 && rows < BIG);
    assert_int_equal(period_count(f->db, PERIODS, id), 0);
    assert_false(marker_set(f));
    assert_false(lock_held(f)); /* given back on stop, not left to expire */

    /* a restart completes it: every row once, one period row, the marker */
    assert_int_equal(gw_archive_start(&f->app), 0);
    wait_marker(f);
    assert_archived_once(f, f->db, BIG);
    stop_archive(f);
}

static void test_two_jobs_at_once_archive_once(void **state)
{
    struct fixture *f = *state;
    const char *id = f->prev.id;
    fill(f, N);
    f->other = calloc(1, sizeof *f->other);
    assert_non_null(f->other);
    snprintf(f->other->db, sizeof f->other->db, "%s/other.sqlite3", f->dir);
    assert_int_equal(app_open(f, &f->other->app, &f->other->conf, f->other->db), 0);
    /* started together: their ticks fall together, both find no marker and
     * race for the lock */
    assert_int_equal(gw_archive_start(&f->app), 0);
    assert_int_equal(gw_archive_start(&f->other->app), 0);
    wait_marker(f);
    /* let the loser tick again past the marker (TICK_MS is 1 s) */
    for (uint64_t end = ms() + 2500; ms() < end;)
        uv_run(&f->loop, UV_RUN_NOWAIT);
    int64_t mine = period_count(f->db, ROWS, id), its = period_count(f->other->db, ROWS, id);
    /* exactly one file has the rows; the other has neither rows nor a
     * period row (a file that was never written may not exist: -1) */
    assert_true((mine == N && its <= 0) || (its == N && mine <= 0));
    const char *winner = mine == N ? f->db : f->other->db, *loser = mine == N ? f->other->db : f->db;
    assert_archived_once(f, winner, N);
    assert_true(period_count(loser, PERIODS, id) <= 0);
    assert_true(marker_set(f));
    assert_false(lock_held(f));
    gw_archive_stop(&f->other->app);
    stop_archive(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_archived_once_with_the_rows_redis_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stopped_mid_run_completes_once_on_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_jobs_at_once_archive_once, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
