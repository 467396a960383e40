/* gw_feed_shard.c - feed views of a sharded board (docs/sharded.md,
 * "Feeds"). Each shard has its own seq, log and history; a viewer's position
 * is a cursor (core/rc_shard.h): per shard, the last change it was given. A
 * shard's event is delivered when it is the next of its shard for that
 * viewer, skipped when already given, and a gap (or a new history on that
 * shard) sends the viewer back to the logs. Messages carry `seq`, the sum of
 * the viewer's cursor (one more with every event), and `cursor`, its text.
 *
 * Live events wait for their global ranks (gw_rank_shard.c): a board's
 * waiting events go out together as one batch (at each tick and leading
 * edge, before their reads, else at most every GW_FO_SHARD_FLUSH_US), several batches may be out at
 * once, and they are delivered in the order they were sent, into the
 * board's ring (the moves behind prev_rank in deltas, gw_view.c; and what a
 * catch-up delivers of what came over pub/sub while the logs were read) and
 * to every feed viewer. */
#include "fanout/gw_fanout_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "base/gw_clock.h"
#include "net/gw_conn.h"
#include "net/gw_msg.h"

#define SHARD_PENDING_MAX 65536 /* events of one loop turn waiting for ranks; past it, feeds catch up from the logs */
#define SHARD_BATCH_MAX 1024    /* events ranked in one batch */

/* c as text into buf[RC_SHARD_CURSOR_MAX], or NULL (the message then fails
 * as out of memory would). */
static const char *cursor_text(const struct rc_shard_cursor *c, char *buf)
{
    return rc_shard_cursor_format(c, buf, RC_SHARD_CURSOR_MAX) == 0 ? buf : NULL;
}

/* The event as viewer cursor c (already moved past it) sees it. */
static struct gw_msg *event_msg(const struct gw_view *v, const struct rc_event *ev, const struct rc_shard_cursor *c)
{
    struct rc_event e = *ev;
    char buf[RC_SHARD_CURSOR_MAX];
    const char *text = cursor_text(c, buf);
    e.seq = rc_shard_cursor_sum(c);
    return text ? gw_msg_take(gw_view_encode_event(v, &e, NULL, text)) : NULL;
}

static void repend(struct gw_sub *s)
{
    if (s->pending)
        return;
    s->pending = 1;
    s->has_since = 1; /* from s->vec */
}

static void catch_up_soon(struct gw_view *v)
{
    if (v->reading)
        gw_board_view_set_dirty(v);
    else
        gw_feed_shard_catch_up(v);
}

/* One event to one viewer (not pending). Returns 1 when the viewer must be
 * caught up from the logs instead, else 0. */
static int deliver_one(struct gw_fanout *f, struct gw_view *v, struct gw_sub *s, const struct rc_event *ev,
                       struct gw_msg **cache, struct rc_shard_cursor *cache_at)
{
    struct rc_shard_cursor *c = s->vec;
    if (!c)
        return 1;
    enum rc_shard_step step = rc_shard_step(c, ev->shard, ev->seq, ev->epoch, !strcmp(ev->op, "reset"));
    if (step == RC_SHARD_SKIP)
        return 0;
    if (step == RC_SHARD_RESYNC)
        return 1; /* a gap, or a new history: the logs have it */
    if (step == RC_SHARD_BEGAN)
        rc_shard_cursor_set(c, ev->shard, ev->seq, ev->epoch);
    else
        c->seq[ev->shard] = ev->seq;
    if (!*cache || memcmp(cache_at, c, sizeof *c) != 0) {
        gw_msg_unref(*cache);
        *cache = event_msg(v, ev, c);
        *cache_at = *c;
    }
    if (!*cache)
        return 1;
    gw_conn_send(s->conn, *cache, 1);
    f->app->metrics.deltas_sent++;
    v->board->feed_check_due = 2; /* news (deliver stamps the time once) */
    return 0;
}

