/* gw_queue.c - the consumers of queued boards (see gw_queue.h,
 * docs/queued.md).
 *
 * One job per queued board on every gateway, on a timer every QUEUE_TICK_MS:
 *   every QUEUE_STATS_MS: XLEN and XRANGE - + COUNT 1 of rc:{B|}:in (the
 *                   stream holds exactly the unapplied entries: applied ones
 *                   are XACKed and XDELed together, lua/queue_ack.lua), for
 *                   /metrics and /healthz
 *   not the owner:  when the queue is not empty, SET rc:{B|}:qlock TOKEN NX
 *                   PX claim_after; on OK this gateway applies the board
 *   the owner:      lock_renew.lua when a third of the lock's life is gone;
 *                   that step ends there, and the next starts once the
 *                   renewal answered (a gateway whose lock expired while it
 *                   stalled reads nothing more); then XPENDING (summary) of
 *                   the group (skipped when every entry read since the last
 *                   XPENDING was acknowledged, for up to
 *                   QUEUE_PENDING_CHECK_MS: entries a former owner left
 *                   pending are found within that):
 *                     pending > 0: XREADGROUP ... STREAMS in 0 (our own
 *                       pending entries: a batch a lost connection cut), or
 *                       when none, XAUTOCLAIM ... claim_after 0-0 (a dead
 *                       consumer's, once idle that long); when neither gives
 *                       any, wait: new entries must not pass older ones
 *                     pending 0: XREADGROUP ... COUNT QUEUE_BATCH STREAMS in >
 *                   then the batch: one EVALSHA of lua/write.lua per entry,
 *                   pipelined, rebuilt from the entry (core/rc_queue.h) with
 *                   the entry's enqueue time as the write's time; once every
 *                   reply is in, queue_ack.lua with the ids the script
 *                   answered (ok, duplicate, or refused: out_of_range,
 *                   forbidden), never those without an answer (they stay
 *                   pending and come back through "our own pending"). A full
 *                   batch goes on at once, without waiting for the timer.
 * Exactly once: every entry is written with a req (the client's, or "q ID"),
 * so an entry applied but not acknowledged (a gateway killed in between) is
 * answered duplicate by the script when it comes back, and only then acked.
 * In order: one consumer at a time (the lock), and new entries are read only
 * when nothing is pending. A consumer that loses its lock mid-batch finishes
 * it; the next owner waits claim_after before claiming those entries, and
 * the script's req marker keeps a doubly-applied entry from counting twice.
 *
 * Reads are non-blocking (no BLOCK): an XREADGROUP with BLOCK would hold the
 * command connection that every other command of this gateway shares. The
 * cost is one XPENDING (+ one read) per tick per owned board when idle.
 *
 * Ownership: struct gw_queue owns its jobs, their timers and batches, and the
 * ack and lock scripts (gw_redis borrows them, as gw_decay.c's). The struct
 * is freed once every timer is closed and every command it sent has been
 * answered (gw_redis_stop answers pending ones with NULL). */
#include "jobs/gw_queue.h"
#include "jobs/gw_queue_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uv.h>
#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "redis/gw_lock.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "redis/gw_write.h"
#include "rc_err.h"
#include "rc_lua.h"
#include "rc_queue.h"
#include "rc_write_args.h"

/* ---- the batch -------------------------------------------------------------------- */

static void tick(struct job *j);

static void on_acked(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0)
        return;
    size_t n = j->nbatch;
    j->working = 0;
    j->nbatch = 0;
    if (!r || r->type != REDIS_REPLY_INTEGER) {
        j->clean = 0;
        gw_job_warn_once(&j->base, "acknowledging applied entries", r); /* they come back, answered duplicate */
        return;
    }
    gw_job_ok(&j->base);
    j->clean = j->nanswered == n;
    if (n == QUEUE_BATCH)
        tick(j); /* a full batch: more are likely waiting */
}

/* Every write of the batch answered: the answered ones leave the stream. */
static void send_ack(struct job *j)
{
    struct gw_redis *redis = j->q->app->redis;
    const char *words[2 + QUEUE_BATCH];
    size_t lens[2 + QUEUE_BATCH];
    int n = 0;
    words[n++] = j->stream;
    words[n++] = RC_QUEUE_GROUP;
    for (size_t i = 0; i < j->nbatch; i++)
        if (j->batch[i].answered)
            words[n++] = j->batch[i].id;
    for (int i = 0; i < n; i++)
        lens[i] = strlen(words[i]);
    j->nanswered = (size_t)n - 2;
    if (n == 2 || !redis || gw_redis_eval(redis, &j->q->ack, 1, n, words, lens, on_acked, j) != 0) {
        j->working = 0;
        j->nbatch = 0;
        j->clean = 0;
        return;
    }
    gw_job_sent(&j->base);
}

