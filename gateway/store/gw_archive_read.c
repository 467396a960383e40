/* gw_archive_read.c - reads of archived periods from the archive database:
 * the same window lua/read.lua would give (range, around, rank), built on the
 * threadpool, then scores decoded and profiles joined on the loop. Rows of an
 * archived period never change once its period row is there, so reads take
 * no transaction. */
#include "store/gw_archive_read.h"

#include <stdlib.h>
#include <string.h>

#include "base/gw_log.h"
#include "store/gw_archive_db.h"
#include "store/gw_join.h"
#include "store/gw_store.h"
#include "rc_err.h"
#include "rc_period.h"

struct read_job {
    struct gw_adb_job job;
    const struct gw_store *s;
    const struct rc_board *b;        /* borrowed from the configuration */
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
        struct rc_row *rows = realloc(w->rows, cap * sizeof *rows);
        if (!rows)
            return -1;
        w->rows = rows;
        q->cap = cap;
    }
    struct rc_row *row = &w->rows[w->n];
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
static void work_read(struct gw_adb_job *j, sqlite3 *db)
{
    struct read_job *q = (struct read_job *)j;
    int64_t rank, lo;
    double c;
    if ((j->rc = read_header(db, q)) != 0) {
        if (j->rc == RC_E_INTERNAL)
            gw_archive_db_fail(j, db, "read");
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
    case GW_READ_MEMBERS:
        break; /* (never asked: member lists are read from Redis only, gw_read.c) */
    }
    if (rc)
        gw_archive_db_fail(j, db, "read");
}

static void on_joined(struct gw_window *w, void *privdata)
{
    struct read_job *q = privdata;
    q->cb(0, w, q->privdata);
    free(q);
}

static void done_read(struct gw_adb_job *j)
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
    for (size_t i = 0; i < w->n; i++)
        gw_window_decode_score(q->b, w->rows[i].c, &w->rows[i].score, w->rows[i].fields, &w->rows[i].nfields);
    gw_join_profiles(q->s->profiles, w, on_joined, q);
}

int gw_archive_read(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                    const struct gw_read_spec *spec, gw_read_cb *cb, void *privdata)
{
    struct gw_adb *db = s->adb;
    if (!db || gw_archive_db_state(db) < 0)
        return RC_E_UNAVAILABLE;
    if (strlen(board) > RC_BOARD_MAX || strlen(period) >= RC_PERIOD_ID_MAX ||
        (spec->kind != GW_READ_RANGE && (!spec->member || strlen(spec->member) > RC_MEMBER_MAX)))
        return RC_E_BAD_REQUEST;
    struct read_job *q = calloc(1, sizeof *q);
    if (!q || !(q->w = calloc(1, sizeof *q->w))) {
        free(q);
        return RC_E_INTERNAL;
    }
    q->s = s;
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
    if (gw_archive_db_submit(db, &q->job, work_read, done_read) != 0) {
        gw_window_free(q->w);
        free(q);
        return RC_E_UNAVAILABLE;
    }
    return 0;
}
