/* gw_mirror.c - a board's mirror of its top rows (core/rc_mirror): change
 * events are applied to it as they arrive, it is reloaded in one consistent
 * read when it cannot follow (a gap, a change made outside the write script),
 * and top-N and page views are cut from it on the tick instead of each
 * reading Redis.
 *
 * A sharded board (docs/sharded.md) has one mirror of the merged order,
 * versioned by each shard's seq. Its shards' events are applied as they
 * arrive, before their ranks are read (the mirror needs composites only).
 * Its reload is the merged read, whose window says each shard's seq. Events
 * that raced that read cannot be taken from the ring afterwards, as an
 * unsharded board's are (a sharded board's ring gets events only once their
 * ranks are back, possibly long after the read): every shard event that
 * arrives while the reload is out is kept (struct gw_raced) and applied
 * after the load, each judged by its own shard's seq (those the read
 * includes are old). Events that arrive while no reload is out and the
 * mirror is not exact are not needed: the reload, sent later, reads them.
 * A list that would grow past RACED_MAX marks the mirror stale again. */
#include "fanout/gw_fanout_int.h"

#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "store/gw_join.h"
#include "rc_places.h"

#define RACED_FIRST 16  /* events the list holds when the first one comes */
#define RACED_MAX 4096  /* events kept while one reload is out; past it, read again */

/* A sharded board's shard events that came while its reload was out, in
 * arrival order (each shard's in its seq order). */
struct gw_raced {
    size_t n, cap;
    int lost;               /* some did not fit: the reload cannot be followed */
    struct rc_event ev[];
};

/* Frees what a sharded board kept while a reload was out. */
static void raced_free(struct gw_board *b)
{
    free(b->raced);
    b->raced = NULL;
}

/* Keeps ev for after the reload in flight. */
static void raced_push(struct gw_board *b, const struct rc_event *ev)
{
    struct gw_raced *r = b->raced;
    if (r && r->lost)
        return;
    if (!r || r->n == r->cap) {
        size_t cap = r ? r->cap * 2 : RACED_FIRST;
        struct gw_raced *g = cap <= RACED_MAX ? realloc(r, sizeof *g + cap * sizeof g->ev[0]) : NULL;
        if (!g) {
            if (r) {
                r->lost = 1;
                r->n = 0;
            } else if ((r = calloc(1, sizeof *r)) != NULL) {
                r->lost = 1;
                b->raced = r;
            } else {
                b->stale = 1; /* the reload's answer is dropped (on_board_reload) */
            }
            return;
        }
        if (!r) {
            g->n = 0;
            g->lost = 0;
        }
        g->cap = cap;
        b->raced = r = g;
    }
    r->ev[r->n++] = *ev;
}

/* Sizes the mirror for the board's views; turns it off when none needs it.
 * The index knows the largest end (O(log)); while the board is frozen
 * its audience's views leave the mirror, and every view is looked at. */
void gw_mirror_board_want(struct gw_board *b)
{
    size_t want = 0;
    int on = 0;
    if (b->freeze_was.frozen || b->vix_lost) {
        for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v)) {
            if (!gw_board_view_uses_mirror(v))
                continue;
            on = 1;
            /* shared places look one row past the window (a tie across its end) */
            size_t end = (size_t)v->r.spec.offset + v->r.spec.limit + (v->r.spec.places ? 1 : 0);
            if (end > want)
                want = end;
        }
    } else {
        on = b->vix.count > 0;
        want = rc_vindex_max_end(&b->vix); /* (filed one row past with places) */
    }
    if (!on && b->mirror_on) {
        rc_mirror_free(&b->mirror); /* (keeps its order and shards) */
        /* events stop reaching the mirror now: a reload still out cannot
         * be followed by them (on_board_reload) */
        b->load_void = b->loading;
    }
    b->mirror_on = on;
    if (on && rc_mirror_set_want(&b->mirror, want))
        b->stale = 1;
    if (on)
        gw_board_wake(b); /* the tick reloads or refreshes as needed */
}

/* ---- profiles: the one join of store/gw_join ---------------------------- */

static void on_board_profiles(struct gw_window *w, void *privdata);

/* Starts fetching (store/gw_join) the profiles that the cache lacks of b's
 * mirrored rows at positions [lo, end) (within want); the views are then cut
 * with gw_join_attach. Returns 1 when the work continues in cb(privdata)
 * (which may already have run), else 0: nothing is missing, or memory is
 * short (rows go out with what the cache holds). The look-up first keeps a
 * refresh whose profiles are all cached free of copies. */
