/* gw_mirror.c - a board's mirror of its top rows (core/rc_mirror): change
 * events are applied to it as they arrive, it is reloaded in one consistent
 * read when it cannot follow (a gap, a change made outside the write script),
 * and top-N and page views are cut from it on the tick instead of each
 * reading Redis. */
#include "fanout/gw_fanout_int.h"

#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "store/gw_join.h"
#include "rc_places.h"

/* Sizes the mirror for the board's views; turns it off when none needs it. */
void gw_fo_board_want(struct gw_board *b)
{
    size_t want = 0;
    int on = 0;
    for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v)) {
        if (!gw_fo_view_uses_mirror(v))
            continue;
        on = 1;
        /* shared places look one row past the window (a tie across its end) */
        size_t end = (size_t)v->r.spec.offset + v->r.spec.limit + (v->r.spec.places ? 1 : 0);
        if (end > want)
            want = end;
    }
    if (!on && b->mirror_on) {
        rc_mirror_free(&b->mirror);
        rc_mirror_init(&b->mirror, b->decl->layout.order);
    }
    b->mirror_on = on;
    if (on && rc_mirror_set_want(&b->mirror, want))
        b->stale = 1;
    if (on)
        gw_fo_board_wake(b); /* the tick reloads or refreshes as needed */
}

/* ---- profiles: the one join of store/gw_join ---------------------------- */

static void on_board_profiles(struct gw_window *w, void *privdata);

/* Starts fetching (store/gw_join) the profiles of b's mirrored rows that the
 * cache lacks; the views are then cut with gw_profiles_attach. Returns 1 when
 * the refresh continues in on_board_profiles (which may already have run),
 * else 0: nothing is missing, or memory is short (rows go out with what the
 * cache holds). The look-up first keeps a refresh whose profiles are all
 * cached free of copies. */
static int profile_join_fetch(struct gw_board *b)
{
    struct gw_profiles *profiles = b->f->app->profiles;
    size_t n = 0;
    for (size_t i = 0; i < b->mirror.len && i < b->mirror.want; i++)
        if (!gw_profiles_get(profiles, b->mirror.rows[i].member))
            n++;
    if (!n)
        return 0;
    struct gw_window *w = calloc(1, sizeof *w);
    if (!w || !(w->rows = calloc(n, sizeof *w->rows))) {
        free(w);
        return 0;
    }
    /* copies: the mirror may change before the fetch answers */
    for (size_t i = 0; w->n < n && i < b->mirror.len && i < b->mirror.want; i++) {
        const char *m = b->mirror.rows[i].member;
        if (gw_profiles_get(profiles, m))
            continue;
        if (!(w->rows[w->n].member = strdup(m))) {
            gw_window_free(w);
            return 0;
        }
        w->n++;
    }
    b->fetching = 1;
    b->refs++;
    gw_profiles_join(profiles, w, on_board_profiles, b);
    return 1;
}

/* ---- cutting views from the mirror -------------------------------------- */

/* Shared places of window w of view v, from the mirror (core/rc_places). */
static int mirror_places(const struct gw_board *b, const struct gw_view *v, struct gw_window *w)
{
    int64_t *place = malloc((w->n ? w->n : 1) * sizeof *place);
    unsigned char *tied = malloc(w->n ? w->n : 1);
    int rc = place && tied ? rc_places_mirror(&b->mirror, rc_places_unit(b->decl), v->r.spec.offset, w->n, place,
                                              tied)
                           : RC_E_INTERNAL;
    for (size_t i = 0; rc == 0 && i < w->n; i++) {
        w->rows[i].place = place[i];
        w->rows[i].tied = tied[i];
    }
    free(place);
    free(tied);
    return rc;
}

/* The window of view v cut from the mirror (profiles from the cache, NULL
 * where not cached), or NULL when the mirror does not cover it (with shared
 * places: it and the row after it). */
static struct gw_window *mirror_window(const struct gw_board *b, const struct gw_view *v)
{
    const struct rc_mirror_row *rows;
    size_t n;
    if (rc_mirror_window(&b->mirror, v->r.spec.offset, v->r.spec.limit, &rows, &n) != 0)
        return NULL;
    struct gw_window *w = calloc(1, sizeof *w);
    if (!w || !(w->rows = calloc(n ? n : 1, sizeof *w->rows))) {
        free(w);
        return NULL;
    }
    w->seq = b->mirror.seq;
    w->total = b->mirror.total;
    /* the mirror is the live board: an audience view is cut from it only
     * while its views follow an unfrozen board; a live view says the freeze */
    w->freeze = v->r.spec.live ? b->freeze : b->freeze_was;
    memcpy(w->epoch, b->mirror_epoch, sizeof w->epoch);
    w->first_rank = (int64_t)v->r.spec.offset + 1;
    for (size_t i = 0; i < n; i++) {
        struct gw_row *r = &w->rows[i];
        if (!(r->member = strdup(rows[i].member))) {
            gw_window_free(w);
            return NULL;
        }
        w->n++;
        r->c = rows[i].c;
        gw_decode_score(b->decl, r->c, &r->score, r->fields, &r->nfields);
    }
    if (v->r.spec.places && mirror_places(b, v, w) != 0) {
        gw_window_free(w);
        return NULL;
    }
    gw_profiles_attach(b->f->app->profiles, w);
    return w;
}

