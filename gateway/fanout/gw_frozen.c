/* gw_frozen.c - freeze and reveal on this gateway (PROTOCOL v1.1; the state
 * lives in Redis, lua/freeze.lua). A board keeps the newest freeze state it
 * heard (a control event on its channel, or the head of a read) and moves
 * its views to it here:
 *   - the audience's window views read the frozen copy from Redis while the
 *     board is frozen (never the mirror, which follows the live board) and
 *     ignore live changes until a reveal; every change of the freeze makes
 *     them read again, and a delta goes out when the rows or the freeze
 *     changed (gw_view.c: "frozen" appears, moves or goes);
 *   - the audience's feeds get the events up to the shown seq: a reveal
 *     hands them the revealed events from the ring (or from the log when the
 *     ring no longer holds them); a freeze or an unfreeze sends them a fresh
 *     snapshot (saying "frozen", or no longer), then what they missed;
 *   - an admin's live views follow the live board and are told the state
 *     (a rowless delta or snapshot with "frozen" and "shown").
 */
#include "fanout/gw_fanout_int.h"

void gw_frozen_recheck(struct gw_board *b)
{
    b->freeze.version = -1; /* whatever a read says next is news */
    for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v)) {
        if (v->r.spec.kind == RC_VIEW_FEED)
            gw_feed_catch_up(v); /* its log read tells the state (a no-op while one is out) */
        else
            gw_board_view_set_dirty(v);
    }
    gw_board_wake(b);
}

void gw_frozen_apply(struct gw_fanout *f, struct gw_board *b)
{
    if (!b->freeze_due)
        return;
    b->freeze_due = 0;
    struct rc_freeze was = b->freeze_was;
    b->freeze_was = b->freeze;
    /* a reveal inside the same freeze moves the audience's feeds on by
     * events; anything else starts them from a snapshot of the new state */
    int step = was.frozen && b->freeze.frozen && was.seq == b->freeze.seq;
    gw_mirror_board_want(b); /* audience views leave or rejoin the mirror */
    if (b->mirror_on) {
        b->changed = 1; /* live views (and a thawed audience) are cut again */
        b->refresh_all = 1;
        if (!b->mirror.exact)
            b->stale = 1;
    }
    for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v)) {
        if (v->r.spec.kind != RC_VIEW_FEED) {
            if (!gw_board_view_uses_mirror(v))
                gw_board_view_set_dirty(v);
        } else if (!v->r.spec.live && step) {
            gw_feed_advance(f, v);
        } else {
            gw_feed_resnapshot(v);
        }
    }
    gw_board_wake(b);
}
