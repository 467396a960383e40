/* gw_archive.c - the archive of finished periods (DESIGN.md, Periodic boards;
 * docs/gateway.md, Archive).
 *
 * When a period of a periodic board ends, its final standings are copied from
 * Redis into an embedded SQLite database ([server] archive_path, default
 * STATE_DIR/archive.sqlite3), once, even when several gateways share Redis and
 * the file. Reads of a past period whose keys have expired from Redis are
 * answered from it (gw_read.c falls back to gw_archive_read).
 *
 * Schema (created when missing; WAL mode and a busy timeout, so gateways on
 * one host can share the file):
 *
 *   CREATE TABLE archived_periods (       -- one row per archived board-period
 *     board TEXT, period TEXT,            -- board name, period id (rc_period.h)
 *     seq INTEGER, total INTEGER,         -- rc:{B|P}:seq and ZCARD when archived
 *     archived_at INTEGER,                -- gateway clock, ms since the epoch
 *     PRIMARY KEY (board, period));
 *   CREATE TABLE archived_rows (          -- the final standings, rank 1..total
 *     board TEXT, period TEXT, rank INTEGER,
 *     member TEXT, composite REAL,        -- the score as Redis held it (exact to 2^53)
 *     PRIMARY KEY (board, period, rank));
 *   CREATE INDEX archived_rows_member ON archived_rows (board, period, member);
 *
 * The period row is written last: its presence means the rows are complete.
 * Rows without one are a partial attempt, overwritten by the next attempt
 * (INSERT OR REPLACE; ranks past the final total are deleted with the period
 * row, in one transaction).
 *
 * Exactly once. Every TICK_MS the job looks at each exact-name periodic board
 * and the period that ended most recently, at least GRACE_MS ago (so writes in
 * flight have landed). For one not yet archived:
 *   1. EXISTS rc:{B|P}:archived           set: done, by us or another gateway
 *   2. EXISTS rc:{B|P}:z                  none: an empty period, recorded in
 *                                         SQLite (step 6) without touching Redis
 *   3. SET rc:{B|P}:archiving TOKEN NX PX LOCK_MS
 *                                         taken: another gateway is on it
 *   4. SQLite: is the period row there?   yes: only the Redis marker is missing
 *   5. lua/read.lua "range" pages of PAGE_ROWS rows, each written in one
 *      transaction on the threadpool before the next page is read, so a large
 *      board never holds the loop; a seq or total that moves between pages
 *      restarts the copy
 *   6. SQLite: the period row (INSERT OR IGNORE: only its first writer logs)
 *   7. SET rc:{B|P}:archived 1 PX TTL     expires with the period's keys
 * The lock is never deleted (only its owner may, which needs a
 * compare-and-delete script): it expires. Since step 1 comes before step 3, a
 * gateway can only get the lock after another finished if that lock expired,
 * and then it sees the marker. A gateway that dies mid-archive leaves a lock
 * that expires within LOCK_MS; the next attempt starts over. Should two
 * attempts overlap (an archive outliving its lock), both write the same rows
 * of a finished period and the primary key keeps one period row. Gateways on
 * other hosts, with files of their own, share the Redis marker: each period
 * with rows lands in the file of the gateway that archived it (empty periods
 * in every file).
 *
 * Threads. SQLite calls block, so none runs on the loop thread: every database
 * call is a job on the libuv threadpool (uv_queue_work), and jobs run one at a
 * time from a FIFO, so the one connection (a->db, opened SQLITE_OPEN_NOMUTEX)
 * is only ever used by one thread at a time. The one exception is
 * sqlite3_open_v2 in gw_archive_start, before the loop serves anyone: it only
 * opens the file (pragmas and schema are the first job), so a bad path fails
 * the start with a clear message.
 *
 * Not archived (yet): boards declared by a template ("match:*" with a
 * period), whose instances cannot be listed without scanning Redis; and
 * periods older than the one that ended last (every gateway down for a whole
 * period): only the most recent finished period is looked at.
 *
 * Lifetime: gw_archive_stop closes the timer and takes no new work. Runs in
 * flight end at their next step (their Redis callbacks still come back, with
 * NULL replies once gw_redis_stop runs), queued jobs still run, then a last
 * job closes the database and its completion frees the archive.
 */
#include "jobs/gw_archive.h"
#include "rc_expiry.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <sqlite3.h>
#include <uv.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "store/gw_profile.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_err.h"
#include "rc_keys.h"
#include "rc_period.h"

#define TICK_MS 1000         /* how often the boards are looked at */
#define GRACE_MS 2000        /* a period is archived this long after it ended */
#define PAGE_ROWS 1000       /* rows per Redis read and per transaction */
#define LOCK_MS 60000        /* expiry of rc:{B|P}:archiving */
#define BUSY_TIMEOUT_MS 5000 /* how long to wait for another gateway's transaction */
#define MAX_RESTARTS 3       /* re-reads when a finished board still changes */
#define SETUP_RETRY_TICKS 30 /* a failed setup is tried again after this many ticks */
#define ERR_MAX 200