static void deliver(struct gw_fanout *f, struct gw_view *v, const struct rc_event *ev)
{
    struct gw_msg *cache = NULL;
    struct rc_shard_cursor at;
    int any = 0;
    for (struct gw_sub *s = v->subs; s; s = s->vnext) {
        if (s->pending)
            continue;
        if (deliver_one(f, v, s, ev, &cache, &at)) {
            repend(s);
            any = 1;
        }
    }
    gw_msg_unref(cache);
    if (any)
        catch_up_soon(v);
    if (v->board->feed_check_due == 2) {
        /* once the board is quiet its feeds are checked against its seq
         * (a shard's lost last event shows no gap: gw_feed.c) */
        v->board->feed_heard_us = gw_clock_mono_us();
        v->board->feed_check_due = 1;
    }
}

static void all_feeds_catch_up(struct gw_board *b)
{
    for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v)) {
        if (v->r.spec.kind != RC_VIEW_FEED)
            continue;
        for (struct gw_sub *s = v->subs; s; s = s->vnext)
            repend(s);
        catch_up_soon(v);
    }
}

/* One batch of events out for their ranks. Batches go out once per loop
 * turn, several may be out at once, and they are delivered in the order
 * they were sent. */
struct gw_sbatch {
    struct gw_sbatch *next;
    struct gw_board *b;
    struct rc_event *events; /* the resolver's, valid from on_resolved until delivered */
    int64_t *cseq;           /* ... and its count seqs (n x shards), or NULL */
    size_t n;
    int done, code;
};

static void on_resolved(int code, struct rc_event *events, size_t n, const int64_t *cseq, void *privdata);

/* Delivers the batches at the head that are back (in order). */
static void deliver_done(struct gw_board *b)
{
    while (b->sh->sb_head && b->sh->sb_head->done) {
        struct gw_sbatch *sb = b->sh->sb_head;
        b->sh->sb_head = sb->next;
        if (!b->sh->sb_head)
            b->sh->sb_tail = NULL;
        if (!b->dead) {
            if (sb->code) {
                b->moves_break++; /* prev_rank: these moves are not in the ring */
                all_feeds_catch_up(b); /* the logs tell them once Redis answers */
                gw_board_mark_reads_dirty(b); /* lists that follow events: these are lost to them */
            } else {
                for (size_t k = 0; k < sb->n; k++) {
                    if (sb->events[k].epoch[0]) {
                        /* a shard's history began again: its earlier events
                         * (and seqs) in the ring are of another one */
                        b->ring_len = 0;
                        b->ring_head = 0;
                        b->moves_break++;
                    }
                    gw_board_ring_push(b, &sb->events[k]);
                    gw_reads_shard_event(b, &sb->events[k], sb->cseq ? sb->cseq + k * b->decl->shards : NULL);
                    for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v))
                        if (v->r.spec.kind == RC_VIEW_FEED)
                            deliver(b->f, v, &sb->events[k]);
                }
            }
        }
        free(sb->events);
        free(sb->cseq);
        free(sb);
        for (struct gw_view *v = b->dead ? NULL : gw_fo_first_view(b); v; v = gw_fo_view_next(v))
            gw_view_moves_ranked(b->f, v);
    }
}

static void on_resolved(int code, struct rc_event *events, size_t n, const int64_t *cseq, void *privdata)
{
    struct gw_sbatch *sb = privdata;
    /* the resolver frees its arrays after this: keep copies until delivered */
    size_t nseq = n * sb->b->decl->shards;
    sb->events = code || !n ? NULL : malloc(n * sizeof *events);
    if (sb->events)
        memcpy(sb->events, events, n * sizeof *events);
    if (sb->events && cseq && (sb->cseq = malloc(nseq * sizeof *sb->cseq)) != NULL)
        memcpy(sb->cseq, cseq, nseq * sizeof *sb->cseq); /* (without: listed members' moves read) */
    else if (!code && n)
        code = RC_E_INTERNAL;
    sb->n = n;
    sb->code = code;
    sb->done = 1;
    deliver_done(sb->b);
}

