/* gw_archive_sql.h - the archive job's writes to the archive database, for
 * work functions (threadpool side, store/gw_archive_db.h). Each sets j->rc
 * and j->err on failure and returns j->rc. */
#ifndef GW_ARCHIVE_SQL_H
#define GW_ARCHIVE_SQL_H

#include <stddef.h>
#include <stdint.h>

#include "store/gw_archive_db.h"

/* *found = 1 when the period row of board/period is there with rows (a
 * period recorded empty does not count: rows may have turned up since). */
int gw_archive_sql_has_period(struct gw_adb_job *j, sqlite3 *db, const char *board, const char *period, int *found);

/* Rows first_rank.. of a page, in one transaction (INSERT OR REPLACE: a
 * partial earlier attempt is overwritten). */
int gw_archive_sql_put_rows(struct gw_adb_job *j, sqlite3 *db, const char *board, const char *period, int64_t first_rank,
                    char *const *members, const double *c, size_t n);

/* The period row, written last (its presence means the rows are complete),
 * in one transaction with trimming the ranks past total a partial attempt
 * left. *inserted = 0 when another writer was first. A row with rows
 * replaces one recorded empty (total 0), never the other way round. */
int gw_archive_sql_put_period(struct gw_adb_job *j, sqlite3 *db, const char *board, const char *period, int64_t seq,
                      int64_t total, int64_t archived_at, int *inserted);

#endif
