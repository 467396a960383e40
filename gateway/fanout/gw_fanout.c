/* gw_fanout.c - the fan-out's public operations (see gw_fanout.h):
 * subscribe and unsubscribe, the connection hooks (lagged, drained), pub/sub
 * messages, profile changes and Redis coming back; the tick is in
 * gw_fanout_tick.c. A subscribe or unsubscribe costs its own view only
 * (issue 23; the board's files: gw_board.c). The layout of fanout/ is in
 * gw_fanout_int.h. */
#include "fanout/gw_fanout.h"

#include <uv.h>

#include "fanout/gw_fanout_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "fanout/gw_feed_fault.h"
#include "rc_keys.h"
#include "net/gw_conn.h"
#include "net/gw_msg.h"

static void drop_sub(struct gw_fanout *f, struct gw_sub *s);

struct gw_fanout *gw_fanout_new(struct gw_app *app)
{
    struct gw_fanout *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->app = app;
    f->drop_sub = drop_sub;
    f->tick_teams = gw_rowteam_load_tick;
    uint64_t seed[2] = {0, 0};
    if (uv_random(NULL, NULL, seed, sizeof seed, 0, NULL) != 0) {
        gw_log_warn("no random seed for the board table; using the clock");
        seed[0] = (uint64_t)gw_clock_mono_us();
        seed[1] = (uint64_t)gw_now_ms(app);
    }
    rc_registry_init(&f->reg, (struct rc_hash_key){seed[0], seed[1]});
    gw_vcount_init(f);
    gw_hold_init(f);
    return f;
}

/* Detaches a view without viewers from its board; resizes the board's
 * mirror for the views left, or frees the board when it was the last. */
static void view_detach(struct gw_fanout *f, struct gw_view *v)
{
    struct gw_board *b = gw_board_view_detach(f, v);
    if (gw_fo_first_view(b))
        gw_mirror_board_want(b);
    gw_board_maybe_free(f, b);
}

static void sub_free(struct gw_fanout *f, struct gw_sub *s)
{
    struct gw_view *v = s->view;
    gw_board_first_unqueue(f, s); /* (when it waited for its first answer) */
    if (s->replay)
        gw_replay_detach(s);
    if (s->vprev)
        s->vprev->vnext = s->vnext;
    else
        v->subs = s->vnext;
    if (s->vnext)
        s->vnext->vprev = s->vprev;
    if (v->board)
        gw_hold_leave(f, v->board, s);
    v->r.viewers--;
    f->app->metrics.views_visited[GW_METRICS_VISIT_UNSUBSCRIBE]++; /* its own view, and no other */
    if (v->board && v->board->vc)
        v->board->vc->local--;
    f->app->metrics.subscriptions[v->r.spec.kind]--;
    s->conn->nsubs--;
    gw_conn_unref(s->conn);
    free(s->id_json);
    free(s->vec);
    free(s);
    if (!v->r.viewers)
        view_detach(f, v);
}

/* One step of emptying a board: drops v's first viewer (unlinked from its
 * connection; told `msg` as an error naming its sub when msg is set), or v
 * itself when no viewer is left. Shared by eviction and teardown. */
static void view_drop_one(struct gw_fanout *f, struct gw_view *v, const char *msg)
{
    if (!v->subs) {
        view_detach(f, v);
        return;
    }
    struct gw_sub *s = v->subs;
    for (struct gw_sub **p = &s->conn->subs; *p; p = &(*p)->cnext) {
        if (*p == s) {
            *p = s->cnext;
            break;
        }
    }
    if (msg)
        gw_conn_reply(s->conn, rc_proto_encode_view_error(v->r.id, RC_E_RATE_LIMITED, msg));
    sub_free(f, s);
}

/* A full table gives b up for a new board (gw_hold.c): each of its viewers
 * gets an error naming its sub, and the view ends for it. */
static void board_evict(struct gw_fanout *f, struct gw_board *b)
{
    char msg[160];
    snprintf(msg, sizeof msg, "board evicted: the gateway holds max_boards %u boards and only one address "
             "watched this one; subscribe again later", f->app->conf->max_boards);
    b->refs++; /* alive until its views are gone */
    for (struct gw_view *v; (v = gw_fo_first_view(b)) != NULL;)
        view_drop_one(f, v, msg);
    gw_board_unref(b);
}