static void on_board_profiles(struct gw_window *w, void *privdata)
{
    struct gw_board *b = privdata;
    gw_window_free(w); /* only carried the members; the views attach their own */
    b->fetching = 0;
    if (!b->dead)
        gw_fo_board_refresh(b, 0);
    gw_fo_board_unref(b);
}

/* Cuts every mirror view's window from the mirror and sends what changed.
 * Profiles missing from the cache are fetched first (once). */
void gw_fo_board_refresh(struct gw_board *b, int may_fetch)
{
    if (!b->mirror_on || b->loading || b->fetching)
        return;
    if (rc_mirror_needs_reload(&b->mirror)) {
        gw_fo_board_set_stale(b);
        return;
    }
    if (b->freeze_due) {
        /* a read just told of a change of the freeze: the tick moves the
         * views to it first (an audience view may leave the mirror) */
        b->changed = 1;
        gw_fo_board_wake(b);
        return;
    }
    if (may_fetch && (b->dead || profile_join_fetch(b)))
        return; /* continues in on_board_profiles */
    b->changed = 0;
    for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v)) {
        if (!gw_fo_view_uses_mirror(v) || !v->r.viewers)
            continue;
        struct gw_window *w = mirror_window(b, v);
        if (w)
            gw_fo_view_update(b->f, v, w);
        else
            gw_fo_board_set_stale(b);
    }
}

/* Applies one change event to the mirror. */
void gw_fo_mirror_apply(struct gw_board *b, const struct rc_event *ev)
{
    if (!ev->member[0]) { /* reset: the board is gone, read it again */
        gw_fo_board_set_stale(b);
        return;
    }
    if (ev->epoch[0] && strcmp(ev->epoch, b->mirror_epoch) != 0) {
        /* A new history. One that began on a board without one goes on from
         * the empty board the mirror holds (when its seq follows); any other
         * started over: read it again. */
        if (b->mirror_epoch[0] || ev->seq != b->mirror.seq + 1) {
            gw_fo_board_set_stale(b);
            return;
        }
        memcpy(b->mirror_epoch, ev->epoch, sizeof b->mirror_epoch);
    }
    int r = rc_mirror_apply(&b->mirror, ev->seq, ev->member, ev->has_new, ev->c, ev->has_old, NULL);
    if (r == RC_MIRROR_APPLIED) {
        b->changed = 1;
        gw_fo_board_wake(b);
    } else if (r != RC_MIRROR_OLD) {
        gw_fo_board_set_stale(b);
    }
}

static void on_board_reload(int code, struct gw_window *w, void *privdata)
{
    struct gw_board *b = privdata;
    b->loading = 0;
    if (!b->dead && code == 0)
        gw_fo_board_heard_freeze(b, &w->freeze);
    if (!b->dead && code == 0) {
        struct rc_mirror_row *rows = malloc((w->n ? w->n : 1) * sizeof *rows);
        for (size_t i = 0; rows && i < w->n; i++)
            rows[i] = (struct rc_mirror_row){w->rows[i].member, w->rows[i].c};
        if (rows && rc_mirror_load(&b->mirror, w->seq, w->total, rows, w->n) == 0) {
            b->stale = 0;
            memcpy(b->mirror_epoch, w->epoch, sizeof b->mirror_epoch);
            gw_fo_board_follow_epoch(b, w->epoch);
            /* events that raced the read: the ring holds them, in seq order */
            for (size_t i = 0; i < b->ring_len; i++) {
                const struct rc_event *ev = gw_fo_ring_at(b, i);
                if (ev->seq > b->mirror.seq)
                    gw_fo_mirror_apply(b, ev);
            }
            b->changed = 1;
            gw_fo_board_wake(b);
            gw_fo_board_refresh(b, 1);
        } else {
            gw_fo_board_set_stale(b);
        }
        free(rows);
    } else if (!b->dead) {
        gw_fo_board_set_stale(b); /* retried on the next tick (or when Redis is back) */
        for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v))
            if (gw_fo_view_uses_mirror(v))
                gw_fo_fail_pending(v, code);
    }
    gw_window_free(w);
    gw_fo_board_unref(b);
}

/* Reads the board's top rows in one consistent step and reloads the mirror. */
void gw_fo_board_reload(struct gw_board *b)
{
    if (b->loading || b->dead || !b->mirror_on)
        return;
    struct gw_read_spec spec = {.kind = GW_READ_RANGE, .first = 0, .count = (int64_t)b->mirror.keep, .live = 1};
    b->ks_pending = 0; /* whatever they announced, this read reflects */
    b->loading = 1;
    b->refs++;
    int rc = gw_read(&b->f->app->store, b->decl, b->r.name, b->r.period, &spec, on_board_reload, b);
    if (rc) {
        b->loading = 0;
        b->refs--;
        gw_fo_board_set_stale(b);
        for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v))
            if (gw_fo_view_uses_mirror(v))
                gw_fo_fail_pending(v, rc);
    }
}
