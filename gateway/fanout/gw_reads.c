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
 * rankcast_view_reads_spared_total.
 *
 * A move must not walk every read view of the board (issue 23: its cost
 * must not grow with the views beside the ones it reached). A read view
 * waiting for events (read, not dirty, not out) is filed in the board's
 * index b->rix (core/rc_vindex) by the ranks its tracker depends on
 * (rc_vtrack_ranks); b->rix_seq says through which event every filed
 * tracker stands. A move in seq order right after rix_seq visits only the
 * filed views its rank span touches, each of which first catches up to
 * rix_seq (rc_vtrack_skip: the moves in between missed it); the others
 * would judge it RC_VTRACK_SAME anyway. Everything else walks b->reads.
 * Views leave the index lazily: one found dirty or out is taken out then,
 * and filed again when its read is back. The views visited count in
 * rankcast_views_visited_total{on="event"}.
 *
 * A sharded board's followed member lists (gw_members_shard.h) sit in the
 * same index, by their entries' composites instead of ranks (a sharded
 * event's global rank is counted later, at other seqs than the list's:
 * core/rc_vtrack_shard.h, rc_vtrack_shard_span), and b->sh->rseq[j] says
 * through which event of shard j every filed list stands: a move of shard
 * j right after rseq[j] visits only the lists whose composites it spans
 * (each caught up first, gw_members_shard_skip); anything else walks every
 * followed list, as before.
 *
 * A member list of an unsharded board is not filed in the index at all
 * (issue 26): its listed members are spread over the board, so nearly every
 * move reaches it, and judging each move for each list as it comes (a
 * visit: the view, its tracker, its entries, each a cache miss) cost more
 * than a core at 5,000 lists and 2,000 writes/s. Such a list is lazy
 * (v->rlazy): it judges the ring's events it has not judged, in order, in
 * one go, every GW_READS_LAZY_EVERY events and before each tick looks at the
 * board (gw_reads_catch_up), well before the ring (GW_FO_RING_EVENTS) drops
 * them; an event it cannot judge, or a gap, reads it as before. The lists
 * that stand where the last catch-up left them take the run of events in
 * between once for all of them (gw_reads_batch.c, core/rc_vbatch.h: one
 * search per entry, not a look at every event per list). */
#include "fanout/gw_reads.h"

#include "fanout/gw_fanout_int.h"

#include <stdlib.h>
#include <string.h>

#include "fanout/gw_members_shard.h"
#include "fanout/gw_reads_batch.h"
#include "gw_app.h"
#include "rc_members.h"
#include "rc_vtrack_shard.h"

/* judge() for a member list: its entries follow the events exactly
 * (core/rc_vtrack.h); only what they cannot tell reads. */
static void judge_members(struct gw_view *v, const struct rc_event *ev, int from_ring, const int64_t *cseq)
{
    int r;
    if (v->board && v->board->decl->shards > 1) {
        r = gw_members_shard_judge(v, ev, cseq); /* (by composite: the seqs are each shard's) */
    } else if (v->trk.ok && ev->seq <= v->trk.seq && from_ring) {
        r = RC_VTRACK_OLD;
    } else if (ev->epoch[0] || !ev->member[0]) {
        r = (rc_vtrack_forget(&v->trk), RC_VTRACK_CHANGED);
    } else {
        const struct rc_view *s = &v->r.spec;
        /* (asked only when it matters: a join, or a roster cut at its best) */
        int listed = (!ev->has_old || v->trk.cut) &&
                     (s->kind == RC_VIEW_TEAM ? v->board && gw_rowteam_on(v->board->rt, ev->member, s->around)
                                              : rc_members_has(s->members, s->nmembers, ev->member));
        r = rc_vtrack_members_event(&v->trk, ev->seq, listed, ev->has_old, ev->old_rank, ev->has_new, ev->rank,
                                    ev->c);
    }
    if (r == RC_VTRACK_CHANGED) {
        v->mmoved = 0;
        gw_board_view_set_dirty(v);
    } else if (r == RC_VTRACK_MOVED) {
        v->mmoved = 1;
        v->f->app->metrics.view_reads_spared++;
        gw_board_view_due(v);
    } else if (r == RC_VTRACK_SAME) {
        v->f->app->metrics.view_reads_spared++;
    }
}

