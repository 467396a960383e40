/* gw_reads.c - when the views the mirror does not serve (around views,
 * pages deeper than the mirror) read Redis again: only after a change event
 * that can have changed their rows (core/rc_vtrack.h), not after every
 * change of their board (issue 23: at 200 writes/s on a 10,000-member board
 * thousands of around views each read once per change).
 *
 * A read view's tracker starts from each read's window (its seq, and an
 * around view's member's rank in it) and judges each event after it, in seq
 * order: an event that keeps total and whose rank span misses the window
 * leaves it as read. Events that arrive while its read is out are judged
 * when the read is back, from the board's ring (which holds them in seq
 * order: gw_fanout.c pushes each before this sees it). Whatever the tracker
 * cannot judge reads: a gap, a join or leave, a reset, a new history, a
 * sharded board (its events' ranks come later), a view whose audience sees
 * a frozen board, and every change made outside the scripts (gw_fanout.c
 * and the tick set every read view dirty then, as before). Reads and
 * spared events count in rankcast_view_reads_total and
 * rankcast_view_reads_spared_total. */
#include "fanout/gw_fanout_int.h"

#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "rc_members.h"

/* judge() for a member list: its entries follow the events exactly
 * (core/rc_vtrack.h); only what they cannot tell reads. */
static void judge_members(struct gw_view *v, const struct rc_event *ev, int from_ring)
{
    int r;
    if (v->trk.ok && ev->seq <= v->trk.seq && from_ring) {
        r = RC_VTRACK_OLD;
    } else if (ev->epoch[0] || !ev->member[0]) {
        r = (rc_vtrack_forget(&v->trk), RC_VTRACK_CHANGED);
    } else {
        const struct rc_view *s = &v->r.spec;
        int listed_join = !ev->has_old &&
                          (s->kind == RC_VIEW_TEAM ? v->board && gw_rowteam_on(v->board->rt, ev->member, s->around)
                                                   : rc_members_has(s->members, s->nmembers, ev->member));
        r = rc_vtrack_members_event(&v->trk, ev->seq, listed_join, ev->has_old, ev->old_rank, ev->has_new, ev->rank,
                                    ev->c);
    }
    if (r == RC_VTRACK_CHANGED) {
        v->mmoved = 0;
        gw_fo_view_set_dirty(v);
    } else if (r == RC_VTRACK_MOVED) {
        v->mmoved = 1;
        v->f->app->metrics.view_reads_spared++;
        gw_fo_view_due(v);
    } else if (r == RC_VTRACK_SAME) {
        v->f->app->metrics.view_reads_spared++;
    }
}

/* Judges ev for read view v; the view is set dirty when it may have
 * changed. An event as it arrives that starts a history (or resets the
 * board) always reads; in the ring (of the read's history) one the read
 * already reflects is old like any other. */
static void judge(struct gw_view *v, const struct rc_event *ev, int from_ring)
{
    if (v->r.spec.kind == RC_VIEW_MEMBERS || v->r.spec.kind == RC_VIEW_TEAM) {
        judge_members(v, ev, from_ring);
        return;
    }
    /* (a member list needs no "self": a listed member on the board has a
     * listed rank its own span holds, and one that joins changes total) */
    int self = v->r.spec.kind == RC_VIEW_AROUND && strcmp(ev->member, v->r.spec.around) == 0;
    int r;
    if (v->trk.ok && ev->seq <= v->trk.seq && from_ring)
        r = RC_VTRACK_OLD;
    else if (ev->epoch[0] || !ev->member[0])
        r = (rc_vtrack_forget(&v->trk), RC_VTRACK_CHANGED);
    else
        r = rc_vtrack_event(&v->trk, ev->seq, self, ev->has_old, ev->old_rank, ev->has_new, ev->rank);
    if (r == RC_VTRACK_CHANGED)
        gw_fo_view_set_dirty(v);
    else if (r == RC_VTRACK_SAME)
        v->f->app->metrics.view_reads_spared++;
}

void gw_fo_reads_event(struct gw_board *b, const struct rc_event *ev)
{
    for (struct gw_view *v = b->reads; v; v = v->knext) {
        if (gw_fo_view_held(v)) {
            rc_vtrack_forget(&v->trk); /* (the audience of a frozen board sees no live change) */
            continue;
        }
        if (v->dirty || v->reading)
            continue; /* reads anyway; or judged from the ring when its read is back */
        judge(v, ev, 0);
    }
}

/* Judges the ring's events that v's tracker has not seen (those it has are
 * old), until one sets it dirty. */
static void replay(struct gw_view *v)
{
    struct gw_board *b = v->board;
    for (size_t i = 0; b && i < b->ring_len && !v->dirty; i++)
        judge(v, gw_fo_ring_at(b, i), 1);
}

void gw_fo_reads_failed(struct gw_view *v)
{
    /* The events skipped while it was out are still to judge against the
     * read before. A view never read yet reads at its next event (and every
     * view when Redis is back): retrying a failing read each tick is not
     * worth it. */
    if (!v->dead && !v->dirty && v->trk.ok)
        replay(v);
}

void gw_fo_reads_track(struct gw_view *v, const struct gw_window *w)
{
    struct gw_board *b = v->board;
    const struct rc_view *s = &v->r.spec;
    rc_vtrack_forget(&v->trk);
    if (!b || b->decl->shards > 1 || gw_fo_view_held(v) || (b->epoch_known && strcmp(w->epoch, b->epoch) != 0))
        return; /* not tracked: every event reads */
    if (s->kind == RC_VIEW_AROUND) {
        int64_t pos = 0;
        for (size_t i = 0; i < w->n && !pos; i++)
            if (strcmp(w->rows[i].member, s->around) == 0)
                pos = w->first_rank + (int64_t)i;
        if (!pos && w->n)
            return; /* (rows without its member: not a window the tracker knows) */
        rc_vtrack_around(&v->trk, w->seq, pos, s->radius, s->places);
    } else if (s->kind == RC_VIEW_MEMBERS || s->kind == RC_VIEW_TEAM) {
        /* its rows by rank (read.lua orders them), and the window they
         * came from, which the next windows are built from */
        v->mmoved = 0;
        gw_window_free(v->mbase);
        v->mbase = NULL;
        struct gw_window *base = calloc(1, sizeof *base);
        if (w->n > v->ment_cap) {
            struct rc_vtrack_entry *e = realloc(v->ment, w->n * sizeof *e);
            if (e) {
                v->ment = e;
                v->ment_cap = w->n;
            }
        }
        if (!base || w->n > v->ment_cap || gw_window_copy(base, w) != 0) {
            gw_window_free(base);
            return; /* (out of memory: not tracked, every event reads) */
        }
        v->mbase = base;
        for (size_t i = 0; i < w->n; i++)
            v->ment[i] = (struct rc_vtrack_entry){w->rows[i].rank, w->rows[i].c, i};
        rc_vtrack_members(&v->trk, w->seq, w->total, v->ment, w->n, s->places);
    } else if (s->kind == RC_VIEW_TOP || s->kind == RC_VIEW_PAGE) {
        rc_vtrack_page(&v->trk, w->seq, (int64_t)s->offset, (int64_t)s->limit, s->places);
    } else {
        return;
    }
    replay(v); /* the events that came while the read was out (older ones are old) */
}