static const char SCHEMA_SQL[] =
    "CREATE TABLE IF NOT EXISTS archived_periods ("
    " board TEXT NOT NULL, period TEXT NOT NULL,"
    " seq INTEGER NOT NULL, total INTEGER NOT NULL, archived_at INTEGER NOT NULL,"
    " PRIMARY KEY (board, period)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS archived_rows ("
    " board TEXT NOT NULL, period TEXT NOT NULL, rank INTEGER NOT NULL,"
    " member TEXT NOT NULL, composite REAL NOT NULL,"
    " PRIMARY KEY (board, period, rank)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS archived_rows_member ON archived_rows (board, period, member);";

/* ---- the database queue --------------------------------------------------- */

struct db_job;
/* Runs on a threadpool thread, alone with db; reports through j->rc, j->err. */
typedef void db_work_fn(struct db_job *j, sqlite3 *db);
/* Runs on the loop thread afterwards; owns j (frees it, or hands it on). */
typedef void db_done_fn(struct db_job *j);

/* The head of every job; each kind of job embeds it first. */
struct db_job {
    uv_work_t req;
    struct gw_archive *a;
    db_work_fn *work;
    db_done_fn *done;
    int rc;                /* 0 or an RC_E_*, set by work */
    char err[ERR_MAX];     /* why, when rc != 0 (SQLite's message, copied) */
    struct db_job *next;
};

/* One exact-name periodic board the job looks after. */
struct board_state {
    const struct rc_board *decl;     /* points into app->conf */
    char done[RC_PERIOD_ID_MAX];     /* newest period known archived (marker seen or set) */
    int busy;                        /* a run of this board is in flight */
};

struct gw_archive {
    struct gw_app *app;
    sqlite3 *db;                     /* touched only by jobs, one at a time */
    char path[RC_CONF_STR_MAX + 32];
    int ready;                       /* schema set up (the setup job succeeded) */
    int broken;                      /* the last setup failed: nothing is archived or read */
    unsigned setup_wait;             /* ticks since it failed */
    int stopping;
    int closing;                     /* the close job is queued: it frees us */
    uv_timer_t timer;
    int timer_closed;
    char token[33];                  /* ours, in rc:{B|P}:archiving */
    struct db_job *head, *tail;      /* queued jobs */
    struct db_job *running;          /* the job on the threadpool, or NULL */
    unsigned runs;                   /* archive runs in flight (they hold us) */
    size_t nboards;
    struct board_state *boards;
};

static void maybe_close(struct gw_archive *a);

static void job_fail(struct db_job *j, sqlite3 *db, const char *what)
{
    j->rc = RC_E_INTERNAL;
    snprintf(j->err, sizeof j->err, "%s: %s", what, sqlite3_errmsg(db));
}

static void on_work(uv_work_t *req)
{
    struct db_job *j = req->data;
    j->work(j, j->a->db);
}

static void work_close(struct db_job *j, sqlite3 *db);
static void db_pump(struct gw_archive *a);

static void on_after_work(uv_work_t *req, int status)
{
    struct db_job *j = req->data;
    struct gw_archive *a = j->a;
    a->running = NULL;
    if (status == UV_ECANCELED && !j->rc) {
        j->rc = RC_E_UNAVAILABLE;
        snprintf(j->err, sizeof j->err, "cancelled");
    }
    if (j->work == work_close) {
        j->done(j); /* frees a */
        return;
    }
    j->done(j);
    db_pump(a);
    maybe_close(a);
}

/* Starts the next queued job unless one is running. */
static void db_pump(struct gw_archive *a)
{
    while (!a->running && a->head) {
        struct db_job *j = a->head;
        a->head = j->next;
        if (!a->head)
            a->tail = NULL;
        j->next = NULL;
        j->req.data = j;
        a->running = j;
        if (uv_queue_work(a->app->loop, &j->req, on_work, on_after_work) != 0) {
            a->running = NULL;
            j->rc = RC_E_INTERNAL;
            snprintf(j->err, sizeof j->err, "uv_queue_work failed");
            if (j->work == work_close) {
                j->done(j); /* frees a: the database stays open until exit */
                return;
            }
            j->done(j);
        }
    }
}

/* Queues j (owned by the queue until its done runs). */
static void db_submit(struct gw_archive *a, struct db_job *j, db_work_fn *work, db_done_fn *done)
{
    j->a = a;
    j->work = work;
    j->done = done;
    j->rc = 0;
    j->err[0] = '\0';
    j->next = NULL;
    if (a->tail)
        a->tail->next = j;
    else
        a->head = j;
    a->tail = j;
    db_pump(a);
}