static void send_batch(struct gw_board *b)
{
    while (b->sh->nspend) {
        size_t n = b->sh->nspend < SHARD_BATCH_MAX ? b->sh->nspend : SHARD_BATCH_MAX;
        struct rc_event *batch = malloc(n * sizeof *batch);
        struct gw_sbatch *sb = calloc(1, sizeof *sb);
        if (!batch || !sb) {
            free(batch);
            free(sb);
            b->sh->nspend = 0;
            b->moves_break++;
            all_feeds_catch_up(b);
            gw_board_mark_reads_dirty(b); /* (lists that follow events read) */
            return;
        }
        memcpy(batch, b->sh->spend, n * sizeof *batch);
        memmove(b->sh->spend, b->sh->spend + n, (b->sh->nspend - n) * sizeof *batch);
        b->sh->nspend -= n;
        sb->b = b;
        if (b->sh->sb_tail)
            b->sh->sb_tail->next = sb;
        else
            b->sh->sb_head = sb;
        b->sh->sb_tail = sb;
        if (gw_rank_shard_resolve(b, batch, n, on_resolved, sb) != 0) {
            free(batch);
            sb->done = 1;
            sb->code = RC_E_INTERNAL;
            deliver_done(b);
        }
    }
}

void gw_feed_shard_event(struct gw_board *b, unsigned shard, const struct rc_event *ev)
{
    if (!gw_fo_first_view(b))
        return;
    if (b->sh->nspend == b->sh->spend_cap) {
        size_t cap = b->sh->spend_cap ? b->sh->spend_cap * 2 : 64;
        struct rc_event *p = cap <= SHARD_PENDING_MAX ? realloc(b->sh->spend, cap * sizeof *p) : NULL;
        if (!p) {
            /* too far behind: what waits is dropped, the logs have it */
            b->sh->nspend = 0;
            b->moves_break++;
            all_feeds_catch_up(b);
            gw_board_mark_reads_dirty(b); /* (lists that follow events read) */
            return;
        }
        b->sh->spend = p;
        b->sh->spend_cap = cap;
    }
    b->sh->spend[b->sh->nspend] = *ev;
    b->sh->spend[b->sh->nspend].shard = shard;
    b->sh->nspend++;
    if (!b->sh->sfqueued) {
        struct gw_fanout *f = b->f;
        b->sh->sfqueued = 1;
        b->refs++; /* alive on the list */
        b->sh->sfnext = f->sflush;
        f->sflush = b;
    }
}

void gw_feed_shard_flush(struct gw_fanout *f)
{
    f->sflushed_us = gw_clock_mono_us();
    while (f->sflush) {
        struct gw_board *b = f->sflush;
        f->sflush = b->sh->sfnext;
        b->sh->sfnext = NULL;
        b->sh->sfqueued = 0;
        if (!b->dead)
            send_batch(b);
        gw_board_unref(b);
    }
}

/* ---- catching up from the shards' logs ---------------------------------- */

struct shard_log {
    struct rc_event *evs;
    size_t n;
    int64_t seq, total;
    char epoch[RC_EPOCH_MAX + 1];
};

struct catch_up {
    struct gw_view *v;
    unsigned shards, waiting;
    int code;
    struct shard_log log[RC_SHARDS_MAX];
    struct rc_event *replay; /* every log's events, merged in arrival order */
    size_t nreplay;
};

static void catch_up_free(struct catch_up *cu)
{
    for (unsigned i = 0; i < cu->shards; i++)
        free(cu->log[i].evs);
    free(cu->replay);
    free(cu);
}

/* Whether viewer cursor c can be carried to `now` by the logs' events
 * (core/rc_shard.h, rc_shard_replayable). */
static int replayable(const struct catch_up *cu, const struct rc_shard_cursor *c, const struct rc_shard_cursor *now)
{
    int64_t first[RC_SHARDS_MAX];
    for (unsigned i = 0; i < cu->shards; i++)
        first[i] = cu->log[i].n ? cu->log[i].evs[0].seq : 0;
    return rc_shard_replayable(c, now, first);
}

