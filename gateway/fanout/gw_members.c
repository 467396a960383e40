/* gw_members.c - a member list's next window without a read: the rows of
 * its last read (v->mbase) at the ranks and composites its tracker
 * followed from the change events since (gw_reads.c, core/rc_vtrack.h),
 * handed to gw_view_update like a read's window (the delta rule is
 * core/rc_delta's, rc_delta_make_members_by_id). Only the scores of members
 * whose composite changed are decoded again; members and profiles are the
 * read's, borrowed (the window holds its base), not copied: issue 26, at
 * 5,000 lists a copy of every member name and a profile reference per row
 * per tick, and the diff by name, were most of the gateway's CPU. Each row
 * says which row of the read it is, so two windows of one read are diffed
 * by that (gw_view.c).
 *
 * A loop turn builds at most [server] list_builds_per_turn lists (issue 26:
 * 5,000 lists built in one tick held the loop so long that the writers'
 * requests waited in their sockets, and the board took ~320 of 2,000
 * writes/s). The others wait in a FIFO (gw_members.h) that an idle handle
 * works through, the same share per turn, the loop's I/O read between. A
 * list waiting is built from its entries as they are when its turn comes:
 * every change since its last window is in that one delta, from the window
 * its viewers hold (gw_view_update), so no delta is lost or reordered, only
 * later. Counted in rankcast_list_builds_deferred_total. */
#include "fanout/gw_members.h"

#include "fanout/gw_fanout_int.h"
#include "fanout/gw_members_shard.h"

#include <stdlib.h>
#include <string.h>

#include "gw_app.h"

/* Builds v's next window now and hands it to gw_view_update. */
static void build(struct gw_view *v)
{
    struct gw_board *b = v->board;
    v->mmoved = 0;
    if (!b || v->dead || !v->trk.ok || !v->mbase)
        return;
    struct gw_window *base = v->mbase;
    size_t *row_id;
    struct gw_window *w = gw_window_borrowing(base, v->trk.nent, &row_id);
    if (!w) {
        gw_board_view_set_dirty(v); /* out of memory: a read says it */
        return;
    }
    w->seq = v->trk.seq;
    w->total = v->trk.total;
    gw_members_shard_seqs(v, w); /* (a sharded board's: the shards' seqs the entries stand at) */
    for (size_t i = 0; i < v->trk.nent; i++) {
        const struct rc_vtrack_entry *e = &v->trk.ent[i];
        struct rc_row *r = &w->rows[i];
        *r = base->rows[e->row]; /* (member and profile borrowed from base: w holds it) */
        __builtin_prefetch(r->member); /* (its text is written soon: fetched meanwhile) */
        r->rank = e->rank;
        if (r->c != e->c) {
            r->c = e->c;
            gw_window_decode_score(b->decl, e->c, &r->score, r->fields, &r->nfields);
        }
        row_id[i] = e->row;
    }
    w->n = v->trk.nent;
    gw_view_update(v->f, v, w);
}

/* (issue 26: each list's first delta after its read matched rows by
 * name, a sort and string compares of both windows: about 5 % of the
 * gateway's CPU in bench M's lists phase, where every list starts so) */
struct gw_window *gw_members_as_base(struct gw_view *v, struct gw_window *w)
{
    struct gw_window *base = v->mbase;
    int mine = v->mbase_of == w; /* (base is a copy of w: same rows, same order) */
    v->mbase_of = NULL;
    if (!mine || !base || base->n != w->n || v->r.spec.kind != RC_VIEW_MEMBERS || !v->board ||
        v->board->decl->shards > 1)
        return w; /* (a sharded list's windows carry its shards' seqs: gw_members_shard.c) */
    size_t *row_id;
    struct gw_window *bw = gw_window_borrowing(base, w->n, &row_id);
    if (!bw)
        return w;
    for (size_t i = 0; i < w->n; i++) {
        bw->rows[i] = base->rows[i];
        row_id[i] = i;
    }
    bw->n = w->n;
    gw_window_free(w);
    return bw;
}

static void on_idle(uv_idle_t *h);

void gw_members_build(struct gw_view *v)
{
    struct gw_members_turn *t = &v->f->mturn;
    if (v->mqueued)
        return; /* (built from its entries as they are when its turn comes) */
    if (!t->on || (!t->head && t->left > 0)) {
        t->left -= t->left ? 1 : 0;
        build(v);
        return;
    }
    v->mqueued = 1;
    v->refs++; /* (held while it waits) */
    v->mqnext = NULL;
    if (t->tail)
        t->tail->mqnext = v;
    else
        t->head = v;
    t->tail = v;
    v->f->app->metrics.list_builds_deferred++;
    uv_idle_start(&t->idle, on_idle);
}

static void on_idle(uv_idle_t *h)
{
    struct gw_fanout *f = h->data;
    struct gw_members_turn *t = &f->mturn;
    while (t->head && t->left > 0) {
        struct gw_view *v = t->head;
        t->head = v->mqnext;
        if (!t->head)
            t->tail = NULL;
        v->mqnext = NULL;
        v->mqueued = 0;
        t->left--;
        int64_t now_us = gw_clock_gate_us(&f->app->clock); /* (max_rate's time, as the tick's) */
        if (!v->dead && v->board && v->mmoved && !v->dirty && !v->reading && rc_rate_may_send(&v->gate, now_us))
            build(v);
        else if (!v->dead && v->board && v->mmoved)
            gw_board_view_due(v); /* (not now: the tick sends it when it may) */
        gw_board_view_unref(v);
    }
    if (!t->head)
        uv_idle_stop(h);
}

void gw_members_kick(struct gw_fanout *f)
{
    struct gw_members_turn *t = &f->mturn;
    t->left = f->app->conf->list_builds_per_turn;
    if (t->on && t->head)
        uv_idle_start(&t->idle, on_idle);
}

void gw_members_loop_start(struct gw_fanout *f, uv_loop_t *loop)
{
    struct gw_members_turn *t = &f->mturn;
    uv_idle_init(loop, &t->idle);
    t->idle.data = f;
    t->on = 1;
    t->left = f->app->conf->list_builds_per_turn;
}

void gw_members_loop_stop(struct gw_fanout *f)
{
    struct gw_members_turn *t = &f->mturn;
    if (!t->on)
        return;
    t->on = 0;
    uv_close((uv_handle_t *)&t->idle, NULL);
    while (t->head) { /* (the gateway stops: their viewers are closed with it) */
        struct gw_view *v = t->head;
        t->head = v->mqnext;
        v->mqnext = NULL;
        v->mqueued = 0;
        gw_board_view_unref(v);
    }
    t->tail = NULL;
}
