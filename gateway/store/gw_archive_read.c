/* gw_archive_read.c - reads of archived periods from the archive database:
 * the same window lua/read.lua would give (range, around, rank, member
 * lists, with shared places), built on the threadpool, then scores decoded
 * and profiles joined on the loop. Rows of an archived period never change
 * once its period row is there, so reads take no transaction. */
#include "store/gw_archive_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gw_log.h"
#include "store/gw_archive_db.h"
#include "store/gw_join.h"
#include "store/gw_store.h"
#include "rc_err.h"
#include "rc_members.h"
#include "rc_period.h"
#include "rc_places.h"

struct read_job {
    struct gw_adb_job job;
    const struct gw_store *s;
    const struct rc_board *b;        /* borrowed from the configuration */
    char board[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    struct gw_read_spec spec;        /* member points at member[] */
    char member[RC_MEMBER_MAX + 1];
    char *members;                   /* MEMBERS: our copy of the packed list (spec.members) */
    double unit;                     /* places: the board's tie unit (core/rc_places.h) */
    sqlite3_stmt *at_rank;           /* worker only: composite_at's statement, prepared once a read */
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

/* The member's rank (0 when absent) and composite. INDEXED BY: left to
 * itself (no ANALYZE), SQLite walks the whole period by the primary key's
 * (board, period) prefix instead (11 ms a member at 100,000 rows). */
static int find_member(sqlite3 *db, struct read_job *q, int64_t *rank, double *c)
{
    sqlite3_stmt *st;
    if (prepare(db, q,
                "SELECT rank, composite FROM archived_rows INDEXED BY archived_rows_member"
                " WHERE board = ?1 AND period = ?2 AND member = ?3",
                &st))
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

/* The composite at rank (1..total) into *c; 0, 1 when the period has no
 * such rank, -1 on an SQLite failure. */
static int composite_at(sqlite3 *db, struct read_job *q, int64_t rank, double *c)
{
    if (!q->at_rank &&
        prepare(db, q, "SELECT composite FROM archived_rows WHERE board = ?1 AND period = ?2 AND rank = ?3",
                &q->at_rank))
        return -1;
    sqlite3_stmt *st = q->at_rank; /* (a place takes some 20 of these: prepared once) */
    sqlite3_bind_int64(st, 3, rank);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW)
        *c = sqlite3_column_double(st, 0);
    sqlite3_reset(st);
    return s == SQLITE_ROW ? 0 : s == SQLITE_DONE ? 1 : -1;
}

/* Whether the member at rank + 1 has tie key k (none there: no). */
static int tied_after(sqlite3 *db, struct read_job *q, int64_t rank, double k, int *tied)
{
    double c;
    int rc = composite_at(db, q, rank + 1, &c);
    *tied = rc == 0 && rc_places_key(q->unit, c) == k;
    return rc < 0 ? -1 : 0;
}

/* The shared place of the member at rank with composite c, as read.lua
 * gives it: 1 + the members with a strictly better tie key, found by a
 * binary search over ranks 1..rank (keys follow ranks, so the members
 * sharing c's key are one run of ranks), one primary-key lookup a step. */
static int place_of(sqlite3 *db, struct read_job *q, int64_t rank, double c, int64_t *place)
{
    double k = rc_places_key(q->unit, c), cm;
    int64_t lo = 1, hi = rank;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (composite_at(db, q, mid, &cm) != 0)
            return -1;
        if (rc_places_key(q->unit, cm) == k)
            hi = mid;
        else
            lo = mid + 1;
    }
    *place = lo;
    return 0;
}

/* Places of a window of consecutive ranks (rows from first_rank): the two
 * facts from outside it (the first row's place, whether the row after the
 * last ties it), then core's rule. */
static int fill_places(sqlite3 *db, struct read_job *q)
{
    struct gw_window *w = q->w;
    if (!w->n)
        return 0;
    int64_t place, last = w->first_rank + (int64_t)w->n - 1;
    int next_tied;
    double *c = malloc(w->n * sizeof *c);
    int64_t *pl = malloc(w->n * sizeof *pl);
    unsigned char *tied = malloc(w->n);
    int rc = !c || !pl || !tied ? -1 : 0;
    if (!rc)
        rc = place_of(db, q, w->first_rank, w->rows[0].c, &place);
    if (!rc)
        rc = tied_after(db, q, last, rc_places_key(q->unit, w->rows[w->n - 1].c), &next_tied);
    if (!rc) {
        for (size_t i = 0; i < w->n; i++)
            c[i] = w->rows[i].c;
        rc_places_fill(q->unit, c, w->n, w->first_rank, place - 1, next_tied, pl, tied);
        for (size_t i = 0; i < w->n; i++) {
            w->rows[i].place = pl[i];
            w->rows[i].tied = tied[i];
        }
    }
    free(c);
    free(pl);
    free(tied);
    return rc;
}

/* A member list: each listed member on the archived board, with its own
 * rank (and place), ordered by rank, as read.lua's `members` gives it. */
static int read_members(sqlite3 *db, struct read_job *q)
{
    const char *m = q->members;
    int64_t rank, place;
    int next_tied;
    double c;
    q->w->first_rank = 0;
    for (uint32_t i = 0; i < q->spec.nmembers; i++, m = rc_members_next(m)) {
        snprintf(q->member, sizeof q->member, "%s", m);
        if (find_member(db, q, &rank, &c) != 0)
            return -1;
        if (!rank)
            continue;
        if (window_push(q, m, c) != 0)
            return -1;
        struct rc_row *row = &q->w->rows[q->w->n - 1];
        row->rank = rank;
        if (q->spec.places) {
            if (place_of(db, q, rank, c, &place) != 0 ||
                tied_after(db, q, rank, rc_places_key(q->unit, c), &next_tied) != 0)
                return -1;
            row->place = place;
            row->tied = place < rank || next_tied;
        }
    }
    gw_window_sort_by_rank(q->w);
    return 0;
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
        if (!rc && q->spec.places)
            rc = fill_places(db, q);
        break;
    case GW_READ_AROUND:
        if ((rc = find_member(db, q, &rank, &c)) || !rank)
            break;
        lo = rank - q->spec.radius > 1 ? rank - q->spec.radius : 1;
        q->w->first_rank = lo;
        rc = read_rows(db, q, lo, rank + q->spec.radius);
        if (!rc && q->spec.places)
            rc = fill_places(db, q);
        break;
    case GW_READ_RANK:
        if ((rc = find_member(db, q, &rank, &c)) || !rank)
            break;
        q->w->first_rank = rank;
        rc = window_push(q, q->member, c);
        break;
    case GW_READ_MEMBERS:
        rc = read_members(db, q);
        break;
    }
    if (rc)
        gw_archive_db_fail(j, db, "read");
    sqlite3_finalize(q->at_rank); /* (NULL when unused: a no-op) */
    q->at_rank = NULL;
}

