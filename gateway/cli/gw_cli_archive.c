/* gw_cli_archive.c - an archived period's rows, read-only (gw_cli_archive.h). */
#include "cli/gw_cli_archive.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "rc_err.h"

#define BUSY_TIMEOUT_MS 5000 /* a gateway writing the file holds it this long at most */

struct gw_cli_archive {
    sqlite3 *db;
    sqlite3_stmt *rows;
};

void gw_cli_archive_close(struct gw_cli_archive *a)
{
    if (!a)
        return;
    sqlite3_finalize(a->rows);
    sqlite3_close(a->db);
    free(a);
}

static int fail(struct gw_cli_archive *a, const char *path, char *err, size_t cap)
{
    snprintf(err, cap, "archive %s: %s", path, a->db ? sqlite3_errmsg(a->db) : "cannot open");
    gw_cli_archive_close(a);
    return RC_E_UNAVAILABLE;
}

int gw_cli_archive_open(const char *path, const char *board, const char *period, struct gw_cli_archive **out,
                        int64_t *total, char *err, size_t cap)
{
    sqlite3_stmt *st = NULL;
    if (access(path, F_OK) != 0)
        return RC_E_NOT_FOUND; /* nothing was ever archived here */
    struct gw_cli_archive *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, cap, "out of memory");
        return RC_E_UNAVAILABLE;
    }
    if (sqlite3_open_v2(path, &a->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return fail(a, path, err, cap);
    sqlite3_busy_timeout(a->db, BUSY_TIMEOUT_MS);
    /* the period row is written last: when it is there, the rows are complete */
    if (sqlite3_prepare_v2(a->db, "SELECT total FROM archived_periods WHERE board = ?1 AND period = ?2", -1, &st,
                           NULL) != SQLITE_OK)
        return fail(a, path, err, cap);
    sqlite3_bind_text(st, 1, board, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, period, -1, SQLITE_STATIC);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW)
        *total = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (s == SQLITE_DONE) {
        gw_cli_archive_close(a);
        return RC_E_NOT_FOUND;
    }
    if (s != SQLITE_ROW ||
        sqlite3_prepare_v2(a->db,
                           "SELECT rank, member, composite FROM archived_rows WHERE board = ?1 AND period = ?2"
                           " ORDER BY rank",
                           -1, &a->rows, NULL) != SQLITE_OK)
        return fail(a, path, err, cap);
    sqlite3_bind_text(a->rows, 1, board, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(a->rows, 2, period, -1, SQLITE_TRANSIENT);
    *out = a;
    return 0;
}

int gw_cli_archive_next(struct gw_cli_archive *a, int64_t *rank, char member[RC_MEMBER_MAX + 1], double *c,
                        char *err, size_t cap)
{
    int s = sqlite3_step(a->rows);
    if (s == SQLITE_DONE)
        return 0;
    const unsigned char *m = s == SQLITE_ROW ? sqlite3_column_text(a->rows, 1) : NULL;
    if (!m || strlen((const char *)m) > RC_MEMBER_MAX) {
        snprintf(err, cap, "archive: %s", s == SQLITE_ROW ? "a member name that is not one" : sqlite3_errmsg(a->db));
        return -1;
    }
    *rank = sqlite3_column_int64(a->rows, 0);
    strcpy(member, (const char *)m);
    *c = sqlite3_column_double(a->rows, 2);
    return 1;
}
