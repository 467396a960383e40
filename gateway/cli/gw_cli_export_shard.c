/* gw_cli_export_shard.c - a sharded board's export: the shards' pages
 * merged as they stream (gw_cli_export_shard.h). */
#include "cli/gw_cli_export_shard.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_shard.h"

/* One shard's place in the merge: its current page and where it stands. */
struct run {
    char name[RC_SHARD_NAME_MAX + 1];
    const char *period;     /* the board-period's id ("" all-time), borrowed */
    struct gw_cli_page *pg;
    size_t pos;             /* next row of pg to merge */
    int64_t next_first;     /* the shard's index of the row after pg */
    int more;               /* the shard may have rows after pg (pg was full) */
    int64_t seq_first, seq; /* the shard's seq at its first and latest page */
    int64_t total;          /* the shard's total at its latest page */
};

static int read_run(const struct gw_cli *c, struct gw_cli_redis *r, struct run *run)
{
    struct rc_read_head head;
    int rc = gw_cli_page_read_page(c, r, run->name, run->period, run->next_first, &head, run->pg);
    if (rc)
        return rc;
    if (run->next_first == 0)
        run->seq_first = head.seq;
    run->seq = head.seq;
    run->total = head.total;
    run->pos = 0;
    run->next_first += (int64_t)run->pg->n;
    run->more = run->pg->n == GW_CLI_PAGE;
    return 0;
}

/* Offers run j's row at hand to the merge, or clears it (page used up). */
static void offer(struct rc_shard_stream *st, const struct run *runs, unsigned j)
{
    const struct run *run = &runs[j];
    if (run->pos < run->pg->n)
        rc_shard_stream_offer(st, j, run->pg->c[run->pos], run->pg->member[run->pos]);
    else
        rc_shard_stream_clear(st, j);
}

/* The shards' pages merged as they stream (core/rc_shard: the merge rule);
 * a run whose page is used up reads its next before the merge goes on. */
static int merge(const struct gw_cli *c, struct gw_cli_redis *r, struct gw_cli_sink *s, struct run *runs,
                 unsigned n, struct gw_cli_page *out)
{
    struct rc_shard_stream st;
    int rc = 0;
    int64_t rank = 1;
    rc_shard_stream_init(&st, c->b->layout.order == RC_ORDER_DESC, n);
    for (unsigned j = 0; j < n; j++)
        offer(&st, runs, j);
    out->n = 0;
    for (int j; !rc && (j = rc_shard_stream_next(&st)) >= 0;) {
        struct run *run = &runs[j];
        out->rank[out->n] = rank++;
        memcpy(out->member[out->n], run->pg->member[run->pos], sizeof out->member[0]);
        out->c[out->n] = run->pg->c[run->pos];
        out->n++;
        run->pos++;
        if (run->pos == run->pg->n && run->more)
            rc = read_run(c, r, run);
        offer(&st, runs, (unsigned)j);
        if (!rc && out->n == GW_CLI_PAGE) {
            rc = gw_cli_page_emit(c, r, s, out);
            out->n = 0;
        }
    }
    if (!rc && out->n)
        rc = gw_cli_page_emit(c, r, s, out);
    return rc;
}

int gw_cli_export_shard_merged(const struct gw_cli *c, struct gw_cli_redis *r, struct gw_cli_sink *s, const char *period,
                         int *gone)
{
    unsigned n = c->b->shards;
    struct run *runs = calloc(n, sizeof *runs);
    struct gw_cli_page *out = malloc(sizeof *out);
    int rc = runs && out ? 0 : gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "out of memory");
    for (unsigned j = 0; j < n && !rc; j++) {
        if (rc_shard_name(runs[j].name, sizeof runs[j].name, c->board, j) != 0)
            rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "board name too long for its shards: %s", c->board);
        else if (!(runs[j].pg = malloc(sizeof *runs[j].pg)))
            rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "out of memory");
        else
            rc = (runs[j].period = period, read_run(c, r, &runs[j]));
    }
    /* no shard has a seq or a row: nothing in Redis (a past period's keys
     * may have expired: the caller asks the archive) */
    int64_t any = 0;
    for (unsigned j = 0; j < n && !rc; j++)
        any += runs[j].seq_first + runs[j].total;
    *gone = !rc && any == 0;
    if (!rc && !*gone)
        rc = merge(c, r, s, runs, n, out);
    for (unsigned j = 0; j < n && !rc; j++)
        if (runs[j].seq != runs[j].seq_first)
            fprintf(stderr,
                    "rankcast export: board %s changed while it was read (shard %u: seq %" PRId64 " to %" PRId64
                    "): the pages of %d rows are each consistent, the export as a whole is not one snapshot\n",
                    c->board, j, runs[j].seq_first, runs[j].seq, GW_CLI_PAGE);
    for (unsigned j = 0; runs && j < n; j++)
        free(runs[j].pg);
    free(runs);
    free(out);
    return rc;
}