static int exec_sql(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* ---- setup and close ------------------------------------------------------ */

#define MODE_MAX 16

/* sqlite3_exec callback: the first column of the (last) row into out[MODE_MAX]. */
static int copy_first_column(void *out, int ncols, char **vals, char **names)
{
    (void)names;
    if (ncols > 0 && vals[0])
        snprintf(out, MODE_MAX, "%s", vals[0]);
    return 0;
}

static void work_setup(struct db_job *j, sqlite3 *db)
{
    char mode[MODE_MAX] = "";
    sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
    if (sqlite3_exec(db, "PRAGMA journal_mode=WAL", copy_first_column, mode, NULL) != SQLITE_OK) {
        job_fail(j, db, "PRAGMA journal_mode=WAL");
        return;
    }
    /* WAL + NORMAL: a commit survives a crash of the process (not of the
     * host); an archive lost that way is archived again from Redis. */
    if (exec_sql(db, "PRAGMA synchronous=NORMAL") || exec_sql(db, SCHEMA_SQL)) {
        job_fail(j, db, "schema");
        return;
    }
    if (strcmp(mode, "wal") != 0)
        snprintf(j->err, sizeof j->err, "journal mode is %s, not wal", mode[0] ? mode : "unknown");
}

static void done_setup(struct db_job *j)
{
    struct gw_archive *a = j->a;
    if (j->rc) {
        a->broken = 1;
        gw_log_error("archive %s: %s; nothing is archived until it works (next try in %d s)", a->path, j->err,
                     SETUP_RETRY_TICKS * TICK_MS / 1000);
    } else {
        a->ready = 1;
        if (j->err[0])
            gw_log_warn("archive %s: %s; gateways sharing the file may wait on each other", a->path, j->err);
        gw_log_info("archive: %s, %zu periodic boards", a->path, a->nboards);
    }
    free(j);
}

static void work_close(struct db_job *j, sqlite3 *db)
{
    (void)j;
    sqlite3_close_v2(db); /* a WAL checkpoint may run here: off the loop */
}

static void done_close(struct db_job *j)
{
    struct gw_archive *a = j->a;
    free(j);
    free(a->boards);
    free(a);
}

/* Frees the archive once it is stopping and nothing holds it any more: the
 * timer closed, no run in flight, no job queued or running. */
static void maybe_close(struct gw_archive *a)
{
    if (!a->stopping || a->closing || !a->timer_closed || a->runs || a->running || a->head)
        return;
    struct db_job *j = calloc(1, sizeof *j);
    if (!j)
        return; /* leaks the archive at exit rather than closing on the loop */
    a->closing = 1;
    db_submit(a, j, work_close, done_close);
}

/* ---- one archive run: Redis steps on the loop, SQLite steps as jobs -------- */

struct run {
    struct gw_archive *a;
    struct board_state *bs;
    struct rc_period period;         /* the finished period */
    char zkey[RC_KEY_MAX], seqkey[RC_KEY_MAX], logkey[RC_KEY_MAX];
    char marker[RC_KEY_MAX];         /* rc:{B|P}:archived */
    char lock[RC_KEY_MAX];           /* rc:{B|P}:archiving */
    int64_t seq, total;              /* from the first page */
    int64_t next;                    /* 0-based index of the next page's first row */
    int restarts;
    int empty;                       /* no sorted set: recorded as seq 0, total 0, no marker */
};

struct check_job {                   /* step 4 */
    struct db_job job;
    struct run *r;
    int found;
};

struct page_job {                    /* step 5 */
    struct db_job job;
    struct run *r;
    int64_t first_rank;              /* rank of members[0] */
    size_t n;
    char **members;                  /* owned */
    double *c;                       /* owned */
};

struct finish_job {                  /* step 6 */
    struct db_job job;
    struct run *r;
    int64_t archived_at;
    int inserted;
};

static void run_end(struct run *r)
{
    struct gw_archive *a = r->a;
    r->bs->busy = 0;
    a->runs--;
    free(r);
    maybe_close(a);
}

/* Gives up this attempt; the lock (if ours) expires and a later tick retries. */
static void run_fail(struct run *r, const char *why)
{
    if (!r->a->stopping)
        gw_log_warn("archive %s %s: %s; retrying within %d s", r->bs->decl->name, r->period.id, why,
                    LOCK_MS / 1000);
    run_end(r);
}

/* Sends one command for r on the command connection. Returns 0, or -1 when
 * Redis is not up or we are stopping (cb not called). */
static int run_command(struct run *r, redisCallbackFn *cb, const char *fmt, ...)
{
    struct gw_app *app = r->a->app;
    redisAsyncContext *ac = !r->a->stopping && app->redis ? gw_redis_cmd(app->redis) : NULL;
    if (!ac)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    int rc = redisvAsyncCommand(ac, cb, r, fmt, ap);
    va_end(ap);
    return rc == REDIS_OK ? 0 : -1;
}

/* The marker lives as long as the period's keys: until the end of the period
 * `keep` periods later (as rc_write_args computes the keys' TTL). */
static void on_marked(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct run *r = privdata;
    redisReply *rep = reply;
    (void)ac;
    if (rep && rep->type == REDIS_REPLY_STATUS)
        snprintf(r->bs->done, sizeof r->bs->done, "%s", r->period.id);
    run_end(r);
}

/* Step 7. */
static void set_marker(struct run *r)
{
    /* the marker lives as long as the period's keys (rc_expiry.h) */
    int64_t ttl;
    if (rc_period_ttl_ms(r->bs->decl, &r->period, gw_now_ms(r->a->app), &ttl, NULL) != 0)
        ttl = 86400000; /* past the calendar: a day is plenty */
    if (run_command(r, on_marked, "SET %s 1 PX %lld", r->marker, (long long)ttl) != 0)
        run_end(r);
}

static void work_finish(struct db_job *j, sqlite3 *db)
{
    struct finish_job *f = (struct finish_job *)j;
    struct run *r = f->r;
    sqlite3_stmt *st = NULL;
    if (exec_sql(db, "BEGIN IMMEDIATE")) {
        job_fail(j, db, "begin");
        return;
    }
    /* Trim ranks a partial earlier attempt left past the final total. */
    if (sqlite3_prepare_v2(db,
                           "DELETE FROM archived_rows WHERE board = ?1 AND period = ?2 AND rank > ?3"
                           " AND NOT EXISTS (SELECT 1 FROM archived_periods WHERE board = ?1 AND period = ?2)",
                           -1, &st, NULL) != SQLITE_OK)
        goto fail;
    sqlite3_bind_text(st, 1, r->bs->decl->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, r->period.id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, r->total);
    if (sqlite3_step(st) != SQLITE_DONE)
        goto fail;
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db,
                           "INSERT OR IGNORE INTO archived_periods (board, period, seq, total, archived_at)"
                           " VALUES (?1, ?2, ?3, ?4, ?5)",
                           -1, &st, NULL) != SQLITE_OK)
        goto fail;
    sqlite3_bind_text(st, 1, r->bs->decl->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, r->period.id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, r->seq);
    sqlite3_bind_int64(st, 4, r->total);
    sqlite3_bind_int64(st, 5, f->archived_at);
    if (sqlite3_step(st) != SQLITE_DONE)
        goto fail;
    f->inserted = sqlite3_changes(db) > 0;
    sqlite3_finalize(st);
    st = NULL;
    if (exec_sql(db, "COMMIT"))
        goto fail;
    return;
