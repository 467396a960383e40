/* gw_feed.c - feed views: each change event is forwarded as it arrives, in
 * seq order, encoded once per view; a joining or resuming viewer is caught
 * up from the board's change log, then from the events that came in over
 * pub/sub meanwhile (the board's ring). The audience of a frozen board gets
 * the events up to the seq it is shown, no further (gw_frozen.c).
 *
 * A feed never skips a seq without `reset` (core/rc_feedgap.h): a viewer an
 * event reaches past its next seq waits while the log fills the gap; after
 * a (re-)subscribe of the board's channel, and once the board is quiet, its
 * viewers are checked against the board's seq (a lost last event shows no
 * gap). docs/gateway.md, "Feed gaps". */
#include "fanout/gw_fanout_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "gw_app.h"
#include "base/gw_clock.h"
#include "base/gw_fault.h"
#include "net/gw_conn.h"
#include "net/gw_msg.h"
#include "fanout/gw_feed_fault.h"
#include "rc_err.h"
#include "rc_feedgap.h"

/* The messages of one event for one view, each encoded once, when first
 * needed: the event; the event naming the history it began; a reset
 * snapshot of the empty board the new history starts from. */
struct event_msgs {
    struct gw_msg *plain, *began, *over;
    int sent; /* some viewer was given it */
};

static struct gw_msg *over_snapshot(const struct gw_view *v, const struct rc_event *ev)
{
    struct gw_window empty = {.seq = ev->seq - 1};
    memcpy(empty.epoch, ev->epoch, sizeof empty.epoch);
    return gw_msg_take(gw_view_encode_snapshot(v, &empty, NULL, 1, NULL));
}

/* Sends ev to viewer s (not pending), by its step (core/rc_feedgap.h). An
 * event that starts a new history (ev->epoch another than the viewer's) is
 * never skipped as old, whatever its seq: a history that began on a board
 * without one goes on (the event names its epoch); any other starts the
 * viewer over with a reset snapshot of the empty board, then the event.
 * Returns 0, 1 when seqs were skipped (the viewer is filled from the log
 * first; nothing sent), or -1 when out of memory. */
static int deliver_one(struct gw_fanout *f, struct gw_view *v, struct gw_sub *s, const struct rc_event *ev,
                       struct event_msgs *m)
{
    enum rc_feedgap_step step = rc_feedgap_step(s->cursor, s->epoch, ev->seq, ev->epoch, !strcmp(ev->op, "reset"));
    if (step == RC_FEEDGAP_SKIP)
        return 0;
    if (step == RC_FEEDGAP_FILL && !gw_fault_no_gap_fill(f->app->conf->test_clock))
        return 1;
    struct gw_msg *msg;
    if (step == RC_FEEDGAP_BEGIN) {
        if (!m->began && !(m->began = gw_msg_take(gw_view_encode_event(v, ev, ev->epoch, NULL))))
            return -1;
        msg = m->began;
    } else {
        if (step == RC_FEEDGAP_OVER) {
            if (!m->over && !(m->over = over_snapshot(v, ev)))
                return -1;
            gw_conn_send(s->conn, m->over, 1);
            f->app->metrics.snapshots_sent++;
        }
        if (!m->plain && !(m->plain = gw_msg_take(gw_view_encode_event(v, ev, NULL, NULL))))
            return -1;
        msg = m->plain;
    }
    gw_conn_send(s->conn, msg, 1);
    m->sent = 1;
    s->cursor = ev->seq;
    if (ev->epoch[0]) {
        s->has_epoch = 1;
        memcpy(s->epoch, ev->epoch, sizeof s->epoch);
    }
    f->app->metrics.deltas_sent++;
    return 0;
}

static void catch_up_soon(struct gw_view *v);

/* 1 while a log read's reply hands out the ring: a gap found then is read
 * again at the next tick, not at once (a log that cannot fill it, e.g. a
 * write lost with its primary, would else be read back to back). */
static int replying;

/* Marks viewer s of feed v to be answered from the log again (a snapshot,
 * then what it missed since its cursor; `gap`: the missing events alone
 * when the log holds them). */
static void repend(struct gw_sub *s, int gap)
{
    if (s->pending)
        return;
    s->pending = 1;
    s->has_since = 1;
    s->since = s->cursor;
    s->gapfill = gap;
}

/* The newest seq v's viewers may be given: the shown seq of a frozen board
 * for the audience, else no limit. */
static int64_t feed_limit(const struct gw_view *v)
{
    return gw_board_view_held(v) ? v->board->freeze_was.shown : INT64_MAX;
}

