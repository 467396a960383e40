/* gw_view.c - window views (top-N, pages, around): a fresh window is diffed
 * against what the viewers hold, encoded once, and the same refcounted
 * buffer is queued to every viewer; reads of views the mirror does not
 * cover go to Redis (lua/read.lua) here. A view with max_rate holds a window
 * that comes within its interval (core/rc_rate.h) and sends the newest one
 * from the tick when the interval has passed. */
#include "fanout/gw_fanout_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "base/gw_clock.h"
#include "net/gw_conn.h"
#include "net/gw_msg.h"
#include "rc_diff.h"
#include "rc_prevrank.h"

static const char *period_field(const struct gw_board *b)
{
    return b->decl->period.kind == RC_PERIOD_NONE ? NULL : b->r.period;
}

/* Encodes window w of view v as a snapshot (id_json may be NULL). */
char *gw_fo_encode_snapshot(const struct gw_view *v, const struct gw_window *w, const char *id_json, int reset)
{
    struct rc_out_row *rows = malloc((w->n ? w->n : 1) * sizeof *rows);
    struct rc_field_value *fv = malloc((w->n ? w->n : 1) * RC_MAX_FIELDS * sizeof *fv);
    char *json = NULL;
    if (rows && fv) {
        gw_window_out_rows(w, v->board->decl, rows, fv);
        json = rc_encode_snapshot_epoch(id_json, v->r.id, v->board->r.name, period_field(v->board), w->seq,
                                        w->total, rows, w->n, reset, w->epoch);
        json = rc_encode_add_viewers(json, gw_fo_viewers_shown(v->board));
        json = rc_encode_add_freeze(json, w->freeze.frozen, w->freeze.seq, w->freeze.shown, v->r.spec.live);
    }
    free(rows);
    free(fv);
    return json;
}

/* A feed's event message for ev (a "reset" event: the reset snapshot of
 * the empty board its new history starts from). */
char *gw_fo_encode_event(const struct gw_view *v, const struct rc_event *ev)
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
        return gw_fo_encode_snapshot(v, &empty, NULL, 1);
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
    return rc_encode_event(v->r.id, ev->seq, ev->member, score, ev->has_new ? score - old : -old,
                           ev->has_new ? ev->rank : 0, ev->old_rank, ev->at_ms, nf ? fv : NULL, nf);
}

/* Queues a snapshot of s's view (its current window) to s, carrying the
 * subscribe's id when s still owes that reply. Returns 0 when it is queued
 * (or cannot be made: out of memory is answered as an error instead), -1
 * when the connection's queue refused it: it stays owed (s->id_json kept)
 * and goes out from gw_fanout_resync_conn as the queue drains. */
int gw_fo_send_owed_snapshot(struct gw_fanout *f, struct gw_sub *s)
{
    /* a resume that named another history than the board's: say so */
    int reset = s->has_since && s->has_epoch && strcmp(s->epoch, s->view->last->epoch) != 0;
    struct gw_msg *msg = gw_msg_take(gw_fo_encode_snapshot(s->view, s->view->last, s->id_json, reset));
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
    s->has_since = 0;
    s->has_epoch = 1;
    memcpy(s->epoch, s->view->last->epoch, sizeof s->epoch);
    return 0;
}