static int profile_join_fetch(struct gw_board *b, size_t lo, size_t end, gw_join_cb *cb, void *privdata)
{
    struct gw_profiles *profiles = b->f->app->profiles;
    size_t n = 0, stop = b->mirror.len < b->mirror.want ? b->mirror.len : b->mirror.want;
    if (end < stop)
        stop = end;
    for (size_t i = lo; i < stop; i++)
        if (!gw_profile_get(profiles, b->mirror.rows[i].member))
            n++;
    if (!n)
        return 0;
    struct gw_window *w = calloc(1, sizeof *w);
    if (!w || !(w->rows = calloc(n, sizeof *w->rows))) {
        free(w);
        return 0;
    }
    /* copies: the mirror may change before the fetch answers */
    for (size_t i = lo; w->n < n && i < stop; i++) {
        const char *m = b->mirror.rows[i].member;
        if (gw_profile_get(profiles, m))
            continue;
        if (!(w->rows[w->n].member = strdup(m))) {
            gw_window_free(w);
            return 0;
        }
        w->n++;
    }
    b->refs++;
    gw_join_profiles(profiles, w, cb, privdata);
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

/* The window of count rows from position offset for view v, cut from the
 * mirror (profiles from the cache, NULL where not cached), or NULL when the
 * mirror does not cover it (with shared places: it and the row after it). */
static struct gw_window *mirror_window_at(const struct gw_board *b, const struct gw_view *v, size_t offset,
                                          size_t count)
{
    const struct rc_mirror_row *rows;
    size_t n;
    if (rc_mirror_window(&b->mirror, offset, count, &rows, &n) != 0)
        return NULL;
    struct gw_window *w = calloc(1, sizeof *w);
    if (!w || !(w->rows = calloc(n ? n : 1, sizeof *w->rows))) {
        free(w);
        return NULL;
    }
    w->seq = b->mirror.seq;
    w->total = b->mirror.total;
    if (b->mirror.shards > 1 && b->mirror.shard_seq &&
        (w->shard_seq = malloc(b->mirror.shards * sizeof *w->shard_seq)) != NULL) {
        /* (out of memory: no vector, and prev_rank falls back to a snapshot) */
        memcpy(w->shard_seq, b->mirror.shard_seq, b->mirror.shards * sizeof *w->shard_seq);
        w->nshards = b->mirror.shards;
    }
    /* the mirror is the live board: an audience view is cut from it only
     * while its views follow an unfrozen board; a live view says the freeze */
    w->freeze = v->r.spec.live ? b->freeze : b->freeze_was;
    memcpy(w->epoch, b->mirror_epoch, sizeof w->epoch);
    w->first_rank = (int64_t)offset + 1;
    if (gw_window_set_mirror_rows(b->decl, w, rows, n) != 0 || (v->r.spec.places && mirror_places(b, v, w) != 0)) {
        gw_window_free(w);
        return NULL;
    }
    gw_join_attach(b->f->app->profiles, w);
    return w;
}

static struct gw_window *mirror_window(const struct gw_board *b, const struct gw_view *v)
{
    return mirror_window_at(b, v, v->r.spec.offset, v->r.spec.limit);
}

void gw_mirror_view_read_or_cut(struct gw_view *v)
{
    if (v->dead || v->reading || !gw_mirror_around(v))
        gw_view_read(v); /* (a no-op for a view that reads already, or is no read view) */
}

int gw_mirror_around(struct gw_view *v)
{
    struct gw_board *b = v->board;
    const struct rc_view *s = &v->r.spec;
    if (!b || s->kind != RC_VIEW_AROUND || s->places || !b->mirror_on || b->loading || b->stale ||
        b->freeze_due || rc_ksmatch_pending(&b->ks) || b->freeze_was.frozen || b->mirror.shards > 1 ||
        rc_mirror_needs_reload(&b->mirror))
        return 0;
    size_t p = rc_mirror_rank_of(&b->mirror, s->around); /* (1-based; 0: not held) */
    if (!p)
        return 0; /* not in the mirror (or not on the board): Redis knows */
    /* lua/read.lua: ranks p - R .. p + R, clipped at rank 1 */
    size_t first = p - 1 > s->radius ? p - 1 - s->radius : 0;
    size_t count = p - first + s->radius;
    struct gw_window *w = mirror_window_at(b, v, first, count);
    if (!w)
        return 0; /* reaches past the rows held while the board has more */
    for (size_t i = 0; i < w->n; i++) {
        if (!w->rows[i].profile) {
            gw_window_free(w); /* a profile to fetch: the read joins it */
            return 0;
        }
    }
    b->f->app->metrics.around_cuts++;
    v->dirty = 0;
    v->read_break = b->moves_break;
    gw_reads_track(v, w); /* (before: the update may free w) */
    gw_view_update(b->f, v, gw_members_as_base(v, w)); /* (w itself: not a member list) */
    return 1;
}

static void on_board_profiles(struct gw_window *w, void *privdata)
{
    struct gw_board *b = privdata;
    gw_window_free(w); /* only carried the members; the views attach their own */
    b->fetching = 0;
    if (!b->dead)
        gw_mirror_board_refresh(b, 0);
    gw_board_unref(b);
}

/* The views a refresh cuts, gathered before any is cut (sending must not
 * meet the index half walked). */
struct cut_list {
    struct gw_view **v;
    size_t n, cap;
};

static void gather(struct rc_vindex_item *it, void *arg)
{
    struct cut_list *l = arg;
    if (l->n < l->cap)
        l->v[l->n++] = GW_FO_CONTAINER(it, struct gw_view, ix);
}

/* Cuts v's window from the mirror and sends what changed (a mirror view
 * with viewers; the caller counted it as looked at). */
static void cut_view(struct gw_board *b, struct gw_view *v)
{
    v->cut_due = 0;
    struct gw_window *w = mirror_window(b, v);
    if (w)
        gw_view_update(b->f, v, w);
    else
        gw_board_set_stale(b);
}

void gw_mirror_board_refresh(struct gw_board *b, int may_fetch)
{
    if (!b->mirror_on || b->loading || b->fetching)
        return;
    if (rc_mirror_needs_reload(&b->mirror)) {
        gw_board_set_stale(b);
        return;
    }
    if (b->freeze_due) {
        /* a read just told of a change of the freeze: the tick moves the
         * views to it first (an audience view may leave the mirror) */
        b->changed = 1;
        gw_board_wake(b);
        return;
    }
    size_t lo, end;
    int t = rc_mirror_touched(&b->mirror, &lo, &end);
    if (b->refresh_all || t == RC_MIRROR_TOUCHED_ALL) {
        lo = 0;
        end = SIZE_MAX;
    } else if (t == RC_MIRROR_UNTOUCHED) {
        b->changed = 0; /* no row moved and total is the same: no window changed */
        return;
    }
    if (may_fetch && b->dead)
        return;
    if (may_fetch) {
        b->fetching = 1; /* (before: the answer may come at once) */
        if (profile_join_fetch(b, lo, end, on_board_profiles, b))
            return; /* continues in on_board_profiles */
        b->fetching = 0;
    }
    b->changed = 0;
    b->refresh_all = 0;
    rc_mirror_untouch(&b->mirror);
    struct cut_list l = {0};
    uint64_t *visited = &b->f->app->metrics.views_visited[GW_METRICS_VISIT_TICK];
    if (b->vix_lost) {
        /* (out of memory for the index once: every view, as before it) */
        for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v)) {
            ++*visited;
            if (gw_board_view_uses_mirror(v) && v->r.viewers)
                cut_view(b, v);
        }
        return;
    }
    /* the mirror views whose ranks the changes touched, and no other */
    l.cap = b->vix.count;
    if (!(l.v = malloc((l.cap ? l.cap : 1) * sizeof *l.v))) {
        b->refresh_all = 1; /* out of memory: every view, next tick */
        b->changed = 1;
        gw_board_wake(b);
        return;
    }
    rc_vindex_each(&b->vix, lo, end - 1, gather, &l);
    for (size_t i = 0; i < l.n; i++)
        l.v[i]->refs++; /* alive while the others are cut */
    for (size_t i = 0; i < l.n; i++) {
        struct gw_view *v = l.v[i];
        ++*visited;
        /* (a new view whose viewers all wait for their turn: cut then, gw_first.c) */
        if (!v->dead && v->board == b && gw_board_view_uses_mirror(v) && v->r.viewers &&
            (v->last || v->first_queued < v->r.viewers))
            cut_view(b, v);
    }
    for (size_t i = 0; i < l.n; i++)
        gw_board_view_unref(l.v[i]);
    free(l.v);
}

