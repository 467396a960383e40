/* gw_cli_export_shard.h - `rankcast export` of a sharded board (`shards =
 * S`, docs/sharded.md): the board's rows in its merged order with global
 * ranks, streamed by a K-way merge over pages of each shard (core/rc_shard.h,
 * rc_shard_before), so memory holds S pages and one page of output, never
 * the board. */
#ifndef GW_CLI_EXPORT_SHARD_H
#define GW_CLI_EXPORT_SHARD_H

#include "cli/gw_cli_int.h"
#include "cli/gw_cli_page.h"

/* Writes every row of c->board (c->b->shards > 1) in period `period` (""
 * all-time) to s, best first, after the header the caller wrote. Each shard
 * is read in pages of GW_CLI_PAGE rows; a shard whose seq changed between
 * its first and last page is reported on stderr (the export is then not
 * one snapshot). *gone = 1 (nothing written) when no shard has a seq or a
 * row in that period: a past period's may have expired (the archive has
 * it). Returns 0 or the exit code after printing why. */
int gw_cli_export_shard_merged(const struct gw_cli *c, struct gw_cli_redis *r, struct gw_cli_sink *s, const char *period,
                         int *gone);

#endif