void gw_fanout_subscribe(struct gw_fanout *f, struct gw_conn *c, const struct rc_request *r,
                         const struct rc_board *decl, const struct rc_period *p)
{
    struct gw_app *app = f->app;
    if (c->nsubs >= app->conf->max_subs_per_conn) {
        gw_conn_reply(c, rc_proto_encode_error(r->id_json, RC_E_TOO_LARGE,
                                         "subscription limit reached (max_subs_per_conn)"));
        gw_metrics_error(&app->metrics, RC_E_TOO_LARGE);
        return;
    }
    /* a sharded board's feed resumes from a cursor (docs/sharded.md) */
    struct rc_shard_cursor since_vec;
    int has_vec = r->has_since && r->has_since_cursor && decl->shards > 1 && r->view.kind == RC_VIEW_FEED;
    if (has_vec && rc_shard_cursor_parse(r->since_cursor, decl->shards, &since_vec) != 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "since.cursor is not a cursor of board %s (%u shards)", r->board, decl->shards);
        gw_conn_reply(c, rc_proto_encode_error(r->id_json, RC_E_BAD_REQUEST, msg));
        gw_metrics_error(&app->metrics, RC_E_BAD_REQUEST);
        return;
    }
    if (r->view.kind == RC_VIEW_TEAM && !decl->teams[0]) {
        gw_conn_reply(c, rc_proto_encode_error(r->id_json, RC_E_BAD_REQUEST,
                                         "a roster view {\"team\": ID} needs a board with teams (docs/teams.md)"));
        gw_metrics_error(&app->metrics, RC_E_BAD_REQUEST);
        return;
    }
    if (r->view.kind == RC_VIEW_TEAM && decl->shards > 1) { /* (teams on sharded boards are refused at start) */
        gw_conn_reply(c, rc_proto_encode_error(r->id_json, RC_E_BAD_REQUEST,
                                         "rosters are not served on sharded boards"));
        gw_metrics_error(&app->metrics, RC_E_BAD_REQUEST);
        return;
    }
    const char *no_replay = r->has_replay ? gw_replay_refusal(decl, r) : NULL;
    if (no_replay) {
        gw_conn_reply(c, rc_proto_encode_error(r->id_json, RC_E_BAD_REQUEST, no_replay));
        gw_metrics_error(&app->metrics, RC_E_BAD_REQUEST);
        return;
    }
    if (decl->shards > 1 && r->view.kind == RC_VIEW_PAGE) {
        struct gw_read_spec spec = {.kind = GW_READ_RANGE, .first = r->view.offset, .count = r->view.limit};
        const char *refused = gw_read_shard_refusal(decl, &spec); /* a page too deep to merge */
        if (refused) {
            gw_conn_reply(c, rc_proto_encode_error(r->id_json, RC_E_BAD_REQUEST, refused));
            gw_metrics_error(&app->metrics, RC_E_BAD_REQUEST);
            return;
        }
    }
    /* a new board: within the address's share of max_boards, else in
     * place of a board held by one address (gw_hold.c) */
    struct gw_board *evict = NULL;
    char msg[160];
    if (!gw_board_find(f, r->board, p->id) && gw_hold_admit(f, decl, c, &evict, msg, sizeof msg) != 0) {
        gw_conn_reply(c, rc_proto_encode_error(r->id_json, RC_E_RATE_LIMITED, msg));
        gw_metrics_error(&app->metrics, RC_E_RATE_LIMITED);
        return;
    }
    if (evict)
        board_evict(f, evict);
    int over_cap = 0;
    struct gw_board *b = gw_board_get(f, decl, r->board, p->id, 0, &over_cap);
    int follows = rc_registry_follow_mode(decl->period.kind != RC_PERIOD_NONE, r->period);
    if (b)
        gw_rowteam_load(b, 0); /* a board with teams: rows show each member's team */
    struct gw_view *v = b ? gw_board_view_get(f, b, &r->view, follows) : NULL;
    if (v)
        app->metrics.views_visited[GW_METRICS_VISIT_SUBSCRIBE]++; /* its own view, and no other */
    if (v && v->r.spec.kind == RC_VIEW_TEAM && !v->roster_ok)
        gw_rowteam_load_roster_view(v); /* (or when the board's membership is read) */
    for (struct gw_sub *o = c->subs; v && o; o = o->cnext) {
        if (o->view != v)
            continue;
        /* Already watching this view: the same sub again, with a snapshot
         * when one is at hand (it matches the deltas that follow). Owed like
         * a first snapshot when the queue is full, unless one is owed with
         * an id already. */
        if (v->last && v->r.spec.kind != RC_VIEW_FEED && !o->pending && !(o->needs_snapshot && o->id_json)) {
            free(o->id_json);
            o->id_json = r->id_json ? strdup(r->id_json) : NULL;
            if (!o->needs_snapshot)
                o->needs_snapshot = gw_view_send_owed_snapshot(f, o) != 0;
        } else {
            gw_conn_reply(c, rc_proto_encode_error(r->id_json, RC_E_BAD_REQUEST, "already subscribed to this view"));
            gw_metrics_error(&app->metrics, RC_E_BAD_REQUEST);
        }
        return;
    }
    struct gw_sub *s = v ? calloc(1, sizeof *s) : NULL;
    if (!s) {
        if (v && !v->r.viewers)
            view_detach(f, v);
        else if (b)
            gw_board_maybe_free(f, b);
        gw_conn_reply(c, rc_proto_encode_error(r->id_json, RC_E_INTERNAL, "out of memory"));
        return;
    }
    s->view = v;
    s->conn = c;
    gw_conn_ref(c);
    s->pending = 1;
    s->id_json = r->id_json ? strdup(r->id_json) : NULL;
    s->has_since = r->has_since;
    s->since = r->since_seq;
    s->has_epoch = r->has_since && r->has_since_epoch;
    if (s->has_epoch)
        memcpy(s->epoch, r->since_epoch, sizeof s->epoch);
    if (has_vec && (s->vec = malloc(sizeof *s->vec)) != NULL)
        *s->vec = since_vec; /* (out of memory: a reset snapshot instead of the replay) */
    s->vnext = v->subs;
    if (v->subs)
        v->subs->vprev = s;
    v->subs = s;
    v->r.viewers++;
    if (b->vc)
        b->vc->local++;
    s->cnext = c->subs;
    c->subs = s;
    c->nsubs++;
    gw_hold_join(f, b, s);
    app->metrics.subscriptions[v->r.spec.kind]++;
    if (r->has_replay && gw_replay_start(f, s, decl, r, p->id) != 0) {
        gw_conn_reply(c, rc_proto_encode_error(r->id_json, RC_E_UNAVAILABLE, "the replay could not start"));
        drop_sub(f, s);
        return;
    }
    gw_first_answer(f, s); /* now, or in a later loop turn (a burst) */
}