/* A new view's own profile fetch: the view and the board it was cut for
 * (each holding a reference). */
struct one_fetch {
    struct gw_view *v;
    struct gw_board *b;
};

static void on_view_profiles(struct gw_window *w, void *privdata)
{
    struct one_fetch *q = privdata;
    struct gw_view *v = q->v;
    struct gw_board *b = q->b;
    gw_window_free(w);
    free(q);
    if (!v->dead && v->board == b && v->cut_due && gw_board_view_uses_mirror(v)) {
        if (!b->mirror_on || b->loading || b->fetching || b->freeze_due || rc_mirror_needs_reload(&b->mirror)) {
            gw_board_view_due(v); /* the tick cuts it once the mirror serves */
        } else if (gw_board_first_may_cut(b->f, v)) {
            cut_view(b, v);
        } else {
            /* this turn's share is used (answers of many fetches come in
             * one read): its viewers' turn cuts it, without fetching again */
            v->cut_due = 0;
            v->cut_fetched = 1;
        }
    }
    gw_board_view_unref(v);
    gw_board_unref(b); /* (taken by profile_join_fetch) */
}

void gw_mirror_cut_one(struct gw_board *b, struct gw_view *v)
{
    v->cut_due = 1;
    if (!b->mirror_on || b->loading || b->fetching || b->freeze_due || rc_mirror_needs_reload(&b->mirror)) {
        if (b->mirror_on && !b->loading && rc_mirror_needs_reload(&b->mirror))
            gw_board_set_stale(b);
        gw_board_view_due(v); /* a reload or fetch is out, or a freeze to apply: the tick cuts it after */
        return;
    }
    if (v->cut_fetched) {
        v->cut_fetched = 0; /* (its profiles were just fetched) */
        cut_view(b, v);
        return;
    }
    size_t lo = (size_t)v->r.spec.offset;
    size_t end = lo + v->r.spec.limit + (v->r.spec.places ? 1 : 0);
    struct one_fetch *q = malloc(sizeof *q);
    if (q) {
        *q = (struct one_fetch){v, b};
        v->refs++;
        if (profile_join_fetch(b, lo, end, on_view_profiles, q))
            return; /* continues in on_view_profiles */
        v->refs--;
        free(q);
    }
    cut_view(b, v);
}