/* Judges ev for read view v; the view is set dirty when it may have
 * changed. An event as it arrives that starts a history (or resets the
 * board) always reads; in the ring (of the read's history) one the read
 * already reflects is old like any other. */
static void judge(struct gw_view *v, const struct rc_event *ev, int from_ring, const int64_t *cseq)
{
    if (v->r.spec.kind == RC_VIEW_MEMBERS || v->r.spec.kind == RC_VIEW_TEAM) {
        judge_members(v, ev, from_ring, cseq);
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
        gw_board_view_set_dirty(v);
    else if (r == RC_VTRACK_SAME)
        v->f->app->metrics.view_reads_spared++;
}

/* The read index's position of 1-based rank r: r - 1, clamped to the
 * span (ranks past it share its last position: every move that reaches that
 * far visits them, and their trackers judge it). */
static size_t pos_of(int64_t r)
{
    return r <= 1 ? 0 : (uint64_t)(r - 1) >= RC_VINDEX_SPAN ? RC_VINDEX_SPAN - 1 : (size_t)(r - 1);
}

static void unfile(struct gw_board *b, struct gw_view *v)
{
    if (gw_board_view_mirror_shaped(v))
        return; /* (its ix is in the mirror views' index) */
    rc_vindex_remove(&b->rix, &v->ix);
    b->nrfiled -= v->rfiled ? 1 : 0;
    v->rfiled = 0;
    b->nlazy -= v->rlazy ? 1 : 0;
    v->rlazy = 0;
}

static void set_filed(struct gw_board *b, struct gw_view *v)
{
    /* Before the board's first event (or the first of a new history) the
     * first view filed alone sets where the index stands: its read's seq
     * (a view filed later from an older read is forgotten: it reads at the
     * next event). With others filed already, the next event walks them. */
    if (b->rix_seq < 0 && b->nrfiled == 0)
        b->rix_seq = v->trk.seq;
    v->rfiled = 1;
    b->nrfiled++;
}

/* A member list is filed by its listed ranks widened by this many on each
 * side, and filed again only when they leave that: every move within them
 * shifts them by one, and filing again at each (a remove and an add in the
 * index, with allocations) cost about two thirds of the gateway's CPU with
 * hundreds of lists at 2,000 writes/s (issue 26, bench case M). A move in
 * the margin visits the list for nothing: its tracker judges it SAME. */
#define LIST_MARGIN 32

static int is_list(const struct gw_view *v)
{
    return v->r.spec.kind == RC_VIEW_MEMBERS || v->r.spec.kind == RC_VIEW_TEAM;
}

/* The index interval [*start, *end) of ranks [lo, hi] (as file() adds it). */
static void span_of(int64_t lo, int64_t hi, size_t *start, size_t *end)
{
    *start = pos_of(lo);
    *end = hi >= (int64_t)RC_VINDEX_SPAN ? RC_VINDEX_SPAN : (size_t)hi;
}

/* 1 when member list v, filed, still has every listed rank inside what it
 * is filed by (it need not be filed again). */
static int list_still_filed(const struct gw_view *v)
{
    int64_t lo, hi;
    size_t start, end;
    if (!v->rfiled || !v->ix.in || !v->trk.ok || !rc_vtrack_ranks(&v->trk, &lo, &hi))
        return 0;
    span_of(lo, hi, &start, &end);
    return start >= v->ix.start && end <= v->ix.end;
}

#define GW_READS_LAZY_EVERY 128 /* events between two catch-ups of the lazy lists (half of GW_FO_RING_EVENTS:
                                  at 2,000 writes/s the tick's catch-up alone, each list's entries
                                  fetched into the cache half as often as at 64; issue 26) */
_Static_assert(GW_READS_LAZY_EVERY * 2 <= GW_FO_RING_EVENTS, "lists catch up well before the ring drops events");

