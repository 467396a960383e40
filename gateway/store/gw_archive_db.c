/* gw_archive_db.c - the archive database: opening the SQLite file, its
 * schema, and the one-at-a-time queue of jobs that touch it on the libuv
 * threadpool (why: see gw_archive_db.h).
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
 * The period row is written last: its presence means the rows are complete
 * (store/gw_archive_sql.c). sqlite3_open_v2 is the one call made on the loop
 * thread, at start before anyone is served: it only opens the file (pragmas
 * and schema are the first job), so a bad path fails the start clearly. */
#include "store/gw_archive_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gw_log.h"
#include "rc_err.h"

#define BUSY_TIMEOUT_MS 5000 /* how long to wait for another gateway's transaction */
#define MODE_MAX 16
#define PATH_MAX_ 4096

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

struct gw_adb {
    uv_loop_t *loop;
    sqlite3 *db;                     /* touched only by jobs, one at a time */
    char path[PATH_MAX_];
    int state;                       /* gw_archive_db_state */
    int closing;                     /* the close job is queued: it frees us */
    gw_adb_setup_cb *on_setup;
    void *data;
    struct gw_adb_job *head, *tail;  /* queued jobs */
    struct gw_adb_job *running;      /* the job on the threadpool, or NULL */
};

void gw_archive_db_fail(struct gw_adb_job *j, sqlite3 *db, const char *what)
{
    j->rc = RC_E_INTERNAL;
    snprintf(j->err, sizeof j->err, "%s: %s", what, sqlite3_errmsg(db));
}

static void on_work(uv_work_t *req)
{
    struct gw_adb_job *j = req->data;
    j->work(j, j->db->db);
}

static void work_close(struct gw_adb_job *j, sqlite3 *db);
static void pump(struct gw_adb *a);

static void on_after_work(uv_work_t *req, int status)
{
    struct gw_adb_job *j = req->data;
    struct gw_adb *a = j->db;
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
    pump(a);
}

/* Starts the next queued job unless one is running. */
static void pump(struct gw_adb *a)
{
    while (!a->running && a->head) {
        struct gw_adb_job *j = a->head;
        a->head = j->next;
        if (!a->head)
            a->tail = NULL;
        j->next = NULL;
        j->req.data = j;
        a->running = j;
        if (uv_queue_work(a->loop, &j->req, on_work, on_after_work) != 0) {
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

static void enqueue(struct gw_adb *a, struct gw_adb_job *j, gw_adb_work_fn *work, gw_adb_done_fn *done)
{
    j->db = a;
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
    pump(a);
}

int gw_archive_db_submit(struct gw_adb *a, struct gw_adb_job *j, gw_adb_work_fn *work, gw_adb_done_fn *done)
{
    if (!a || a->closing)
        return RC_E_UNAVAILABLE;
    enqueue(a, j, work, done);
    return 0;
}

static int exec_sql(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : RC_E_INTERNAL;
}

/* sqlite3_exec callback: the first column of the (last) row into out[MODE_MAX]. */
static int copy_first_column(void *out, int ncols, char **vals, char **names)
{
    (void)names;
    if (ncols > 0 && vals[0])
        snprintf(out, MODE_MAX, "%s", vals[0]);
    return 0;
}

static void work_setup(struct gw_adb_job *j, sqlite3 *db)
{
    char mode[MODE_MAX] = "";
    sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
    if (sqlite3_exec(db, "PRAGMA journal_mode=WAL", copy_first_column, mode, NULL) != SQLITE_OK) {
        gw_archive_db_fail(j, db, "PRAGMA journal_mode=WAL");
        return;
    }
    /* WAL + NORMAL: a commit survives a crash of the process (not of the
     * host); an archive lost that way is archived again from Redis. */
    if (exec_sql(db, "PRAGMA synchronous=NORMAL") || exec_sql(db, SCHEMA_SQL)) {
        gw_archive_db_fail(j, db, "schema");
        return;
    }
    if (strcmp(mode, "wal") != 0)
        snprintf(j->err, sizeof j->err, "journal mode is %s, not wal", mode[0] ? mode : "unknown");
}

static void done_setup(struct gw_adb_job *j)
{
    struct gw_adb *a = j->db;
    a->state = j->rc ? -1 : 1;
    if (a->on_setup)
        a->on_setup(j->rc, j->err, a->data);
    free(j);
}

int gw_archive_db_setup(struct gw_adb *a)
{
    struct gw_adb_job *j = calloc(1, sizeof *j);
    if (!j)
        return RC_E_INTERNAL;
    int rc = gw_archive_db_submit(a, j, work_setup, done_setup);
    if (rc)
        free(j);
    else
        a->state = 0;
    return rc;
}

int gw_archive_db_state(const struct gw_adb *a)
{
    return a->state;
}

const char *gw_archive_db_path(const struct gw_adb *a)
{
    return a->path;
}

struct gw_adb *gw_archive_db_open(uv_loop_t *loop, const char *path, gw_adb_setup_cb *on_setup, void *data)
{
    struct gw_adb *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    if (strlen(path) >= sizeof a->path) {
        gw_log_error("archive path is too long");
        free(a);
        return NULL;
    }
    strcpy(a->path, path);
    a->loop = loop;
    a->on_setup = on_setup;
    a->data = data;
    if (sqlite3_open_v2(a->path, &a->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        gw_log_error("archive %s: %s", a->path, a->db ? sqlite3_errmsg(a->db) : "out of memory");
        sqlite3_close(a->db);
        free(a);
        return NULL;
    }
    if (gw_archive_db_setup(a) != 0) {
        sqlite3_close(a->db);
        free(a);
        return NULL;
    }
    return a;
}

static void work_close(struct gw_adb_job *j, sqlite3 *db)
{
    (void)j;
    sqlite3_close_v2(db); /* a WAL checkpoint may run here: off the loop */
}

static void done_close(struct gw_adb_job *j)
{
    struct gw_adb *a = j->db;
    free(j);
    free(a);
}

void gw_archive_db_close(struct gw_adb *a)
{
    if (!a || a->closing)
        return;
    struct gw_adb_job *j = calloc(1, sizeof *j);
    if (!j)
        return; /* leaks the database at exit rather than closing on the loop */
    a->closing = 1;
    a->on_setup = NULL; /* a setup still queued reports to no one */
    enqueue(a, j, work_close, done_close);
}