static void on_applied(redisReply *r, void *privdata)
{
    struct slot *s = privdata;
    struct job *j = s->j;
    struct gw_app *app = j->q->app;
    if (gw_job_answered(&j->base) != 0)
        return;
    struct rc_write_result res;
    struct rc_error err = {0, ""};
    if (gw_write_parse_reply(j->board, r, &res, &err) == 0 && !res.unseeded) {
        s->answered = 1;
        if (res.status == 0 && !res.duplicate)
            app->metrics.queue_applied++;
        else if (res.status != 0) {
            app->metrics.queue_dropped++;
            gw_log_warn("queue: board %s: entry %s not applied: %s: %s", j->board->name, s->id,
                        rc_err_code_name(res.status), res.message);
        }
    } else if (!j->base.warned) {
        j->base.warned = 1;
        gw_log_warn("queue: board %s: entry %s: %s (left pending, tried again)", j->board->name, s->id, err.msg);
    }
    if (--j->nwaiting == 0)
        send_ack(j);
}

/* One entry ([id, [field, value, ...]]) into slot s: its write script call,
 * sent. A malformed entry is answered at once (acked, dropped). */
static void apply_entry(struct job *j, struct slot *s, const redisReply *e)
{
    struct gw_app *app = j->q->app;
    const char *f[2 * (8 + RC_MAX_FIELDS)], *v[2 * (8 + RC_MAX_FIELDS)];
    struct rc_request req;
    struct rc_write_args a;
    struct rc_period none;
    struct rc_error err = {0, ""};
    const char *words[RC_WRITE_NKEYS + RC_WRITE_ARGV_MAX];
    size_t lens[RC_WRITE_NKEYS + RC_WRITE_ARGV_MAX];
    int64_t at;
    const redisReply *kv = e->element[1];
    size_t nf = kv->type == REDIS_REPLY_ARRAY ? kv->elements / 2 : 0;
    int bad = kv->type != REDIS_REPLY_ARRAY || nf > sizeof f / sizeof f[0];
    for (size_t i = 0; !bad && i < nf; i++) {
        f[i] = kv->element[2 * i]->type == REDIS_REPLY_STRING ? kv->element[2 * i]->str : NULL;
        v[i] = kv->element[2 * i + 1]->type == REDIS_REPLY_STRING ? kv->element[2 * i + 1]->str : NULL;
    }
    memset(&none, 0, sizeof none);
    if (bad || rc_queue_entry_parse(j->board, s->id, f, v, nf, &req, &at) != 0) {
        rc_err_set(&err, RC_E_BAD_REQUEST, "not an entry rankcast queued");
    } else if (rc_write_args_build(j->board, &req, &none, at, gw_redis_is_cluster(app->redis) == 1, &a, &err) ==
               0) {
        gw_write_new_epoch(a.epoch);
        unsigned n = gw_script_call_words(a.keys, a.nkeys, a.argv, a.nargv, words, lens);
        if (gw_redis_eval(app->redis, &app->write_script, (int)a.nkeys, (int)n, words, lens, on_applied, s) == 0) {
            gw_job_sent(&j->base);
            j->nwaiting++;
        }
        return; /* not sent: stays pending, tried again */
    }
    /* the configuration changed under it, or not ours: drop it, say so */
    s->answered = 1;
    app->metrics.queue_dropped++;
    gw_log_warn("queue: board %s: entry %s dropped: %s", j->board->name, s->id, err.msg);
}

/* Applies the entries of a reply array (stream entries), in order. Returns
 * the number taken into the batch; 0 ends the owner's step. */
static size_t apply_entries(struct job *j, const redisReply *entries)
{
    if (!entries || entries->type != REDIS_REPLY_ARRAY || entries->elements == 0) {
        j->working = 0;
        return 0;
    }
    j->nbatch = 0;
    j->nwaiting = 1; /* held until every entry is sent */
    for (size_t i = 0; i < entries->elements && j->nbatch < QUEUE_BATCH; i++) {
        const redisReply *e = entries->element[i];
        if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 || e->element[0]->type != REDIS_REPLY_STRING ||
            e->element[0]->len >= RC_QUEUE_ID_MAX)
            continue; /* a deleted entry (nil): nothing to apply */
        struct slot *s = &j->batch[j->nbatch++];
        s->j = j;
        s->answered = 0;
        memcpy(s->id, e->element[0]->str, e->element[0]->len + 1);
        if (e->element[1]->type != REDIS_REPLY_ARRAY) {
            s->answered = 1; /* deleted while pending: only the ack is left */
            continue;
        }
        apply_entry(j, s, e);
    }
    size_t taken = j->nbatch;
    if (taken == 0)
        j->working = 0;
    else if (--j->nwaiting == 0)
        send_ack(j);
    return taken;
}