/* Files read view v in b's read index once it waits for events (read, not
 * dirty, not out): by the ranks its tracker depends on; one whose tracker
 * knows nothing across every rank (any move reads it, as before); an around
 * view whose member is absent nowhere (no move changes it: only an event
 * that changes total, which walks every read view). Views of a frozen
 * board's audience stay out (every event walks those); a sharded board's
 * followed lists go in by composite (file_shard), its other read views stay
 * out (they read at the tick: gw_reads_shard_heard). */
static void file_shard(struct gw_board *b, struct gw_view *v);

static void file(struct gw_board *b, struct gw_view *v)
{
    unfile(b, v);
    if (b->decl->shards > 1 && b->sh) {
        file_shard(b, v);
        return;
    }
    if (v->dead || v->dirty || v->reading || gw_board_view_mirror_shaped(v) || v->r.spec.kind == RC_VIEW_FEED ||
        b->decl->shards > 1 || gw_board_view_held(v))
        return;
    if (v->r.spec.kind == RC_VIEW_MEMBERS && v->trk.ok) {
        v->rlazy = 1; /* (it judges the ring's events itself: gw_reads_catch_up) */
        b->nlazy++;
        return;
    }
    if (v->trk.ok && b->rix_seq >= 0 && v->trk.seq < b->rix_seq)
        rc_vtrack_forget(&v->trk); /* events it was not judged against went by: it reads at the next */
    int64_t lo = 1, hi = INT64_MAX;
    if (v->trk.ok && !rc_vtrack_ranks(&v->trk, &lo, &hi)) {
        set_filed(b, v);
        return;
    }
    if (is_list(v) && v->trk.ok) {
        lo = lo > LIST_MARGIN ? lo - LIST_MARGIN : 1;
        hi = hi < INT64_MAX - LIST_MARGIN ? hi + LIST_MARGIN : INT64_MAX;
    }
    size_t start, end;
    span_of(lo, hi, &start, &end);
    if (rc_vindex_add(&b->rix, &v->ix, start, end) != 0) {
        b->rix_lost = 1; /* out of memory: every event walks every read view */
        return;
    }
    if (v->trk.ok)
        set_filed(b, v);
}

/* One read view an event reached (or a walk met). */
static void visit(struct gw_board *b, struct gw_view *v, const struct rc_event *ev)
{
    if (v->rlazy)
        return; /* (judges the ring's events in its next catch-up) */
    b->f->app->metrics.views_visited[GW_METRICS_VISIT_EVENT]++;
    if (gw_board_view_held(v)) {
        rc_vtrack_forget(&v->trk); /* (the audience of a frozen board sees no live change) */
        unfile(b, v);
        return;
    }
    if (v->dirty || v->reading) {
        unfile(b, v); /* reads anyway; or judged from the ring when its read is back (and filed then) */
        return;
    }
    if (v->rfiled && b->rix_seq >= 0)
        rc_vtrack_skip(&v->trk, b->rix_seq); /* the moves since it was filed missed its ranks */
    judge(v, ev, 0, NULL);
    if (v->dirty)
        unfile(b, v);
    else if (is_list(v) && !list_still_filed(v))
        file(b, v); /* its listed ranks moved out of what it is filed by: filed again by them */
}

/* The read views rc_vindex_each reports, gathered before any is visited
 * (a visit may take a view out of the index). */
struct gather {
    struct gw_view **v;
    size_t n;
};

static void gather(struct rc_vindex_item *it, void *arg)
{
    struct gather *g = arg;
    g->v[g->n++] = GW_FO_CONTAINER(it, struct gw_view, ix);
}

/* The filed views at index positions [plo, phi] into g (f->reached), the
 * filed views it missed counted as spared (each stays as read). Returns 0,
 * or -1 when out of memory (nothing gathered). */
static int gather_reached(struct gw_board *b, size_t plo, size_t phi, struct gather *g)
{
    struct gw_fanout *f = b->f;
    if (f->reached_cap < b->rix.count) {
        size_t cap = b->rix.count * 2;
        struct gw_view **nv = realloc(f->reached, cap * sizeof *nv);
        if (!nv)
            return -1;
        f->reached = nv;
        f->reached_cap = cap;
    }
    *g = (struct gather){f->reached, 0};
    rc_vindex_each(&b->rix, plo, phi, gather, g);
    size_t spared = b->nrfiled;
    for (size_t i = 0; i < g->n; i++)
        spared -= g->v[i]->rfiled ? 1 : 0;
    f->app->metrics.view_reads_spared += spared;
    return 0;
}

