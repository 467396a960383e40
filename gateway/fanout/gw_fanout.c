/* gw_fanout.c - boards, views, subscriptions and the tick (see gw_fanout.h).
 *
 * Ownership: the fan-out owns boards; a board owns its views; a view owns its
 * last window and its list of subscriptions; a subscription is owned by its
 * view and listed in its connection too (it holds a reference on the
 * connection). A Redis read in flight holds a reference on its view, so a view
 * that lost its last viewer is freed only when its reads are back.
 *
 * Cost. Anyone may open boards (every match:N of a template is one), so what
 * a board costs is bounded and paid only for what it uses: live boards are
 * at most max_boards (one more is answered rate_limited); a board with no
 * events holds no event ring (it grows with the events, up to RING_EVENTS);
 * boards and views are found through hash tables keyed with a secret, and
 * lists are doubly linked, so opening, closing and each event cost O(1) per
 * board whatever the number of boards. The tick visits only boards with work
 * (the work list: a view dirty, the mirror stale or changed), and the
 * rollover walks the boards only when some period has ended.
 */
#include <uv.h>

#include "fanout/gw_fanout.h"

#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "net/gw_conn.h"
#include "base/gw_log.h"
#include "net/gw_msg.h"
#include "store/gw_read.h"
#include "rc_diff.h"
#include "rc_hmap.h"
#include "rc_mirror.h"

#define RING_EVENTS 256 /* recent change events kept per board (feed joins, mirror reloads) */
#define RING_FIRST 8    /* events a ring holds when the board's first event arrives */
#define TRIM_BOARDS 1024  /* boards freed before the free memory is handed back ... */
#define TRIM_EVERY_MS 1000 /* ... at most this often */
#define MIRROR_MAX_ROWS 1000
#define FOLLOW_NONE 0     /* an explicit period id: stays */
#define FOLLOW_CURRENT 1  /* "current" (or no period): moves to each new period */
#define FOLLOW_PREVIOUS 2 /* "previous": moves along one period behind */ /* top-N and pages ending within this are cut from the mirror */

struct gw_sub;

struct gw_view {
    struct rc_hnode node;        /* in f->views, by board, spec and follows */
    struct gw_view *next, *prev; /* in board->views */
    struct gw_fanout *f;
    struct gw_board *board;
    struct rc_view spec;
    int follows;                 /* FOLLOW_*: a view of "current" moves on at rollover */
    char id[16];                 /* the "sub" every viewer of this view is given */
    struct gw_sub *subs;
    unsigned nsubs;
    struct gw_window *last;      /* what the viewers hold (window views) */
    unsigned refs;               /* 1 while attached + 1 per read in flight */
    int reading;
    int dirty;                   /* changed since the last read started */
    int force_snapshot;          /* next read goes out as a snapshot (after an outage) */
    int dead;                    /* detached: free when refs drop to 0 */
};

struct gw_sub {
    struct gw_sub *vnext, *vprev; /* in view->subs */
    struct gw_sub *cnext;         /* in conn->subs */
    struct gw_view *view;
    struct gw_conn *conn;         /* a reference */
    char *id_json;                /* pending subscribe's id, echoed in its snapshot */
    int pending;                  /* no snapshot sent yet */
    int needs_snapshot;           /* its connection lagged: deltas wait for a fresh snapshot */
    int has_since;                /* feed: resume point */
    int64_t since;
    int64_t cursor;               /* feed: last seq delivered */
};

