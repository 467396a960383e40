/* gw_first.c - a subscribe's first answer (its snapshot, a new mirror view's
 * cut, a read or a feed's catch-up), spread over loop turns.
 *
 * Issue 23: 8,192 distinct views opened in a burst made the loop encode
 * their first snapshots (up to 1,000 rows each) in one turn, and a client
 * on another address waited 0.4-1.3 s for a ping. Each turn now answers
 * subscribes for about GW_FO_FIRST_ROWS_PER_TURN rows, or for
 * GW_FO_FIRST_US_PER_TURN of the loop's time, whichever comes first (the
 * rows alone took 20-50 ms a turn on the shared 2-core machine, the most a
 * ping waited during bench case V's 8,192-view burst); a subscribe past that
 * waits in a queue (FIFO, so a burst cannot overtake itself) that an idle
 * handle works through, the same amount per turn, with the loop's I/O
 * (pings, writes, other clients' requests) answered between. The budget is
 * renewed after each turn's I/O (gw_fanout_tick_edge), which also starts the
 * idle handle when some wait (the queue itself, and the share the tick and
 * the profile fetches may take, are in gw_board.c). A subscription answered
 * meanwhile by its view (a change cut or read its window and answered
 * every pending viewer) is skipped; one closed leaves the queue. Counted in
 * rankcast_first_answers_deferred_total. */
#include <uv.h>

#include "fanout/gw_fanout_int.h"

#include "gw_app.h"

/* The rows a first answer of s costs about (its window, or 1 for a read
 * or a feed, whose answers come later from Redis). */
static size_t cost(const struct gw_sub *s)
{
    const struct gw_view *v = s->view;
    if (v->r.spec.kind == RC_VIEW_FEED)
        return 1;
    if (v->last)
        return v->last->n + 1;
    return gw_board_view_uses_mirror(v) ? (size_t)v->r.spec.limit + 1 : 1;
}

/* What a subscribe answers with, once it is s's turn. */
static void answer(struct gw_fanout *f, struct gw_sub *s)
{
    struct gw_view *v = s->view;
    struct gw_board *b = v->board;
    if (!s->pending || !b || v->dead)
        return; /* answered by its view meanwhile */
    f->first_rows += cost(s);
    int64_t t0 = gw_clock_mono_us();
    if (v->r.spec.kind == RC_VIEW_FEED) {
        gw_feed_catch_up(v);
    } else if (v->last) {
        gw_view_send_first_snapshot(f, s); /* later deltas are diffs from this window */
    } else if (gw_board_view_uses_mirror(v)) {
        /* its own window alone: the board's other views keep whatever
         * changes they have pending for the tick */
        gw_mirror_board_want(b);
        if (b->stale || !b->mirror.exact) {
            v->cut_due = 1; /* cut by the reload's refresh, or after it (tick) */
            gw_board_view_due(v);
            gw_mirror_board_reload(b);
        } else {
            gw_mirror_cut_one(b, v);
        }
    } else {
        gw_mirror_view_read_or_cut(v);
    }
    f->first_us += gw_clock_mono_us() - t0;
}

static void on_first_idle(uv_idle_t *h)
{
    struct gw_fanout *f = h->data;
    while (f->first_head && gw_board_first_share_left(f)) {
        struct gw_sub *s = f->first_head;
        gw_board_first_unqueue(f, s);
        struct gw_view *v = s->view;
        v->refs++; /* (answering may detach nothing, but the view outlives it either way) */
        answer(f, s);
        gw_board_view_unref(v);
    }
    if (!f->first_head)
        uv_idle_stop(h);
}

void gw_first_answer(struct gw_fanout *f, struct gw_sub *s)
{
    if (!f->first_on || (!f->first_head && gw_board_first_share_left(f))) {
        answer(f, s);
        return;
    }
    gw_board_first_queue(f, s);
}

void gw_first_kick(struct gw_fanout *f)
{
    f->first_rows = 0; /* the next turn's share */
    f->first_us = 0;
    if (f->first_head && f->first_on)
        uv_idle_start(&f->first_idle, on_first_idle);
}

void gw_first_loop_start(struct gw_fanout *f, uv_loop_t *loop)
{
    uv_idle_init(loop, &f->first_idle);
    f->first_idle.data = f;
    f->first_on = 1;
}

void gw_first_loop_stop(struct gw_fanout *f)
{
    if (!f->first_on)
        return;
    f->first_on = 0;
    uv_close((uv_handle_t *)&f->first_idle, NULL);
    /* (subscriptions still queued are answered at once from now on, or
     * freed with their connections) */
}