/* Visits the filed views whose ranks the move [lo, hi] touched. Returns 0,
 * or -1 when out of memory (nothing visited). */
static int visit_reached(struct gw_board *b, int64_t lo, int64_t hi, const struct rc_event *ev)
{
    struct gather g;
    if (gather_reached(b, pos_of(lo), pos_of(hi), &g) != 0)
        return -1;
    for (size_t i = 0; i < g.n; i++)
        visit(b, g.v[i], ev);
    return 0;
}

/* A move (the member on the board before and after, ranks told) in seq
 * order after every event the index judged reaches only the filed views
 * whose ranks it touched: each of the others would judge it RC_VTRACK_SAME
 * (core/rc_vtrack.h, rc_vtrack_ranks), and its tracker catches up when an
 * event reaches it (rc_vtrack_skip). Anything else (total changed, a gap,
 * a new history, a reset, a sharded board) walks every read view, as every
 * such event can change every window. */
void gw_reads_event(struct gw_board *b, const struct rc_event *ev)
{
    int64_t lo = ev->old_rank < ev->rank ? ev->old_rank : ev->rank;
    int64_t hi = ev->old_rank < ev->rank ? ev->rank : ev->old_rank;
    int move = !b->rix_lost && b->decl->shards == 1 && b->rix_seq >= 0 && ev->seq == b->rix_seq + 1 &&
               !ev->epoch[0] && ev->member[0] && ev->has_old && ev->has_new && lo >= 1;
    if (b->nlazy < b->nreads && (!move || visit_reached(b, lo, hi, ev) != 0)) {
        for (struct gw_view *v = b->reads; v; v = v->knext)
            visit(b, v, ev); /* (a lazy list returns at once) */
    }
    if (ev->epoch[0] || !ev->member[0] || ev->seq > b->rix_seq)
        b->rix_seq = ev->seq;
    if (b->nlazy) {
        if (++b->lazy_behind >= GW_READS_LAZY_EVERY)
            gw_reads_catch_up(b);
        else
            gw_board_wake(b); /* (the tick catches them up) */
    }
}

/* Judges the ring's events that v's tracker has not seen (those it has are
 * old), until one sets it dirty. */
static void replay(struct gw_view *v)
{
    struct gw_board *b = v->board;
    for (size_t i = 0; b && i < b->ring_len && !v->dirty; i++)
        judge(v, gw_board_ring_at(b, i), 1, NULL); /* (a sharded list's own moves there read) */
}

/* What a run of member-list events judged SAME or MOVED does (as
 * judge_members for each): counted as spared, and the list due once. */
static void told_moves(struct gw_view *v, uint64_t *spared, int *moved)
{
    v->f->app->metrics.view_reads_spared += *spared;
    if (*moved) {
        v->mmoved = 1;
        gw_board_view_due(v);
    }
    *spared = 0;
    *moved = 0;
}

/* replay() from the first of the ring's events newer than v's tracker,
 * found by seq (the ring is in seq order; when the one found does not
 * follow the tracker's seq exactly, every event is judged, as replay()). */