fail:
    job_fail(j, db, "period row");
    sqlite3_finalize(st);
    exec_sql(db, "ROLLBACK");
}

static void done_finish(struct db_job *j)
{
    struct finish_job *f = (struct finish_job *)j;
    struct run *r = f->r;
    int rc = j->rc, inserted = f->inserted;
    char err[ERR_MAX];
    memcpy(err, j->err, sizeof err);
    free(f);
    if (rc) {
        run_fail(r, err);
        return;
    }
    if (inserted)
        gw_log_info("archived %s %s: %" PRId64 " rows", r->bs->decl->name, r->period.id, r->total);
    if (r->empty) {
        snprintf(r->bs->done, sizeof r->bs->done, "%s", r->period.id);
        run_end(r);
        return;
    }
    set_marker(r);
}

/* Step 6. */
static void finish_run(struct run *r)
{
    struct finish_job *f = calloc(1, sizeof *f);
    if (!f) {
        run_fail(r, "out of memory");
        return;
    }
    f->r = r;
    f->archived_at = gw_now_ms(r->a->app);
    db_submit(r->a, &f->job, work_finish, done_finish);
}

static void page_free(struct page_job *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->members[i]);
    free(p->members);
    free(p->c);
    free(p);
}

static void work_page(struct db_job *j, sqlite3 *db)
{
    struct page_job *p = (struct page_job *)j;
    sqlite3_stmt *st = NULL;
    if (exec_sql(db, "BEGIN IMMEDIATE")) {
        job_fail(j, db, "begin");
        return;
    }
    if (sqlite3_prepare_v2(db,
                           "INSERT OR REPLACE INTO archived_rows (board, period, rank, member, composite)"
                           " VALUES (?1, ?2, ?3, ?4, ?5)",
                           -1, &st, NULL) != SQLITE_OK)
        goto fail;
    sqlite3_bind_text(st, 1, p->r->bs->decl->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, p->r->period.id, -1, SQLITE_STATIC);
    for (size_t i = 0; i < p->n; i++) {
        sqlite3_bind_int64(st, 3, p->first_rank + (int64_t)i);
        sqlite3_bind_text(st, 4, p->members[i], -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 5, p->c[i]);
        if (sqlite3_step(st) != SQLITE_DONE)
            goto fail;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (exec_sql(db, "COMMIT"))
        goto fail;
    return;
fail:
    job_fail(j, db, "rows");
    sqlite3_finalize(st);
    exec_sql(db, "ROLLBACK");
}

static void read_page(struct run *r);

static void done_page(struct db_job *j)
{
    struct page_job *p = (struct page_job *)j;
    struct run *r = p->r;
    size_t n = p->n;
    int rc = j->rc;
    char err[ERR_MAX];
    memcpy(err, j->err, sizeof err);
    page_free(p);
    if (rc) {
        run_fail(r, err);
    } else if (r->a->stopping) {
        run_end(r);
    } else {
        r->next += (int64_t)n;
        if (n < PAGE_ROWS || r->next >= r->total)
            finish_run(r);
        else
            read_page(r);
    }
}

static int reply_int(const redisReply *x, int64_t *v)
{
    if (!x || x->type != REDIS_REPLY_INTEGER)
        return -1;
    *v = x->integer;
    return 0;
}

/* { seq, total, first_rank, m1, c1, ... } -> a page job (copies the rows). */
static struct page_job *page_from_reply(struct run *r, const redisReply *rep, int64_t *seq, int64_t *total)
{
    int64_t first;
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements < 3 || (rep->elements - 3) % 2 ||
        reply_int(rep->element[0], seq) || reply_int(rep->element[1], total) || reply_int(rep->element[2], &first))
        return NULL;
    size_t n = (rep->elements - 3) / 2;
    struct page_job *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->r = r;
    p->first_rank = first;
    p->members = calloc(n ? n : 1, sizeof *p->members);
    p->c = calloc(n ? n : 1, sizeof *p->c);
    if (!p->members || !p->c) {
        page_free(p);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const redisReply *m = rep->element[3 + 2 * i], *c = rep->element[4 + 2 * i];
        if (m->type != REDIS_REPLY_STRING || c->type != REDIS_REPLY_STRING || !(p->members[i] = malloc(m->len + 1))) {
            page_free(p);
            return NULL;
        }
        memcpy(p->members[i], m->str, m->len);
        p->members[i][m->len] = '\0';
        p->n++;
        p->c[i] = strtod(c->str, NULL);
    }
    return p;
}

