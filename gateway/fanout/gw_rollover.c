/* gw_rollover.c - views of "current" and "previous" follow the clock: when a
 * period ends they move onto the next period's board, and their viewers get
 * a snapshot of it under the same sub, without resubscribing. */
#include "fanout/gw_fanout_int.h"

#include <stdio.h>
#include <string.h>

#include "gw_app.h"
#include "base/gw_log.h"

/* Moves view v onto board period `period`: its viewers get a snapshot of the
 * new period (same sub) and deltas from there, without resubscribing. */
static void view_move(struct gw_fanout *f, struct gw_view *v, const char *period)
{
    struct gw_board *old = v->board;
    int over_cap = 0;
    /* Not held to max_boards: these viewers are here already, and the old
     * board usually goes as they leave it. */
    struct gw_board *nb = gw_board_get(f, old->decl, old->r.name, period, 0, &over_cap);
    if (!nb)
        return; /* out of memory: try again next tick */
    (void)rc_registry_view_move(&f->reg, &v->r, &nb->r); /* failed: served, just not found by a subscribe */
    gw_board_view_refile(v, nb);
    gw_hold_recount(f, old); /* its viewers went with it */
    gw_hold_recount(f, nb);
    gw_window_free(v->last);
    v->last = NULL;
    gw_window_free(v->held); /* of the old period */
    v->held = NULL;
    v->force_snapshot = 0;
    gw_board_view_set_dirty(v);
    /* a source with teams: the new period has its own membership (docs/teams.md, "Periods") */
    gw_rowteam_load(nb, 0);
    if (v->r.spec.kind == RC_VIEW_TEAM)
        gw_rowteam_load_roster_view(v); /* (or when nb's membership is read) */
    for (struct gw_sub *s = v->subs; s; s = s->vnext) {
        s->pending = 1; /* no id: a pushed snapshot, not a reply */
        s->needs_snapshot = 0;
        s->has_since = 0;
        s->cursor = 0;
    }
    if (gw_fo_first_view(old))
        gw_mirror_board_want(old);
    gw_board_maybe_free(f, old);
    if (v->r.spec.kind == RC_VIEW_FEED) {
        gw_feed_catch_up(v);
    } else if (gw_board_view_uses_mirror(v)) {
        gw_mirror_board_want(nb);
        if (nb->stale || !nb->mirror.exact)
            gw_mirror_board_reload(nb);
        else
            gw_mirror_cut_one(nb, v);
    } else {
        gw_view_read(v);
    }
}

/* Views of "current" and "previous" follow the clock across period ends.
 * The boards are walked only when a period has ended since the last walk
 * (or the test clock went back), not on every tick. */
void gw_rollover_run(struct gw_fanout *f)
{
    int64_t now = gw_now_ms(f->app);
    if (now < f->rollover_at && now >= f->rollover_from)
        return;
    struct gw_view *moving[64];
    char to[64][RC_PERIOD_ID_MAX];
    size_t n = 0;
    int64_t next = INT64_MAX;
    int again = 0;
    for (struct gw_board *b = f->all; b; b = b->next) {
        if (b->decl->period.kind == RC_PERIOD_NONE)
            continue;
        struct rc_period cur, prev;
        if (rc_period_at(&b->decl->period, now, &cur) != 0 || rc_period_prev(&b->decl->period, &cur, &prev) != 0)
            continue;
        if (cur.end_ms < next)
            next = cur.end_ms;
        for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v)) {
            const char *want = v->r.follows == RC_FOLLOW_CURRENT ? cur.id : v->r.follows == RC_FOLLOW_PREVIOUS ? prev.id : NULL;
            if (!want || strcmp(want, b->r.period) == 0)
                continue;
            if (v->reading || n == 64) {
                again = 1; /* next tick */
                continue;
            }
            moving[n] = v;
            snprintf(to[n], sizeof to[n], "%s", want);
            n++;
        }
    }
    f->rollover_from = now;
    f->rollover_at = again ? now : next; /* boards made from here on lower it (board_get) */
    /* moved after the walk: moving changes the board list */
    for (size_t i = 0; i < n; i++) {
        gw_log_info("board %s: period rollover of view %s to %s", moving[i]->board->r.name, moving[i]->r.id, to[i]);
        view_move(f, moving[i], to[i]);
    }
}
