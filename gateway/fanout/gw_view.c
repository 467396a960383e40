/* gw_view.c - window views (top-N, pages, around): a fresh window is diffed
 * against what the viewers hold (the rule is core/rc_delta.h's; this file
 * finds the board's events it may ask for and keeps nothing per delta but
 * the fan-out's scratch), encoded once, and the same refcounted
 * buffer is queued to every viewer (reads of views the mirror does not
 * cover: gw_view_read.c). A view with max_rate holds a window
 * that comes within its interval (core/rc_rate.h) and sends the newest one
 * from the tick when the interval has passed. */
#include "fanout/gw_fanout_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "base/gw_clock.h"
#include "base/gw_fault.h"
#include "fanout/gw_view_fault.h"
#include "net/gw_conn.h"
#include "net/gw_msg.h"
#include "rc_delta.h"
#include "rc_members.h"

static const char *period_field(const struct gw_board *b)
{
    return b->decl->period.kind == RC_PERIOD_NONE ? NULL : b->r.period;
}

/* The freeze fields of window w as view v shows them. */
static void freeze_more(const struct gw_view *v, const struct gw_window *w, struct rc_msg_more *more)
{
    more->frozen = w->freeze.frozen;
    more->freeze_seq = w->freeze.seq;
    more->shown = w->freeze.shown;
    more->live = v->r.spec.live;
}

/* Encodes window w of view v as a snapshot (id_json may be NULL; cursor: a
 * sharded feed's position, or NULL). */
char *gw_view_encode_snapshot(const struct gw_view *v, const struct gw_window *w, const char *id_json, int reset,
                            const char *cursor)
{
    struct rc_snapshot_msg m = {
        .id_json = id_json,
        .sub = v->r.id,
        .board = v->board->r.name,
        .period = period_field(v->board),
        .seq = w->seq,
        .total = w->total,
        .reset = reset,
        .rows = gw_window_rows_out(w, v->board->decl),
        .more = {.epoch = w->epoch, .has_viewers = 1, .viewers = gw_vcount_shown(v->board), .cursor = cursor},
    };
    freeze_more(v, w, &m.more);
    const char *absent[RC_MEMBERS_MAX];
    if (v->r.spec.kind == RC_VIEW_MEMBERS || v->r.spec.kind == RC_VIEW_TEAM) { /* (v1.2) listed, not on the board */
        const char *list = v->r.spec.kind == RC_VIEW_TEAM ? v->roster : v->r.spec.members;
        uint32_t n = v->r.spec.kind == RC_VIEW_TEAM ? v->nroster : v->r.spec.nmembers;
        /* a big team's roster: its best 200, those on the board first */
        size_t room = w->n < RC_MEMBERS_MAX ? RC_MEMBERS_MAX - w->n : 0;
        long na = n && room ? rc_members_absent_max(list, n, w->rows, w->n, absent, room) : 0;
        if (na < 0)
            return NULL;
        m.has_absent = 1;
        m.absent = absent;
        m.nabsent = (size_t)na;
    }
    return rc_proto_rows_snapshot(&m);
}

/* A feed's event message for ev (a "reset" event: the reset snapshot of
 * the empty board its new history starts from); epoch: tell the viewer its
 * board's history began (NULL: not), cursor as gw_view_encode_snapshot. */
char *gw_view_encode_event(const struct gw_view *v, const struct rc_event *ev, const char *epoch, const char *cursor)
{
    const struct rc_board *decl = v->board->decl;
    struct rc_field_value fv[RC_MAX_FIELDS];
    int64_t fields[RC_MAX_FIELDS], old_fields[RC_MAX_FIELDS];
    unsigned nf = 0, onf = 0;
    double score = NAN, old = 0;
    if (!strcmp(ev->op, "reset")) {
        /* the board was reset: feed viewers start over from an empty board,
         * in the history the reset began */
        struct gw_window empty = {.seq = ev->seq};
        memcpy(empty.epoch, ev->epoch, sizeof empty.epoch);
        return gw_view_encode_snapshot(v, &empty, NULL, 1, cursor);
    }
    if (ev->has_new)
        gw_window_decode_score(decl, ev->c, &score, fields, &nf);
    if (ev->has_old)
        gw_window_decode_score(decl, ev->old_c, &old, old_fields, &onf);
    for (unsigned k = 0; k < nf; k++) {
        memcpy(fv[k].name, decl->layout.fields[k].name, sizeof fv[k].name);
        fv[k].value = fields[k];
    }
    /* a removed member: score and rank null, delta takes its points away */
    struct rc_event_msg m = {
        .sub = v->r.id,
        .seq = ev->seq,
        .member = ev->member,
        .score = score,
        .delta = ev->has_new ? score - old : -old,
        .rank = ev->has_new ? ev->rank : 0,
        .prev_rank = ev->old_rank,
        .at_ms = ev->at_ms,
        .fields = nf ? fv : NULL,
        .nfields = nf,
        .more = {.epoch = epoch, .cursor = cursor},
    };
    return rc_proto_encode_event(&m);
}