/* f->drop_sub: s unlinked from its connection, then freed. */
static void drop_sub(struct gw_fanout *f, struct gw_sub *s)
{
    for (struct gw_sub **p = &s->conn->subs; *p; p = &(*p)->cnext)
        if (*p == s) {
            *p = s->cnext;
            sub_free(f, s);
            return;
        }
}

int gw_fanout_unsubscribe(struct gw_fanout *f, struct gw_conn *c, const char *sub)
{
    for (struct gw_sub **p = &c->subs; *p; p = &(*p)->cnext) {
        if (strcmp((*p)->view->r.id, sub) == 0) {
            struct gw_sub *s = *p;
            *p = s->cnext;
            sub_free(f, s);
            return 0;
        }
    }
    return -1;
}

void gw_fanout_revoke(struct gw_fanout *f, struct gw_conn *c, int (*keep)(void *data, const char *board, int live),
                      void *data, int code, const char *message)
{
    for (struct gw_sub **p = &c->subs; *p;) {
        struct gw_sub *s = *p;
        const char *board = s->view->board ? s->view->board->r.name : NULL;
        if (keep && board && keep(data, board, s->view->r.spec.live)) {
            p = &s->cnext;
            continue;
        }
        gw_conn_reply(c, rc_proto_encode_view_error(s->view->r.id, code, message));
        *p = s->cnext;
        sub_free(f, s);
    }
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
        if (s->view->r.spec.kind == RC_VIEW_FEED) {
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
        if (v->r.spec.kind == RC_VIEW_FEED && s->pending) {
            gw_feed_catch_up(v); /* answers every pending viewer of v (a no-op while it reads) */
            continue;
        }
        if (!s->needs_snapshot || !v->last || s->replay)
            continue;
        /* One snapshot per drain: a laggard never holds more than one. It
         * carries the subscribe's id when it is that request's reply. */
        if (gw_view_send_owed_snapshot(f, s) == 0)
            s->needs_snapshot = 0;
        return 1;
    }
    return 0;
}