struct gw_board {
    struct rc_hnode node;        /* in f->boards, by name and period (live boards only) */
    struct gw_board *next, *prev; /* f->all: every live board */
    struct gw_board *wnext, *wprev; /* on a work list (f->work, or the tick's) */
    struct gw_board **wlist;     /* that list, or NULL */
    struct gw_fanout *f;
    const struct rc_board *decl;
    char name[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    struct gw_view *views;
    struct rc_event *ring;       /* recent events: NULL until the first, grows to RING_EVENTS */
    size_t ring_cap, ring_len, ring_head; /* oldest at ring_head */
    unsigned refs;               /* reloads and profile fetches in flight */
    int dead;                    /* no views left: free when refs drop to 0 */
    /* the mirror of the top rows, for top-N and page views */
    struct rc_mirror mirror;
    int mirror_on;               /* some view is served from the mirror */
    int loading;                 /* a reload is in flight */
    int stale;                   /* needs a reload (gap, change made outside the script) */
    int changed;                 /* mirror changed since its views were last refreshed */
    int fetching;                /* profiles for its views are being fetched */
    int ks_pending;              /* keyspace "zadd"s not (yet) matched by a script event */
};

struct gw_fanout {
    struct gw_app *app;
    struct rc_hash_key key;      /* random per process: names cannot be picked to collide */
    struct rc_hmap boards;       /* live boards by name and period; count <= max_boards */
    struct rc_hmap views;        /* attached views by board, spec and follows */
    struct gw_board *all;        /* live boards, for the rare walks over all of them */
    struct gw_board *work;       /* boards the next tick must look at */
    int64_t rollover_at;         /* the rollover walks the boards when the clock reaches this */
    int64_t rollover_from;       /* ... or goes back before this (test clock) */
    unsigned freed;              /* boards freed since memory was last handed back */
    int64_t trimmed_ms;          /* when it was */
    unsigned long next_view;
};

static void view_read(struct gw_view *v);
static void feed_catch_up(struct gw_view *v);
static int view_uses_mirror(const struct gw_view *v);
static void board_want(struct gw_board *b);
static void board_reload(struct gw_board *b);
static void board_refresh(struct gw_board *b, int may_fetch);

struct gw_fanout *gw_fanout_new(struct gw_app *app)
{
    struct gw_fanout *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->app = app;
    uint64_t seed[2] = {0, 0};
    if (uv_random(NULL, NULL, seed, sizeof seed, 0, NULL) != 0) {
        gw_log_warn("no random seed for the board table; using the clock");
        seed[0] = (uint64_t)gw_mono_us();
        seed[1] = (uint64_t)gw_now_ms(app);
    }
    f->key = (struct rc_hash_key){seed[0], seed[1]};
    rc_hmap_init(&f->boards, 0);
    rc_hmap_init(&f->views, 0);
    return f;
}

/* ---- lookup and lifetime ------------------------------------------------- */

struct board_key {
    const char *name, *period;
};

static uint64_t board_hash(const struct gw_fanout *f, const char *name, const char *period)
{
    char buf[RC_BOARD_MAX + 1 + RC_PERIOD_ID_MAX];
    int n = snprintf(buf, sizeof buf, "%s|%s", name, period);
    return rc_hash(&f->key, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static int board_eq(const struct rc_hnode *node, const void *key)
{
    const struct gw_board *b = (const struct gw_board *)node;
    const struct board_key *k = key;
    return strcmp(b->name, k->name) == 0 && strcmp(b->period, k->period) == 0;
}

static struct gw_board *board_find(struct gw_fanout *f, const char *name, const char *period)
{
    struct board_key k = {name, period};
    return (struct gw_board *)rc_hmap_find(&f->boards, board_hash(f, name, period), board_eq, &k);
}

/* Puts b on the work list of the next tick (once). */
static void board_wake(struct gw_board *b)
{
    struct gw_fanout *f = b->f;
    if (b->dead || b->wlist)
        return;
    b->wprev = NULL;
    b->wnext = f->work;
    if (f->work)
        f->work->wprev = b;
    f->work = b;
    b->wlist = &f->work;
}

static void work_remove(struct gw_board *b)
{
    if (!b->wlist)
        return;
    if (b->wprev)
        b->wprev->wnext = b->wnext;
    else
        *b->wlist = b->wnext;
    if (b->wnext)
        b->wnext->wprev = b->wprev;
    b->wnext = b->wprev = NULL;
    b->wlist = NULL;
}

static void view_set_dirty(struct gw_view *v)
{
    v->dirty = 1;
    if (v->board)
        board_wake(v->board);
}

static void board_set_stale(struct gw_board *b)
{
    b->stale = 1;
    board_wake(b);
}

/* The i-th oldest of the board's recent events (i < ring_len). */
static const struct rc_event *ring_at(const struct gw_board *b, size_t i)
{
    return &b->ring[(b->ring_head + i) % b->ring_cap];
}

/* The live board `name` in `period`, created (without views) when missing.
 * NULL when out of memory, or *over_cap = 1 when creating it would take the
 * live boards past max_boards (only when enforce_cap: a rollover moving
 * existing viewers on is not refused). */
static struct gw_board *board_get(struct gw_fanout *f, const struct rc_board *decl, const char *name,
                                  const char *period, int enforce_cap, int *over_cap)
{
    struct gw_board *b = board_find(f, name, period);
    if (b)
        return b;
    if (enforce_cap && f->boards.count >= f->app->conf->max_boards) {
        *over_cap = 1;
        return NULL;
    }
    b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->f = f;
    b->decl = decl;
    rc_mirror_init(&b->mirror, decl->layout.order);
    snprintf(b->name, sizeof b->name, "%s", name);
    snprintf(b->period, sizeof b->period, "%s", period);
    if (rc_hmap_insert(&f->boards, &b->node, board_hash(f, name, period)) != 0) {
        free(b);
        return NULL;
    }
    b->next = f->all;
    if (f->all)
        f->all->prev = b;
    f->all = b;
    if (decl->period.kind != RC_PERIOD_NONE) {
        /* its views may have to move on when its period ends */
        struct rc_period cur;
        if (rc_period_at(&decl->period, gw_now_ms(f->app), &cur) != 0)
            f->rollover_at = 0;
        else if (cur.end_ms < f->rollover_at)
            f->rollover_at = cur.end_ms;
    }
    return b;
}

/* A board without views leaves the table, the list and the work list at
 * once (O(1)); its memory goes when the last reload or fetch in flight is
 * back. */
static void board_maybe_free(struct gw_fanout *f, struct gw_board *b)
{
    if (b->views)
        return;
    if (!b->dead) {
        rc_hmap_remove(&f->boards, &b->node);
        if (b->prev)
            b->prev->next = b->next;
        else
            f->all = b->next;
        if (b->next)
            b->next->prev = b->prev;
        work_remove(b);
        b->dead = 1;
    }
    if (b->refs == 0) {
        rc_mirror_free(&b->mirror);
        free(b->ring);
        free(b);
        f->freed++;
    }
}

static void board_unref(struct gw_board *b)
{
    b->refs--;
    if (b->dead)
        board_maybe_free(b->f, b);
}

static int same_view(const struct rc_view *a, const struct rc_view *b)
{
    return a->kind == b->kind && a->offset == b->offset && a->limit == b->limit && a->radius == b->radius &&
           strcmp(a->around, b->around) == 0;
}

struct view_key {
    const struct gw_board *board;
    const struct rc_view *spec;
    int follows;
};

static uint64_t view_hash(const struct gw_fanout *f, const struct view_key *k)
{
    unsigned char buf[sizeof k->board + 5 * sizeof(uint32_t) + RC_MEMBER_MAX + 1];
    uint32_t ints[5] = {(uint32_t)k->spec->kind, k->spec->offset, k->spec->limit, k->spec->radius,
                        (uint32_t)k->follows};
    size_t n = strnlen(k->spec->around, RC_MEMBER_MAX);
    memcpy(buf, &k->board, sizeof k->board);
    memcpy(buf + sizeof k->board, ints, sizeof ints);
    memcpy(buf + sizeof k->board + sizeof ints, k->spec->around, n);
    return rc_hash(&f->key, buf, sizeof k->board + sizeof ints + n);
}

static int view_eq(const struct rc_hnode *node, const void *key)
{
    const struct gw_view *v = (const struct gw_view *)node;
    const struct view_key *k = key;
    return v->board == k->board && v->follows == k->follows && same_view(&v->spec, k->spec);
}

/* Links v (attached, v->board set) into its board's list and the table.
 * Out of memory for the table, it is served all the same, just not found
 * by a later subscribe to the same view (which then makes its own). */
static void view_link(struct gw_fanout *f, struct gw_view *v)
{
    struct gw_board *b = v->board;
    struct view_key k = {b, &v->spec, v->follows};
    (void)rc_hmap_insert(&f->views, &v->node, view_hash(f, &k)); /* failed: view_unlink finds nothing */
    v->prev = NULL;
    v->next = b->views;
    if (b->views)
        b->views->prev = v;
    b->views = v;
}

static void view_unlink(struct gw_fanout *f, struct gw_view *v)
{
    struct gw_board *b = v->board;
    rc_hmap_remove(&f->views, &v->node);
    if (v->prev)
        v->prev->next = v->next;
    else
        b->views = v->next;
    if (v->next)
        v->next->prev = v->prev;
    v->next = v->prev = NULL;
}

static struct gw_view *view_get(struct gw_fanout *f, struct gw_board *b, const struct rc_view *spec, int follows)
{
    struct rc_view norm = *spec;
    if (norm.kind == RC_VIEW_TOP)
        norm.offset = 0;
    struct view_key k = {b, &norm, follows};
    struct gw_view *v = (struct gw_view *)rc_hmap_find(&f->views, view_hash(f, &k), view_eq, &k);
    if (v)
        return v;
    v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->f = f;
    v->board = b;
    v->spec = norm;
    v->follows = follows;
    v->refs = 1;
    view_link(f, v);
    snprintf(v->id, sizeof v->id, "v%lu", ++f->next_view);
    return v;
}

static void view_unref(struct gw_view *v)
{
    if (--v->refs == 0) {
        gw_window_free(v->last);
        free(v);
    }
}

/* Detaches a view without viewers from its board; frees the board when it was
 * the last view. */
static void view_detach(struct gw_fanout *f, struct gw_view *v)
{
    struct gw_board *b = v->board;
    view_unlink(f, v);
    v->dead = 1;
    v->board = NULL;
    view_unref(v);
    if (b->views)
        board_want(b);
    board_maybe_free(f, b);
}

static void sub_free(struct gw_fanout *f, struct gw_sub *s)
{
    struct gw_view *v = s->view;
    if (s->vprev)
        s->vprev->vnext = s->vnext;
    else
        v->subs = s->vnext;
    if (s->vnext)
        s->vnext->vprev = s->vprev;
    v->nsubs--;
    f->app->metrics.subscriptions[v->spec.kind]--;
    s->conn->nsubs--;
    gw_conn_unref(s->conn);
    free(s->id_json);
    free(s);
    if (!v->nsubs)
        view_detach(f, v);
}

/* ---- sending -------------------------------------------------------------- */

static const char *period_field(const struct gw_board *b)
{
    return b->decl->period.kind == RC_PERIOD_NONE ? NULL : b->period;
}

/* Encodes window w of view v as a snapshot (id_json may be NULL). */
static char *encode_snapshot(const struct gw_view *v, const struct gw_window *w, const char *id_json, int reset)
{
    struct rc_out_row *rows = malloc((w->n ? w->n : 1) * sizeof *rows);
    struct rc_field_value *fv = malloc((w->n ? w->n : 1) * RC_MAX_FIELDS * sizeof *fv);
    char *json = NULL;
    if (rows && fv) {
        gw_window_out_rows(w, v->board->decl, rows, fv);
        json = rc_encode_snapshot(id_json, v->id, v->board->name, period_field(v->board), w->seq, w->total, rows,
                                  w->n, reset);
    }
    free(rows);
    free(fv);
    return json;
}

/* Queues a snapshot of s's view (its current window) to s, carrying the
 * subscribe's id when s still owes that reply. Returns 0 when it is queued
 * (or cannot be made: out of memory is answered as an error instead), -1
 * when the connection's queue refused it: it stays owed (s->id_json kept)
 * and goes out from gw_fanout_resync_conn as the queue drains. */
static int send_owed_snapshot(struct gw_fanout *f, struct gw_sub *s)
{
    struct gw_msg *msg = gw_msg_take(encode_snapshot(s->view, s->view->last, s->id_json, 0));
    if (!msg) {
        gw_conn_reply(s->conn, rc_encode_error(s->id_json, RC_E_INTERNAL, "out of memory"));
    } else if (gw_conn_send_owed(s->conn, msg) != 0) {
        gw_msg_unref(msg);
        return -1;
    } else {
        f->app->metrics.snapshots_sent++;
    }
    gw_msg_unref(msg);
    free(s->id_json);
    s->id_json = NULL;
    return 0;
}

/* Answers a pending subscription with the view's current window; later
 * deltas are diffs from it. A reader too far behind to take it now gets it
 * when its queue drains, deltas held back until then. */
static void send_first_snapshot(struct gw_fanout *f, struct gw_sub *s)
{
    s->pending = 0;
    s->needs_snapshot = send_owed_snapshot(f, s) != 0;
}

/* Queues msg to every live (non-pending) viewer of v. */
static void broadcast(struct gw_view *v, struct gw_msg *msg, uint64_t *counter)
{
    for (struct gw_sub *s = v->subs; s; s = s->vnext) {
        if (s->pending || s->needs_snapshot)
            continue;
        gw_conn_send(s->conn, msg, 1);
        (*counter)++;
    }
}

/* ---- window views ----------------------------------------------------------- */

static uint64_t profile_hash(const struct gw_row *r)
{
    return r->profile ? r->profile->hash : 0;
}

struct name_idx {
    const char *member;
    size_t i;
};

static int name_cmp(const void *a, const void *b)
{
    return strcmp(((const struct name_idx *)a)->member, ((const struct name_idx *)b)->member);
}

/* The delta from old to new as JSON, or NULL when viewers need nothing
 * (*nothing = 1) or on OOM (*nothing = 0). Rows whose profile changed are
 * resent too, although their score did not move. */
static char *encode_delta(const struct gw_view *v, const struct gw_window *old, const struct gw_window *nw,
                          int *nothing)
{
    struct rc_wrow *o = malloc((old->n + 1) * sizeof *o), *n = malloc((nw->n + 1) * sizeof *n);
    struct name_idx *by_name = malloc((old->n + 1) * sizeof *by_name);
    unsigned char *send = calloc(nw->n + 1, 1);
    struct rc_out_row *all = malloc((nw->n + 1) * sizeof *all), *rows = malloc((nw->n + 1) * sizeof *rows);
    struct rc_field_value *fv = malloc((nw->n + 1) * RC_MAX_FIELDS * sizeof *fv);
    const char **removed = malloc((old->n + 1) * sizeof *removed);
    struct rc_delta d = {0};
    char *json = NULL;
    size_t nrows = 0;
    *nothing = 0;
    if (!o || !n || !by_name || !send || !all || !rows || !fv || !removed)
        goto cleanup;
    for (size_t i = 0; i < old->n; i++) {
        o[i] = (struct rc_wrow){old->rows[i].member, old->rows[i].c};
        by_name[i] = (struct name_idx){old->rows[i].member, i};
    }
    for (size_t i = 0; i < nw->n; i++)
        n[i] = (struct rc_wrow){nw->rows[i].member, nw->rows[i].c};
    if (rc_window_diff(o, old->n, n, nw->n, &d) != 0)
        goto cleanup;
    for (size_t i = 0; i < d.nrows; i++)
        send[d.rows[i]] = 1;
    qsort(by_name, old->n, sizeof *by_name, name_cmp);
    for (size_t j = 0; j < nw->n; j++) {
        struct name_idx key = {nw->rows[j].member, 0};
        struct name_idx *hit = send[j] ? NULL : bsearch(&key, by_name, old->n, sizeof *by_name, name_cmp);
        if (hit && profile_hash(&old->rows[hit->i]) != profile_hash(&nw->rows[j]))
            send[j] = 1;
    }
    gw_window_out_rows(nw, v->board->decl, all, fv);
    for (size_t j = 0; j < nw->n; j++)
        if (send[j])
            rows[nrows++] = all[j];
    for (size_t i = 0; i < d.nremoved; i++)
        removed[i] = old->rows[d.removed[i]].member;
    if (nrows == 0 && d.nremoved == 0 && old->total == nw->total) {
        *nothing = 1;
        goto cleanup;
    }
    json = rc_encode_delta(v->id, nw->seq, nw->total, rows, nrows, removed, d.nremoved);
cleanup:
    rc_delta_free(&d);
    free(o);
    free(n);
    free(by_name);
    free(send);
    free(all);
    free(rows);
    free(fv);
    free(removed);
    return json;
}

static int windows_equal(const struct gw_window *a, const struct gw_window *b)
{
    if (a->n != b->n || a->first_rank != b->first_rank || a->total != b->total)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->rows[i].c != b->rows[i].c || strcmp(a->rows[i].member, b->rows[i].member) != 0 ||
            profile_hash(&a->rows[i]) != profile_hash(&b->rows[i]))
            return 0;
    return 1;
}

/* A fresh window for v arrived: tell the live viewers what changed, answer the
 * pending ones, and keep it as what they all hold now. */
static void view_update(struct gw_fanout *f, struct gw_view *v, struct gw_window *w)
{
    struct gw_metrics *m = &f->app->metrics;
    if (v->last) {
        char *json = NULL;
        int nothing = 0;
        if (v->force_snapshot || v->spec.kind == RC_VIEW_AROUND) {
            if (v->force_snapshot || !windows_equal(v->last, w))
                json = encode_snapshot(v, w, NULL, 0);
            else
                nothing = 1;
            if (json) {
                struct gw_msg *msg = gw_msg_take(json);
                if (msg)
                    broadcast(v, msg, &m->snapshots_sent);
                gw_msg_unref(msg);
                json = NULL;
            }
        } else {
            json = encode_delta(v, v->last, w, &nothing);
            struct gw_msg *msg = gw_msg_take(json);
            if (msg)
                broadcast(v, msg, &m->deltas_sent);
            gw_msg_unref(msg);
        }
        (void)nothing;
        gw_window_free(v->last);
    }
    v->force_snapshot = 0;
    v->last = w;
    for (struct gw_sub *s = v->subs; s; s = s->vnext)
        if (s->pending)
            send_first_snapshot(f, s);
}

static void fail_pending(struct gw_view *v, int code)
{
    for (struct gw_sub *s = v->subs; s; s = s->vnext) {
        if (!s->pending || !s->id_json)
            continue;
        /* Stays subscribed: it gets its snapshot once Redis is back. */
        gw_conn_reply(s->conn, rc_encode_error(s->id_json, code, "Redis is unreachable; the snapshot follows "
                                                                 "when it is back"));
        free(s->id_json);
        s->id_json = NULL;
    }
}

static void on_view_read(int code, struct gw_window *w, void *privdata)
{
    struct gw_view *v = privdata;
    v->reading = 0;
    if (v->dead)
        gw_window_free(w);
    else if (code == 0)
        view_update(v->f, v, w);
    else
        fail_pending(v, code);
    view_unref(v);
}

/* Starts a consistent read of v's window. */
static void view_read(struct gw_view *v)
{
    struct gw_board *b = v->board;
    struct gw_app *app = v->f->app;
    if (v->dead || v->reading || v->spec.kind == RC_VIEW_FEED || view_uses_mirror(v))
        return;
    struct gw_read_spec spec = {0};
    if (v->spec.kind == RC_VIEW_AROUND) {
        spec.kind = GW_READ_AROUND;
        spec.member = v->spec.around;
        spec.radius = v->spec.radius;
    } else {
        spec.kind = GW_READ_RANGE;
        spec.first = v->spec.offset;
        spec.count = v->spec.limit;
    }
    v->dirty = 0;
    v->refs++;
    v->reading = 1;
    int rc = gw_read(app, b->decl, b->name, b->period, &spec, on_view_read, v);
    if (rc) {
        v->reading = 0;
        view_set_dirty(v); /* retried when Redis is back */
        v->refs--;
        fail_pending(v, rc);
    }
}

/* ---- the mirror -------------------------------------------------------------- */

static int view_uses_mirror(const struct gw_view *v)
{
    return (v->spec.kind == RC_VIEW_TOP || v->spec.kind == RC_VIEW_PAGE) &&
           (uint64_t)v->spec.offset + v->spec.limit <= MIRROR_MAX_ROWS;
}

/* Sizes the mirror for the board's views; turns it off when none needs it. */
static void board_want(struct gw_board *b)
{
    size_t want = 0;
    int on = 0;
    for (struct gw_view *v = b->views; v; v = v->next) {
        if (!view_uses_mirror(v))
            continue;
        on = 1;
        if (v->spec.offset + v->spec.limit > want)
            want = v->spec.offset + v->spec.limit;
    }
    if (!on && b->mirror_on) {
        rc_mirror_free(&b->mirror);
        rc_mirror_init(&b->mirror, b->decl->layout.order);
    }
    b->mirror_on = on;
    if (on && rc_mirror_set_want(&b->mirror, want))
        b->stale = 1;
    if (on)
        board_wake(b); /* the tick reloads or refreshes as needed */
}

/* The window of view v cut from the mirror (profiles from the cache, NULL
 * where not cached), or NULL when the mirror does not cover it. */
static struct gw_window *mirror_window(const struct gw_board *b, const struct gw_view *v)
{
    const struct rc_mirror_row *rows;
    size_t n;
    if (rc_mirror_window(&b->mirror, v->spec.offset, v->spec.limit, &rows, &n) != 0)
        return NULL;
    struct gw_window *w = calloc(1, sizeof *w);
    if (!w || !(w->rows = calloc(n ? n : 1, sizeof *w->rows))) {
        free(w);
        return NULL;
    }
    w->seq = b->mirror.seq;
    w->total = b->mirror.total;
    w->first_rank = (int64_t)v->spec.offset + 1;
    for (size_t i = 0; i < n; i++) {
        struct gw_row *r = &w->rows[i];
        if (!(r->member = strdup(rows[i].member))) {
            gw_window_free(w);
            return NULL;
        }
        w->n++;
        r->c = rows[i].c;
        gw_decode_score(b->decl, r->c, &r->score, r->fields, &r->nfields);
        r->profile = gw_profiles_get(b->f->app->profiles, r->member);
        gw_profile_ref(r->profile);
    }
    return w;
}

static void on_board_profiles(void *privdata)
{
    struct gw_board *b = privdata;
    b->fetching = 0;
    if (!b->dead)
        board_refresh(b, 0);
    board_unref(b);
}

/* Cuts every mirror view's window from the mirror and sends what changed.
 * Profiles missing from the cache are fetched first (once). */
static void board_refresh(struct gw_board *b, int may_fetch)
{
    struct gw_profiles *profiles = b->f->app->profiles;
    if (!b->mirror_on || b->loading || b->fetching)
        return;
    if (rc_mirror_needs_reload(&b->mirror)) {
        board_set_stale(b);
        return;
    }
    if (may_fetch) {
        size_t cap = b->mirror.len, n = 0;
        const char **missing = malloc((cap ? cap : 1) * sizeof *missing);
        for (size_t i = 0; missing && i < b->mirror.len && i < b->mirror.want; i++)
            if (!gw_profiles_get(profiles, b->mirror.rows[i].member))
                missing[n++] = b->mirror.rows[i].member;
        if (n) {
            b->fetching = 1;
            b->refs++;
            if (gw_profiles_fetch(profiles, missing, n, on_board_profiles, b) != 0) {
                b->fetching = 0;
                b->refs--;
            }
        }
        free(missing);
        if (b->fetching || b->dead)
            return; /* continues in on_board_profiles */
    }
    b->changed = 0;
    for (struct gw_view *v = b->views; v; v = v->next) {
        if (!view_uses_mirror(v) || !v->nsubs)
            continue;
        struct gw_window *w = mirror_window(b, v);
        if (w)
            view_update(b->f, v, w);
        else
            board_set_stale(b);
    }
}

/* Applies one change event to the mirror. */
static void mirror_apply(struct gw_board *b, const struct rc_event *ev)
{
    if (!ev->member[0]) { /* reset: the board is gone, read it again */
        board_set_stale(b);
        return;
    }
    int r = rc_mirror_apply(&b->mirror, ev->seq, ev->member, ev->has_new, ev->c, ev->has_old, NULL);
    if (r == RC_MIRROR_APPLIED) {
        b->changed = 1;
        board_wake(b);
    } else if (r != RC_MIRROR_OLD) {
        board_set_stale(b);
    }
}

static void on_board_reload(int code, struct gw_window *w, void *privdata)
{
    struct gw_board *b = privdata;
    b->loading = 0;
    if (!b->dead && code == 0) {
        struct rc_mirror_row *rows = malloc((w->n ? w->n : 1) * sizeof *rows);
        for (size_t i = 0; rows && i < w->n; i++)
            rows[i] = (struct rc_mirror_row){w->rows[i].member, w->rows[i].c};
        if (rows && rc_mirror_load(&b->mirror, w->seq, w->total, rows, w->n) == 0) {
            b->stale = 0;
            /* events that raced the read: the ring holds them, in seq order */
            for (size_t i = 0; i < b->ring_len; i++) {
                const struct rc_event *ev = ring_at(b, i);
                if (ev->seq > b->mirror.seq)
                    mirror_apply(b, ev);
            }
            b->changed = 1;
            board_wake(b);
            board_refresh(b, 1);
        } else {
            board_set_stale(b);
        }
        free(rows);
    } else if (!b->dead) {
        board_set_stale(b); /* retried on the next tick (or when Redis is back) */
        for (struct gw_view *v = b->views; v; v = v->next)
            if (view_uses_mirror(v))
                fail_pending(v, code);
    }
    gw_window_free(w);
    board_unref(b);
}

/* Reads the board's top rows in one consistent step and reloads the mirror. */
static void board_reload(struct gw_board *b)
{
    if (b->loading || b->dead || !b->mirror_on)
        return;
    struct gw_read_spec spec = {.kind = GW_READ_RANGE, .first = 0, .count = (int64_t)b->mirror.keep};
    b->ks_pending = 0; /* whatever they announced, this read reflects */
    b->loading = 1;
    b->refs++;
    int rc = gw_read(b->f->app, b->decl, b->name, b->period, &spec, on_board_reload, b);
    if (rc) {
        b->loading = 0;
        b->refs--;
        board_set_stale(b);
        for (struct gw_view *v = b->views; v; v = v->next)
            if (view_uses_mirror(v))
                fail_pending(v, rc);
    }
}

/* ---- feed views ------------------------------------------------------------- */

/* Keeps ev as the board's newest recent event. The ring starts at
 * RING_FIRST events with the board's first event and doubles as it fills,
 * up to RING_EVENTS; then the oldest goes. (Out of memory: it stops growing
 * and drops the oldest earlier, as a full ring does.) */
static void ring_push(struct gw_board *b, const struct rc_event *ev)
{
    if (b->ring_len == b->ring_cap && b->ring_cap < RING_EVENTS) {
        size_t cap = b->ring_cap ? b->ring_cap * 2 : RING_FIRST;
        struct rc_event *r = malloc((cap < RING_EVENTS ? cap : RING_EVENTS) * sizeof *r);
        if (r) {
            for (size_t i = 0; i < b->ring_len; i++)
                r[i] = *ring_at(b, i);
            free(b->ring);
            b->ring = r;
            b->ring_cap = cap < RING_EVENTS ? cap : RING_EVENTS;
            b->ring_head = 0;
        }
    }
    if (!b->ring_cap)
        return;
    if (b->ring_len == b->ring_cap) {
        b->ring[b->ring_head] = *ev;
        b->ring_head = (b->ring_head + 1) % b->ring_cap;
    } else {
        b->ring[(b->ring_head + b->ring_len) % b->ring_cap] = *ev;
        b->ring_len++;
    }
}

static char *encode_event(const struct gw_view *v, const struct rc_event *ev)
{
    const struct rc_board *decl = v->board->decl;
    struct rc_field_value fv[RC_MAX_FIELDS];
    int64_t fields[RC_MAX_FIELDS], old_fields[RC_MAX_FIELDS];
    unsigned nf = 0, onf = 0;
    double score = NAN, old = 0;
    if (!strcmp(ev->op, "reset")) {
        /* the board was reset: feed viewers start over from an empty board */
        struct gw_window empty = {.seq = ev->seq};
        return encode_snapshot(v, &empty, NULL, 1);
    }
    if (ev->has_new)
        gw_decode_score(decl, ev->c, &score, fields, &nf);
    if (ev->has_old)
        gw_decode_score(decl, ev->old_c, &old, old_fields, &onf);
    for (unsigned k = 0; k < nf; k++) {
        memcpy(fv[k].name, decl->layout.fields[k].name, sizeof fv[k].name);
        fv[k].value = fields[k];
    }
    /* a removed member: score and rank null, delta takes its points away */
    return rc_encode_event(v->id, ev->seq, ev->member, score, ev->has_new ? score - old : -old,
                           ev->has_new ? ev->rank : 0, ev->old_rank, ev->at_ms, nf ? fv : NULL, nf);
}

/* Sends ev to the feed viewers of v that have not seen it. */
static void feed_deliver(struct gw_fanout *f, struct gw_view *v, const struct rc_event *ev)
{
    struct gw_msg *msg = NULL;
    for (struct gw_sub *s = v->subs; s; s = s->vnext) {
        if (s->pending || ev->seq <= s->cursor)
            continue;
        if (!msg && !(msg = gw_msg_take(encode_event(v, ev))))
            return;
        gw_conn_send(s->conn, msg, 1);
        s->cursor = ev->seq;
        f->app->metrics.deltas_sent++;
    }
    gw_msg_unref(msg);
}

struct log_join {
    struct gw_fanout *f;
    struct gw_view *v;
};

/* The log (and seq) arrived: answer every pending feed viewer of v with a
 * snapshot at the log's seq, replay what it missed since its `since` when the
 * log still holds it (else a reset snapshot), then the events that came in
 * over pub/sub meanwhile (the board's ring). Snapshot and replay are owed
 * replies: a viewer whose queue cannot take them stays pending (its id kept)
 * and is answered again from the log once its queue drains, the replay
 * going on from the last event it was given. */
static void on_feed_log(int code, int64_t seq, int64_t total, struct rc_event *evs, size_t n, void *privdata)
{
    struct log_join *j = privdata;
    struct gw_view *v = j->v;
    struct gw_fanout *f = j->f;
    free(j);
    v->reading = 0;
    if (v->dead) {
        view_unref(v);
        return;
    }
    if (code) {
        fail_pending(v, code);
        view_unref(v);
        return;
    }
    for (struct gw_sub *s = v->subs; s; s = s->vnext) {
        if (!s->pending)
            continue;
        int64_t from = s->has_since ? s->since : seq;
        int replayable = !s->has_since || s->since >= seq ||
                         (n && evs[0].seq <= s->since + 1) || (!n && s->since >= seq);
        struct gw_window empty = {.seq = seq, .total = total};
        struct gw_msg *msg = gw_msg_take(encode_snapshot(v, &empty, s->id_json, !replayable));
        if (msg && gw_conn_send_owed(s->conn, msg) != 0) {
            gw_msg_unref(msg);
            continue; /* stays pending */
        }
        gw_msg_unref(msg);
        f->app->metrics.snapshots_sent++;
        free(s->id_json);
        s->id_json = NULL;
        s->pending = 0;
        s->has_since = 0;
        s->cursor = replayable ? from : seq;
        for (size_t i = 0; i < n && !s->pending; i++) {
            if (evs[i].seq <= s->cursor || evs[i].seq > seq)
                continue;
            msg = gw_msg_take(encode_event(v, &evs[i]));
            if (msg && gw_conn_send_owed(s->conn, msg) != 0) {
                s->pending = 1; /* the rest once its queue drains */
                s->has_since = 1;
                s->since = s->cursor;
            } else {
                s->cursor = evs[i].seq;
            }
            gw_msg_unref(msg);
        }
        if (!s->pending)
            s->cursor = s->cursor > seq ? s->cursor : seq;
    }
    struct gw_board *b = v->board;
    for (size_t i = 0; i < b->ring_len; i++)
        feed_deliver(f, v, ring_at(b, i));
    view_unref(v);
}

/* Starts the log read that answers v's pending feed viewers. */
static void feed_catch_up(struct gw_view *v)
{
    struct gw_app *app = v->f->app;
    if (v->dead || v->reading)
        return;
    struct log_join *j = malloc(sizeof *j);
    if (!j)
        return;
    j->f = v->f;
    j->v = v;
    v->refs++;
    v->reading = 1;
    int rc = gw_read_log(app, v->board->decl, v->board->name, v->board->period, on_feed_log, j);
    if (rc) {
        free(j);
        v->reading = 0;
        v->refs--;
        view_set_dirty(v);
        fail_pending(v, rc);
    }
}

/* ---- period rollover ------------------------------------------------------ */

/* Moves view v onto board period `period`: its viewers get a snapshot of the
 * new period (same sub) and deltas from there, without resubscribing. */
static void view_move(struct gw_fanout *f, struct gw_view *v, const char *period)
{
    struct gw_board *old = v->board;
    int over_cap = 0;
    /* Not held to max_boards: these viewers are here already, and the old
     * board usually goes as they leave it. */
    struct gw_board *nb = board_get(f, old->decl, old->name, period, 0, &over_cap);
    if (!nb)
        return; /* out of memory: try again next tick */
    view_unlink(f, v);
    v->board = nb;
    view_link(f, v);
    gw_window_free(v->last);
    v->last = NULL;
    v->force_snapshot = 0;
    view_set_dirty(v);
    for (struct gw_sub *s = v->subs; s; s = s->vnext) {
        s->pending = 1; /* no id: a pushed snapshot, not a reply */
        s->needs_snapshot = 0;
        s->has_since = 0;
        s->cursor = 0;
    }
    if (old->views)
        board_want(old);
    board_maybe_free(f, old);
    if (v->spec.kind == RC_VIEW_FEED) {
        feed_catch_up(v);
    } else if (view_uses_mirror(v)) {
        board_want(nb);
        if (nb->stale || !nb->mirror.exact)
            board_reload(nb);
        else
            board_refresh(nb, 1);
    } else {
        view_read(v);
    }
}

/* Views of "current" and "previous" follow the clock across period ends.
 * The boards are walked only when a period has ended since the last walk
 * (or the test clock went back), not on every tick. */
static void rollover(struct gw_fanout *f)
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
        for (struct gw_view *v = b->views; v; v = v->next) {
            const char *want = v->follows == FOLLOW_CURRENT ? cur.id : v->follows == FOLLOW_PREVIOUS ? prev.id : NULL;
            if (!want || strcmp(want, b->period) == 0)
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
        gw_log_info("board %s: period rollover of view %s to %s", moving[i]->board->name, moving[i]->id, to[i]);
        view_move(f, moving[i], to[i]);
    }
}

/* ---- the public operations --------------------------------------------------- */

void gw_fanout_subscribe(struct gw_fanout *f, struct gw_conn *c, const struct rc_request *r,
                         const struct rc_board *decl, const struct rc_period *p)
{
    struct gw_app *app = f->app;
    if (c->nsubs >= app->conf->max_subs_per_conn) {
        gw_conn_reply(c, rc_encode_error(r->id_json, RC_E_TOO_LARGE,
                                         "subscription limit reached (max_subs_per_conn)"));
        gw_metrics_error(&app->metrics, RC_E_TOO_LARGE);
        return;
    }
    int over_cap = 0;
    struct gw_board *b = board_get(f, decl, r->board, p->id, 1, &over_cap);
    if (over_cap) {
        char msg[96];
        snprintf(msg, sizeof msg, "too many live boards on this gateway (max_boards %u)", app->conf->max_boards);
        gw_conn_reply(c, rc_encode_error(r->id_json, RC_E_RATE_LIMITED, msg));
        gw_metrics_error(&app->metrics, RC_E_RATE_LIMITED);
        return;
    }
    int follows = decl->period.kind == RC_PERIOD_NONE                       ? FOLLOW_NONE
                  : !r->period[0] || strcmp(r->period, "current") == 0 ? FOLLOW_CURRENT
                  : strcmp(r->period, "previous") == 0                 ? FOLLOW_PREVIOUS
                                                                       : FOLLOW_NONE;
    struct gw_view *v = b ? view_get(f, b, &r->view, follows) : NULL;
    for (struct gw_sub *o = c->subs; v && o; o = o->cnext) {
        if (o->view != v)
            continue;
        /* Already watching this view: the same sub again, with a snapshot
         * when one is at hand (it matches the deltas that follow). Owed like
         * a first snapshot when the queue is full, unless one is owed with
         * an id already. */
        if (v->last && v->spec.kind != RC_VIEW_FEED && !o->pending && !(o->needs_snapshot && o->id_json)) {
            free(o->id_json);
            o->id_json = r->id_json ? strdup(r->id_json) : NULL;
            if (!o->needs_snapshot)
                o->needs_snapshot = send_owed_snapshot(f, o) != 0;
        } else {
            gw_conn_reply(c, rc_encode_error(r->id_json, RC_E_BAD_REQUEST, "already subscribed to this view"));
            gw_metrics_error(&app->metrics, RC_E_BAD_REQUEST);
        }
        return;
    }
    struct gw_sub *s = v ? calloc(1, sizeof *s) : NULL;
    if (!s) {
        if (v && !v->nsubs)
            view_detach(f, v);
        else if (b)
            board_maybe_free(f, b);
        gw_conn_reply(c, rc_encode_error(r->id_json, RC_E_INTERNAL, "out of memory"));
        return;
    }
    s->view = v;
    s->conn = c;
    gw_conn_ref(c);
    s->pending = 1;
    s->id_json = r->id_json ? strdup(r->id_json) : NULL;
    s->has_since = r->has_since;
    s->since = r->since_seq;
    s->vnext = v->subs;
    if (v->subs)
        v->subs->vprev = s;
    v->subs = s;
    v->nsubs++;
    s->cnext = c->subs;
    c->subs = s;
    c->nsubs++;
    app->metrics.subscriptions[v->spec.kind]++;

    if (v->spec.kind == RC_VIEW_FEED) {
        feed_catch_up(v);
    } else if (v->last) {
        send_first_snapshot(f, s); /* later deltas are diffs from this window */
    } else if (view_uses_mirror(v)) {
        board_want(b);
        if (b->stale || !b->mirror.exact)
            board_reload(b);
        else
            board_refresh(b, 1);
    } else {
        view_read(v);
    }
}

int gw_fanout_unsubscribe(struct gw_fanout *f, struct gw_conn *c, const char *sub)
{
    for (struct gw_sub **p = &c->subs; *p; p = &(*p)->cnext) {
        if (strcmp((*p)->view->id, sub) == 0) {
            struct gw_sub *s = *p;
            *p = s->cnext;
            sub_free(f, s);
            return 0;
        }
    }
    return -1;
}

void gw_fanout_conn_closed(struct gw_fanout *f, struct gw_conn *c)
{
    while (c->subs) {
        struct gw_sub *s = c->subs;
        c->subs = s->cnext;
        sub_free(f, s);
    }
}

static void hook_lagged(void *data, struct gw_conn *c)
{
    gw_fanout_conn_lagged(data, c);
}

static int hook_drained(void *data, struct gw_conn *c)
{
    return gw_fanout_resync_conn(data, c);
}

struct gw_conn_hooks gw_fanout_conn_hooks(struct gw_fanout *f)
{
    return (struct gw_conn_hooks){f, hook_lagged, hook_drained};
}

void gw_fanout_conn_lagged(struct gw_fanout *f, struct gw_conn *c)
{
    (void)f;
    for (struct gw_sub *s = c->subs; s; s = s->cnext) {
        if (s->pending)
            continue; /* its first snapshot is still to come */
        if (s->view->spec.kind == RC_VIEW_FEED) {
            /* replayed from the log (or reset) once the queue drains */
            s->pending = 1;
            s->has_since = 1;
            s->since = s->cursor;
        } else {
            s->needs_snapshot = 1;
        }
    }
}

int gw_fanout_resync_conn(struct gw_fanout *f, struct gw_conn *c)
{
    for (struct gw_sub *s = c->subs; s; s = s->cnext) {
        struct gw_view *v = s->view;
        if (v->spec.kind == RC_VIEW_FEED && s->pending) {
            feed_catch_up(v); /* answers every pending viewer of v (a no-op while it reads) */
            continue;
        }
        if (!s->needs_snapshot || !v->last)
            continue;
        /* One snapshot per drain: a laggard never holds more than one. It
         * carries the subscribe's id when it is that request's reply. */
        if (send_owed_snapshot(f, s) == 0)
            s->needs_snapshot = 0;
        return 1;
    }
    return 0;
}

/* "...rc:{B|P}:SUFFIX" -> B and P. Returns 0 or -1. */
static int parse_tag(const char *channel, char *board, char *period)
{
    const char *open = strstr(channel, "rc:{");
    if (!open)
        return -1;
    open += 4;
    const char *bar = strchr(open, '|');
    const char *close = bar ? strchr(bar, '}') : NULL;
    if (!close || (size_t)(bar - open) > RC_BOARD_MAX || (size_t)(close - bar - 1) >= RC_PERIOD_ID_MAX)
        return -1;
    memcpy(board, open, (size_t)(bar - open));
    board[bar - open] = '\0';
    memcpy(period, bar + 1, (size_t)(close - bar - 1));
    period[close - bar - 1] = '\0';
    return 0;
}

/* A change to the board: its views read from Redis (around views, pages
 * past the mirror) read again on the next tick; mirror views follow the
 * mirror, feeds their events. */
static void mark_dirty(struct gw_board *b)
{
    int any = 0;
    for (struct gw_view *v = b->views; v; v = v->next) {
        if (v->spec.kind != RC_VIEW_FEED && !view_uses_mirror(v)) {
            v->dirty = 1;
            any = 1;
        }
    }
    if (any)
        board_wake(b);
}

void gw_fanout_on_message(struct gw_fanout *f, const char *pattern, const char *channel, const char *payload,
                          size_t len)
{
    char name[RC_BOARD_MAX + 1], period[RC_PERIOD_ID_MAX];
    int keyspace = strcmp(pattern, GW_FANOUT_KEYSPACE_PATTERN) == 0;
    if (keyspace)
        f->app->metrics.keyspace_events++;
    if (parse_tag(channel, name, period) != 0)
        return;
    struct gw_board *b = board_find(f, name, period);
    if (!b)
        return; /* nobody watches this board here */
    mark_dirty(b);
    if (keyspace) {
        /* The script's own ZADD shows here too, just before its change event
         * (same connection, same order); anything else on the set was done
         * outside the script, and the mirror must be read again. */
        if (b->mirror_on) {
            if (len == 4 && memcmp(payload, "zadd", 4) == 0) {
                b->ks_pending++;
                board_wake(b);
            } else {
                board_set_stale(b);
            }
        }
        return;
    }
    struct rc_event ev;
    if (rc_event_parse(payload, len, &ev) != 0) {
        gw_log_warn("unparsable change event on %s", channel);
        return;
    }
    ring_push(b, &ev);
    if (b->mirror_on) {
        if (b->ks_pending > 0)
            b->ks_pending--;
        if (!b->loading && b->mirror.exact)
            mirror_apply(b, &ev);
    }
    for (struct gw_view *v = b->views; v; v = v->next)
        if (v->spec.kind == RC_VIEW_FEED)
            feed_deliver(f, v, &ev);
}

/* What the tick must still do for b (it stays on the work list while so). */
static int board_has_work(const struct gw_board *b)
{
    if (b->mirror_on && (b->stale || b->changed || b->ks_pending > 0 || !b->mirror.exact))
        return 1;
    for (const struct gw_view *v = b->views; v; v = v->next)
        if (v->dirty)
            return 1;
    return 0;
}

static void board_tick(struct gw_board *b)
{
    if (b->mirror_on) {
        if (b->ks_pending > 0)
            b->stale = 1; /* a ZADD no script event explained: made outside */
        if (b->stale || !b->mirror.exact)
            board_reload(b);
        else if (b->changed)
            board_refresh(b, 1);
    }
    for (struct gw_view *v = b->views; v; v = v->next) {
        if (view_uses_mirror(v))
            v->dirty = 0; /* served by the mirror (above) */
        if (!v->dirty || v->reading)
            continue;
        if (v->spec.kind == RC_VIEW_FEED) {
            v->dirty = 0;
            feed_catch_up(v);
        } else {
            view_read(v);
        }
    }
}

/* Many boards freed at once (their viewers left) leave their memory in
 * malloc's free lists, scattered between live allocations where glibc never
 * returns it by itself: hand the free pages back, at most once a second. */
static void maybe_trim(struct gw_fanout *f)
{
#ifdef __GLIBC__
    if (f->freed < TRIM_BOARDS)
        return;
    int64_t now = gw_mono_us() / 1000;
    if (now - f->trimmed_ms < TRIM_EVERY_MS)
        return;
    f->freed = 0;
    f->trimmed_ms = now;
    malloc_trim(0);
#else
    (void)f;
#endif
}

void gw_fanout_tick(struct gw_fanout *f)
{
    rollover(f);
    maybe_trim(f);
    /* Only the boards with work. The list is taken whole: a board that gets
     * work again while it is handled waits for the next tick. */
    struct gw_board *todo = f->work;
    f->work = NULL;
    for (struct gw_board *b = todo; b; b = b->wnext)
        b->wlist = &todo;
    while (todo) {
        struct gw_board *b = todo;
        work_remove(b);
        b->refs++; /* alive through its own callbacks */
        board_tick(b);
        if (!b->dead && board_has_work(b))
            board_wake(b);
        board_unref(b);
    }
}

void gw_fanout_profile_changed(struct gw_fanout *f)
{
    for (struct gw_board *b = f->all; b; b = b->next) {
        b->changed = b->mirror_on;
        if (b->changed)
            board_wake(b);
        mark_dirty(b);
    }
}

void gw_fanout_redis_up(struct gw_fanout *f)
{
    for (struct gw_board *b = f->all; b; b = b->next) {
        b->stale = b->mirror_on;
        board_wake(b);
        for (struct gw_view *v = b->views; v; v = v->next) {
            v->dirty = 1;
            if (v->spec.kind != RC_VIEW_FEED) {
                v->force_snapshot = v->last != NULL;
                continue;
            }
            for (struct gw_sub *s = v->subs; s; s = s->vnext) {
                if (s->pending)
                    continue;
                s->pending = 1;
                s->has_since = 1;
                s->since = s->cursor;
            }
        }
    }
    gw_fanout_tick(f);
}

void gw_fanout_free(struct gw_fanout *f)
{
    if (!f)
        return;
    /* Normally empty by now: connections close before the fan-out goes. */
    while (f->all) {
        struct gw_board *b = f->all;
        struct gw_view *v = b->views;
        if (!v) {
            board_maybe_free(f, b);
            continue;
        }
        if (!v->subs) {
            view_detach(f, v);
            continue;
        }
        struct gw_sub *s = v->subs;
        for (struct gw_sub **p = &s->conn->subs; *p; p = &(*p)->cnext) {
            if (*p == s) {
                *p = s->cnext;
                break;
            }
        }
        sub_free(f, s);
    }
    rc_hmap_free(&f->boards);
    rc_hmap_free(&f->views);
    free(f);
}
