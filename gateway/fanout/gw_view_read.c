/* gw_view_read.c - reads of the views the mirror does not cover (around
 * views, deep pages, member lists and rosters) from Redis (lua/read.lua),
 * and what their answers do: the window goes to gw_view.c's update, a
 * failure to the pending subscribers. */
#include "fanout/gw_fanout_int.h"

#include <stdlib.h>

#include "gw_app.h"
#include "base/gw_fault.h"
#include "net/gw_conn.h"
#include "rc_members.h"
#include "rc_proto.h"

void gw_view_read_fail_pending(struct gw_view *v, int code)
{
    for (struct gw_sub *s = v->subs; s; s = s->vnext) {
        if (!s->pending || !s->id_json || s->replay)
            continue;
        /* Stays subscribed: it gets its snapshot once Redis is back. */
        gw_conn_reply(s->conn, rc_proto_encode_error(s->id_json, code, "Redis is unreachable; the snapshot follows "
                                                                 "when it is back"));
        free(s->id_json);
        s->id_json = NULL;
    }
}

static void view_read_done(void *w, void *v, int code);

static void on_view_read(int code, struct gw_window *w, void *privdata)
{
    struct gw_view *v = privdata;
    long late = gw_fault_slow_view_read_ms(v->f->app->conf->test_clock);
    if (late <= 0 || gw_fault_later(v->f->app->loop, late, view_read_done, w, v, code) != 0)
        view_read_done(w, v, code);
}

static void view_read_done(void *wp, void *vp, int code)
{
    struct gw_window *w = wp;
    struct gw_view *v = vp;
    if (code == 0 && gw_fault_fail_view_read(v->f->app->conf->test_clock)) {
        gw_window_free(w); /* (a test's failed read) */
        w = NULL;
        code = RC_E_UNAVAILABLE;
    }
    v->reading = 0;
    if (!v->dead && code == 0)
        gw_board_heard_freeze(v->board, &w->freeze);
    if (v->dead) {
        gw_window_free(w);
    } else if (code == 0 && (w->freeze.version < v->board->freeze.version || v->board->freeze_due)) {
        /* read before a change of the freeze this gateway has heard of, or
         * one its views are not moved to yet: read again after it */
        gw_window_free(w);
        gw_board_view_set_dirty(v);
    } else if (code == 0 && v->r.spec.kind == RC_VIEW_TEAM && v->read_roster_gen != v->roster_gen) {
        /* read with the team's old members (the membership changed while
         * it was out): shown, it would be the fresh snapshot the change
         * asks for with the old rows; read the new list instead */
        gw_window_free(w);
        gw_board_view_set_dirty(v);
    } else if (code == 0) {
        gw_reads_track(v, w); /* (before: the update may free w) */
        gw_view_update(v->f, v, gw_members_as_base(v, w));
    } else {
        gw_reads_failed(v);
        gw_view_read_fail_pending(v, code);
        /* A viewer still owed its snapshot waits for a read that answers:
         * the tick tries again (a shown window waits for the board's next
         * event instead: gw_reads_failed). Nothing else would on a quiet
         * board whose channel lives on a node that stayed up. */
        for (const struct gw_sub *s = v->subs; s; s = s->vnext)
            if (s->pending) {
                gw_board_view_set_dirty(v);
                break;
            }
    }
    gw_board_view_unref(v);
}

/* Starts a consistent read of v's window. */
void gw_view_read(struct gw_view *v)
{
    struct gw_board *b = v->board;
    struct gw_app *app = v->f->app;
    if (v->dead || v->reading || v->r.spec.kind == RC_VIEW_FEED || gw_board_view_uses_mirror(v))
        return;
    struct gw_read_spec spec = {.places = v->r.spec.places, .live = v->r.spec.live};
    if (v->r.spec.kind == RC_VIEW_AROUND) {
        spec.kind = GW_READ_AROUND;
        spec.member = v->r.spec.around;
        spec.radius = v->r.spec.radius;
    } else if (v->r.spec.kind == RC_VIEW_MEMBERS) {
        spec.kind = GW_READ_MEMBERS;
        spec.members = v->r.spec.members;
        spec.nmembers = v->r.spec.nmembers;
        spec.members_len = v->r.spec.members_len;
    } else if (v->r.spec.kind == RC_VIEW_TEAM) {
        if (!v->roster_ok)
            return; /* (its list comes with the board's membership: gw_rowteam_load_roster_view) */
        spec.kind = v->nroster ? GW_READ_MEMBERS : GW_READ_RANGE; /* an empty team: the head alone */
        spec.members = v->roster;
        v->read_roster_gen = v->roster_gen;
        spec.nmembers = v->nroster;
        spec.members_len = v->roster_len;
        spec.best = RC_MEMBERS_MAX; /* a team of any size: its best 200 (lua/read.lua, roster) */
        spec.first = 1;
        spec.count = 0;
    } else {
        spec.kind = GW_READ_RANGE;
        spec.first = v->r.spec.offset;
        spec.count = v->r.spec.limit;
    }
    v->dirty = 0;
    v->mmoved = 0; /* (a member list: the read's window is newer than what the events built) */
    v->refs++;
    v->reading = 1;
    app->metrics.view_reads[v->r.spec.kind >= RC_VIEW_MEMBERS ? 2 : v->r.spec.kind == RC_VIEW_AROUND ? 0 : 1]++;
    v->read_break = b->moves_break;
    int rc = gw_read(&app->store, b->decl, b->r.name, b->r.period, &spec, on_view_read, v);
    if (rc) {
        v->reading = 0;
        gw_board_view_set_dirty(v); /* retried when Redis is back */
        v->refs--;
        gw_view_read_fail_pending(v, rc);
    }
}