static void on_page(redisReply *reply, void *privdata)
{
    struct run *r = privdata;
    int64_t seq, total;
    if (!reply || r->a->stopping) {
        run_fail(r, "Redis went away");
        return;
    }
    struct page_job *p = page_from_reply(r, reply, &seq, &total);
    if (!p) {
        run_fail(r, reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected read.lua reply");
        return;
    }
    if (r->next == 0) {
        r->seq = seq;
        r->total = total;
    } else if (seq != r->seq || total != r->total) {
        /* A late write (a gateway whose clock lags by more than the grace):
         * the pages so far are from another version. Read it all again. */
        page_free(p);
        if (++r->restarts > MAX_RESTARTS) {
            run_fail(r, "the finished board keeps changing");
            return;
        }
        r->next = 0;
        read_page(r);
        return;
    }
    if (p->n == 0) {
        page_free(p);
        finish_run(r);
        return;
    }
    db_submit(r->a, &p->job, work_page, done_page);
}

/* Step 5: one page through lua/read.lua, KEYS as gw_read.c passes them. */
static void read_page(struct run *r)
{
    struct gw_app *app = r->a->app;
    char first[24], last[24];
    snprintf(first, sizeof first, "%" PRId64, r->next);
    snprintf(last, sizeof last, "%" PRId64, r->next + PAGE_ROWS - 1);
    const char *words[7] = {r->zkey, r->seqkey, r->logkey, "range",
                            r->bs->decl->layout.order == RC_ORDER_DESC ? "desc" : "asc", first, last};
    size_t lens[7];
    for (int i = 0; i < 7; i++)
        lens[i] = strlen(words[i]);
    redisAsyncContext *ac = !r->a->stopping && app->redis ? gw_redis_cmd(app->redis) : NULL;
    if (!ac || gw_script_call(&app->read_script, ac, 3, 7, words, lens, on_page, r) != 0)
        run_fail(r, "Redis is unavailable");
}

static void work_check(struct db_job *j, sqlite3 *db)
{
    struct check_job *c = (struct check_job *)j;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM archived_periods WHERE board = ?1 AND period = ?2", -1, &st, NULL) !=
        SQLITE_OK) {
        job_fail(j, db, "check");
        return;
    }
    sqlite3_bind_text(st, 1, c->r->bs->decl->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, c->r->period.id, -1, SQLITE_STATIC);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW)
        c->found = 1;
    else if (s != SQLITE_DONE)
        job_fail(j, db, "check");
    sqlite3_finalize(st);
}