/* "...rc:{B|P}:SUFFIX" -> B and P (a team board's keys: T, docs/teams.md).
 * Returns 0 or -1. */
static int parse_tag(const char *channel, char *board, char *period)
{
    return rc_keys_parse_tag(channel, board, RC_SHARD_NAME_MAX + 1, period, RC_PERIOD_ID_MAX);
}

/* A keyspace event on a board's set (plain or a shard's: a shard's set is a
 * board's set). The script's own ZADD shows here too, just before its change
 * event (same connection, same order); anything else on the set was done
 * outside the script, and the mirror must be read again. The read views wait
 * for the event (gw_reads.c); a ZADD no event explains sets them all dirty at
 * the tick. */
static void on_keyspace(struct gw_board *b, const char *payload, size_t len)
{
    if (len == 4 && memcmp(payload, "zadd", 4) == 0) {
        rc_ksmatch_zadd(&b->ks);
        gw_board_wake(b);
    } else if (len == 6 && memcmp(payload, "expire", 6) == 0) {
        /* a TTL set on the set (the script's PEXPIRE on a periodic board's
         * keys, or anyone's): its members did not change */
    } else {
        gw_board_mark_reads_dirty(b);
        b->moves_break++; /* prev_rank: the ring's moves do not explain this */
        if (b->mirror_on)
            gw_board_set_stale(b);
        if (b->freeze_was.frozen)
            gw_frozen_recheck(b); /* a set deleted outside voids its freeze */
    }
}

void gw_fanout_on_message(struct gw_fanout *f, const char *pattern, const char *channel, const char *payload,
                          size_t len)
{
    char name[RC_SHARD_NAME_MAX + 1], period[RC_PERIOD_ID_MAX];
    int keyspace = pattern && strcmp(pattern, GW_FANOUT_KEYSPACE_PATTERN) == 0;
    int tmspace = pattern && strcmp(pattern, GW_FANOUT_KEYSPACE_TM_PATTERN) == 0;
    if (keyspace || tmspace)
        f->app->metrics.keyspace_events++;
    if (parse_tag(channel, name, period) != 0)
        return;
    /* a shard's channel or set ("B#i", docs/sharded.md) is its board's */
    char base[RC_BOARD_MAX + 1];
    unsigned shard = 0;
    int sharded = rc_shard_split(name, base, &shard);
    if (sharded < 0)
        return;
    struct gw_board *b = gw_board_find(f, base, period);
    if (!b)
        return; /* nobody watches this board here */
    if (sharded != (b->decl->shards > 1) || (sharded && shard >= b->decl->shards))
        return; /* keys of another layout (shards changed, or a stray key) */
    if (tmspace) {
        if (!sharded)
            gw_rowteam_load_keyspace(b, payload, len); /* its team membership (docs/teams.md) */
        return;
    }
    if (sharded)
        gw_reads_shard_heard(b); /* its read views read again at the tick (lists that follow events: when ranked) */
    if (keyspace) {
        on_keyspace(b, payload, len);
        return;
    }
    if (sharded) {
        struct rc_event sev;
        if (rc_event_parse(payload, len, &sev) != 0) {
            gw_log_warn("unparsable change event on %s", channel);
            return;
        }
        sev.shard = shard;
        if (gw_feed_fault_drop(f->app, b->r.name))
            return; /* a test's lost event */
        rc_ksmatch_event(&b->ks);
        gw_mirror_shard_event(b, &sev); /* now: the mirror needs no ranks */
        gw_feed_shard_event(b, shard, &sev);
        gw_fanout_tick_edge_maybe(f, b);
        return;
    }
    if (rc_event_team_is(payload, len)) {
        gw_rowteam_load_heard(b, payload, len); /* a member's team changed: its rows show it (docs/teams.md) */
        return;
    }
    if (rc_freeze_is_event(payload, len)) {
        /* freeze, reveal, unfreeze: in order with the change events, so the
         * views move to it before any later change reaches them */
        struct rc_freeze_event fe;
        if (rc_freeze_event_parse(payload, len, &fe) != 0) {
            gw_log_warn("unparsable freeze event on %s", channel);
            return;
        }
        gw_board_heard_freeze(b, &fe.state);
        gw_frozen_apply(f, b);
        return;
    }
    struct rc_event ev;
    if (rc_event_parse(payload, len, &ev) != 0) {
        gw_board_mark_reads_dirty(b); /* a change all the same: its read views read again */
        gw_log_warn("unparsable change event on %s", channel);
        return;
    }
    if (gw_feed_fault_drop(f->app, b->r.name))
        return; /* a test's lost event */
    if (ev.epoch[0]) {
        gw_board_follow_epoch(b, ev.epoch); /* a new history: the ring's older events are not of it */
        if (b->freeze_was.frozen)
            gw_frozen_recheck(b); /* a freeze holds only in its history */
    }
    gw_board_ring_push(b, &ev);
    gw_reads_event(b, &ev); /* (after the push: a read back later judges it from the ring) */
    rc_ksmatch_event(&b->ks);
    if (b->mirror_on) {
        if (!b->loading && b->mirror.exact)
            gw_mirror_apply(b, &ev);
        else if (ev.epoch[0])
            gw_board_set_stale(b); /* read again, in the new history */
    }
    for (struct gw_view *v = b->feeds; v; v = v->knext)
        gw_feed_deliver(f, v, &ev);
    gw_fanout_tick_edge_maybe(f, b);
}

