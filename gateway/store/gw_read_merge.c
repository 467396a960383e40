/* gw_read_merge.c - a sharded board's window from what its shards answered
 * (docs/sharded.md, "Reads"): the heads summed, the rows K-way merged in
 * the board's merged order (core/rc_shard.h), ranks and shared places
 * worked out as the unsharded read works them out. No I/O. */
#include <stdlib.h>
#include <string.h>

#include "store/gw_read_int.h"
#include "rc_err.h"
#include "rc_places.h"
#include "rc_shard.h"

int gw_read_merge_part_set_rows(struct gw_shard_part *p, const struct rc_read_row *rows, size_t n)
{
    gw_read_merge_part_clear(p);
    p->c = malloc((n ? n : 1) * sizeof *p->c);
    p->member = calloc(n ? n : 1, sizeof *p->member);
    if (!p->c || !p->member) {
        gw_read_merge_part_clear(p);
        return RC_E_INTERNAL;
    }
    for (size_t i = 0; i < n; i++) {
        p->c[i] = rows[i].c;
        if (!(p->member[i] = strdup(rows[i].member))) {
            p->n = i;
            gw_read_merge_part_clear(p);
            return RC_E_INTERNAL;
        }
    }
    p->n = n;
    return 0;
}

void gw_read_merge_part_clear(struct gw_shard_part *p)
{
    for (size_t i = 0; p->member && i < p->n; i++)
        free(p->member[i]);
    free(p->member);
    free(p->c);
    p->member = NULL;
    p->c = NULL;
    p->n = 0;
}

void gw_read_merge_head(struct gw_window *w, const struct gw_shard_part *parts, unsigned nshards)
{
    const char *epochs[RC_SHARDS_MAX];
    w->seq = 0;
    w->total = 0;
    w->first_rank = 0;
    free(w->shard_seq);
    w->shard_seq = malloc(nshards * sizeof *w->shard_seq);
    w->nshards = w->shard_seq ? nshards : 0;
    for (unsigned j = 0; j < nshards; j++) {
        if (w->shard_seq)
            w->shard_seq[j] = parts[j].head.seq;
        w->seq += parts[j].head.seq;
        w->total += parts[j].head.total;
        epochs[j] = parts[j].head.epoch;
    }
    rc_shard_epoch(epochs, nshards, w->epoch);
    memset(&w->freeze, 0, sizeof w->freeze);
}

/* The picked rows picks[0..n) appended to w's rows. */
static int add_picks(const struct rc_board *b, const struct rc_shard_run *runs, const struct rc_shard_pick *picks,
                     size_t n, struct gw_window *w)
{
    struct rc_read_row *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows)
        return RC_E_INTERNAL;
    for (size_t i = 0; i < n; i++)
        rows[i] = (struct rc_read_row){runs[picks[i].shard].member[picks[i].index],
                                       runs[picks[i].shard].c[picks[i].index]};
    int rc = gw_window_set_rows(b, w, rows, n);
    free(rows);
    return rc;
}

static double pick_c(const struct rc_shard_run *runs, const struct rc_shard_pick *p)
{
    return runs[p->shard].c[p->index];
}

int gw_read_merge_range(const struct rc_board *b, const struct gw_shard_part *parts, unsigned nshards,
                         int64_t first, int64_t count, int places, struct gw_window *w)
{
    struct rc_shard_run runs[RC_SHARDS_MAX];
    size_t want = (size_t)(first + count + 1), n = 0;
    for (unsigned j = 0; j < nshards; j++) {
        runs[j] = (struct rc_shard_run){parts[j].c, (const char *const *)parts[j].member, parts[j].n};
        n += parts[j].n;
    }
    if (n > want)
        n = want;
    struct rc_shard_pick *picks = malloc((n ? n : 1) * sizeof *picks);
    if (!picks)
        return RC_E_INTERNAL;
    size_t m = rc_shard_merge(b->layout.order == RC_ORDER_DESC, runs, nshards, 0, picks, want);
    gw_read_merge_head(w, parts, nshards);
    w->first_rank = first + 1;
    size_t from = (size_t)first < m ? (size_t)first : m;
    size_t to = (size_t)(first + count) < m ? (size_t)(first + count) : m;
    int rc = add_picks(b, runs, picks + from, to - from, w);
    if (!rc && places && to > from) {
        /* every merged row before the window was read, and the one after it */
        double unit = rc_places_unit(b), key = rc_places_key(unit, pick_c(runs, &picks[from]));
        int64_t above = 0;
        for (size_t i = 0; i < from; i++)
            above += rc_places_key(unit, pick_c(runs, &picks[i])) != key;
        int next_tied = to < m && rc_places_key(unit, pick_c(runs, &picks[to])) ==
                                      rc_places_key(unit, pick_c(runs, &picks[to - 1]));
        rc = gw_window_fill_places(b, w, above, next_tied);
    }
    free(picks);
    return rc;
}