static void done_check(struct db_job *j)
{
    struct check_job *c = (struct check_job *)j;
    struct run *r = c->r;
    int rc = j->rc, found = c->found;
    char err[ERR_MAX];
    memcpy(err, j->err, sizeof err);
    free(c);
    if (rc)
        run_fail(r, err);
    else if (r->a->stopping)
        run_end(r);
    else if (found)
        set_marker(r); /* archived here; the Redis marker was lost or expired */
    else
        read_page(r);
}

static void on_locked(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct run *r = privdata;
    redisReply *rep = reply;
    (void)ac;
    if (!rep || rep->type != REDIS_REPLY_STATUS || r->a->stopping) {
        run_end(r); /* nil: another gateway holds the lock; a later tick sees its marker */
        return;
    }
    struct check_job *c = calloc(1, sizeof *c);
    if (!c) {
        run_fail(r, "out of memory");
        return;
    }
    c->r = r;
    db_submit(r->a, &c->job, work_check, done_check);
}

/* Step 2: an empty period is recorded straight away, without writing to
 * Redis (no lock, no marker): the period row's INSERT OR IGNORE is enough to
 * log it once per file, and Redis is left untouched by every idle board. */
static void on_board_exists(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct run *r = privdata;
    redisReply *rep = reply;
    (void)ac;
    if (!rep || rep->type != REDIS_REPLY_INTEGER || r->a->stopping) {
        run_end(r);
        return;
    }
    if (rep->integer == 0) {
        r->empty = 1;
        finish_run(r);
        return;
    }
    if (run_command(r, on_locked, "SET %s %s NX PX %d", r->lock, r->a->token, LOCK_MS) != 0)
        run_end(r);
}

static void on_marker(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct run *r = privdata;
    redisReply *rep = reply;
    (void)ac;
    if (!rep || rep->type != REDIS_REPLY_INTEGER || r->a->stopping) {
        run_end(r);
        return;
    }
    if (rep->integer == 1) {
        snprintf(r->bs->done, sizeof r->bs->done, "%s", r->period.id);
        run_end(r);
        return;
    }
    if (run_command(r, on_board_exists, "EXISTS %s", r->zkey) != 0)
        run_end(r);
}

static int board_key(char *out, const struct run *r, const char *suffix)
{
    return rc_board_key(out, RC_KEY_MAX, r->bs->decl->name, r->period.id, suffix, NULL);
}

/* Step 1 for period p of bs. */
static void run_begin(struct gw_archive *a, struct board_state *bs, const struct rc_period *p)
{
    struct run *r = calloc(1, sizeof *r);
    if (!r)
        return;
    r->a = a;
    r->bs = bs;
    r->period = *p;
    if (board_key(r->zkey, r, "z") || board_key(r->seqkey, r, "seq") || board_key(r->logkey, r, "log") ||
        board_key(r->marker, r, "archived") || board_key(r->lock, r, "archiving")) {
        free(r);
        return;
    }
    bs->busy = 1;
    a->runs++;
    if (run_command(r, on_marker, "EXISTS %s", r->marker) != 0)
        run_end(r);
}

/* A setup that failed (a file another gateway held locked longer than the
 * busy timeout, a full disk) is tried again now and then. */
static void setup_again(struct gw_archive *a)
{
    struct db_job *j = calloc(1, sizeof *j);
    if (!j)
        return;
    a->broken = 0;
    a->setup_wait = 0;
    db_submit(a, j, work_setup, done_setup);
}

/* Each tick: start a run for every board whose last finished period (over
 * for at least GRACE_MS) is not known to be archived. Cheap when it is. */
static void on_tick(uv_timer_t *t)
{
    struct gw_archive *a = t->data;
    if (a->broken && ++a->setup_wait >= SETUP_RETRY_TICKS)
        setup_again(a);
    if (!a->ready || a->stopping || !a->app->redis || !gw_redis_is_up(a->app->redis))
        return;
    int64_t now = gw_now_ms(a->app);
    for (size_t i = 0; i < a->nboards; i++) {
        struct board_state *bs = &a->boards[i];
        struct rc_period cur, prev;
        if (bs->busy || rc_period_at(&bs->decl->period, now - GRACE_MS, &cur) != 0 ||
            rc_period_prev(&bs->decl->period, &cur, &prev) != 0 || strcmp(bs->done, prev.id) == 0)
            continue;
        run_begin(a, bs, &prev);
    }
}

/* ---- reads ------------------------------------------------------------------ */