int gw_fo_feed_answer(struct gw_fanout *f, struct gw_sub *s, struct gw_msg *msg, const char *epoch)
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
void gw_fo_send_first_snapshot(struct gw_fanout *f, struct gw_sub *s)
{
    s->pending = 0;
    s->needs_snapshot = gw_fo_send_owed_snapshot(f, s) != 0;
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

/* The board's moves from the ring that take the view's board from seq s0 to
 * s1 (s0 < seq <= s1, all of them, in seq order) into *out (malloc'd, *n of
 * them; NULL with n 0 when s1 == s0). Returns 0, or -1 when the ring does
 * not hold them all (lost, older than the ring, or not arrived yet), when
 * something the events do not tell changed the board since v's last window
 * (moves_break, or a keyspace ZADD no event has explained yet), or OOM. */
static int ring_moves(const struct gw_view *v, int64_t s0, int64_t s1, uint64_t break_now, struct rc_move **out,
                      size_t *n)
{
    const struct gw_board *b = v->board;
    *out = NULL;
    *n = 0;
    if (s1 < s0 || v->last_break != break_now || b->ks_pending > 0)
        return -1;
    if (b->decl->shards > 1)
        return -1; /* (sharded: ring_moves_sharded) */
    if (s1 == s0)
        return 0;
    size_t first = b->ring_len;
    for (size_t i = 0; i < b->ring_len; i++) {
        if (gw_fo_ring_at(b, i)->seq == s0 + 1) {
            first = i;
            break;
        }
    }
    size_t want = (size_t)(s1 - s0);
    if (first == b->ring_len || b->ring_len - first < want)
        return -1;
    struct rc_move *m = malloc(want * sizeof *m);
    if (!m)
        return -1;
    for (size_t k = 0; k < want; k++) {
        const struct rc_event *ev = gw_fo_ring_at(b, first + k);
        if (ev->seq != s0 + 1 + (int64_t)k) {
            free(m);
            return -1;
        }
        m[k] = (struct rc_move){ev->member, ev->old_rank, ev->has_new ? ev->rank : 0};
    }
    *out = m;
    *n = want;
    return 0;
}

/* ring_moves for a sharded board (docs/sharded.md): windows carry each
 * shard's seq, and the moves between them are the ring's events of each
 * shard i with old seq < seq <= new seq (their ranks made global when they
 * came in, gw_shard_rank.c), in the order they arrived. -1 when the ring
 * does not hold every one of them (older than the ring, or still out for
 * its ranks), or as ring_moves. */
static int ring_moves_sharded(const struct gw_view *v, const struct gw_window *old, const struct gw_window *nw,
                              uint64_t break_now, struct rc_move **out, size_t *n)
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
    struct rc_move *m = malloc(want * sizeof *m);
    if (!m)
        return -1;
    size_t got = 0;
    for (size_t k = 0; k < b->ring_len && got < want; k++) {
        const struct rc_event *ev = gw_fo_ring_at(b, k);
        if (ev->shard >= S || ev->seq <= old->shard_seq[ev->shard] || ev->seq > nw->shard_seq[ev->shard])
            continue;
        m[got++] = (struct rc_move){ev->member, ev->old_rank, ev->has_new ? ev->rank : 0};
    }
    if (got != want) {
        free(m);
        return -1;
    }
    *out = m;
    *n = want;
    return 0;
}

/* The delta from old to new as JSON, or NULL when viewers need nothing
 * (*nothing = 1) or on OOM (*nothing = 0). Rows whose profile changed are
 * resent too, although their score did not move, and so are rows whose
 * shared place or tied changed (a tie formed or broke around them): a row
 * resent at its own rank replaces itself under the delta rule.
 * Every row carries
 * prev_rank: where its member stood in old, else (it came from outside the
 * window) its rank before the moves between old and new, from the board's
 * ring; when the ring cannot tell, NULL with *no_moves = 1 (the caller
 * sends a snapshot: always a correct answer). */
static char *encode_delta(const struct gw_view *v, const struct gw_window *old, const struct gw_window *nw,
                          uint64_t break_now, int *nothing, int *no_moves)
{
    struct rc_wrow *o = malloc((old->n + 1) * sizeof *o), *n = malloc((nw->n + 1) * sizeof *n);
    struct name_idx *by_name = malloc((old->n + 1) * sizeof *by_name);
    unsigned char *send = calloc(nw->n + 1, 1);
    struct rc_out_row *all = malloc((nw->n + 1) * sizeof *all), *rows = malloc((nw->n + 1) * sizeof *rows);
    struct rc_field_value *fv = malloc((nw->n + 1) * RC_MAX_FIELDS * sizeof *fv);
    const char **removed = malloc((old->n + 1) * sizeof *removed);
    int64_t *prev = malloc((nw->n + 1) * sizeof *prev);
    struct rc_move *moves = NULL;
    size_t nmoves = 0;
    int have_moves = 0;
    struct rc_delta d = {0};
    char *json = NULL;
    size_t nrows = 0;
    *nothing = 0;
    *no_moves = 0;
    if (!o || !n || !by_name || !send || !all || !rows || !fv || !removed || !prev)
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
        struct name_idx *hit = bsearch(&key, by_name, old->n, sizeof *by_name, name_cmp);
        if (hit && !send[j] &&
            (profile_hash(&old->rows[hit->i]) != profile_hash(&nw->rows[j]) ||
             old->rows[hit->i].place != nw->rows[j].place || old->rows[hit->i].tied != nw->rows[j].tied))
            send[j] = 1;
        if (!send[j])
            continue;
        if (hit) {
            prev[j] = old->first_rank + (int64_t)hit->i; /* as the viewers hold it */
            continue;
        }
        if (!have_moves) {
            if ((v->board->decl->shards > 1 ? ring_moves_sharded(v, old, nw, break_now, &moves, &nmoves)
                                             : ring_moves(v, old->seq, nw->seq, break_now, &moves, &nmoves)) != 0) {
                *no_moves = 1;
                goto cleanup;
            }
            have_moves = 1;
        }
        prev[j] = rc_prev_rank(moves, nmoves, nw->rows[j].member, nw->first_rank + (int64_t)j);
        if (prev[j] < 0) {
            *no_moves = 1;
            goto cleanup;
        }
    }
    gw_window_out_rows(nw, v->board->decl, all, fv);
    for (size_t j = 0; j < nw->n; j++)
        if (send[j]) {
            prev[nrows] = prev[j]; /* j >= nrows: compacting in place */
            rows[nrows++] = all[j];
        }
    for (size_t i = 0; i < d.nremoved; i++)
        removed[i] = old->rows[d.removed[i]].member;
    if (nrows == 0 && d.nremoved == 0 && old->total == nw->total && !freeze_news(v, old, nw)) {
        *nothing = 1;
        goto cleanup;
    }
    json = rc_encode_delta_prev(v->r.id, nw->seq, nw->total, rows, prev, nrows, removed, d.nremoved);
    json = rc_encode_add_freeze(json, nw->freeze.frozen, nw->freeze.seq, nw->freeze.shown, v->r.spec.live);