/* Queues a snapshot of s's view (its current window) to s, carrying the
 * subscribe's id when s still owes that reply. Returns 0 when it is queued
 * (or cannot be made: out of memory is answered as an error instead), -1
 * when the connection's queue refused it: it stays owed (s->id_json kept)
 * and goes out from gw_fanout_resync_conn as the queue drains. */
int gw_view_send_owed_snapshot(struct gw_fanout *f, struct gw_sub *s)
{
    if (s->replay)
        return -1; /* replaying: owed until the replay goes live (gw_replay.c) */
    /* a resume that named another history than the board's: say so */
    int reset = s->has_since && s->has_epoch && strcmp(s->epoch, s->view->last->epoch) != 0;
    /* a replay gone live: labelled where the view stands (rows the same), never below live's seq */
    struct gw_window lw = *s->view->last;
    if (s->after_replay && !lw.shard_seq && lw.seq < s->view->stands)
        lw.seq = s->view->stands;
    struct gw_msg *msg = gw_msg_take(gw_view_encode_snapshot(s->view, &lw, s->id_json, reset, NULL));
    if (!msg) {
        gw_conn_reply(s->conn, rc_proto_encode_error(s->id_json, RC_E_INTERNAL, "out of memory"));
    } else if (gw_conn_send_owed(s->conn, msg) != 0) {
        gw_msg_unref(msg);
        return -1;
    } else {
        f->app->metrics.snapshots_sent++;
    }
    gw_msg_unref(msg);
    free(s->id_json);
    s->id_json = NULL;
    s->has_since = 0;
    s->after_replay = 0;
    s->has_epoch = 1;
    memcpy(s->epoch, s->view->last->epoch, sizeof s->epoch);
    return 0;
}

int gw_view_feed_answer(struct gw_fanout *f, struct gw_sub *s, struct gw_msg *msg, const char *epoch)
{
    if (msg && gw_conn_send_owed(s->conn, msg) != 0) {
        gw_msg_unref(msg);
        return -1;
    }
    gw_msg_unref(msg);
    f->app->metrics.snapshots_sent++;
    free(s->id_json);
    s->id_json = NULL;
    s->pending = 0;
    s->has_since = 0;
    s->has_epoch = 1;
    snprintf(s->epoch, sizeof s->epoch, "%s", epoch);
    return 0;
}

/* Answers a pending subscription with the view's current window; later
 * deltas are diffs from it. A reader too far behind to take it now gets it
 * when its queue drains, deltas held back until then. */