struct read_job {
    struct db_job job;
    struct gw_app *app;
    const struct rc_board *b;        /* borrowed from app->conf */
    char board[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    struct gw_read_spec spec;        /* member points at member[] */
    char member[RC_MEMBER_MAX + 1];
    gw_read_cb *cb;
    void *privdata;
    struct gw_window *w;             /* built by the worker; handed to cb */
    size_t cap;                      /* rows allocated in w */
};

static int window_push(struct read_job *q, const char *member, double c)
{
    struct gw_window *w = q->w;
    if (w->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 16;
        struct gw_row *rows = realloc(w->rows, cap * sizeof *rows);
        if (!rows)
            return -1;
        w->rows = rows;
        q->cap = cap;
    }
    struct gw_row *row = &w->rows[w->n];
    memset(row, 0, sizeof *row);
    if (!(row->member = strdup(member)))
        return -1;
    row->c = c;
    w->n++;
    return 0;
}

/* Binds board and period as ?1 and ?2 of a fresh statement. */
static int prepare(sqlite3 *db, struct read_job *q, const char *sql, sqlite3_stmt **st)
{
    if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(*st, 1, q->board, -1, SQLITE_STATIC);
    sqlite3_bind_text(*st, 2, q->period, -1, SQLITE_STATIC);
    return 0;
}

/* Rows of ranks lo..hi into the window. */
static int read_rows(sqlite3 *db, struct read_job *q, int64_t lo, int64_t hi)
{
    sqlite3_stmt *st;
    int s;
    if (prepare(db, q,
                "SELECT member, composite FROM archived_rows WHERE board = ?1 AND period = ?2"
                " AND rank BETWEEN ?3 AND ?4 ORDER BY rank",
                &st))
        return -1;
    sqlite3_bind_int64(st, 3, lo);
    sqlite3_bind_int64(st, 4, hi);
    while ((s = sqlite3_step(st)) == SQLITE_ROW)
        if (window_push(q, (const char *)sqlite3_column_text(st, 0), sqlite3_column_double(st, 1)) != 0)
            break;
    sqlite3_finalize(st);
    return s == SQLITE_DONE ? 0 : -1;
}

/* The member's rank (0 when absent) and composite. */
static int find_member(sqlite3 *db, struct read_job *q, int64_t *rank, double *c)
{
    sqlite3_stmt *st;
    if (prepare(db, q,
                "SELECT rank, composite FROM archived_rows WHERE board = ?1 AND period = ?2 AND member = ?3", &st))
        return -1;
    sqlite3_bind_text(st, 3, q->member, -1, SQLITE_STATIC);
    int s = sqlite3_step(st);
    *rank = 0;
    if (s == SQLITE_ROW) {
        *rank = sqlite3_column_int64(st, 0);
        *c = sqlite3_column_double(st, 1);
    }
    sqlite3_finalize(st);
    return s == SQLITE_ROW || s == SQLITE_DONE ? 0 : -1;
}

/* seq and total of the archived period; RC_E_NOT_FOUND when there is none. */
static int read_header(sqlite3 *db, struct read_job *q)
{
    sqlite3_stmt *st;
    if (prepare(db, q, "SELECT seq, total FROM archived_periods WHERE board = ?1 AND period = ?2", &st))
        return RC_E_INTERNAL;
    int s = sqlite3_step(st), rc = s == SQLITE_DONE ? RC_E_NOT_FOUND : s == SQLITE_ROW ? 0 : RC_E_INTERNAL;
    if (s == SQLITE_ROW) {
        q->w->seq = sqlite3_column_int64(st, 0);
        q->w->total = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return rc;
}

/* The same window lua/read.lua would give for the spec. Reads happen outside
 * a transaction: rows of an archived period never change once its period row
 * is there. */
static void work_read(struct db_job *j, sqlite3 *db)
{
    struct read_job *q = (struct read_job *)j;
    int64_t rank, lo;
    double c;
    if ((j->rc = read_header(db, q)) != 0) {
        if (j->rc == RC_E_INTERNAL)
            job_fail(j, db, "read");
        return;
    }
    int rc = 0;
    switch (q->spec.kind) {
    case GW_READ_RANGE:
        q->w->first_rank = q->spec.first + 1;
        if (q->spec.count > 0)
            rc = read_rows(db, q, q->spec.first + 1, q->spec.first + q->spec.count);
        break;
    case GW_READ_AROUND:
        if ((rc = find_member(db, q, &rank, &c)) || !rank)
            break;
        lo = rank - q->spec.radius > 1 ? rank - q->spec.radius : 1;
        q->w->first_rank = lo;
        rc = read_rows(db, q, lo, rank + q->spec.radius);
        break;
    case GW_READ_RANK:
        if ((rc = find_member(db, q, &rank, &c)) || !rank)
            break;
        q->w->first_rank = rank;
        rc = window_push(q, q->member, c);
        break;
    }
    if (rc)
        job_fail(j, db, "read");
}

static void read_finish(struct read_job *q)
{
    struct gw_window *w = q->w;
    for (size_t i = 0; i < w->n; i++) {
        w->rows[i].profile = gw_profiles_get(q->app->profiles, w->rows[i].member);
        gw_profile_ref(w->rows[i].profile);
    }
    q->cb(0, w, q->privdata);
    free(q);
}

static void on_read_profiles(void *privdata)
{
    read_finish(privdata);
}

static void done_read(struct db_job *j)
{
    struct read_job *q = (struct read_job *)j;
    struct gw_window *w = q->w;
    if (j->rc) {
        if (j->rc != RC_E_NOT_FOUND)
            gw_log_warn("archive read %s %s: %s", q->board, q->period, j->err);
        gw_window_free(w);
        q->cb(j->rc, NULL, q->privdata);
        free(q);
        return;
    }
    const char **members = malloc((w->n ? w->n : 1) * sizeof *members);
    for (size_t i = 0; i < w->n; i++) {
        gw_decode_score(q->b, w->rows[i].c, &w->rows[i].score, w->rows[i].fields, &w->rows[i].nfields);
        if (members)
            members[i] = w->rows[i].member;
    }
    /* As gw_read.c: rows go out without profiles when Redis is gone. */
    int rc = members && q->app->redis ? gw_profiles_fetch(q->app->profiles, members, w->n, on_read_profiles, q) : -1;
    free(members);
    if (rc != 0)
        read_finish(q);
}

int gw_archive_read(struct gw_app *app, const struct rc_board *b, const char *board, const char *period,
                    const struct gw_read_spec *spec, gw_read_cb *cb, void *privdata)
{
    struct gw_archive *a = app->archive;
    if (!a || a->broken)
        return RC_E_UNAVAILABLE;
    if (strlen(board) > RC_BOARD_MAX || strlen(period) >= RC_PERIOD_ID_MAX ||
        (spec->kind != GW_READ_RANGE && (!spec->member || strlen(spec->member) > RC_MEMBER_MAX)))
        return RC_E_BAD_REQUEST;
    struct read_job *q = calloc(1, sizeof *q);
    if (!q || !(q->w = calloc(1, sizeof *q->w))) {
        free(q);
        return RC_E_INTERNAL;
    }
    q->app = app;
    q->b = b;
    strcpy(q->board, board);
    strcpy(q->period, period);
    q->spec = *spec;
    if (spec->kind != GW_READ_RANGE) {
        strcpy(q->member, spec->member);
        q->spec.member = q->member;
    }
    q->cb = cb;
    q->privdata = privdata;
    db_submit(a, &q->job, work_read, done_read);
    return 0;
}

/* ---- start and stop ---------------------------------------------------------- */

static int archive_path(const struct rc_conf *c, char *out, size_t cap)
{
    int n = c->archive_path[0] ? snprintf(out, cap, "%s", c->archive_path)
                               : snprintf(out, cap, "%s/archive.sqlite3", c->state_dir);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* A random token naming this instance in the locks it takes. */
static void make_token(char *out)
{
    unsigned char raw[16];
    if (uv_random(NULL, NULL, raw, sizeof raw, 0, NULL) != 0) {
        uint64_t x = uv_hrtime() ^ ((uint64_t)uv_os_getpid() << 32);
        memcpy(raw, &x, sizeof x);
        memcpy(raw + 8, &x, sizeof x);
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

static int collect_boards(struct gw_archive *a, const struct rc_conf *c)
{
    a->boards = calloc(c->nboards ? c->nboards : 1, sizeof *a->boards);
    if (!a->boards)
        return -1;
    for (size_t i = 0; i < c->nboards; i++) {
        const struct rc_board *b = &c->boards[i];
        if (b->period.kind != RC_PERIOD_NONE && !b->is_template) /* templates: see the banner */
            a->boards[a->nboards++].decl = b;
    }
    return 0;
}

int gw_archive_start(struct gw_app *app)
{
    struct gw_archive *a = calloc(1, sizeof *a);
    struct db_job *setup = calloc(1, sizeof *setup);
    if (!a || !setup || collect_boards(a, app->conf) != 0)
        goto fail;
    a->app = app;
    if (archive_path(app->conf, a->path, sizeof a->path) != 0) {
        gw_log_error("archive path is too long");
        goto fail;
    }
    if (sqlite3_open_v2(a->path, &a->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        gw_log_error("archive %s: %s", a->path, a->db ? sqlite3_errmsg(a->db) : "out of memory");
        sqlite3_close(a->db);
        goto fail;
    }
    make_token(a->token);
    uv_timer_init(app->loop, &a->timer);
    a->timer.data = a;
    uv_timer_start(&a->timer, on_tick, TICK_MS, TICK_MS);
    app->archive = a;
    db_submit(a, setup, work_setup, done_setup);
    return 0;
fail:
    free(setup);
    if (a)
        free(a->boards);
    free(a);
    return -1;
}

static void on_timer_closed(uv_handle_t *h)
{
    struct gw_archive *a = h->data;
    a->timer_closed = 1;
    maybe_close(a);
}

void gw_archive_stop(struct gw_app *app)
{
    struct gw_archive *a = app->archive;
    if (!a)
        return;
    app->archive = NULL;
    a->stopping = 1;
    uv_timer_stop(&a->timer);
    uv_close((uv_handle_t *)&a->timer, on_timer_closed);
}