cleanup:
    rc_delta_free(&d);
    free(prev);
    free(moves);
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

static int windows_equal(const struct gw_view *v, const struct gw_window *a, const struct gw_window *b)
{
    if (a->n != b->n || a->first_rank != b->first_rank || a->total != b->total || freeze_news(v, a, b))
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->rows[i].c != b->rows[i].c || strcmp(a->rows[i].member, b->rows[i].member) != 0 ||
            profile_hash(&a->rows[i]) != profile_hash(&b->rows[i]) || a->rows[i].place != b->rows[i].place ||
            a->rows[i].tied != b->rows[i].tied)
            return 0;
    return 1;
}

/* A fresh window for v arrived: tell the live viewers what changed, answer the
 * pending ones, and keep it as what they all hold now. */
void gw_fo_view_update(struct gw_fanout *f, struct gw_view *v, struct gw_window *w)
{
    struct gw_metrics *m = &f->app->metrics;
    /* prev_rank: w was taken (a read: started) at this moves_break */
    uint64_t break_now = v->board ? v->board->moves_break : 0;
    uint64_t break_taken = gw_fo_view_uses_mirror(v) ? break_now : v->read_break;
    int64_t now_us = v->gate.rate ? gw_clock_gate_us(&f->app->clock) : 0;
    if (v->last && !rc_rate_may_send(&v->gate, now_us)) {
        /* Too soon for its rate: the newest window waits for the tick
         * (gw_fo_view_send_held), one message from what the viewers hold. */
        gw_window_free(v->held);
        v->held = w;
        gw_fo_view_due(v);
        for (struct gw_sub *s = v->subs; s; s = s->vnext)
            if (s->pending)
                gw_fo_send_first_snapshot(f, s);
        return;
    }
    gw_window_free(v->held); /* w is newer */
    v->held = NULL;
    int64_t shown = gw_fo_viewers_shown(v->board);
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
                json = gw_fo_encode_snapshot(v, w, NULL, over);
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
            json = v->board ? encode_delta(v, v->last, w, break_now, &nothing, &no_moves) : NULL;
            uint64_t *counter = &m->deltas_sent;
            if (no_moves && v->board && v->board->decl->shards > 1 && !v->await_final) {
                /* the events that explain it may still be out for their
                 * ranks: wait for them (gw_shard_feed.c), till the tick */
                v->held = w;
                v->await_moves = 1;
                v->await_tick = f->ticks;
                gw_fo_view_due(v);
                goto pending;
            }
            if (no_moves) {
                /* a row came from outside the window and the events at hand
                 * cannot say from where: a snapshot (its prev_rank is moot) */
                json = gw_fo_encode_snapshot(v, w, NULL, 0);
                counter = &m->snapshots_sent;
            } else if (began && nothing) { /* nothing to show, but the epoch to tell */
                json = gw_fo_encode_snapshot(v, w, NULL, 0);
                counter = &m->snapshots_sent;
            } else if (began) {
                json = rc_encode_add_epoch(json, w->epoch);
            }
            if (json && !(began && nothing) && shown != v->viewers_sent)
                json = rc_encode_add_viewers(json, shown); /* deltas carry the count when it changed */
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
    v->last_break = break_taken;
pending:
    for (struct gw_sub *s = v->subs; s; s = s->vnext)
        if (s->pending)
            gw_fo_send_first_snapshot(f, s);
}

