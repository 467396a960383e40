/* gw_decay_tmpl.c - the job of a template with decay (see gw_decay.c's
 * banner, "Templates"): its boards read from the template's index in
 * batches, each rebuilt (under its own lock) or scaled in turn. */
#include "jobs/gw_decay_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>
#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "redis/gw_lock.h"
#include "rc_err.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_decay.h"
#include "rc_instances.h"
#include "rc_keys.h"
#include "rc_lua.h"

/* ---- templates: their boards from the index --------------------------------------- */

static void tmpl_next(struct tmpl *tp);

/* The board in hand is done (whatever the answer): on to the next. */
static void on_tmpl_rebuilt(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_dk_answered(j) != 0)
        return;
    if (r && r->type == REDIS_REPLY_INTEGER)
        j->warned = 0;
    else if (r)
        gw_dk_warn_once(j, "rebuild", r);
    tmpl_next(j->tmpl);
}

static void on_tmpl_acquired(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    if (gw_dk_answered(j) != 0)
        return;
    struct gw_redis *redis = j->d->app->redis;
    if (rc == RC_E_INTERNAL)
        gw_dk_warn_err(j, "taking the rebuild lock", err);
    if (rc == 1 && redis && gw_dk_send_rebuild_cb(j, redis, on_tmpl_rebuilt) == 0)
        return;
    tmpl_next(j->tmpl); /* 0: another gateway rebuilds this board */
}

/* Renewed: still ours, rebuild; 0: not ours (yet), try to take it. */
static void on_tmpl_renewed(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    if (gw_dk_answered(j) != 0)
        return;
    struct gw_redis *redis = j->d->app->redis;
    if (rc == RC_E_INTERNAL)
        gw_dk_warn_err(j, "renewing the rebuild lock", err);
    if (redis && rc == 1 && gw_dk_send_rebuild_cb(j, redis, on_tmpl_rebuilt) == 0)
        return;
    if (redis && rc == 0 &&
        gw_lock_acquire(redis, j->keys[K_LOCK], j->d->token, rc_decay_lock_ttl_ms(&j->board->decay),
                        on_tmpl_acquired, j) == 0) {
        gw_dk_sent(j);
        return;
    }
    tmpl_next(j->tmpl);
}

static void on_tmpl_scaled(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_dk_answered(j) != 0)
        return;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[0]->type == REDIS_REPLY_INTEGER) {
        if (r->element[0]->integer > 0)
            gw_log_info("decay: board %s: scaled by %g^%lld", j->board->name, j->board->decay.scale_factor,
                        (long long)r->element[0]->integer);
    } else if (r) {
        gw_dk_warn_once(j, "scale", r);
    }
    tmpl_next(j->tmpl);
}

/* Sends the first command for the next board read from the index; the
 * answer's callback comes back here. Ends when the boards of this tick are
 * done (or Redis is away). */
static void tmpl_next(struct tmpl *tp)
{
    struct job *j = &tp->job;
    struct gw_decay *d = j->d;
    struct gw_redis *redis = d->app->redis;
    while (!d->stopping && redis && tp->at < tp->n) {
        memcpy(tp->inst.name, tp->names[tp->at], sizeof tp->names[tp->at]);
        tp->at++;
        if (gw_dk_job_keys(j) != 0)
            continue;
        if (tp->decl->decay.kind == RC_DECAY_SCALE) {
            if (gw_dk_send_scale(j, redis, gw_now_ms(d->app), on_tmpl_scaled) == 0)
                return;
        } else if (gw_lock_renew(&d->lock, redis, j->keys[K_LOCK], d->token, rc_decay_lock_ttl_ms(&tp->decl->decay),
                                 on_tmpl_renewed, j) == 0) {
            gw_dk_sent(j);
            return;
        }
    }
}

static void on_tmpl_index(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    struct tmpl *tp = j->tmpl;
    if (gw_dk_answered(j) != 0)
        return;
    tp->n = tp->at = 0;
    if (!r || r->type != REDIS_REPLY_ARRAY) {
        if (r)
            gw_dk_warn_once(j, "reading the template's index", r);
        return;
    }
    for (size_t i = 0; i < r->elements && tp->n < TMPL_BATCH; i++) {
        const redisReply *e = r->element[i];
        if (e->type == REDIS_REPLY_STRING && rc_inst_of(tp->decl, e->str, e->len)) {
            memcpy(tp->names[tp->n], e->str, e->len);
            tp->names[tp->n++][e->len] = '\0';
        }
    }
    /* a full batch: more may follow; else the next tick starts over */
    tp->cursor = r->elements >= TMPL_BATCH ? tp->cursor + r->elements : 0;
    tmpl_next(tp);
}

/* Boards whose newest bucket left the window leave the index (once per
 * pass over it); fire and forget. */
static void prune_index(struct tmpl *tp, struct gw_redis *redis, int64_t now)
{
    const struct rc_decay_spec *s = &tp->decl->decay;
    char until[NUM_MAX];
    if (s->kind != RC_DECAY_BUCKETS)
        return;
    /* a newest bucket that ended before the window began is out of it */
    snprintf(until, sizeof until, "(%" PRId64, now - s->window_ms);
    const char *argv[] = {"ZREMRANGEBYSCORE", tp->key, "-inf", until};
    gw_redis_command(redis, tp->key, strlen(tp->key), 4, argv, NULL, NULL, NULL);
}

/* ZRANGEBYSCORE of the next batch: on hot templates, only boards with a
 * bucket in the window. */
void gw_dk_on_tmpl_tick(uv_timer_t *t)
{
    struct job *j = t->data;
    struct tmpl *tp = j->tmpl;
    struct gw_decay *d = j->d;
    struct gw_redis *redis = d->app->redis;
    if (d->stopping || j->busy || !redis || !gw_redis_is_up(redis))
        return;
    int64_t now = gw_now_ms(d->app);
    char from[NUM_MAX], offset[NUM_MAX], count[NUM_MAX];
    if (tp->decl->decay.kind == RC_DECAY_BUCKETS)
        snprintf(from, sizeof from, "(%" PRId64, now - tp->decl->decay.window_ms);
    else
        snprintf(from, sizeof from, "-inf");
    if (tp->cursor == 0)
        prune_index(tp, redis, now);
    snprintf(offset, sizeof offset, "%zu", tp->cursor);
    snprintf(count, sizeof count, "%d", TMPL_BATCH);
    const char *argv[] = {"ZRANGEBYSCORE", tp->key, from, "+inf", "LIMIT", offset, count};
    if (gw_redis_command(redis, tp->key, strlen(tp->key), 7, argv, NULL, on_tmpl_index, j) == 0)
        gw_dk_sent(j);
}

/* A template's job: the template copied as the board in hand (renamed for
 * each of its boards), its index key and the names of one batch. */
int gw_dk_init_tmpl(struct gw_decay *d, struct tmpl *tp, const struct rc_board *b)
{
    tp->decl = b;
    tp->inst = *b;
    tp->inst.is_template = 0;
    tp->job.tmpl = tp;
    if (rc_inst_index_key(tp->key, sizeof tp->key, b) != 0 || !(tp->names = calloc(TMPL_BATCH, sizeof *tp->names)))
        return -1;
    return gw_dk_init_job(d, &tp->job, &tp->inst);
}

void gw_dk_log_tmpl(const struct tmpl *tp)
{
    gw_log_info("decay: template %s: its boards from %s, up to %d per %s", tp->decl->name, tp->key, TMPL_BATCH,
                tp->decl->decay.kind == RC_DECAY_BUCKETS ? "rebuild_every" : "second");
    gw_dk_log_job(&tp->job);
}
