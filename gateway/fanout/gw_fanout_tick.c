/* gw_fanout_tick.c - the coalescing tick (and its leading edge, core/rc_edge.h).
 * It visits only boards with work (the work list: a view due, the mirror
 * stale or changed), and on each board only the views a change reached: the
 * mirror views the mirror's touched span reaches (gw_mirror.c, through the
 * board's index) and the views on its due list (gw_board.c). Every view it
 * looks at counts in rankcast_views_visited_total{on="tick"}. The rollover
 * walks the boards only when some period has ended. */
#include "fanout/gw_fanout_int.h"

#include <stdlib.h>

#include "gw_app.h"
#include "base/gw_fault.h"

/* What the tick must still do for b (it stays on the work list while so). */
static int board_has_work(const struct gw_board *b)
{
    return b->freeze_due || rc_ksmatch_pending(&b->ks) || (b->mirror_on && (b->stale || b->changed || !b->mirror.exact)) ||
           b->due || b->lazy_behind > 0 || gw_rowteam_ks_pending(b->rt);
}

/* Whether the tick's look at b may send its viewers something (what stamps
 * the board's edge, core/rc_edge.h): a change, or a due view with a change,
 * a held window or a count to tell. A view due only to be looked at (a new
 * one's first cut) sends no change, and must not make the next write to a
 * quiet board wait for the tick. */
static int board_may_send(const struct gw_board *b)
{
    if (b->freeze_due || rc_ksmatch_pending(&b->ks) || (b->mirror_on && (b->stale || b->changed || !b->mirror.exact)) ||
        b->lazy_behind > 0)
        return 1;
    for (const struct gw_view *v = b->due; v; v = v->dnext)
        if (v->dirty || v->held || v->viewers_due || v->mmoved)
            return 1;
    return 0;
}

/* A change event reached b: when it finds b quiet, b goes on the soon list
 * (off the work list) and gw_fanout_tick_edge looks at it after this loop turn's
 * I/O, instead of the next tick. */
void gw_fanout_tick_edge_maybe(struct gw_fanout *f, struct gw_board *b)
{
    if (b->dead || b->wlist == &f->soon || !board_has_work(b))
        return;
    if (!rc_edge_quiet(&b->edge, gw_clock_mono_us(), f->app->conf->tick_ms * 1000))
        return;
    gw_board_work_remove(b);
    b->wprev = NULL;
    b->wnext = f->soon;
    if (f->soon)
        f->soon->wprev = b;
    f->soon = b;
    b->wlist = &f->soon;
}

/* One view of b on the tick's due list. */
static void tick_view(struct gw_board *b, struct gw_view *v, int64_t now_us)
{
    if (v->dead)
        return;
    gw_view_send_held(b->f, v, now_us); /* max_rate: its interval has passed */
    if (gw_board_view_uses_mirror(v)) {
        v->dirty = 0; /* served by the mirror (gw_mirror_board_refresh) */
        if (v->cut_due && !v->reading) {
            v->cut_due = 0; /* (set again when it still cannot be cut) */
            if (gw_board_first_may_cut(b->f, v))
                gw_mirror_cut_one(b, v); /* a new view the mirror could not serve before */
        }
    } else {
        v->cut_due = 0; /* (left the mirror: it reads) */
    }
    if (v->mmoved && !v->dirty && !v->reading && rc_rate_may_send(&v->gate, now_us))
        gw_members_build(v); /* a member list the events alone moved: no read (this turn or a later one) */
    if (v->viewers_due && !v->dirty && !v->reading && !v->held && rc_rate_may_send(&v->gate, now_us))
        gw_view_tell_viewers(b->f, v); /* a count alone changed (a message: it counts toward max_rate) */
    if (!v->dirty || v->reading || !rc_rate_may_send(&v->gate, now_us))
        return; /* (max_rate: read when it may send; stays dirty till then) */
    if (v->r.spec.kind == RC_VIEW_FEED) {
        v->dirty = 0;
        gw_feed_catch_up(v);
    } else {
        gw_mirror_view_read_or_cut(v);
    }
}

