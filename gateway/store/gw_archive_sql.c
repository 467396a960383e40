/* gw_archive_sql.c - the SQL the archive job writes with (schema:
 * store/gw_archive_db.c). Runs on the threadpool only, inside jobs. */
#include "store/gw_archive_sql.h"

#include "rc_err.h"

static int exec_sql(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : RC_E_INTERNAL;
}

/* Records the failure (SQLite's message, before ROLLBACK replaces it). */
static int fail(struct gw_adb_job *j, sqlite3 *db, sqlite3_stmt *st, const char *what, int in_tx)
{
    gw_archive_db_fail(j, db, what);
    sqlite3_finalize(st);
    if (in_tx)
        exec_sql(db, "ROLLBACK");
    return j->rc;
}

int gw_archive_sql_has_period(struct gw_adb_job *j, sqlite3 *db, const char *board, const char *period, int *found)
{
    sqlite3_stmt *st = NULL;
    *found = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM archived_periods WHERE board = ?1 AND period = ?2 AND total > 0", -1, &st, NULL) !=
        SQLITE_OK)
        return fail(j, db, st, "check", 0);
    sqlite3_bind_text(st, 1, board, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, period, -1, SQLITE_STATIC);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW)
        *found = 1;
    else if (s != SQLITE_DONE)
        return fail(j, db, st, "check", 0);
    sqlite3_finalize(st);
    return 0;
}

int gw_archive_sql_put_rows(struct gw_adb_job *j, sqlite3 *db, const char *board, const char *period, int64_t first_rank,
                    char *const *members, const double *c, size_t n)
{
    sqlite3_stmt *st = NULL;
    if (exec_sql(db, "BEGIN IMMEDIATE"))
        return fail(j, db, NULL, "begin", 0);
    if (sqlite3_prepare_v2(db,
                           "INSERT OR REPLACE INTO archived_rows (board, period, rank, member, composite)"
                           " VALUES (?1, ?2, ?3, ?4, ?5)",
                           -1, &st, NULL) != SQLITE_OK)
        return fail(j, db, st, "rows", 1);
    sqlite3_bind_text(st, 1, board, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, period, -1, SQLITE_STATIC);
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_int64(st, 3, first_rank + (int64_t)i);
        sqlite3_bind_text(st, 4, members[i], -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 5, c[i]);
        if (sqlite3_step(st) != SQLITE_DONE)
            return fail(j, db, st, "rows", 1);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (exec_sql(db, "COMMIT"))
        return fail(j, db, NULL, "rows", 1);
    return 0;
}

int gw_archive_sql_put_period(struct gw_adb_job *j, sqlite3 *db, const char *board, const char *period, int64_t seq,
                      int64_t total, int64_t archived_at, int *inserted)
{
    sqlite3_stmt *st = NULL;
    *inserted = 0;
    if (exec_sql(db, "BEGIN IMMEDIATE"))
        return fail(j, db, NULL, "begin", 0);
    /* Trim ranks a partial earlier attempt left past the final total. */
    if (sqlite3_prepare_v2(db,
                           "DELETE FROM archived_rows WHERE board = ?1 AND period = ?2 AND rank > ?3"
                           " AND NOT EXISTS (SELECT 1 FROM archived_periods WHERE board = ?1 AND period = ?2)",
                           -1, &st, NULL) != SQLITE_OK)
        return fail(j, db, st, "period row", 1);
    sqlite3_bind_text(st, 1, board, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, period, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, total);
    if (sqlite3_step(st) != SQLITE_DONE)
        return fail(j, db, st, "period row", 1);
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO archived_periods (board, period, seq, total, archived_at)"
                           " VALUES (?1, ?2, ?3, ?4, ?5)"
                           " ON CONFLICT (board, period) DO UPDATE SET seq = excluded.seq, total = excluded.total,"
                           " archived_at = excluded.archived_at"
                           " WHERE archived_periods.total = 0 AND excluded.total > 0",
                           -1, &st, NULL) != SQLITE_OK)
        return fail(j, db, st, "period row", 1);
    sqlite3_bind_text(st, 1, board, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, period, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, seq);
    sqlite3_bind_int64(st, 4, total);
    sqlite3_bind_int64(st, 5, archived_at);
    if (sqlite3_step(st) != SQLITE_DONE)
        return fail(j, db, st, "period row", 1);
    *inserted = sqlite3_changes(db) > 0;
    sqlite3_finalize(st);
    if (exec_sql(db, "COMMIT"))
        return fail(j, db, NULL, "period row", 1);
    return 0;
}
