/* gw_archive_shard.h - private to the archive job: the copy of a sharded
 * board-period (`shards = S`, docs/sharded.md, "Periods") as one run of
 * rows in the board's merged order, for any number of members.
 *
 * A streaming K-way merge: each shard "B#i" is read in pages of
 * GW_ASHARD_PAGE rows (lua/read.lua `range`, the live board), one page per
 * shard held at a time; the next merged row is the first of the shards'
 * current rows in the merged order (core/rc_shard.h, rc_shard_before), and
 * a shard whose page is used up is read on before the merge goes on. So
 * memory holds S pages and one page of output, never the board, and no
 * rank limit applies (unlike gw_read's RC_SHARD_READ_MAX).
 *
 * Consistency: every page of a shard must show the seq and total its first
 * page showed; otherwise a page answers `changed` and the caller starts
 * over (gw_archive_shard_rewind), as gw_archive_run.c does for one set. The
 * board's seq and total are the sums of the shards' first pages'.
 */
#ifndef GW_ARCHIVE_SHARD_H
#define GW_ARCHIVE_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "rc_conf.h"

struct gw_app;
struct gw_ashard;

#define GW_ASHARD_PAGE 1000 /* rows per shard read */

/* A merged page. code 0: members[0..n) and c[0..n) are the next rows in
 * the merged order (n < the rows asked only once every shard is used up);
 * the callee takes both arrays and the strings (free each). seq and total:
 * the board's. changed 1 (n 0, arrays NULL): a shard moved since its first
 * page, start over. code != 0: why says what failed (borrowed). */
typedef void gw_ashard_page_cb(int code, const char *why, int changed, int64_t seq, int64_t total, char **members,
                               double *c, size_t n, void *privdata);

/* Whether any shard's sorted set exists: code 0 and any 0/1, or an RC_E_*. */
typedef void gw_ashard_exists_cb(int code, int any, void *privdata);

/* A merge of board `board` (declared by b, b->shards > 1; both copied or
 * borrowed for the merge's life: b lives in the config) in period `period`.
 * NULL when out of memory or the names do not fit. */
struct gw_ashard *gw_archive_shard_new(struct gw_app *app, const struct rc_board *b, const char *board, const char *period);

/* Frees m. Only while no call of m is in flight (its callback has run). */
void gw_archive_shard_free(struct gw_ashard *m);

/* Back to the first row (the pages held are dropped). */
void gw_archive_shard_rewind(struct gw_ashard *m);

/* Sends EXISTS for each shard's sorted set. Returns 0 (cb runs once,
 * later) or RC_E_UNAVAILABLE (cb not called). */
int gw_archive_shard_exists(struct gw_ashard *m, gw_ashard_exists_cb *cb, void *privdata);

/* The next `want` (1..GW_ASHARD_PAGE) merged rows, reading the shards it
 * needs. Returns 0: cb runs once, later or before this returns (rows held
 * already, or a read that could not be sent: its failure); the caller must
 * not touch what cb may free after that. An RC_E_* (out of memory, no
 * Redis): cb is not called. */
int gw_archive_shard_next(struct gw_ashard *m, size_t want, gw_ashard_page_cb *cb, void *privdata);

#endif
