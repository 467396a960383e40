/* gw_cli_export.c - `rankcast export BOARD [--period P] [--format csv|jsonl]`:
 * a board's rows, best first, to stdout (docs/export-import.md).
 *
 * A live board is read in pages of GW_CLI_PAGE rows, each page one call of
 * lua/read.lua (the same script as every read of the gateway: one page is
 * one consistent snapshot with its seq). The export as a whole is a sequence
 * of pages, not one snapshot: a write between two pages can move a member
 * across the page boundary (shown twice, or not at all) and shift ranks.
 * When the board's seq changed between the first and the last page the
 * export says so on stderr. A past period whose keys have left Redis is read
 * from the archive database, as the gateway's reads do; rows there never
 * change. Profile names come from Redis (HGET rc:profile:MEMBER name), one
 * pipelined batch per page (cli/gw_cli_page.c). A sharded board is
 * streamed merged from its shards' pages (cli/gw_cli_export_shard.c).
 */
#include "cli/gw_cli_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/gw_cli_archive.h"
#include "cli/gw_cli_export_shard.h"
#include "cli/gw_cli_page.h"
#include "store/gw_read.h"
#include "rc_err.h"
#include "rc_keys.h"
#include "rc_lua.h"
#include "rc_period.h"
#include "rc_read_args.h"

static int export_archive(const struct gw_cli *c, struct gw_cli_redis *r, struct gw_cli_sink *s, const char *period)
{
    char path[RC_CONF_STR_MAX + 32], err[GW_CLI_ERR_MAX];
    struct gw_cli_archive *a = NULL;
    int64_t total = 0;
    if (c->conf->archive_path[0])
        snprintf(path, sizeof path, "%s", c->conf->archive_path);
    else
        snprintf(path, sizeof path, "%s/archive.sqlite3", c->conf->state_dir);
    int rc = gw_cli_archive_open(path, c->board, period, &a, &total, err, sizeof err);
    if (rc == RC_E_NOT_FOUND) {
        fprintf(stderr, "rankcast export: board %s has nothing in Redis for period %s, and %s does not hold it: "
                        "no rows\n", c->board, period, path);
        return 0;
    }
    if (rc)
        return gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "%s", err);
    struct gw_cli_page *pg = malloc(sizeof *pg);
    if (!pg) {
        gw_cli_archive_close(a);
        return gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "out of memory");
    }
    int more = 1;
    rc = 0;
    while (more && !rc) {
        pg->n = 0;
        while (pg->n < GW_CLI_PAGE &&
               (more = gw_cli_archive_next(a, &pg->rank[pg->n], pg->member[pg->n], &pg->c[pg->n], err, sizeof err)) ==
                   1)
            pg->n++;
        if (more < 0)
            rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "%s", err);
        else if (pg->n)
            rc = gw_cli_page_emit(c, r, s, pg);
    }
    if (!rc && s->rows != total)
        rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "archive %s: period %s lists %" PRId64 " rows, %" PRId64 " were read",
                         path, period, total, s->rows);
    free(pg);
    gw_cli_archive_close(a);
    return rc;
}

int gw_cli_export(struct gw_cli *c)
{
    struct rc_period p, now;
    int64_t t = gw_cli_base_now_ms();
    if (c->b->period.kind == RC_PERIOD_NONE && c->period && strcmp(c->period, "current") != 0)
        return gw_cli_base_fail(c, GW_CLI_USAGE, "board %s has no periods: leave --period out", c->board);
    if (rc_period_select(&c->b->period, c->period, t, &p) != 0)
        return gw_cli_base_fail(c, GW_CLI_USAGE, "period '%s' is not a %s period of board %s", c->period,
                           rc_period_kind_name(c->b->period.kind), c->board);
    rc_period_at(&c->b->period, t, &now);
    struct gw_cli_redis *r = gw_cli_base_connect(c);
    if (!r)
        return GW_CLI_UNAVAILABLE;
    struct gw_cli_sink s = {malloc(GW_CLI_LINE_MIN), GW_CLI_LINE_MIN, 0};
    struct gw_cli_page *pg = malloc(sizeof *pg);
    struct rc_read_head head, first_head;
    memset(&first_head, 0, sizeof first_head);
    int rc = 0;
    if (!s.buf || !pg) {
        rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "out of memory");
        goto cleanup;
    }
    size_t hl = rc_export_fmt_header(c->b, c->format, s.buf, s.cap);
    if (hl >= s.cap || (rc = gw_cli_page_put_line(c, &s, hl)) != 0) {
        rc = rc ? rc : gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "header too long");
        goto cleanup;
    }
    if (c->b->shards > 1) {
        int gone = 0;
        rc = gw_cli_export_shard_merged(c, r, &s, p.id, &gone); /* a sharded board: its shards merged */
        /* a past period whose shards' keys are gone: the archive has it */
        if (!rc && gone && c->b->period.kind != RC_PERIOD_NONE && strcmp(p.id, now.id) != 0)
            rc = export_archive(c, r, &s, p.id);
        goto flush;
    }
    for (int64_t first = 0;; first += GW_CLI_PAGE) {
        if ((rc = gw_cli_page_read_page(c, r, c->board, p.id, first, &head, pg)) != 0)
            break;
        if (first == 0) {
            first_head = head;
            /* a past period whose keys are gone: the archive has it */
            if (c->b->period.kind != RC_PERIOD_NONE && strcmp(p.id, now.id) != 0 && head.seq == 0 &&
                head.total == 0) {
                rc = export_archive(c, r, &s, p.id);
                break;
            }
        }
        if (pg->n && (rc = gw_cli_page_emit(c, r, &s, pg)) != 0)
            break;
        if (pg->n < GW_CLI_PAGE)
            break;
    }
    if (!rc && head.seq != first_head.seq)
        fprintf(stderr,
                "rankcast export: board %s changed while it was read (seq %" PRId64 " to %" PRId64 "): the pages "
                "of %d rows are each consistent, the export as a whole is not one snapshot\n",
                c->board, first_head.seq, head.seq, GW_CLI_PAGE);
flush:
    if (!rc && fflush(stdout) != 0)
        rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "writing stdout: %s", strerror(errno));
cleanup:
    free(s.buf);
    free(pg);
    gw_cli_redis_close(r);
    return rc;
}
