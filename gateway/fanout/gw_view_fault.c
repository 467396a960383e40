/* gw_view_fault.c - a test-only lag of the live views, so that the switch
 * of a replay to live (gw_replay.c) is tested against a view that has not
 * seen the newest change yet by design, not luck (the race of issue 27: a
 * replay's read sees seq N while the view still holds N-1). Read from the
 * environment only when [server] test_clock = on (a setting for tests,
 * never on in production), and logged as a warning when in force:
 *
 *   RANKCAST_TEST_VIEW_HOLD_MS=MS
 *       every fresh window of a window or member-list view (a read's, or
 *       the mirror's) reaches the view MS later than it was made: the
 *       viewers, and the view's snapshots, lag the board by MS.
 */
#include "fanout/gw_view_fault.h"

#include <stdlib.h>

#include <uv.h>

#include "base/gw_log.h"
#include "fanout/gw_fanout_int.h"
#include "gw_app.h"

struct held {
    uv_timer_t timer;
    struct gw_fanout *f;
    struct gw_view *v;
    struct gw_window *w;
    gw_view_fault_update *update;
};

static int loaded;
static int64_t hold_ms;
static int releasing; /* a held window is being handed over: not held again */

static void held_free(uv_handle_t *h)
{
    free(h->data);
}

static void held_fire(uv_timer_t *t)
{
    struct held *x = t->data;
    if (x->v->dead) {
        gw_window_free(x->w);
    } else {
        releasing = 1;
        x->update(x->f, x->v, x->w);
        releasing = 0;
    }
    gw_board_view_unref(x->v);
    uv_close((uv_handle_t *)t, held_free);
}

int gw_view_fault_hold(struct gw_fanout *f, struct gw_view *v, struct gw_window *w, gw_view_fault_update *update)
{
    if (!loaded) {
        loaded = 1;
        const char *d = f->app->conf->test_clock ? getenv("RANKCAST_TEST_VIEW_HOLD_MS") : NULL;
        if (d && atoll(d) > 0) {
            hold_ms = atoll(d);
            gw_log_warn("views: fresh windows held %lld ms (RANKCAST_TEST_VIEW_HOLD_MS, a test setting)",
                        (long long)hold_ms);
        }
    }
    if (!hold_ms || releasing)
        return 0;
    struct held *x = malloc(sizeof *x);
    if (!x)
        return 0;
    *x = (struct held){.f = f, .v = v, .w = w, .update = update};
    v->refs++;
    uv_timer_init(f->app->loop, &x->timer);
    x->timer.data = x;
    /* (timers of one timeout fire in the order they were started: the
     * windows reach the view in the order they were made) */
    uv_timer_start(&x->timer, held_fire, (uint64_t)hold_ms, 0);
    return 1;
}
