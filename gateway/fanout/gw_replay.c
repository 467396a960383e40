/* gw_replay.c - replay subscriptions (PROTOCOL v1.2, docs/history.md,
 * "Replay"): a window view that starts at a past moment, moves forward at
 * `speed` times the pace the changes were written at, and goes live when it
 * reaches the present, under the same sub.
 *
 * A replaying subscription is an ordinary viewer of its (live) view that
 * the view does not serve yet: gw_view_send_owed_snapshot keeps its snapshots
 * owed and the broadcasts skip it (needs_snapshot), so none of the live
 * traffic reaches it. The replay sends it the board at each moment it
 * passes, as snapshots of the same sub with "replay": true (PROTOCOL v1:
 * the server may send a fresh snapshot instead of deltas at any time), each
 * read by store/gw_read_at at the board time the pace has reached (through
 * gw_replay_share.c: replays of one view whose paces stand close together
 * share one read). When a
 * read shows the present seq N, the replay waits until the live view
 * stands at N or past it (its window, or a later one equal to it: the view
 * hears of a change later than a read of Redis shows it, and its snapshot
 * must never take the client back), then sends {"op":"live","sub","seq":N},
 * lets go of the subscription and sends it the view's live snapshot: the
 * client replaces its list, so nothing is missed or shown twice.
 *
 * The fan-out's tick moves every replay on (one read in flight each, after
 * a read at least three times its duration without one, and each read after
 * the first paid from its connection's read budget: may_read). A
 * replay lives until it is done and its read is back: a subscription that
 * goes (unsubscribe, close) detaches it, and the read's answer frees it.
 *
 * A member list reads its list at each moment (absent included). A feed
 * sends the log's events after the moment as the pace reaches their "at",
 * read in batches; at the end it resumes as a pending feed viewer after the
 * last seq sent, which the feed's catch-up (gw_feed.c) answers: no event is
 * missed or sent twice at the switch.
 *
 * A sharded board (docs/history.md, "Replays of sharded boards") replays by
 * time only, every step included (gw_read_at picks the sharded reader of the
 * view): its seq names no moment to read next, so a moment without a time
 * paces from the time asked, and one fallen behind from oldest_time. */
#include "fanout/gw_replay.h"

#include "fanout/gw_fanout_int.h"
#include "fanout/gw_replay_share.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "gw_app.h"
#include "net/gw_conn.h"
#include "store/gw_read_at.h"
#include "rc_auth.h"
#include "rc_conf.h"
#include "rc_registry.h"
#include "rc_members.h"

