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
    struct gw_cli_page *pg;
    size_t pos;             /* next row of pg to merge */
    int64_t next_first;     /* the shard's index of the row after pg */
    int more;               /* the shard may have rows after pg (pg was full) */
    int64_t seq_first, seq; /* the shard's seq at its first and latest page */
};

static int read_run(const struct gw_cli *c, struct gw_cli_redis *r, struct run *run)
{
    struct rc_read_head head;
    int rc = gw_cli_read_page(c, r, run->name, "", run->next_first, &head, run->pg);
    if (rc)
        return rc;
    if (run->next_first == 0)
        run->seq_first = head.seq;
    run->seq = head.seq;
    run->pos = 0;
    run->next_first += (int64_t)run->pg->n;
    run->more = run->pg->n == GW_CLI_PAGE;
    return 0;
}

/* The run whose next row comes first in the merged order, or -1 when all
 * are done. */
static int best_run(const struct run *runs, unsigned n, int desc)
{
    int best = -1;
    for (unsigned j = 0; j < n; j++) {
        const struct run *a = &runs[j];
        if (a->pos >= a->pg->n)
            continue;
        const struct run *b = best >= 0 ? &runs[best] : NULL;
        if (!b || rc_shard_before(desc, a->pg->c[a->pos], j, a->pg->member[a->pos], b->pg->c[b->pos], (unsigned)best,
                                  b->pg->member[b->pos]))
            best = (int)j;
    }
    return best;
}

static int merge(const struct gw_cli *c, struct gw_cli_redis *r, struct gw_cli_sink *s, struct run *runs,
                 unsigned n, struct gw_cli_page *out)
{
    int desc = c->b->layout.order == RC_ORDER_DESC, rc = 0;
    int64_t rank = 1;
    out->n = 0;
    for (int j; !rc && (j = best_run(runs, n, desc)) >= 0;) {
        struct run *run = &runs[j];
        out->rank[out->n] = rank++;
        memcpy(out->member[out->n], run->pg->member[run->pos], sizeof out->member[0]);
        out->c[out->n] = run->pg->c[run->pos];
        out->n++;
        run->pos++;
        if (run->pos == run->pg->n && run->more)
            rc = read_run(c, r, run);
        if (!rc && out->n == GW_CLI_PAGE) {
            rc = gw_cli_emit(c, r, s, out);
            out->n = 0;
        }
    }
    if (!rc && out->n)
        rc = gw_cli_emit(c, r, s, out);
    return rc;
}

int gw_cli_export_merged(const struct gw_cli *c, struct gw_cli_redis *r, struct gw_cli_sink *s)
{
    unsigned n = c->b->shards;
    struct run *runs = calloc(n, sizeof *runs);
    struct gw_cli_page *out = malloc(sizeof *out);
    int rc = runs && out ? 0 : gw_cli_fail(c, GW_CLI_UNAVAILABLE, "out of memory");
    for (unsigned j = 0; j < n && !rc; j++) {
        if (rc_shard_name(runs[j].name, sizeof runs[j].name, c->board, j) != 0)
            rc = gw_cli_fail(c, GW_CLI_UNAVAILABLE, "board name too long for its shards: %s", c->board);
        else if (!(runs[j].pg = malloc(sizeof *runs[j].pg)))
            rc = gw_cli_fail(c, GW_CLI_UNAVAILABLE, "out of memory");
        else
            rc = read_run(c, r, &runs[j]);
    }
    if (!rc)
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