/* XREADGROUP's reply [[key, [entries]]] -> the entries, or NULL. */
static const redisReply *read_entries(const redisReply *r)
{
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 1 || r->element[0]->type != REDIS_REPLY_ARRAY ||
        r->element[0]->elements < 2)
        return NULL;
    return r->element[0]->element[1];
}

static void on_claimed(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0)
        return;
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 2) {
        gw_job_warn_once(&j->base, "claiming pending entries", r);
        j->working = 0;
        return;
    }
    size_t n = apply_entries(j, r->element[1]);
    if (n) {
        j->q->app->metrics.queue_claimed += n;
        gw_log_info("queue: board %s: claimed %zu entries idle for claim_after (%" PRId64 " ms)", j->board->name, n,
                    j->board->queue.claim_after_ms);
    }
}

/* Our own pending entries first; none: a dead consumer's, once idle. */
static void on_own_pending(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0)
        return;
    if (!r || r->type == REDIS_REPLY_ERROR) {
        gw_job_warn_once(&j->base, "reading own pending entries", r);
        j->working = 0;
        return;
    }
    const redisReply *e = read_entries(r);
    if (e && e->type == REDIS_REPLY_ARRAY && e->elements > 0) {
        apply_entries(j, e);
        return;
    }
    char idle[NUM_MAX], count[NUM_MAX];
    snprintf(idle, sizeof idle, "%" PRId64, j->board->queue.claim_after_ms);
    snprintf(count, sizeof count, "%d", QUEUE_BATCH);
    const char *argv[] = {"XAUTOCLAIM", j->stream, RC_QUEUE_GROUP, j->q->token, idle, "0-0", "COUNT", count};
    if (gw_queue_job_send_cmd(j, 8, argv, on_claimed) != 0)
        j->working = 0;
}

static void on_new(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0)
        return;
    if (!r || r->type == REDIS_REPLY_ERROR) {
        if (r)
            gw_job_warn_once(&j->base, "reading new entries", r);
        j->working = 0;
        j->clean = 0; /* NOGROUP, or the read may have delivered entries we never saw */
        return;
    }
    gw_job_ok(&j->base);
    apply_entries(j, read_entries(r));
}

static void on_group_created(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    (void)r;
    if (gw_job_answered(&j->base) == 0)
        j->working = 0;
}

static void on_pending(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0)
        return;
    const char *next = NULL;
    char count[NUM_MAX];
    snprintf(count, sizeof count, "%d", QUEUE_BATCH);
    if (r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOGROUP", 7) == 0) {
        /* the stream was made without its group (or the group destroyed) */
        const char *argv[] = {"XGROUP", "CREATE", j->stream, RC_QUEUE_GROUP, "0", "MKSTREAM"};
        if (gw_queue_job_send_cmd(j, 6, argv, on_group_created) != 0)
            j->working = 0;
        return;
    }
    if (!j->owns || !r || r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
        r->element[0]->type != REDIS_REPLY_INTEGER) {
        if (j->owns)
            gw_job_warn_once(&j->base, "XPENDING", r);
        j->working = 0;
        return;
    }
    /* pending: ours first (a cut batch), else a dead consumer's; none: new ones */
    next = r->element[0]->integer > 0 ? "0" : ">";
    const char *argv[] = {"XREADGROUP", "GROUP", RC_QUEUE_GROUP, j->q->token, "COUNT", count, "STREAMS",
                          j->stream, next};
    if (gw_queue_job_send_cmd(j, 9, argv, next[0] == '0' ? on_own_pending : on_new) != 0)
        j->working = 0;
}

/* ---- the tick ---------------------------------------------------------------------- */

static void tick(struct job *j)
{
    struct gw_queue *q = j->q;
    struct gw_redis *redis = q->app->redis;
    uint64_t now = uv_now(q->app->loop);
    int64_t ttl = j->board->queue.claim_after_ms;
    if (q->rel.stopping || !redis || !gw_redis_is_up(redis))
        return;
    if (!j->stats_busy && now - j->stats_at >= QUEUE_STATS_MS) {
        j->stats_at = now;
        gw_queue_job_send_stats(j);
    }
    if (j->working || j->locking || j->renewing)
        return; /* a step, or the answer that decides the next, is in flight */
    if (!j->owns) {
        if (j->stats.known && j->stats.length > 0 &&
            gw_lock_acquire(redis, j->lock, q->token, ttl, gw_queue_job_on_acquired, j) == 0) {
            gw_job_sent(&j->base);
            j->locking = 1;
        }
        return;
    }
    if (now - j->renewed_at >= (uint64_t)ttl / 3) {
        /* renewed before the next step: a gateway whose lock expired (a long
         * stall) reads nothing more once another may have taken over */
        if (gw_lock_renew(&q->lock, redis, j->lock, q->token, ttl, gw_queue_job_on_renewed, j) == 0) {
            gw_job_sent(&j->base);
            j->renewed_at = now;
            j->renewing = 1;
        }
        return;
    }
    if (j->clean && now - j->checked_at < QUEUE_PENDING_CHECK_MS) {
        /* nothing can be pending: straight to new entries */
        char count[NUM_MAX];
        snprintf(count, sizeof count, "%d", QUEUE_BATCH);
        const char *read[] = {"XREADGROUP", "GROUP", RC_QUEUE_GROUP, q->token, "COUNT", count, "STREAMS", j->stream,
                              ">"};
        if (gw_queue_job_send_cmd(j, 9, read, on_new) == 0)
            j->working = 1;
        return;
    }
    const char *argv[] = {"XPENDING", j->stream, RC_QUEUE_GROUP};
    if (gw_queue_job_send_cmd(j, 3, argv, on_pending) == 0) {
        j->working = 1;
        j->checked_at = now;
    }
}