void gw_fanout_profile_changed(struct gw_fanout *f)
{
    for (struct gw_board *b = f->all; b; b = b->next) {
        b->changed = b->mirror_on;
        b->refresh_all = b->mirror_on; /* any row's profile may have changed */
        if (b->changed)
            gw_board_wake(b);
        gw_board_mark_reads_dirty(b);
    }
}

/* Everything b shows may have missed events: its mirror is read again,
 * window views read again (and send a snapshot when `snapshot`, else what
 * changed), feeds catch up from the log after what they delivered. */
static void resync_board(struct gw_board *b, int snapshot)
{
    /* Everything is read again: the ring's events may be of a history Redis
     * no longer holds (a restart without persistence), and what comes over
     * pub/sub from now on is of the one the next read names. */
    b->ring_len = 0;
    b->ring_head = 0;
    b->moves_break++; /* prev_rank: changes while away are explained by no event here */
    /* What the keyspace announced so far is in the reads this starts. On a
     * cluster a write made just before the board's channel was subscribed
     * comes as its "zadd" alone (its event went out before the SSUBSCRIBE):
     * left pending, a tick would take it for a change made outside the
     * script and break prev_rank once more, after this resync's reads. */
    rc_ksmatch_clear(&b->ks);
    b->epoch_known = 0;
    b->freeze.version = -1; /* Redis may have come back without the freeze */
    b->stale = b->mirror_on;
    gw_board_wake(b);
    if (b->rt)
        gw_rowteam_load(b, 1); /* team messages may have been lost meanwhile */
    for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v)) {
        gw_board_view_set_dirty(v);
        if (v->r.spec.kind != RC_VIEW_FEED) {
            if (snapshot)
                v->force_snapshot = v->last != NULL;
            continue;
        }
        gw_feed_recheck(v); /* events lost meanwhile: filled from the log */
    }
}

void gw_fanout_redis_up(struct gw_fanout *f)
{
    for (struct gw_board *b = f->all; b; b = b->next)
        resync_board(b, 1);
    gw_fanout_tick(f);
}

void gw_fanout_channel_ready(struct gw_fanout *f, const char *channel)
{
    char name[RC_SHARD_NAME_MAX + 1], period[RC_PERIOD_ID_MAX], base[RC_BOARD_MAX + 1];
    unsigned shard;
    struct gw_board *b = parse_tag(channel, name, period) == 0 && rc_shard_split(name, base, &shard) >= 0
                             ? gw_board_find(f, base, period)
                             : NULL;
    if (b)
        resync_board(b, 0);
}

void gw_fanout_free(struct gw_fanout *f)
{
    if (!f)
        return;
    /* Normally empty by now: connections close before the fan-out goes. */
    while (f->all) {
        struct gw_board *b = f->all;
        struct gw_view *v = gw_fo_first_view(b);
        if (!v) {
            gw_board_maybe_free(f, b);
            continue;
        }
        view_drop_one(f, v, NULL);
    }
    gw_replay_free_all(f);
    gw_hold_free(f);
    gw_vcount_free(f);
    rc_delta_scratch_free(&f->delta);
    free(f->reached);
    rc_vbatch_free(&f->vbatch);
    free(f->vbev);
    rc_registry_free(&f->reg);
    free(f);
}