/* Answers pending viewer s. Returns 0, or -1 when its queue refused: it
 * stays pending from where it got to. */
static int answer(struct gw_fanout *f, struct gw_view *v, struct gw_sub *s, struct catch_up *cu,
                  const struct rc_shard_cursor *now, const char *epoch, int64_t total)
{
    struct rc_shard_cursor from;
    int resume = s->has_since && s->vec && replayable(cu, s->vec, now);
    if (!s->vec && !(s->vec = calloc(1, sizeof *s->vec)))
        return -1;
    from = resume ? *s->vec : *now;
    struct gw_window snap = {.seq = rc_shard_cursor_sum(&from), .total = total};
    snprintf(snap.epoch, sizeof snap.epoch, "%s", epoch);
    /* a resume that cannot be honoured (no cursor, a history gone, a log
     * that no longer reaches it) is a reset snapshot */
    char buf[RC_SHARD_CURSOR_MAX];
    const char *text = cursor_text(&from, buf);
    struct gw_msg *msg =
        text ? gw_msg_take(gw_view_encode_snapshot(v, &snap, s->id_json, s->has_since && !resume, text)) : NULL;
    if (gw_view_feed_answer(f, s, msg, snap.epoch) != 0)
        return -1;
    *s->vec = from;
    if (!resume)
        return 0;
    for (size_t k = 0; k < cu->nreplay; k++) {
        const struct rc_event *ev = &cu->replay[k];
        struct rc_shard_cursor *c = s->vec;
        unsigned i = ev->shard;
        if (ev->seq <= c->seq[i] || ev->seq > now->seq[i])
            continue;
        struct rc_shard_cursor next = *c;
        next.seq[i] = ev->seq;
        memcpy(next.epoch[i], now->epoch[i], sizeof next.epoch[i]);
        msg = event_msg(v, ev, &next);
        if (msg && gw_conn_send_owed(s->conn, msg) != 0) {
            gw_msg_unref(msg);
            s->pending = 1; /* the rest once its queue drains */
            s->has_since = 1;
            return -1;
        }
        gw_msg_unref(msg);
        *c = next;
    }
    *s->vec = *now;
    return 0;
}

static void answer_all(struct catch_up *cu)
{
    struct gw_view *v = cu->v;
    struct gw_fanout *f = v->f;
    struct rc_shard_cursor now;
    const char *epochs[RC_SHARDS_MAX];
    char epoch[RC_EPOCH_MAX + 1];
    int64_t total = 0;
    memset(&now, 0, sizeof now);
    now.n = cu->shards;
    for (unsigned i = 0; i < cu->shards; i++) {
        rc_shard_cursor_set(&now, i, cu->log[i].seq, cu->log[i].epoch);
        epochs[i] = cu->log[i].epoch;
        total += cu->log[i].total;
    }
    rc_shard_epoch(epochs, cu->shards, epoch);
    for (struct gw_sub *s = v->subs; s; s = s->vnext)
        if (s->pending)
            (void)answer(f, v, s, cu, &now, epoch, total);
    /* what came over pub/sub while the logs were read */
    struct gw_board *b = v->board;
    for (size_t i = 0; i < b->ring_len; i++)
        deliver(f, v, gw_board_ring_at(b, i));
}

static void on_replay_ranked(int code, struct rc_event *events, size_t n, const int64_t *cseq, void *privdata)
{
    (void)cseq;
    struct catch_up *cu = privdata;
    struct gw_view *v = cu->v;
    cu->replay = NULL; /* events: the resolver frees them after this */
    (void)n;
    v->reading = 0;
    if (!v->dead) {
        if (code) {
            gw_view_read_fail_pending(v, code);
            gw_board_view_set_dirty(v); /* the tick tries again */
        } else {
            cu->replay = events;
            answer_all(cu);
            cu->replay = NULL;
        }
    }
    catch_up_free(cu);
    gw_board_view_unref(v);
}

/* Every log's events in one list, each shard's in its order, the shards
 * interleaved by when the writes were made. */