void gw_view_send_first_snapshot(struct gw_fanout *f, struct gw_sub *s)
{
    s->pending = 0;
    s->needs_snapshot = gw_view_send_owed_snapshot(f, s) != 0;
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

/* 1 when the viewers of v must be told that the freeze changed between
 * windows a and b: frozen or not, the freeze's seq, and for a live view
 * the seq the audience is shown (the audience learns that from seq). */
static int freeze_news(const struct gw_view *v, const struct gw_window *a, const struct gw_window *b)
{
    const struct rc_freeze *x = &a->freeze, *y = &b->freeze;
    if (x->frozen != y->frozen)
        return 1;
    return x->frozen && (x->seq != y->seq || (v->r.spec.live && x->shown != y->shown));
}

/* The board's moves from the ring that take the view's board from seq s0 to
 * s1 (s0 < seq <= s1, all of them, in seq order) into *out (room in the
 * delta scratch, *n of them; n 0 when s1 == s0). Returns 0, or -1 when the
 * ring does not hold them all (lost, older than the ring, or not arrived
 * yet), when something the events do not tell changed the board since v's
 * last window (moves_break, or a keyspace ZADD no event has explained yet),
 * or OOM. */
static int ring_moves(const struct gw_view *v, int64_t s0, int64_t s1, uint64_t break_now,
                      struct rc_delta_scratch *sc, const struct rc_move **out, size_t *n)
{
    const struct gw_board *b = v->board;
    *out = NULL;
    *n = 0;
    if (s1 < s0 || v->last_break != break_now || rc_ksmatch_pending(&b->ks))
        return -1;
    if (b->decl->shards > 1)
        return -1; /* (sharded: ring_moves_sharded) */
    if (s1 == s0)
        return 0;
    size_t first = b->ring_len;
    for (size_t i = 0; i < b->ring_len; i++) {
        if (gw_board_ring_at(b, i)->seq == s0 + 1) {
            first = i;
            break;
        }
    }
    size_t want = (size_t)(s1 - s0);
    if (first == b->ring_len || b->ring_len - first < want)
        return -1;
    struct rc_move *m = rc_delta_moves_room(sc, want);
    if (!m)
        return -1;
    for (size_t k = 0; k < want; k++) {
        const struct rc_event *ev = gw_board_ring_at(b, first + k);
        if (ev->seq != s0 + 1 + (int64_t)k)
            return -1;
        m[k] = (struct rc_move){ev->member, ev->old_rank, ev->has_new ? ev->rank : 0};
    }
    *out = m;
    *n = want;
    return 0;
}

/* ring_moves for a sharded board (docs/sharded.md): windows carry each
 * shard's seq, and the moves between them are the ring's events of each
 * shard i with old seq < seq <= new seq (their ranks made global when they
 * came in, gw_rank_shard.c), in the order they arrived. -1 when the ring
 * does not hold every one of them (older than the ring, or still out for
 * its ranks), or as ring_moves. */
static int ring_moves_sharded(const struct gw_view *v, const struct gw_window *old, const struct gw_window *nw,
                              uint64_t break_now, struct rc_delta_scratch *sc, const struct rc_move **out,
                              size_t *n)
{
    const struct gw_board *b = v->board;
    unsigned S = b->decl->shards;
    *out = NULL;
    *n = 0;
    if (v->last_break != break_now || old->nshards != S || nw->nshards != S)
        return -1;
    size_t want = 0;
    for (unsigned i = 0; i < S; i++) {
        if (nw->shard_seq[i] < old->shard_seq[i])
            return -1;
        want += (size_t)(nw->shard_seq[i] - old->shard_seq[i]);
    }
    if (want == 0)
        return 0;
    struct rc_move *m = rc_delta_moves_room(sc, want);
    if (!m)
        return -1;
    size_t got = 0;
    for (size_t k = 0; k < b->ring_len && got < want; k++) {
        const struct rc_event *ev = gw_board_ring_at(b, k);
        if (ev->shard >= S || ev->seq <= old->shard_seq[ev->shard] || ev->seq > nw->shard_seq[ev->shard])
            continue;
        m[got++] = (struct rc_move){ev->member, ev->old_rank, ev->has_new ? ev->rank : 0};
    }
    if (got != want)
        return -1;
    *out = m;
    *n = want;
    return 0;
}

/* What the delta rule asks for when a row came from outside the window. */
struct moves_ask {
    const struct gw_view *v;
    const struct gw_window *old, *nw;
    uint64_t break_now;
};

static int ask_moves(void *ctx, struct rc_delta_scratch *sc, const struct rc_move **moves, size_t *n)
{
    const struct moves_ask *a = ctx;
    return a->v->board->decl->shards > 1 ? ring_moves_sharded(a->v, a->old, a->nw, a->break_now, sc, moves, n)
                                         : ring_moves(a->v, a->old->seq, a->nw->seq, a->break_now, sc, moves, n);
}

static struct rc_delta_window delta_window(const struct gw_window *w)
{
    return (struct rc_delta_window){w->rows, w->n, w->first_rank, w->total};
}

/* The delta from old to new as JSON (core/rc_delta.h decides it, in the
 * fan-out's scratch), or NULL when viewers need nothing (*nothing = 1) or
 * on OOM (*nothing = 0); when a row came from outside the window and the
 * ring cannot say from where, NULL with *no_moves = 1 (the caller sends a
 * snapshot: always a correct answer). epoch: the history began (NULL: no);
 * viewers < 0: the count is not news. */
static char *encode_delta(struct gw_view *v, const struct gw_window *old, const struct gw_window *nw,
                          uint64_t break_now, const char *epoch, int64_t viewers, int *nothing, int *no_moves)
{
    struct rc_delta_window ow = delta_window(old), wn = delta_window(nw);
    struct moves_ask ask = {v, old, nw, break_now};
    struct rc_delta d;
    *nothing = 0;
    *no_moves = 0;
    int rc;
    if (v->r.spec.kind != RC_VIEW_MEMBERS && v->r.spec.kind != RC_VIEW_TEAM)
        rc = rc_delta_make(&ow, &wn, ask_moves, &ask, &v->f->delta, &d);
    else if (old->base && old->base == nw->base) /* two windows of one read: rows matched by its rows */
        rc = rc_delta_make_members_by_id(&ow, old->row_id, &wn, nw->row_id, nw->base->n, &v->f->delta, &d);
    else
        rc = rc_delta_make_members(&ow, &wn, &v->f->delta, &d);
    if (rc == RC_DELTA_UNKNOWN)
        *no_moves = 1;
    if (rc != 0)
        return NULL;
    if (v->r.spec.kind == RC_VIEW_TEAM && v->nroster > RC_MEMBERS_MAX) {
        /* a big team's best 200: a member in or out of them is no arrival
         * on or departure from the board, which is what rows and removed
         * say to a member list's client; a snapshot says it */
        int moved_set = d.nremoved > 0;
        for (size_t k = 0; k < d.nrows && !moved_set; k++)
            moved_set = d.prev_rank[k] == 0;
        if (moved_set) {
            *no_moves = 1;
            return NULL;
        }
    }
    if (d.nothing && !freeze_news(v, old, nw)) {
        *nothing = 1;
        return NULL;
    }
    struct rc_delta_msg m = {
        .sub = v->r.id,
        .seq = nw->seq,
        .total = nw->total,
        .rows = gw_window_rows_out(nw, v->board->decl),
        .removed_from = old->rows,
        .removed = d.removed,
        .nremoved = d.nremoved,
        .more = {.epoch = epoch, .has_viewers = viewers >= 0, .viewers = viewers},
    };
    m.rows.n = d.nrows;
    m.rows.pick = d.rows;
    m.rows.prev_rank = d.prev_rank;
    if (d.nrows > 0 && gw_fault_drop_delta_row(v->f->app->conf->test_clock)) {
        m.rows.n--; /* a test's broken build (base/gw_fault.h): the first row lost */
        m.rows.pick++;
        m.rows.prev_rank++;
    }
    freeze_more(v, nw, &m.more);
    return rc_proto_rows_delta(&m);
}

static int windows_equal(const struct gw_view *v, const struct gw_window *a, const struct gw_window *b)
{
    struct rc_delta_window x = delta_window(a), y = delta_window(b);
    return !freeze_news(v, a, b) && rc_delta_windows_equal(&x, &y);
}

/* A fresh window for v arrived: tell the live viewers what changed, answer the
 * pending ones, and keep it as what they all hold now. */
void gw_view_update(struct gw_fanout *f, struct gw_view *v, struct gw_window *w)
{
    if (gw_view_fault_hold(f, v, w, gw_view_update))
        return; /* a test's lagging view (gw_view_fault.c): handed back later */
    gw_rowteam_fill(v->board, w); /* a board with teams: each row's team (gw_rowteam.c) */
    if (v->r.spec.kind == RC_VIEW_TEAM) {
        w->total = v->nroster; /* a roster's total: the team's member count (PROTOCOL v1.2) */
        gw_window_truncate(w, RC_MEMBERS_MAX); /* its best 200 by rank (the read has them all) */
    }
    struct gw_metrics *m = &f->app->metrics;
    /* prev_rank: w was taken (a read: started) at this moves_break */
    uint64_t break_now = v->board ? v->board->moves_break : 0;
    uint64_t break_taken = gw_board_view_uses_mirror(v) ? break_now : v->read_break;
    int64_t now_us = v->gate.rate ? gw_clock_gate_us(&f->app->clock) : 0;
    if (v->last && !rc_rate_may_send(&v->gate, now_us)) {
        /* Too soon for its rate: the newest window waits for the tick
         * (gw_view_send_held), one message from what the viewers hold. */
        gw_window_free(v->held);
        v->held = w;
        gw_board_view_due(v);
        for (struct gw_sub *s = v->subs; s; s = s->vnext)
            if (s->pending)
                gw_view_send_first_snapshot(f, s);
        return;
    }
    gw_window_free(v->held); /* w is newer */
    v->held = NULL;
    int64_t shown = gw_vcount_shown(v->board);
    if (v->last) {
        char *json = NULL;
        int nothing = 0;
        /* Epochs: a history that began on a board without one goes on from
         * the empty board the viewers hold (the message names the new
         * epoch); any other change of epoch started the board over. */
        int began = !v->last->epoch[0] && w->epoch[0];
        int over = !began && strcmp(v->last->epoch, w->epoch) != 0;
        if (v->force_snapshot || over || v->r.spec.kind == RC_VIEW_AROUND) {
            if (v->force_snapshot || over || began || !windows_equal(v, v->last, w))
                json = gw_view_encode_snapshot(v, w, NULL, over, NULL);
            else
                nothing = 1;
            if (json) {
                struct gw_msg *msg = gw_msg_take(json);
                if (msg) {
                    broadcast(v, msg, &m->snapshots_sent);
                    rc_rate_sent(&v->gate, now_us);
                    v->viewers_sent = shown;
                }
                gw_msg_unref(msg);
                json = NULL;
            }
        } else {
            int no_moves = 0;
            /* deltas carry the count when it changed, and the epoch when
             * the history began */
            json = v->board ? encode_delta(v, v->last, w, break_now, began ? w->epoch : NULL,
                                           shown != v->viewers_sent ? shown : -1, &nothing, &no_moves)
                            : NULL;
            uint64_t *counter = &m->deltas_sent;
            if (no_moves && v->board && v->board->decl->shards > 1 && !v->await_final) {
                /* the events that explain it may still be out for their
                 * ranks: wait for them (gw_feed_shard.c), till the tick */
                v->held = w;
                v->await_moves = 1;
                v->await_tick = f->ticks;
                gw_board_view_due(v);
                goto pending;
            }
            if (no_moves || (began && nothing)) {
                /* a row came from outside the window and the events at hand
                 * cannot say from where: a snapshot (its prev_rank is moot);
                 * or nothing to show, but the epoch to tell */
                json = gw_view_encode_snapshot(v, w, NULL, 0, NULL);
                counter = &m->snapshots_sent;
            }
            struct gw_msg *msg = gw_msg_take(json);
            if (msg) {
                broadcast(v, msg, counter);
                rc_rate_sent(&v->gate, now_us);
                v->viewers_sent = shown;
            }
            gw_msg_unref(msg);
            if (nothing && !began && !no_moves) {
                /* Nothing sent: the viewers still hold v->last (the same
                 * rows), and the next delta's prev_rank counts from the
                 * state they were last sent, not from this one. */
                v->stands = w->seq; /* (but they hold the board as of it: gw_replay.c) */
                gw_window_free(w);
                goto pending;
            }
        }
        gw_window_free(v->last);
    } else {
        v->viewers_sent = shown; /* what the first snapshots below say */
    }
    v->force_snapshot = 0;
    v->last = w;
    v->stands = w->seq;
    v->last_break = break_taken;
pending:
    for (struct gw_sub *s = v->subs; s; s = s->vnext)
        if (s->pending)
            gw_view_send_first_snapshot(f, s);
}

/* The tick: sends v's held window when its rate lets it. */
void gw_view_send_held(struct gw_fanout *f, struct gw_view *v, int64_t now_us)
{
    if (!v->held || v->dead || !rc_rate_may_send(&v->gate, now_us))
        return;
    if (v->await_moves && v->await_tick == f->ticks)
        return; /* made by this tick (its mirror refresh): its events' ranks were only just sent for */
    struct gw_window *w = v->held;
    v->held = NULL;
    /* a window that waited a tick for its moves goes now, as a snapshot if need be */
    v->await_final = v->await_moves;
    v->await_moves = 0;
    gw_view_update(f, v, w);
    v->await_final = 0;
}

void gw_view_moves_ranked(struct gw_fanout *f, struct gw_view *v)
{
    if (!v->await_moves || !v->held || v->dead)
        return;
    struct gw_window *w = v->held;
    v->held = NULL;
    v->await_moves = 0;
    gw_view_update(f, v, w); /* may wait again, for later events */
}

/* A count-only delta: the board's viewer count changed and nothing else
 * is on its way to v's viewers. */
void gw_view_tell_viewers(struct gw_fanout *f, struct gw_view *v)
{
    v->viewers_due = 0;
    if (!v->board || !v->last || v->r.spec.kind == RC_VIEW_FEED)
        return;
    int64_t shown = gw_vcount_shown(v->board);
    if (shown == v->viewers_sent)
        return;
    struct rc_delta_msg dm = {
        .sub = v->r.id,
        .seq = v->stands > v->last->seq ? v->stands : v->last->seq, /* (where the viewers stand: gw_replay.c) */
        .total = v->last->total,
        .more = {.has_viewers = 1, .viewers = shown},
    };
    freeze_more(v, v->last, &dm.more);
    struct gw_msg *msg = gw_msg_take(rc_proto_rows_delta(&dm));
    if (!msg)
        return; /* out of memory: the next message carries it */
    broadcast(v, msg, &f->app->metrics.deltas_sent);
    gw_msg_unref(msg);
    v->viewers_sent = shown;
    rc_rate_sent(&v->gate, v->gate.rate ? gw_clock_gate_us(&f->app->clock) : 0);
}