static void on_joined(struct gw_window *w, void *privdata)
{
    struct read_job *q = privdata;
    q->cb(0, w, q->privdata);
    free(q->members);
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
        free(q->members);
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
        ((spec->kind == GW_READ_AROUND || spec->kind == GW_READ_RANK) &&
         (!spec->member || strlen(spec->member) > RC_MEMBER_MAX)) ||
        (spec->kind == GW_READ_MEMBERS && (!spec->members || !spec->nmembers || !spec->members_len)))
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
    q->unit = rc_places_unit(b);
    if (spec->kind == GW_READ_AROUND || spec->kind == GW_READ_RANK) {
        strcpy(q->member, spec->member);
        q->spec.member = q->member;
    } else if (spec->kind == GW_READ_MEMBERS) {
        if (!(q->members = malloc(spec->members_len))) {
            gw_window_free(q->w);
            free(q);
            return RC_E_INTERNAL;
        }
        memcpy(q->members, spec->members, spec->members_len);
        q->spec.members = q->members;
        q->spec.member = q->member;
    }
    q->cb = cb;
    q->privdata = privdata;
    if (gw_archive_db_submit(db, &q->job, work_read, done_read) != 0) {
        gw_window_free(q->w);
        free(q->members);
        free(q);
        return RC_E_UNAVAILABLE;
    }
    return 0;
}