/* Applies one change event to the mirror (a sharded board's: of shard
 * ev->shard). */
void gw_mirror_apply(struct gw_board *b, const struct rc_event *ev)
{
    if (!ev->member[0]) { /* reset: the board is gone, read it again */
        gw_board_set_stale(b);
        return;
    }
    if (b->mirror.shards > 1) {
        /* A shard's history began (again): the board's epoch, a digest of
         * every shard's, is the read's to say. */
        if (ev->epoch[0]) {
            gw_board_set_stale(b);
            return;
        }
        int r = rc_mirror_apply_shard(&b->mirror, ev->shard, ev->seq, ev->member, ev->has_new, ev->c, ev->has_old,
                                      NULL);
        if (r == RC_MIRROR_APPLIED) {
            b->changed = 1;
            gw_board_wake(b);
        } else if (r != RC_MIRROR_OLD) {
            gw_board_set_stale(b);
        }
        return;
    }
    if (ev->epoch[0] && strcmp(ev->epoch, b->mirror_epoch) != 0) {
        /* A new history. One that began on a board without one goes on from
         * the empty board the mirror holds (when its seq follows); any other
         * started over: read it again. */
        if (b->mirror_epoch[0] || ev->seq != b->mirror.seq + 1) {
            gw_board_set_stale(b);
            return;
        }
        memcpy(b->mirror_epoch, ev->epoch, sizeof b->mirror_epoch);
    }
    int r = rc_mirror_apply(&b->mirror, ev->seq, ev->member, ev->has_new, ev->c, ev->has_old, NULL);
    if (r == RC_MIRROR_APPLIED) {
        b->changed = 1;
        gw_board_wake(b);
    } else if (r != RC_MIRROR_OLD) {
        gw_board_set_stale(b);
    }
}

void gw_mirror_shard_event(struct gw_board *b, const struct rc_event *ev)
{
    if (!b->mirror_on)
        return;
    if (b->loading)
        raced_push(b, ev);
    else if (b->mirror.exact)
        gw_mirror_apply(b, ev);
    /* (else the reload to come reads it) */
}

/* A sharded board's reload is back: loads the merged window w (its
 * shard_seq is the vector) and applies what raced it. Returns 0, or -1 when
 * the mirror could not be loaded or followed. */