/* Sends ev to the feed viewers of v that have not seen it. */
void gw_feed_deliver(struct gw_fanout *f, struct gw_view *v, const struct rc_event *ev)
{
    struct event_msgs m = {NULL, NULL, NULL, 0};
    if (ev->seq > feed_limit(v) && !ev->epoch[0])
        return; /* hidden by a freeze: a reveal brings it */

    int gap = 0;
    for (struct gw_sub *s = v->subs; s; s = s->vnext) {
        int rc = s->pending ? 0 : deliver_one(f, v, s, ev, &m);
        if (rc < 0)
            break;
        if (rc > 0) {
            /* an event was lost on the way: this one (and whatever comes
             * meanwhile, kept in the ring) waits until the log fills it */
            repend(s, 1);
            gap = 1;
        }
    }
    if (gap) {
        f->app->metrics.feed_gaps++;
        if (replying)
            gw_board_view_set_dirty(v);
        else
            catch_up_soon(v);
    }
    if (m.sent && v->board) {
        /* news: once the board is quiet, its feeds are checked (the last
         * event may be lost without a gap to show it) */
        v->board->feed_heard_us = gw_clock_mono_us();
        v->board->feed_check_due = 1;
    }
    gw_msg_unref(m.plain);
    gw_msg_unref(m.began);
    gw_msg_unref(m.over);
}

struct log_join {
    struct gw_fanout *f;
    struct gw_view *v;
};

/* Fills the gap of viewer s (pending with gapfill) from the log read (the
 * board at seq in history epoch, events evs[0..n)) with the events it
 * missed alone, when the log holds them all in its history. Returns 1 when
 * done so (the viewer goes on, or is pending again when its queue refused
 * the events: a snapshot and the rest once it drains), 0 when the viewer
 * must be answered with a reset snapshot instead. */
static int fill_gap(struct gw_fanout *f, struct gw_view *v, struct gw_sub *s, int64_t seq, const char *epoch,
                    const struct rc_event *evs, size_t n)
{
    s->gapfill = 0;
    if (rc_feedgap_fill(s->cursor, s->epoch, seq, epoch, n, n ? evs[0].seq : 0, n ? evs[0].epoch : "") !=
        RC_FEEDGAP_REPLAY)
        return 0;
    s->pending = 0;
    s->has_since = 0;
    for (size_t i = 0; i < n; i++) {
        if (evs[i].seq <= s->cursor || evs[i].seq > seq)
            continue;
        /* the lost event may be the first of the history (it names it) */
        int began = evs[i].epoch[0] && strcmp(evs[i].epoch, s->epoch) != 0;
        struct gw_msg *msg = gw_msg_take(gw_view_encode_event(v, &evs[i], began ? evs[i].epoch : NULL, NULL));
        if (msg && gw_conn_send_owed(s->conn, msg) != 0) {
            gw_msg_unref(msg);
            repend(s, 0); /* lagging: the rest after a snapshot, once its queue drains */
            return 1;
        }
        gw_msg_unref(msg);
        s->cursor = evs[i].seq;
        if (began) {
            s->has_epoch = 1;
            memcpy(s->epoch, evs[i].epoch, sizeof s->epoch);
        }
        f->app->metrics.deltas_sent++;
    }
    s->cursor = s->cursor > seq ? s->cursor : seq;
    return 1;
}

/* The log (and seq) arrived: answer every pending feed viewer of v with a
 * snapshot at the log's seq, replay what it missed since its `since` when the
 * log still holds it (else a reset snapshot), then the events that came in
 * over pub/sub meanwhile (the board's ring). Snapshot and replay are owed
 * replies: a viewer whose queue cannot take them stays pending (its id kept)
 * and is answered again from the log once its queue drains, the replay
 * going on from the last event it was given. */