static void replay_new(struct gw_view *v)
{
    struct gw_board *b = v->board;
    size_t lo = 0, hi = b->ring_len;
    while (v->trk.ok && lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (gw_board_ring_at(b, mid)->seq <= v->trk.seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!v->trk.ok || lo == b->ring_len || gw_board_ring_at(b, lo)->seq != v->trk.seq + 1)
        lo = 0;
    /* A member list (not cut) judges the events that had the member on the
     * board before (moves, leaves) straight with its tracker, the spared
     * count and the due list told once for the run: what judge_members
     * does for each, without its per-event work (every list of a busy board
     * judges every event). Anything else goes through judge(), after the
     * run so far is told. */
    int fast = v->r.spec.kind == RC_VIEW_MEMBERS && b->decl->shards == 1;
    uint64_t spared = 0;
    int moved = 0;
    for (size_t i = lo; i < b->ring_len && !v->dirty; i++) {
        const struct rc_event *ev = gw_board_ring_at(b, i);
        if (fast && v->trk.ok && !v->trk.cut && ev->has_old && !ev->epoch[0] && ev->member[0]) {
            if (ev->seq <= v->trk.seq)
                continue; /* (old: the read reflects it) */
            int r = rc_vtrack_members_event(&v->trk, ev->seq, 0, 1, ev->old_rank, ev->has_new, ev->rank, ev->c);
            if (r == RC_VTRACK_SAME || r == RC_VTRACK_MOVED) {
                spared++;
                moved |= r == RC_VTRACK_MOVED;
                continue;
            }
            told_moves(v, &spared, &moved); /* CHANGED (the tracker forgot): it reads */
            v->mmoved = 0;
            gw_board_view_set_dirty(v);
            break;
        }
        told_moves(v, &spared, &moved);
        judge(v, ev, 1, NULL);
    }
    told_moves(v, &spared, &moved);
}

void gw_reads_catch_up(struct gw_board *b)
{
    if (!b->lazy_behind)
        return;
    b->lazy_behind = 0;
    const struct rc_vbatch *vb = gw_reads_batch_make(b); /* (the run judged once for them all) */
    for (struct gw_view *v = b->reads, *next; v; v = next) {
        next = v->knext;
        if (vb && next) {
            /* (the next lists' entries, tracker load while this one is judged) */
            rc_vbatch_prefetch(&next->trk);
            if (next->knext) {
                __builtin_prefetch(&next->knext->knext);
                __builtin_prefetch(&next->knext->trk);
                __builtin_prefetch(&next->knext->r.spec);
            }
        }
        if (!v->rlazy)
            continue;
        b->f->app->metrics.views_visited[GW_METRICS_VISIT_EVENT]++;
        if (gw_board_view_held(v)) {
            rc_vtrack_forget(&v->trk); /* (the audience of a frozen board sees no live change) */
            unfile(b, v);
            continue;
        }
        if (!v->dirty && !v->reading && (!vb || gw_reads_batch_judge(v, vb) != 0))
            replay_new(v);
        if (v->dirty || v->reading)
            unfile(b, v); /* reads (its read files it again) */
    }
    gw_reads_batch_done(b);
}

void gw_reads_failed(struct gw_view *v)
{
    /* The events skipped while it was out are still to judge against the
     * read before. A view never read yet reads at its next event (and every
     * view when Redis is back): retrying a failing read each tick is not
     * worth it. */
    if (v->dead || !v->board)
        return;
    unfile(v->board, v);
    if (!v->dirty && v->trk.ok)
        replay(v);
    file(v->board, v);
}

/* A member list's rows by rank (read.lua and gw_read_mshard.c order them)
 * as its tracker's entries, and the window they came from, which the next
 * windows are built from (gw_members.c). Returns 0, or -1 when out of
 * memory. */
static int keep_base(struct gw_view *v, const struct gw_window *w)
{
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
        return -1;
    }
    v->mbase = base;
    v->mbase_of = w; /* (shown as a window of base: gw_members_as_base) */
    for (size_t i = 0; i < w->n; i++)
        v->ment[i] = (struct rc_vtrack_entry){w->rows[i].rank, w->rows[i].c, i};
    return 0;
}

/* Starts v's tracker from the window w read, and judges the ring's events
 * newer than it (or leaves it forgotten: every event reads it). */
static void track(struct gw_view *v, const struct gw_window *w)
{
    struct gw_board *b = v->board;
    const struct rc_view *s = &v->r.spec;
    rc_vtrack_forget(&v->trk);
    if (b->decl->shards > 1 && s->kind == RC_VIEW_MEMBERS && !gw_board_view_held(v)) {
        /* a sharded board's list: by composite (gw_members_shard.h) */
        if (keep_base(v, w) == 0 && gw_members_shard_start(v, w))
            replay(v);
        return;
    }
    if (b->decl->shards > 1 || gw_board_view_held(v) || (b->epoch_known && strcmp(w->epoch, b->epoch) != 0))
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
        if (keep_base(v, w) != 0)
            return; /* (out of memory: not tracked, every event reads) */
        rc_vtrack_members(&v->trk, w->seq, w->total, v->ment, w->n, s->places);
        if (w->found > (int64_t)w->n)
            rc_vtrack_members_cut(&v->trk); /* a big team's best (gw_view_read.c) */
    } else if (s->kind == RC_VIEW_TOP || s->kind == RC_VIEW_PAGE) {
        rc_vtrack_page(&v->trk, w->seq, (int64_t)s->offset, (int64_t)s->limit, s->places);
    } else {
        return;
    }
    replay(v); /* the events that came while the read was out (older ones are old) */
}