/* The tick: sends v's held window when its rate lets it. */
void gw_fo_view_send_held(struct gw_fanout *f, struct gw_view *v, int64_t now_us)
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
    gw_fo_view_update(f, v, w);
    v->await_final = 0;
}

void gw_fo_view_moves_ranked(struct gw_fanout *f, struct gw_view *v)
{
    if (!v->await_moves || !v->held || v->dead)
        return;
    struct gw_window *w = v->held;
    v->held = NULL;
    v->await_moves = 0;
    gw_fo_view_update(f, v, w); /* may wait again, for later events */
}

/* A count-only delta: the board's viewer count changed and nothing else
 * is on its way to v's viewers. */
void gw_fo_view_tell_viewers(struct gw_fanout *f, struct gw_view *v)
{
    v->viewers_due = 0;
    if (!v->board || !v->last || v->r.spec.kind == RC_VIEW_FEED)
        return;
    int64_t shown = gw_fo_viewers_shown(v->board);
    if (shown == v->viewers_sent)
        return;
    const struct rc_freeze *fr = &v->last->freeze;
    struct gw_msg *msg = gw_msg_take(rc_encode_add_freeze(
        rc_encode_add_viewers(rc_encode_delta(v->r.id, v->last->seq, v->last->total, NULL, 0, NULL, 0), shown),
        fr->frozen, fr->seq, fr->shown, v->r.spec.live));
    if (!msg)
        return; /* out of memory: the next message carries it */
    broadcast(v, msg, &f->app->metrics.deltas_sent);
    gw_msg_unref(msg);
    v->viewers_sent = shown;
    rc_rate_sent(&v->gate, v->gate.rate ? gw_clock_gate_us(&f->app->clock) : 0);
}

void gw_fo_fail_pending(struct gw_view *v, int code)
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
    if (!v->dead && code == 0)
        gw_fo_board_heard_freeze(v->board, &w->freeze);
    if (v->dead) {
        gw_window_free(w);
    } else if (code == 0 && (w->freeze.version < v->board->freeze.version || v->board->freeze_due)) {
        /* read before a change of the freeze this gateway has heard of, or
         * one its views are not moved to yet: read again after it */
        gw_window_free(w);
        gw_fo_view_set_dirty(v);
    } else if (code == 0) {
        gw_fo_reads_track(v, w); /* (before: the update may free w) */
        gw_fo_view_update(v->f, v, w);
    } else {
        gw_fo_reads_failed(v);
        gw_fo_fail_pending(v, code);
    }
    gw_fo_view_unref(v);
}

/* Starts a consistent read of v's window. */
void gw_fo_view_read(struct gw_view *v)
{
    struct gw_board *b = v->board;
    struct gw_app *app = v->f->app;
    if (v->dead || v->reading || v->r.spec.kind == RC_VIEW_FEED || gw_fo_view_uses_mirror(v))
        return;
    struct gw_read_spec spec = {.places = v->r.spec.places, .live = v->r.spec.live};
    if (v->r.spec.kind == RC_VIEW_AROUND) {
        spec.kind = GW_READ_AROUND;
        spec.member = v->r.spec.around;
        spec.radius = v->r.spec.radius;
    } else {
        spec.kind = GW_READ_RANGE;
        spec.first = v->r.spec.offset;
        spec.count = v->r.spec.limit;
    }
    v->dirty = 0;
    v->refs++;
    v->reading = 1;
    app->metrics.view_reads[v->r.spec.kind == RC_VIEW_AROUND ? 0 : 1]++;
    v->read_break = b->moves_break;
    int rc = gw_read(&app->store, b->decl, b->r.name, b->r.period, &spec, on_view_read, v);
    if (rc) {
        v->reading = 0;
        gw_fo_view_set_dirty(v); /* retried when Redis is back */
        v->refs--;
        gw_fo_fail_pending(v, rc);
    }
}