int gw_read_merge_rank(const struct rc_board *b, const struct gw_shard_part *parts, unsigned nshards,
                        unsigned home, struct gw_window *w)
{
    gw_read_merge_head(w, parts, nshards);
    const struct gw_shard_part *h = &parts[home];
    if (h->head.first_rank == 0 || h->n != 1)
        return 0; /* absent: no row, as an unsharded board's rank read */
    int64_t rank = h->head.first_rank;
    for (unsigned j = 0; j < nshards; j++)
        if (j != home)
            rank += parts[j].count;
    w->first_rank = rank;
    const struct rc_read_row row = {h->member[0], h->c[0]};
    return gw_window_set_rows(b, w, &row, 1);
}

/* The rows of each shard ahead of (ahead 1) or behind the member, as runs. */
static size_t around_runs(const struct gw_shard_part *parts, unsigned nshards, unsigned home, size_t at,
                          int ahead, struct rc_shard_run *runs)
{
    size_t n = 0;
    for (unsigned j = 0; j < nshards; j++) {
        const struct gw_shard_part *p = &parts[j];
        size_t split = j == home ? at : p->na, skip = j == home ? at + 1 : p->na;
        if (ahead)
            runs[j] = (struct rc_shard_run){p->c, (const char *const *)p->member, split};
        else
            runs[j] = (struct rc_shard_run){p->c + skip, (const char *const *)p->member + skip, p->n - skip};
        n += runs[j].n;
    }
    return n;
}

int gw_read_merge_around(const struct rc_board *b, const struct gw_shard_part *parts, unsigned nshards,
                          unsigned home, size_t at, int64_t before, int64_t radius, struct gw_window *w,
                          int *next_tied)
{
    struct rc_shard_run ahead[RC_SHARDS_MAX], behind[RC_SHARDS_MAX];
    int desc = b->layout.order == RC_ORDER_DESC;
    size_t na = around_runs(parts, nshards, home, at, 1, ahead);
    size_t nb = around_runs(parts, nshards, home, at, 0, behind);
    struct rc_shard_pick *pa = malloc((na ? na : 1) * sizeof *pa), *pb = malloc((nb ? nb : 1) * sizeof *pb);
    struct rc_read_row *rows = malloc((na + nb + 1) * sizeof *rows);
    int rc = RC_E_INTERNAL;
    if (pa && pb && rows) {
        size_t ma = rc_shard_merge(desc, ahead, nshards, 0, pa, na);
        size_t mb = rc_shard_merge(desc, behind, nshards, 0, pb, (size_t)radius + 1);
        size_t keep_a = ma < (size_t)radius ? ma : (size_t)radius, keep_b = mb < (size_t)radius ? mb : (size_t)radius;
        size_t n = 0;
        for (size_t i = ma - keep_a; i < ma; i++)
            rows[n++] = (struct rc_read_row){ahead[pa[i].shard].member[pa[i].index], pick_c(ahead, &pa[i])};
        const struct gw_shard_part *h = &parts[home];
        rows[n++] = (struct rc_read_row){h->member[at], h->c[at]};
        for (size_t i = 0; i < keep_b; i++)
            rows[n++] = (struct rc_read_row){behind[pb[i].shard].member[pb[i].index], pick_c(behind, &pb[i])};
        gw_read_merge_head(w, parts, nshards);
        int64_t rank = before + (int64_t)at + 1;
        for (unsigned j = 0; j < nshards; j++)
            if (j != home)
                rank += parts[j].count;
        w->first_rank = rank - (int64_t)keep_a;
        double unit = rc_places_unit(b);
        *next_tied = mb > keep_b && rc_places_key(unit, pick_c(behind, &pb[keep_b])) ==
                                        rc_places_key(unit, rows[n - 1].c);
        rc = gw_window_set_rows(b, w, rows, n);
    }
    free(pa);
    free(pb);
    free(rows);
    return rc;
}

void gw_read_merge_above_bound(const struct rc_board *b, double c, double *bound, int *inclusive)
{
    double unit = rc_places_unit(b), key = rc_places_key(unit, c);
    int desc = b->layout.order == RC_ORDER_DESC;
    if (unit > 0) {
        /* desc: points above k are composites from (k + 1) * unit up; asc:
         * points below k, composites under k * unit */
        *bound = desc ? (key + 1) * unit : key * unit;
        *inclusive = desc;
    } else {
        *bound = c;
        *inclusive = 0;
    }
}