/* Files a sharded board's followed list v (not dirty, not out) by its
 * entries' composites; one no move can change is filed without a place
 * (only a join or leave changes it, and those walk every list). */
static void file_shard(struct gw_board *b, struct gw_view *v)
{
    size_t lo = 0, hi = 0;
    if (v->dead || v->dirty || v->reading || !v->msh || gw_board_view_held(v))
        return;
    int r = gw_members_shard_span(v, b->sh->rseq, &lo, &hi);
    if (r < 0 || !v->trk.ok)
        return; /* (it reads at the next event) */
    if (r > 0 && rc_vindex_add(&b->rix, &v->ix, lo, hi + 1) != 0) {
        b->rix_lost = 1; /* out of memory: every event walks every list */
        return;
    }
    v->rfiled = 1;
    b->nrfiled++;
}

/* One followed list of a sharded board an event reached (or a walk met). */
static void visit_shard(struct gw_board *b, struct gw_view *v, const struct rc_event *ev, const int64_t *cseq)
{
    b->f->app->metrics.views_visited[GW_METRICS_VISIT_EVENT]++;
    if (gw_board_view_held(v)) {
        rc_vtrack_forget(&v->trk);
        unfile(b, v);
        return;
    }
    if (v->dirty || v->reading) {
        unfile(b, v); /* (one out is judged from the ring when its read is back, and filed then) */
        return;
    }
    if (v->rfiled)
        gw_members_shard_skip(v, b->sh->rseq); /* the moves since it was filed missed its composites */
    judge(v, ev, 0, cseq);
    file(b, v); /* (a listed member's own move changed its span; a dirty one stays out) */
}

void gw_reads_shard_event(struct gw_board *b, const struct rc_event *ev, const int64_t *cseq)
{
    int64_t *rseq = b->sh->rseq;
    unsigned j = ev->shard;
    int move = !b->rix_lost && j < b->decl->shards && j < RC_SHARDS_MAX && rseq[j] >= 0 &&
               ev->seq == rseq[j] + 1 && !ev->epoch[0] && ev->member[0] && ev->has_old && ev->has_new;
    struct gather g;
    if (move) {
        double a = ev->old_c < ev->c ? ev->old_c : ev->c, z = ev->old_c < ev->c ? ev->c : ev->old_c;
        move = gather_reached(b, rc_vtrack_shard_pos(a), rc_vtrack_shard_pos(z), &g) == 0;
    }
    if (move) {
        for (size_t i = 0; i < g.n; i++)
            visit_shard(b, g.v[i], ev, cseq);
    } else {
        for (struct gw_view *v = b->reads; v; v = v->knext)
            if (v->msh && !v->dead)
                visit_shard(b, v, ev, cseq); /* (the others read at the tick: gw_reads_shard_heard) */
    }
    if (ev->epoch[0] || !ev->member[0]) {
        for (unsigned k = 0; k < RC_SHARDS_MAX; k++)
            rseq[k] = -1; /* (a new history or a reset: every list read again) */
    } else if (j < RC_SHARDS_MAX) {
        rseq[j] = ev->seq;
    }
}

void gw_reads_shard_heard(struct gw_board *b)
{
    for (struct gw_view *v = b->reads; v; v = v->knext)
        if (!gw_board_view_held(v) && !(v->msh && v->trk.ok && !v->dirty))
            gw_board_view_set_dirty(v);
}

void gw_reads_track(struct gw_view *v, const struct gw_window *w)
{
    struct gw_board *b = v->board;
    if (!b)
        return;
    unfile(b, v);
    track(v, w);
    file(b, v);
}
