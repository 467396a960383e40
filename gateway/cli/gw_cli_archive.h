/* gw_cli_archive.h - an archived period's rows read straight from the
 * archive database (store/gw_archive_db.c has the schema), for export: a
 * blocking, read-only cursor over the rows in rank order. The gateway reads
 * the same file off its loop (store/gw_archive_read.c); a command-line tool
 * has no loop to keep free. */
#ifndef GW_CLI_ARCHIVE_H
#define GW_CLI_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "rc_names.h"

struct gw_cli_archive;

/* Opens path read-only and finds board/period. Returns 0 (*out set; *total
 * the period's row count), RC_E_NOT_FOUND (no such file, or the period was
 * never archived) or RC_E_UNAVAILABLE (err filled). */
int gw_cli_archive_open(const char *path, const char *board, const char *period, struct gw_cli_archive **out,
                        int64_t *total, char *err, size_t cap);

/* The next row: 1 (rank, member, composite filled), 0 at the end, -1 on an
 * error (err filled). */
int gw_cli_archive_next(struct gw_cli_archive *a, int64_t *rank, char member[RC_MEMBER_MAX + 1], double *c,
                        char *err, size_t cap);

void gw_cli_archive_close(struct gw_cli_archive *a);

#endif