static int merge_logs(struct catch_up *cu)
{
    size_t total = 0, pos[RC_SHARDS_MAX] = {0};
    for (unsigned i = 0; i < cu->shards; i++)
        total += cu->log[i].n;
    cu->replay = malloc((total + 1) * sizeof *cu->replay);
    if (!cu->replay)
        return -1;
    for (size_t k = 0; k < total; k++) {
        int best = -1;
        for (unsigned i = 0; i < cu->shards; i++)
            if (pos[i] < cu->log[i].n &&
                (best < 0 || cu->log[i].evs[pos[i]].at_ms < cu->log[best].evs[pos[best]].at_ms))
                best = (int)i;
        cu->replay[k] = cu->log[best].evs[pos[best]++];
    }
    cu->nreplay = total;
    return 0;
}

static void all_logs_in(struct catch_up *cu)
{
    struct gw_view *v = cu->v;
    if (!cu->code && v->dead)
        cu->code = RC_E_UNAVAILABLE;
    if (!cu->code && merge_logs(cu) != 0)
        cu->code = RC_E_INTERNAL;
    if (!cu->code) {
        struct rc_event *evs = cu->replay;
        size_t n = cu->nreplay;
        cu->replay = NULL;
        if (n == 0) {
            free(evs);
            v->reading = 0;
            answer_all(cu);
            catch_up_free(cu);
            gw_board_view_unref(v);
            return;
        }
        if (gw_rank_shard_resolve(v->board, evs, n, on_replay_ranked, cu) == 0)
            return;
        free(evs);
        cu->code = RC_E_INTERNAL;
    }
    v->reading = 0;
    if (!v->dead) {
        gw_view_read_fail_pending(v, cu->code);
        gw_board_view_set_dirty(v);
    }
    catch_up_free(cu);
    gw_board_view_unref(v);
}

struct log_part {
    struct catch_up *cu;
    unsigned shard;
};

static void on_log(int code, int64_t seq, int64_t total, const char *epoch, const struct rc_freeze *fr,
                   struct rc_event *evs, size_t n, void *privdata)
{
    struct log_part *p = privdata;
    struct catch_up *cu = p->cu;
    struct shard_log *l = &cu->log[p->shard];
    unsigned shard = p->shard;
    free(p);
    (void)fr; /* sharded boards are never frozen */
    if (code && !cu->code)
        cu->code = code;
    if (!code) {
        l->seq = seq;
        l->total = total;
        snprintf(l->epoch, sizeof l->epoch, "%s", epoch);
        if (n && !(l->evs = malloc(n * sizeof *l->evs)) && !cu->code)
            cu->code = RC_E_INTERNAL;
        if (l->evs) {
            memcpy(l->evs, evs, n * sizeof *evs);
            for (size_t k = 0; k < n; k++)
                l->evs[k].shard = shard;
            l->n = n;
        }
    }
    if (--cu->waiting == 0)
        all_logs_in(cu);
}

void gw_feed_shard_catch_up(struct gw_view *v)
{
    struct gw_app *app = v->f->app;
    struct gw_board *b = v->board;
    if (v->dead || v->reading || !b)
        return;
    struct catch_up *cu = calloc(1, sizeof *cu);
    if (!cu)
        return;
    cu->v = v;
    cu->shards = b->decl->shards;
    cu->waiting = 1; /* held while the reads go out */
    v->refs++;
    v->reading = 1;
    for (unsigned i = 0; i < cu->shards && !cu->code; i++) {
        char name[RC_SHARD_NAME_MAX + 1];
        struct log_part *p = malloc(sizeof *p);
        int rc = !p || rc_shard_name(name, sizeof name, b->r.name, i) != 0 ? RC_E_INTERNAL : 0;
        if (!rc) {
            p->cu = cu;
            p->shard = i;
            rc = gw_read_log(&app->store, b->decl, name, b->r.period, v->r.spec.live, on_log, p);
        }
        if (rc) {
            free(p);
            cu->code = rc;
            break;
        }
        cu->waiting++;
    }
    if (--cu->waiting == 0)
        all_logs_in(cu);
}