static int load_sharded(struct gw_board *b, const struct gw_window *w, const struct rc_mirror_row *rows)
{
    struct gw_raced *r = b->raced;
    if (b->stale || (r && r->lost) || w->nshards != b->mirror.shards || !w->shard_seq ||
        rc_mirror_load_sharded(&b->mirror, w->shard_seq, w->total, rows, w->n) != 0)
        return -1;
    b->stale = 0;
    memcpy(b->mirror_epoch, w->epoch, sizeof b->mirror_epoch);
    /* each is judged by its shard's seq: those the read includes are old */
    for (size_t i = 0; r && i < r->n && b->mirror.exact && !b->stale; i++)
        gw_mirror_apply(b, &r->ev[i]);
    return b->stale || !b->mirror.exact ? -1 : 0;
}

/* An unsharded board's reload is back: loads w and applies the events that
 * raced the read (the ring holds them, in seq order). Returns 0 or -1. */
static int load_plain(struct gw_board *b, const struct gw_window *w, const struct rc_mirror_row *rows)
{
    if (rc_mirror_load(&b->mirror, w->seq, w->total, rows, w->n) != 0)
        return -1;
    b->stale = 0;
    if (strcmp(b->mirror_epoch, w->epoch) != 0)
        b->refresh_all = 1; /* (another history: every view learns it, whatever the load touched) */
    memcpy(b->mirror_epoch, w->epoch, sizeof b->mirror_epoch);
    /* (a read from before the ring's new history: the ring is kept, and its
     * first event goes on from the rows read, or asks for a read again) */
    gw_board_follow_read(b, w->epoch, w->seq);
    for (size_t i = 0; i < b->ring_len; i++) {
        const struct rc_event *ev = gw_board_ring_at(b, i);
        if (ev->seq > b->mirror.seq)
            gw_mirror_apply(b, ev);
    }
    return 0;
}

static void on_board_reload(int code, struct gw_window *w, void *privdata)
{
    struct gw_board *b = privdata;
    b->loading = 0;
    int was_off = b->load_void;
    b->load_void = 0;
    if (!b->dead && code == 0 && was_off) {
        /* The mirror went off while this read was out (a freeze took its
         * last view), and the events of that time reached neither it nor a
         * sharded board's raced list: loaded, it would look exact while
         * missing them, and at the unfreeze the audience would be shown the
         * board as of the freeze as if it were live. Read again if it is
         * on again; else its next start reads (a freed mirror needs one). */
        gw_board_heard_freeze(b, &w->freeze);
        if (b->mirror_on)
            gw_board_set_stale(b);
    } else if (!b->dead && code == 0) {
        gw_board_heard_freeze(b, &w->freeze);
        struct rc_mirror_row *rows = malloc((w->n ? w->n : 1) * sizeof *rows);
        for (size_t i = 0; rows && i < w->n; i++)
            rows[i] = (struct rc_mirror_row){w->rows[i].member, w->rows[i].c};
        if (rows && (b->mirror.shards > 1 ? load_sharded(b, w, rows) : load_plain(b, w, rows)) == 0) {
            b->changed = 1;
            gw_board_wake(b);
            gw_mirror_board_refresh(b, 1);
        } else {
            gw_board_set_stale(b);
        }
        free(rows);
    } else if (!b->dead) {
        gw_board_set_stale(b); /* retried on the next tick (or when Redis is back) */
        for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v))
            if (gw_board_view_uses_mirror(v))
                gw_view_read_fail_pending(v, code);
    }
    raced_free(b); /* (a sharded board's: applied, or read again) */
    gw_window_free(w);
    gw_board_unref(b);
}

/* Reads the board's top rows in one consistent step and reloads the mirror. */
void gw_mirror_board_reload(struct gw_board *b)
{
    if (b->loading || b->dead || !b->mirror_on)
        return;
    struct gw_read_spec spec = {.kind = GW_READ_RANGE, .first = 0, .count = (int64_t)b->mirror.keep, .live = 1};
    rc_ksmatch_clear(&b->ks); /* whatever they announced, this read reflects */
    if (b->mirror.shards > 1) {
        /* set again by whatever makes this read not enough (load_sharded) */
        b->stale = 0;
        raced_free(b);
    }
    b->loading = 1;
    b->refs++;
    int rc = gw_read(&b->f->app->store, b->decl, b->r.name, b->r.period, &spec, on_board_reload, b);
    if (rc) {
        b->loading = 0;
        b->refs--;
        gw_board_set_stale(b);
        for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v))
            if (gw_board_view_uses_mirror(v))
                gw_view_read_fail_pending(v, rc);
    }
}