static void board_tick(struct gw_board *b)
{
    if (gw_rowteam_ks_pending(b->rt))
        b->f->tick_teams(b); /* its membership changed outside rankcast? (docs/teams.md) */
    /* A ZADD that went a whole tick without its script's event was made
     * outside (core/rc_ksmatch.h; one pending at this tick alone may have
     * its event in the connection's next read). Until then only prev_rank
     * waits (gw_view.c: no delta that needs the events while one is
     * pending). */
    if (rc_ksmatch_tick(&b->ks) == RC_KSMATCH_OUTSIDE) {
        b->moves_break++;
        gw_board_mark_reads_dirty(b); /* read views: no event tells what it changed */
        if (b->mirror_on)
            b->stale = 1; /* read again below */
    }
    gw_frozen_apply(b->f, b); /* a read heard of a change of the freeze */
    if (b->mirror_on) {
        if (b->stale || !b->mirror.exact)
            gw_mirror_board_reload(b);
        else if (b->changed)
            gw_mirror_board_refresh(b, 1);
    }
    gw_reads_catch_up(b); /* (the member lists its events moved become due) */
    /* the views due, and no other: each is taken off the list, looked at,
     * and put back while it still has work (a read out, max_rate) */
    int64_t now_us = gw_clock_gate_us(&b->f->app->clock); /* max_rate's time */
    struct gw_view *todo = b->due;
    b->due = NULL;
    for (struct gw_view *v = todo; v; v = v->dnext)
        v->dlist = &todo;
    while (todo) {
        struct gw_view *v = todo;
        gw_board_view_undue(v);
        b->f->app->metrics.views_visited[GW_METRICS_VISIT_TICK]++;
        v->refs++; /* alive through what it sends */
        tick_view(b, v, now_us);
        if (!v->dead && (v->dirty || v->held || v->viewers_due || v->cut_due || (v->mmoved && !v->mqueued)))
            gw_board_view_due(v);
        gw_board_view_unref(v);
    }
}

/* Takes the list *from whole (a board that gets work again while it is
 * handled waits for the next pass) and looks at each board: its mirror,
 * reads, held sends. `edge`: this is the leading edge, in tick period
 * `period`; else the tick that ends `period`. Boards looked at are stamped
 * as gone out (core/rc_edge.h). */
static void run_boards(struct gw_board **from, int edge, uint64_t period)
{
    struct gw_board *todo = *from;
    *from = NULL;
    for (struct gw_board *b = todo; b; b = b->wnext)
        b->wlist = &todo;
    int64_t now_us = gw_clock_mono_us();
    while (todo) {
        struct gw_board *b = todo;
        gw_board_work_remove(b);
        /* The tick passes over a board that went out at its leading edge
         * in this period; the edge leaves a board whose script event is
         * still to come (its ZADD was heard) to the tick. */
        if (edge ? rc_ksmatch_pending(&b->ks) : !rc_edge_tick_may_send(&b->edge, period)) {
            gw_board_wake(b);
            continue;
        }
        if (edge)
            rc_edge_sent_edge(&b->edge, now_us, period);
        else if (board_may_send(b))
            rc_edge_sent_tick(&b->edge, now_us);
        b->refs++; /* alive through its own callbacks */
        board_tick(b);
        if (!b->dead && board_has_work(b))
            gw_board_wake(b);
        gw_board_unref(b);
    }
}

void gw_fanout_tick(struct gw_fanout *f)
{
    uint64_t period = f->ticks++; /* this tick ends period f->ticks (before the ++) */
    gw_replay_tick(f);
    gw_feed_shard_flush(f);
    gw_rollover_run(f);
    gw_viewers_tick(f);
    gw_feed_check_quiet(f);
    /* Boards still waiting for their leading edge (normally none: it runs
     * after each loop turn's I/O) are looked at by this tick instead. */
    while (f->soon) {
        struct gw_board *b = f->soon;
        gw_board_work_remove(b);
        gw_board_wake(b);
    }
    run_boards(&f->work, 0, period); /* only the boards with work */
    long slow = gw_fault_slow_tick_ms(f->app->conf->test_clock);
    if (slow > 0)
        uv_sleep((unsigned)slow); /* (a test's long tick: the loop held, as by thousands of views) */
}

void gw_fanout_tick_edge(struct gw_fanout *f)
{
    gw_first_kick(f); /* the next turns' first answers (gw_first.c) */
    gw_members_kick(f); /* ... and member lists' builds (gw_members.c) */
    /* sharded boards' events go out for their ranks together: before the
     * reads of this edge, else every GW_FO_SHARD_FLUSH_US */
    if (f->sflush && (f->soon || gw_clock_mono_us() - f->sflushed_us >= GW_FO_SHARD_FLUSH_US))
        gw_feed_shard_flush(f);
    if (f->soon)
        run_boards(&f->soon, 1, f->ticks);
}