struct gw_replay {
    struct gw_replay *next;
    struct gw_fanout *f;       /* NULL once the fan-out is gone */
    struct gw_sub *s;          /* NULL once the subscription is gone */
    const struct rc_board *decl;
    char board[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    struct rc_view view;
    double speed;
    int started;               /* the first snapshot went out */
    int paced;                 /* base_at is known (the moment shown has a time; a sharded board's: always) */
    int64_t from_time;         /* replay.from.time (a sharded board's pace starts there when its moment has none) */
    int64_t base_at;           /* the board time the pace counts from ... */
    int64_t base_wall;         /* ... and the clock's time then */
    int64_t shown;             /* the seq last sent */
    char epoch[RC_EPOCH_MAX + 1]; /* the board's history (epoch) at the first moment, "" none yet */
    int has_shown_at;
    int64_t shown_at;          /* the time of change `shown` (a window's), or of the last event sent */
    int by_time;               /* the read in flight is by time */
    int64_t log_after;         /* a feed's log read in flight: the seq it reads after */
    int at_end;                /* a feed's: sent a batch that reached the present; one read to check, then live */
    int awaiting;              /* at the present (shown): waits for the live view to stand there */
    int64_t await_us;          /* ... since then (monotonic) */
    int reading;
    int64_t next_us;           /* no read before this: each waits 3x the last one's time */
    /* a feed: the log's changes after shown not sent yet (evs[evi..nevs)) */
    struct rc_event *evs;
    size_t nevs, evi;
    int64_t evs_present;       /* the board's seq when they were read */
};

/* The longest a replay at the present waits for its live view to stand
 * there (docs/history.md): a view reads or is cut within a tick or two. */
#define REPLAY_AWAIT_MAX_US (30 * 1000 * 1000)

/* How far apart (ms of wall time, times the speed in board time) the paces
 * of two replays of one view may stand and still share a moment read: a
 * shared step shows a moment at most this much off the replay's own pace. */
#define REPLAY_SHARE_SLACK_MS 250

/* Changes a feed's replay reads from the log at a time. */
#define REPLAY_FEED_BATCH 256

const char *gw_replay_refusal(const struct rc_board *decl, const struct rc_request *r)
{
    if (decl->decay.kind != RC_DECAY_NONE)
        return "a decaying board keeps no history to replay";
    if (decl->shards > 1 && r->replay_kind == RC_AT_SEQ)
        return "a sharded board's seq names no single state: replay.from must be a time";
    if (r->view.places)
        return "places = shared is not replayed yet (docs/history.md)";
    if (r->view.kind == RC_VIEW_TEAM)
        return "a roster is not replayed yet (get it at a moment, or replay its members as a member list)";
    if (r->replay_kind == RC_AT_TIME && decl->shards <= 1 && r->replay_from < 0)
        return "replay.from.time must be a time";
    return NULL;
}

static void unlink_free(struct gw_replay *rp)
{
    free(rp->evs);
    if (rp->f)
        for (struct gw_replay **p = &rp->f->replays; *p; p = &(*p)->next)
            if (*p == rp) {
                *p = rp->next;
                break;
            }
    free(rp);
}

static void on_read(int code, struct gw_read_at_result *res, int64_t target, int64_t dur_us, void *privdata);

/* A replay's read after its first (which its subscribe paid for) is a read
 * of its connection (docs/security.md): it takes what a read of its rows
 * costs from the connection's and the address's read buckets, and when
 * either is out of tokens waits for a later tick. 1: may read now. */
static int may_read(struct gw_replay *rp)
{
    struct gw_app *app = rp->f->app;
    const struct rc_conf *conf = app->conf;
    struct gw_conn *c = rp->s->conn;
    int64_t now = (int64_t)uv_now(app->loop);
    double cost = rc_auth_read_tokens(rp->view.kind == RC_VIEW_FEED ? REPLAY_FEED_BATCH : rc_registry_view_rows(&rp->view));
    struct rc_bucket *ipb = c->ip_read_bucket;
    if (rc_auth_bucket_take_n(&c->read_bucket, conf->conn_read_rate, conf->conn_read_burst, cost, now) &&
        (!ipb || rc_auth_bucket_take_n(ipb, conf->ip_read_rate, conf->ip_read_burst, cost, now)))
        return 1;
    app->metrics.replay_reads_waited++;
    return 0;
}

/* One moment read: by seq, or by time. Returns 0 or an RC_E_*. */
static int read_at(struct gw_replay *rp, int by_time, int64_t target)
{
    struct rc_moment_req req = {.by_time = by_time, .audience = !rp->view.live, .targets = &target, .ntargets = 1};
    if (rp->view.kind == RC_VIEW_FEED) {
        req.view = RC_MOMENT_RANGE; /* no rows: the moment's seq, time and member count */
    } else if (rp->view.kind == RC_VIEW_MEMBERS) {
        /* the view's own list (rp->view's pointer was the request's): the
         * read copies it, and reads only while the subscription lives */
        const struct rc_view *spec = &rp->s->view->r.spec;
        req.view = RC_MOMENT_LIST;
        req.members = spec->members;
        req.nmembers = spec->nmembers;
    } else if (rp->view.kind == RC_VIEW_AROUND) {
        req.view = RC_MOMENT_AROUND;
        req.member = rp->view.around;
        req.radius = rp->view.radius;
    } else {
        req.view = RC_MOMENT_RANGE;
        req.first = rp->view.kind == RC_VIEW_PAGE ? rp->view.offset : 0;
        req.count = rp->view.limit;
    }
    rp->reading = 1;
    /* replays of the same view whose paces stand within a quarter second
     * of this one's share one read (gw_replay_share.c) */
    int64_t tol_ms = (int64_t)(rp->speed * REPLAY_SHARE_SLACK_MS);
    rp->by_time = by_time;
    int rc = gw_replay_share_moment(rp->f, rp->decl, rp->board, rp->period, &req, tol_ms, on_read, rp);
    if (rc)
        rp->reading = 0;
    return rc;
}

static void send_moment(struct gw_replay *rp, const struct gw_read_at_result *res)
{
    struct gw_sub *s = rp->s;
    int frozen = !rp->view.live && res->head.freeze.frozen;
    struct rc_snapshot_msg m = {
        .id_json = s->id_json, /* the first one answers the subscribe */
        .sub = s->view->r.id,
        .board = rp->board,
        .period = rp->decl->period.kind == RC_PERIOD_NONE ? NULL : rp->period,
        .seq = res->at_seq,
        .total = res->w->total,
        .rows = gw_window_rows_out(res->w, rp->decl),
        .more = {.epoch = res->head.epoch, .frozen = frozen, .freeze_seq = res->head.freeze.seq},
        .has_at = 1,
        .at_seq = res->at_seq,
        .has_at_time = res->has_at_time,
        .at_time = res->at_time,
        .replay = 1,
    };
    const char *absent[RC_MEMBERS_MAX];
    const struct rc_view *spec = &s->view->r.spec;
    if (spec->kind == RC_VIEW_MEMBERS) { /* as the live list's snapshot (gw_view.c) */
        long na = rc_members_absent(spec->members, spec->nmembers, res->w->rows, res->w->n, absent);
        m.has_absent = 1;
        m.absent = absent;
        m.nabsent = na > 0 ? (size_t)na : 0;
    }
    gw_conn_reply(s->conn, rc_proto_rows_snapshot(&m));
    free(s->id_json);
    s->id_json = NULL;
    rp->shown = res->at_seq;
    rp->has_shown_at = res->has_at_time;
    rp->shown_at = res->at_time;
    /* a sharded board before its first change (no time): the pace starts
     * at the time asked (its seq names no moment to read next by) */
    if (!rp->paced && (res->has_at_time || rp->decl->shards > 1)) {
        rp->paced = 1;
        rp->base_at = res->has_at_time ? res->at_time : rp->from_time;
        rp->base_wall = gw_now_ms(rp->f->app);
    }
}

/* The live view stands at seq or past it: its snapshot (owed to s since
 * the subscribe) shows the board as of seq or later, never before. A view
 * with no window yet stands nowhere. */
static int view_stands_at(const struct gw_view *v, int64_t seq)
{
    return v->last && v->stands >= seq;
}

/* Brings the live view to the present, for a replay waiting for it to
 * stand there: a read view reads again (rather than at the change's event,
 * which may come later); a mirror view is cut alone from the mirror (a
 * view the last change did not touch is not cut by the refresh, yet stands
 * at the mirror's seq: the cut, equal to its window, says so). */
static void view_nudge(struct gw_view *v)
{
    if (v->dead || !v->board || v->reading)
        return;
    if (!gw_board_view_uses_mirror(v)) {
        if (!v->dirty)
            gw_board_view_set_dirty(v);
    } else if (!v->cut_due) {
        gw_mirror_cut_one(v->board, v);
    }
}

/* The replay reached the present: live from here, same sub. */
static void go_live(struct gw_replay *rp, int64_t seq)
{
    struct gw_sub *s = rp->s;
    gw_conn_reply(s->conn, rc_proto_at_encode_live(s->view->r.id, seq));
    s->replay = NULL;
    rp->s = NULL;
    if (s->view->r.spec.kind == RC_VIEW_FEED) {
        /* a pending feed viewer resuming after seq: the feed's catch-up
         * sends the changes after it from the log, then the live ones
         * (gw_feed.c), so none is missed or sent twice */
        s->pending = 1;
        s->has_since = 1;
        s->since = seq;
        s->after_replay = 1; /* (not answered by a catch-up read already out: it may predate seq) */
        /* the history it replayed: a catch-up in another (Redis lost its
         * data since) answers with a reset snapshot, not seq's followers */
        s->has_epoch = rp->decl->shards <= 1 && rp->epoch[0] != '\0'; /* (a sharded feed resumes by its cursor) */
        snprintf(s->epoch, sizeof s->epoch, "%s", rp->epoch);
        if (s->view->reading)
            gw_board_view_set_dirty(s->view);
        else
            gw_feed_catch_up(s->view);
        return;
    }
    s->after_replay = 1; /* its snapshot says seq N or later (gw_view_send_owed_snapshot) */
    if (!s->pending && s->view->last && gw_view_send_owed_snapshot(rp->f, s) == 0)
        s->needs_snapshot = 0;
    /* else: owed, sent by the view's first window or when the queue drains */
}

/* The board went back below a moment the replay showed (present < shown):
 * the changes after present were lost (a failover whose promoted replica
 * had not received them, Redis restored or restarted without them) and the
 * seqs after it will name other changes. No moment after it can follow
 * what was shown, so the replay ends now, said so: `live` with "reset" and
 * the board's present, then the live view as for a new viewer (a window's
 * snapshot replaces the list; a feed's snapshot, then its events). */
static void went_back(struct gw_replay *rp, int64_t present)
{
    struct gw_sub *s = rp->s;
    gw_conn_reply(s->conn, rc_proto_at_encode_live_reset(s->view->r.id, present));
    s->replay = NULL;
    rp->s = NULL;
    rp->f->app->metrics.replay_resets++;
    s->after_replay = 0;
    if (s->view->r.spec.kind == RC_VIEW_FEED) {
        s->pending = 1; /* a fresh viewer: snapshot at the log's seq, then the live events */
        s->has_since = 0;
        s->has_epoch = 0;
        if (s->view->reading)
            gw_board_view_set_dirty(s->view);
        else
            gw_feed_catch_up(s->view);
        return;
    }
    view_nudge(s->view); /* (its window may still be the lost one's: read it again) */
    if (!s->pending && s->view->last && gw_view_send_owed_snapshot(rp->f, s) == 0)
        s->needs_snapshot = 0;
}

/* 1 when a read of the board (its present seq and epoch) shows it went
 * back below what the replay showed, or into another history. (A sharded
 * board's epoch is a digest that changes when a shard begins its first
 * history: not compared; its seq, a sum, still only grows.) */
static int board_went_back(const struct gw_replay *rp, int64_t present, const char *epoch)
{
    return present < rp->shown ||
           (rp->decl->shards <= 1 && rp->epoch[0] && epoch[0] && strcmp(rp->epoch, epoch) != 0);
}

/* 1 when a moment read shows that change `shown` is no longer the one the
 * replay showed, though the board has gone on past it (its seq taken by
 * another change since): by time, a read at or after shown's time must
 * show shown or later (shown's own time qualifies it), and shown itself
 * must keep its time. */
static int moment_replaced(const struct gw_replay *rp, const struct gw_read_at_result *res, int64_t target)
{
    if (res->status != RC_MOMENT_OK || !rp->has_shown_at)
        return 0;
    if (rp->by_time && target >= rp->shown_at && res->at_seq < rp->shown)
        return 1;
    return res->at_seq == rp->shown && res->has_at_time && res->at_time != rp->shown_at;
}

/* A read that failed before the first snapshot fails the subscribe. */
static void refuse(struct gw_replay *rp, int code, const struct gw_read_at_result *res)
{
    struct gw_sub *s = rp->s;
    char msg[160];
    char *json;
    if (res && res->status == RC_MOMENT_GONE) {
        snprintf(msg, sizeof msg, "board %s's history no longer holds that moment", rp->board);
        json = rc_proto_at_encode_gone(s->id_json, msg, res->oldest);
    } else {
        json = rc_proto_encode_error(s->id_json, code ? code : RC_E_BAD_REQUEST,
                               code == RC_E_UNAVAILABLE ? "Redis is unreachable"
                               : code ? "replay read failed" : "replay.from.seq is past the board's present seq");
    }
    struct gw_conn *c = s->conn;
    gw_conn_ref(c);
    gw_conn_reply(c, json);
    s->replay = NULL;
    rp->s = NULL;
    rp->f->drop_sub(rp->f, s); /* frees s */
    gw_conn_unref(c);
}

static void on_read(int code, struct gw_read_at_result *res, int64_t target, int64_t dur_us, void *privdata)
{
    struct gw_replay *rp = privdata;
    rp->reading = 0;
    /* a read deep in the past holds Redis for a while (docs/history.md,
     * "Cost"): a replay leaves it idle 3x as long between its reads (the
     * read's own time in Redis, when it shared another replay's) */
    rp->next_us = gw_clock_mono_us() + 3 * dur_us;
    if (!rp->f || !rp->s) {
        if (res && res->w)
            gw_window_free(res->w);
        unlink_free(rp);
        return;
    }
    int ok = !code && res->status == RC_MOMENT_OK;
    if (!rp->started) {
        if (!ok) {
            refuse(rp, code, res);
            if (res && res->w)
                gw_window_free(res->w);
            unlink_free(rp);
            return;
        }
        rp->started = 1;
        snprintf(rp->epoch, sizeof rp->epoch, "%s", res->head.epoch);
        send_moment(rp, res);
    } else if (!code && (board_went_back(rp, res->head.seq, res->head.epoch) || moment_replaced(rp, res, target))) {
        went_back(rp, res->head.seq);
        if (res->w)
            gw_window_free(res->w);
        unlink_free(rp);
        return;
    } else if (ok && res->at_seq > rp->shown) {
        /* (a shared read may show a moment a little behind this replay's
         * pace, at or before the one shown: a replay never goes back) */
        send_moment(rp, res);
    } else if (!code && res->status == RC_MOMENT_GONE) {
        /* fallen behind what can be shown (writes outran the pace past
         * history_undo_max, or the log was trimmed): the next tick reads
         * the oldest moment held by seq and the pace starts again there,
         * instead of a refused read every tick until the pace gets there */
        rp->paced = 0;
        rp->shown = res->oldest - 1;
        if (rp->decl->shards > 1) { /* by time: from the earliest every shard holds, or the present */
            rp->paced = 1;
            rp->base_at = res->has_oldest_time > 0 ? res->oldest_time : gw_now_ms(rp->f->app);
            rp->base_wall = gw_now_ms(rp->f->app);
        }
    }
    /* the present: the live seq, or what a frozen board's audience is shown */
    int64_t present = !rp->view.live && res && res->head.freeze.frozen ? res->head.freeze.shown
                                                                        : res ? res->head.seq : 0;
    int beyond = !code && res->status == RC_MOMENT_BEYOND; /* a seq step past the present */
    if (res && res->w)
        gw_window_free(res->w);
    if ((ok && rp->shown >= present) || beyond) {
        if (view_stands_at(rp->s->view, rp->shown)) {
            go_live(rp, rp->shown);
            unlink_free(rp);
            return;
        }
        /* the view has not seen the change the read shows: wait for it
         * (gw_replay_tick), and bring it there meanwhile */
        rp->awaiting = 1;
        rp->await_us = gw_clock_mono_us();
        view_nudge(rp->s->view);
    }
    /* an error later on: the next tick reads again */
}

int gw_replay_start(struct gw_fanout *f, struct gw_sub *s, const struct rc_board *decl, const struct rc_request *r,
                    const char *period)
{
    struct gw_replay *rp = calloc(1, sizeof *rp);
    if (!rp)
        return RC_E_INTERNAL;
    *rp = (struct gw_replay){.f = f, .s = s, .decl = decl, .view = r->view, .speed = r->replay_speed,
                             .from_time = r->replay_from};
    snprintf(rp->board, sizeof rp->board, "%s", r->board);
    snprintf(rp->period, sizeof rp->period, "%s", period);
    int rc = read_at(rp, r->replay_kind == RC_AT_TIME, r->replay_from);
    if (rc) {
        free(rp);
        return rc;
    }
    s->replay = rp;
    rp->next = f->replays;
    f->replays = rp;
    return 0;
}

void gw_replay_detach(struct gw_sub *s)
{
    struct gw_replay *rp = s->replay;
    s->replay = NULL;
    rp->s = NULL;
    if (!rp->reading)
        unlink_free(rp);
}

static void on_log(int code, int64_t seq, const char *epoch, const struct rc_event *evs, size_t n, int64_t dur_us,
                   void *privdata)
{
    struct gw_replay *rp = privdata;
    rp->reading = 0;
    rp->next_us = gw_clock_mono_us() + 3 * dur_us;
    if (!rp->f || !rp->s) {
        unlink_free(rp);
        return;
    }
    if (code)
        return; /* the next tick reads again */
    /* the read's first change is `shown` again when it could ask for it
     * (feed_tick): still the one sent (its time), or the board went back
     * and the seq names another change now */
    int replaced = 0;
    if (rp->log_after < rp->shown && n && evs[0].seq == rp->shown) {
        replaced = evs[0].at_ms != rp->shown_at;
        evs++;
        n--;
    }
    if (rp->decl->shards <= 1 && (replaced || board_went_back(rp, seq, epoch))) {
        went_back(rp, seq);
        unlink_free(rp);
        return;
    }
    if (rp->at_end) { /* shown still holds: live, the catch-up sends what came since */
        go_live(rp, rp->shown);
        unlink_free(rp);
        return;
    }
    /* nothing after shown, or the log no longer holds the next change (the
     * catch-up then answers as for any resume it cannot replay) */
    if (!n || evs[0].seq != rp->shown + 1 || rp->shown >= seq) {
        go_live(rp, rp->shown);
        unlink_free(rp);
        return;
    }
    free(rp->evs);
    rp->evs = malloc(n * sizeof *rp->evs);
    rp->nevs = rp->evs ? n : 0;
    rp->evi = 0;
    if (rp->evs)
        memcpy(rp->evs, evs, n * sizeof *evs);
    rp->evs_present = seq;
}

/* A feed's replay: the events the pace has reached, each as it went out
 * live (its own "at"); the next batch from the log when these are sent. */
static void feed_tick(struct gw_replay *rp, int64_t now, int64_t now_us)
{
    struct gw_sub *s = rp->s;
    if (rp->evi < rp->nevs && !rp->paced) { /* from seq 0: the pace starts at the first change */
        rp->paced = 1;
        rp->base_at = rp->evs[rp->evi].at_ms;
        rp->base_wall = now;
    }
    double board_ms = (double)rp->base_at + (double)(now - rp->base_wall) * rp->speed;
    for (; rp->evi < rp->nevs && (double)rp->evs[rp->evi].at_ms <= board_ms; rp->evi++) {
        const struct rc_event *ev = &rp->evs[rp->evi];
        gw_conn_reply(s->conn, gw_view_encode_event(s->view, ev, NULL, NULL));
        rp->shown = ev->seq;
        rp->has_shown_at = 1;
        rp->shown_at = ev->at_ms;
    }
    if (rp->nevs && rp->evi == rp->nevs && rp->shown >= rp->evs_present)
        /* the batch reached the board's present of its read, and the pace
         * has sent it all: live after one more read, which checks that the
         * last change sent still holds (the board may have gone back since
         * the batch was read: went_back). Waiting for a read to come back
         * empty would take as long as writes keep coming (a read every tick
         * finds the change made since); the catch-up after live sends any
         * change made since, from the log, so none is missed. */
        rp->at_end = 1;
    if (rp->evi < rp->nevs || now_us < rp->next_us || !may_read(rp))
        return;
    rp->reading = 1;
    /* from `shown` itself when its time is known: the read then says
     * whether it is still the change sent (on_log) */
    rp->log_after = rp->shown > 0 && rp->has_shown_at && rp->decl->shards <= 1 ? rp->shown - 1 : rp->shown;
    if (gw_replay_share_log(rp->f, rp->decl, rp->board, rp->period, rp->view.live, rp->log_after, REPLAY_FEED_BATCH,
                            on_log, rp) != 0)
        rp->reading = 0;
}

void gw_replay_tick(struct gw_fanout *f)
{
    gw_replay_share_tick(f); /* (first: the shared reads answered since the last tick) */
    int64_t now = gw_now_ms(f->app), now_us = gw_clock_mono_us();
    for (struct gw_replay *next, *rp = f->replays; rp; rp = next) {
        next = rp->next;
        if (rp->s && rp->awaiting) {
            /* (a bound: a view that cannot get there, such as one moved to
             * a new period whose seqs start over, must not hold the
             * replay forever; its next window is then newer all the same) */
            if (view_stands_at(rp->s->view, rp->shown) || now_us - rp->await_us > REPLAY_AWAIT_MAX_US) {
                go_live(rp, rp->shown);
                unlink_free(rp);
            } else {
                view_nudge(rp->s->view); /* (an event it heard since may not have touched it) */
            }
            continue;
        }
        if (rp->s && !rp->reading && rp->started && rp->view.kind == RC_VIEW_FEED) {
            feed_tick(rp, now, now_us);
            continue;
        }
        if (!rp->s || rp->reading || !rp->started || now_us < rp->next_us || !may_read(rp))
            continue;
        if (!rp->paced) {
            read_at(rp, 0, rp->shown + 1); /* seq 0 has no time: the next change starts the pace */
            continue;
        }
        double board_ms = (double)rp->base_at + (double)(now - rp->base_wall) * rp->speed;
        read_at(rp, 1, (int64_t)board_ms);
    }
}

void gw_replay_free_all(struct gw_fanout *f)
{
    while (f->replays) {
        struct gw_replay *rp = f->replays;
        f->replays = rp->next;
        rp->f = NULL;
        if (rp->s)
            rp->s->replay = NULL;
        rp->s = NULL;
        if (!rp->reading)
            unlink_free(rp); /* (f NULL: just freed); else the read's answer frees it */
    }
    gw_replay_share_free_all(f); /* (answers the reading ones: they go) */
}