static void on_feed_log(int code, int64_t seq, int64_t total, const char *epoch, const struct rc_freeze *fr,
                        struct rc_event *evs, size_t n, void *privdata)
{
    struct log_join *j = privdata;
    struct gw_view *v = j->v;
    struct gw_fanout *f = j->f;
    free(j);
    if (code == 0 && gw_feed_fault_fail_log(f->app))
        code = RC_E_UNAVAILABLE; /* (a test's failed read) */
    v->reading = 0;
    int recheck = v->recheck;
    v->recheck = 0;
    if (v->dead) {
        gw_board_view_unref(v);
        return;
    }
    if (code) {
        /* Its pending viewers (a gap to fill, a resume, a recheck) wait for
         * a read that answers: the tick tries again. Nothing else would:
         * later events and the quiet check pass a pending viewer by, and
         * when the board's channel lives on another node than its data
         * (a cluster), no resubscribe follows the node's failure. */
        gw_view_read_fail_pending(v, code);
        gw_board_view_set_dirty(v);
        gw_board_view_unref(v);
        return;
    }
    /* A log read from before the board's history began can come back after
     * that history's first event reached the ring over pub/sub (a Redis
     * that came back empty, or a set deleted from outside, then a write):
     * the read is the older word (gw_board_follow_read), the ring is kept,
     * and its first event carries the viewers into the new history. */
    gw_board_follow_read(v->board, epoch, seq);
    gw_board_heard_freeze(v->board, fr);
    /* read before a change of the freeze that its viewers must see: they
     * are answered from a read after it */
    int stale = fr->version < v->board->freeze.version || v->board->freeze_due;
    int again = 0;
    for (struct gw_sub *s = v->subs; s && !stale; s = s->vnext) {
        if (!s->pending || s->replay)
            continue; /* (a replay's viewer is answered when it goes live: gw_replay.c) */
        if (s->after_replay && seq < s->since) {
            again = 1; /* a read older than the replay's live seq: the next one answers it */
            continue;
        }
        if (s->gapfill && fill_gap(f, v, s, seq, epoch, evs, n))
            continue;
        int64_t from = s->has_since ? s->since : seq;
        /* a resume names its history (epoch): never replayed into another */
        int other = s->has_since && s->has_epoch && strcmp(s->epoch, epoch) != 0;
        int replayable = !other && (!s->has_since || s->since >= seq ||
                                    (n && evs[0].seq <= s->since + 1) || (!n && s->since >= seq));
        struct gw_window empty = {.seq = seq, .total = total, .freeze = *fr};
        snprintf(empty.epoch, sizeof empty.epoch, "%s", epoch);
        struct gw_msg *msg = gw_msg_take(gw_view_encode_snapshot(v, &empty, s->id_json, !replayable, NULL));
        if (gw_view_feed_answer(f, s, msg, empty.epoch) != 0)
            continue; /* stays pending */
        s->cursor = replayable ? from : seq;
        s->after_replay = 0;
        for (size_t i = 0; i < n && !s->pending; i++) {
            if (evs[i].seq <= s->cursor || evs[i].seq > seq)
                continue;
            msg = gw_msg_take(gw_view_encode_event(v, &evs[i], NULL, NULL));
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
    if (stale)
        gw_board_view_set_dirty(v); /* the tick reads again */
    else {
        replying = 1;
        for (size_t i = 0; i < b->ring_len; i++)
            gw_feed_deliver(f, v, gw_board_ring_at(b, i));
        replying = 0;
        if (again)
            gw_board_view_set_dirty(v); /* (the tick reads again for the replay's viewer) */
    }
    if (recheck && !v->dead)
        gw_feed_recheck(v); /* this read may predate the channel's subscribe */
    gw_board_view_unref(v);
}

/* A log read's reply held back by a test (gw_feed_fault.h). */
struct held_log {
    uv_timer_t timer;
    int code;
    int64_t seq, total;
    char epoch[RC_EPOCH_MAX + 1];
    struct rc_freeze fr;
    struct rc_event *evs;
    size_t n;
    void *privdata;
};

static void held_free(uv_handle_t *h)
{
    struct held_log *x = h->data;
    free(x->evs);
    free(x);
}

static void held_fire(uv_timer_t *t)
{
    struct held_log *x = t->data;
    on_feed_log(x->code, x->seq, x->total, x->epoch, &x->fr, x->evs, x->n, x->privdata);
    uv_close((uv_handle_t *)t, held_free);
}

static void on_feed_log_held(int code, int64_t seq, int64_t total, const char *epoch, const struct rc_freeze *fr,
                             struct rc_event *evs, size_t n, void *privdata)
{
    struct log_join *j = privdata;
    struct held_log *x = calloc(1, sizeof *x);
    struct rc_event *copy = n ? malloc(n * sizeof *copy) : NULL;
    if (!x || (n && !copy)) {
        free(x);
        free(copy);
        on_feed_log(code, seq, total, epoch, fr, evs, n, privdata);
        return;
    }
    if (n)
        memcpy(copy, evs, n * sizeof *copy);
    *x = (struct held_log){.code = code, .seq = seq, .total = total, .fr = *fr, .evs = copy, .n = n, .privdata = j};
    snprintf(x->epoch, sizeof x->epoch, "%s", epoch);
    uv_timer_init(j->f->app->loop, &x->timer);
    x->timer.data = x;
    uv_timer_start(&x->timer, held_fire, (uint64_t)gw_feed_fault_delay_ms(j->f->app), 0);
}

/* Starts the log read that answers v's pending feed viewers. */
void gw_feed_catch_up(struct gw_view *v)
{
    struct gw_app *app = v->f->app;
    if (v->dead || v->reading)
        return;
    if (v->board && v->board->decl->shards > 1) {
        gw_feed_shard_catch_up(v); /* per shard (gw_feed_shard.c) */
        return;
    }
    struct log_join *j = malloc(sizeof *j);
    if (!j)
        return;
    j->f = v->f;
    j->v = v;
    v->refs++;
    v->reading = 1;
    int rc = gw_read_log(&app->store, v->board->decl, v->board->r.name, v->board->r.period, v->r.spec.live,
                         gw_feed_fault_delay_ms(app) ? on_feed_log_held : on_feed_log, j);
    if (rc) {
        free(j);
        v->reading = 0;
        v->refs--;
        gw_board_view_set_dirty(v);
        gw_view_read_fail_pending(v, rc);
    }
}

/* Catches v's pending viewers up now, or from the tick while a read is out. */
static void catch_up_soon(struct gw_view *v)
{
    if (v->reading)
        gw_board_view_set_dirty(v);
    else
        gw_feed_catch_up(v);
}

void gw_feed_advance(struct gw_fanout *f, struct gw_view *v)
{
    const struct gw_board *b = v->board;
    int64_t limit = feed_limit(v), oldest = b->ring_len ? gw_board_ring_at(b, 0)->seq : INT64_MAX;
    int any = 0;
    for (struct gw_sub *s = v->subs; s; s = s->vnext) {
        if (s->pending || s->cursor >= limit || s->cursor + 1 >= oldest)
            continue;
        repend(s, 0); /* the ring starts after its next event */
        any = 1;
    }
    for (size_t i = 0; i < b->ring_len; i++)
        gw_feed_deliver(f, v, gw_board_ring_at(b, i));
    if (any)
        catch_up_soon(v);
}

void gw_feed_resnapshot(struct gw_view *v)
{
    for (struct gw_sub *s = v->subs; s; s = s->vnext)
        repend(s, 0);
    catch_up_soon(v);
}

void gw_feed_recheck(struct gw_view *v)
{
    /* A sharded board's viewers go back to the logs by their cursor
     * (gw_feed_shard.c), with a snapshot. */
    int gap = !(v->board && v->board->decl->shards > 1);
    for (struct gw_sub *s = v->subs; s; s = s->vnext)
        repend(s, gap);
    if (v->reading)
        v->recheck = 1;
    gw_board_view_set_dirty(v); /* the tick reads */
}

/* The head of a quiet board came back: a viewer of feed v behind the seq
 * it may be shown, or in another history, lost the board's last events. */
static void on_quiet_head(int code, struct gw_window *w, void *privdata)
{
    struct gw_view *v = privdata;
    int behind = 0;
    int sharded = v->board && v->board->decl->shards > 1;
    for (const struct gw_sub *s = v->subs; s && !v->dead && code == 0 && w; s = s->vnext) {
        if (s->pending)
            continue;
        /* a sharded board's head: seq the sum of its shards', epoch a digest
         * of theirs; a viewer's position is its cursor's sum */
        if (sharded ? !s->vec || rc_shard_cursor_sum(s->vec) < w->seq
                    : s->cursor < w->seq || strcmp(s->epoch, w->epoch) != 0)
            behind = 1;
    }
    if (behind)
        gw_feed_recheck(v); /* the log fills them */
    gw_window_free(w);
    gw_board_view_unref(v);
}

/* Reads the head (seq and epoch, no rows) of feed v's board as its viewers
 * may see it: cheaper than the log, which is read only when one is behind. */
static void read_quiet_head(struct gw_view *v)
{
    struct gw_app *app = v->f->app;
    /* the head alone: no row lies this far down; a sharded board's read
     * takes count 0 for that (and refuses pages that deep) */
    struct gw_read_spec spec = {.kind = GW_READ_RANGE, .first = INT32_MAX, .count = 1, .live = v->r.spec.live};
    if (v->board->decl->shards > 1)
        spec.first = spec.count = 0;
    v->refs++;
    if (gw_read(&app->store, v->board->decl, v->board->r.name, v->board->r.period, &spec, on_quiet_head, v) != 0)
        v->refs--; /* Redis is down: its return rechecks every feed */
}

void gw_feed_check_quiet(struct gw_fanout *f)
{
    int64_t now = gw_clock_mono_us();
    if (now - f->feed_checked_us < GW_FO_FEED_QUIET_MS * 1000 / 4)
        return;
    f->feed_checked_us = now;
    for (struct gw_board *b = f->all; b; b = b->next) {
        if (!rc_feedgap_quiet_due(b->feed_check_due, b->feed_heard_us, now, GW_FO_FEED_QUIET_MS * 1000))
            continue;
        b->feed_check_due = 0;
        for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v))
            if (v->r.spec.kind == RC_VIEW_FEED && !v->dead)
                read_quiet_head(v);
    }
}
