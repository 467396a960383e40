/* gw_reads_batch.c - a board's lazy member lists caught up by one run of
 * its ring's events (gw_reads_batch.h, core/rc_vbatch.h).
 *
 * A lazy list (gw_reads.c) judged every event of the ring since its last
 * catch-up, each on its own; the run is now made once per catch-up (of a
 * board with GW_READS_BATCH_MIN_LISTS lazy lists or more) from
 * the events after b->lazy_seq (where every list that was not read in
 * between stands: the last catch-up moved each to the ring's newest
 * event), and each such list moves on by it with one search per entry,
 * whatever the number of events. A list standing elsewhere (read since),
 * cut, or with shared places is judged event by event as before, and so is
 * every list when the run holds what only that can judge (a new history, a
 * reset, a gap). A decaying board's lists too: its scores move between
 * rebuilds, and the composites of its events are not compared. */
#include "fanout/gw_reads_batch.h"

#include <stdlib.h>

#include "fanout/gw_fanout_int.h"
#include "gw_app.h"
#include "rc_members.h"

/* Lazy lists a board needs before its catch-up makes a run: the run's
 * making costs under 1 us an event (its sorts), once; a list judging an
 * event alone about 50 ns (build/tests/bench/list_runs, lists of 50, 100
 * events a run: 16 lists took 0.07 ms a run event by event against 0.08 ms
 * with a run, 32 lists 0.13 against 0.09, 5,000 lists 26.7 against 3.8). */
#define GW_READS_BATCH_MIN_LISTS 32

const struct rc_vbatch *gw_reads_batch_make(struct gw_board *b)
{
    struct gw_fanout *f = b->f;
    if (b->nlazy < GW_READS_BATCH_MIN_LISTS || b->decl->decay.kind != RC_DECAY_NONE || b->decl->shards > 1)
        return NULL;
    /* the first event after lazy_seq (the ring is in seq order) */
    size_t lo = 0, hi = b->ring_len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (gw_board_ring_at(b, mid)->seq <= b->lazy_seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = b->ring_len - lo;
    if (n == 0 || gw_board_ring_at(b, lo)->seq != b->lazy_seq + 1)
        return NULL;
    if (n > f->vbev_cap) {
        struct rc_vbatch_ev *e = realloc(f->vbev, n * sizeof *e);
        if (!e)
            return NULL;
        f->vbev = e;
        f->vbev_cap = n;
    }
    for (size_t i = 0; i < n; i++) {
        const struct rc_event *ev = gw_board_ring_at(b, lo + i);
        if (ev->seq != b->lazy_seq + 1 + (int64_t)i || ev->epoch[0] || !ev->member[0])
            return NULL; /* (a gap, a new history, a reset: event by event, which reads) */
        f->vbev[i] = (struct rc_vbatch_ev){ev->member, ev->has_old, ev->has_new, ev->old_rank, ev->rank,
                                           ev->old_c, ev->c};
    }
    if (rc_vbatch_make(&f->vbatch, b->decl->layout.order == RC_ORDER_DESC, b->lazy_seq, f->vbev, n) != 0)
        return NULL;
    return &f->vbatch;
}

int gw_reads_batch_judge(struct gw_view *v, const struct rc_vbatch *vb)
{
    const struct rc_view *s = &v->r.spec;
    if (s->kind != RC_VIEW_MEMBERS || !v->trk.ok || v->trk.seq != vb->seq0 || v->trk.cut || v->trk.places)
        return -1;
    for (size_t i = 0; i < vb->njoins; i++)
        if (rc_members_has(s->members, s->nmembers, vb->joins[i])) {
            rc_vtrack_forget(&v->trk); /* a listed member arrives: its row needs a read (profile) */
            v->mmoved = 0;
            gw_board_view_set_dirty(v);
            return 0;
        }
    int r = rc_vbatch_apply(vb, &v->trk);
    if (r < 0)
        return -1;
    v->f->app->metrics.view_reads_spared += (uint64_t)(vb->seq1 - vb->seq0);
    if (r == RC_VTRACK_MOVED) {
        v->mmoved = 1;
        gw_board_view_due(v);
    }
    return 0;
}

void gw_reads_batch_done(struct gw_board *b)
{
    if (b->ring_len)
        b->lazy_seq = gw_board_ring_at(b, b->ring_len - 1)->seq;
}