static void on_tick(uv_timer_t *t)
{
    tick(t->data);
}

/* ---- start, stop, stats ------------------------------------------------------------ */

/* The last timer is closed and the last command answered (base/gw_release). */
static void queue_free(struct gw_release *rel)
{
    struct gw_queue *q = (struct gw_queue *)((char *)rel - offsetof(struct gw_queue, rel));
    for (size_t i = 0; i < q->njobs; i++)
        free(q->jobs[i].batch);
    free(q->jobs);
    free(q);
}

int gw_queue_start(struct gw_app *app)
{
    const struct rc_conf *c = app->conf;
    size_t n = 0;
    for (size_t i = 0; i < c->nboards; i++)
        n += c->boards[i].queue.mode == RC_WRITE_QUEUED;
    if (n == 0)
        return 0;
    struct gw_queue *q = calloc(1, sizeof *q);
    if (!q || !(q->jobs = calloc(n, sizeof *q->jobs))) {
        free(q);
        gw_log_error("queue: out of memory");
        return -1;
    }
    q->app = app;
    gw_release_init(&q->rel, queue_free, NULL);
    gw_lock_token(q->token);
    for (size_t i = 0; i < c->nboards; i++) {
        const struct rc_board *b = &c->boards[i];
        if (b->queue.mode != RC_WRITE_QUEUED)
            continue;
        struct job *j = &q->jobs[q->njobs++];
        j->q = q;
        j->board = b;
        gw_job_init(&j->base, &q->rel, "queue", b->name);
        j->stats.board = b->name;
        j->stats.lag_max_ms = b->queue.lag_max_ms;
        if (rc_queue_key(j->stream, sizeof j->stream, b->name, "in") != 0 ||
            rc_queue_key(j->lock, sizeof j->lock, b->name, "qlock") != 0 ||
            !(j->batch = calloc(QUEUE_BATCH, sizeof *j->batch))) {
            gw_release_stop(&q->rel); /* nothing holds it yet: freed now */
            gw_log_error("queue: board %s: cannot set up its consumer", b->name);
            return -1;
        }
    }
    gw_script_init(&q->ack, rc_lua_queue_ack);
    gw_lock_scripts_init(&q->lock);
    gw_redis_add_script(app->redis, &q->ack);
    gw_redis_add_script(app->redis, &q->lock.renew);
    gw_redis_add_script(app->redis, &q->lock.release);
    for (size_t i = 0; i < q->njobs; i++) {
        struct job *j = &q->jobs[i];
        gw_job_start(&j->base, app->loop, on_tick, j, QUEUE_TICK_MS, QUEUE_TICK_MS);
        gw_log_info("queue: board %s: queued writes in %s (queue_max %u, claim_after %" PRId64
                    " ms, queue_lag_max %" PRId64 " ms), consumer %s",
                    j->board->name, j->stream, j->board->queue.max, j->board->queue.claim_after_ms,
                    j->board->queue.lag_max_ms, q->token);
    }
    app->queue = q;
    return 0;
}

void gw_queue_stop(struct gw_app *app)
{
    struct gw_queue *q = app->queue;
    if (!q)
        return;
    app->queue = NULL;
    gw_release_stop(&q->rel); /* the timers hold it: freed after their close callbacks at the earliest */
    for (size_t i = 0; i < q->njobs; i++) {
        struct job *j = &q->jobs[i];
        if (j->owns && app->redis &&
            gw_lock_release(&q->lock, app->redis, j->lock, q->token, gw_queue_job_on_released, j) == 0)
            gw_job_sent(&j->base);
        gw_job_close(&j->base);
    }
    if (app->redis)
        gw_redis_flush(app->redis);
}

int gw_queue_stats(const struct gw_app *app, size_t i, struct gw_queue_stats *out)
{
    const struct gw_queue *q = app->queue;
    if (!q || i >= q->njobs)
        return -1;
    *out = q->jobs[i].stats;
    return 0;
}
