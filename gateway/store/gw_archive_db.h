/* gw_archive_db.h - the archive database (DESIGN.md, Periodic boards): the
 * SQLite file of archived periods and the queue that runs every call on it
 * off the loop. The archive job (jobs/gw_archive.c) writes through it, reads
 * of archived periods (store/gw_archive_read.c) read through it.
 *
 * Threads. SQLite calls block, so none runs on the loop thread: every call is
 * a job on the libuv threadpool (uv_queue_work), and jobs run one at a time
 * from a FIFO, so the one connection (opened SQLITE_OPEN_NOMUTEX) is only ever
 * used by one thread at a time. */
#ifndef GW_ARCHIVE_DB_H
#define GW_ARCHIVE_DB_H

#include <stddef.h>
#include <sqlite3.h>
#include <uv.h>

#define GW_ADB_ERR_MAX 200

struct gw_adb;
struct gw_adb_job;
/* Runs on a threadpool thread, alone with db; reports through j->rc, j->err. */
typedef void gw_adb_work_fn(struct gw_adb_job *j, sqlite3 *db);
/* Runs on the loop thread afterwards; owns j (frees it, or hands it on). */
typedef void gw_adb_done_fn(struct gw_adb_job *j);

/* The head of every job; each kind of job embeds it first. */
struct gw_adb_job {
    uv_work_t req;
    struct gw_adb *db;
    gw_adb_work_fn *work;
    gw_adb_done_fn *done;
    int rc;                      /* 0 or an RC_E_*, set by work */
    char err[GW_ADB_ERR_MAX];    /* why, when rc != 0 (SQLite's message, copied) */
    struct gw_adb_job *next;
};

/* Opens (creates) the file at path; the schema is set up by the first job.
 * on_setup(rc, err, data) runs on the loop when that job is done (rc 0 or an
 * RC_E_*; err a warning when rc is 0 and err[0]). Returns NULL on failure
 * (logged). */
typedef void gw_adb_setup_cb(int rc, const char *err, void *data);
struct gw_adb *gw_archive_db_open(uv_loop_t *loop, const char *path, gw_adb_setup_cb *on_setup, void *data);

/* Sets the schema up again (after a failed setup); on_setup runs again. */
int gw_archive_db_setup(struct gw_adb *db);

/* 1 once a setup succeeded, -1 while the last one failed, 0 before. */
int gw_archive_db_state(const struct gw_adb *db);

const char *gw_archive_db_path(const struct gw_adb *db);

/* Queues j (owned by the queue until its done runs). Returns 0, or
 * RC_E_UNAVAILABLE once the database is closing (j untouched). */
int gw_archive_db_submit(struct gw_adb *db, struct gw_adb_job *j, gw_adb_work_fn *work, gw_adb_done_fn *done);

/* Closes the database after every queued job has run, then frees it (the
 * loop must run on until then). Nothing can be submitted afterwards. */
void gw_archive_db_close(struct gw_adb *db);

/* For work functions: j->rc = RC_E_INTERNAL with "what: SQLite's message". */
void gw_archive_db_fail(struct gw_adb_job *j, sqlite3 *db, const char *what);

#endif
