/* gw_decay_job.c - the decay jobs (see gw_decay_int.h, and gw_decay.c's
 * banner for the design): one declared board's (the scratch of one call, the
 * rebuild lock, the rebuild and scale calls, its ticks) and one template's
 * (its boards from the index, in batches, each rebuilt under its own lock or
 * scaled in turn), their start and stop. The skeleton they share with the
 * other jobs (timer, commands in flight, warn-once) is jobs/gw_job. */
#include "jobs/gw_decay_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>
#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "jobs/gw_job.h"
#include "redis/gw_lock.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_decay.h"
#include "rc_err.h"
#include "rc_instances.h"
#include "rc_keys.h"

#define SCALE_CHECK_MS 1000 /* how often a scale job looks at its schedule */
#define FIRST_TRY_MS 50     /* a rebuild job retries this often until Redis is first up */
#define NUM_MAX 32          /* one weight or number as text */

/* ---- the scratch of one call ------------------------------------------------ */

/* Appends a copy of s as the next word of the call in j's scratch. Returns 0,
 * or -1 when it does not fit (cannot happen: sized at start for the longest
 * call the window makes). */
static int add_word(struct job *j, unsigned *nw, size_t *used, const char *s)
{
    size_t n = strlen(s);
    if (*nw >= j->nwords || *used + n + 1 > j->text_cap)
        return -1;
    memcpy(j->text + *used, s, n + 1);
    j->words[*nw] = j->text + *used;
    j->lens[*nw] = n;
    *used += n + 1;
    (*nw)++;
    return 0;
}

/* Appends the keys of the window's buckets at the app's now, newest first
 * (j->win keeps their weights); *n is how many. Returns 0 or -1. */
static int put_window_keys(struct job *j, unsigned *nw, size_t *used, unsigned *n)
{
    char buf[RC_KEY_MAX];
    if (rc_decay_window(&j->board->decay, gw_now_ms(j->d->app), j->win, j->nwin, n) != 0)
        return -1;
    for (unsigned i = 0; i < *n; i++)
        if (rc_decay_key(buf, sizeof buf, j->board->name, RC_DK_BUCKET, j->win[i].index) != 0 ||
            add_word(j, nw, used, buf) != 0)
            return -1;
    return 0;
}

/* ---- the rebuild lock -------------------------------------------------------- */

static void lost_lock(struct job *j, const char *why)
{
    if (!j->owns)
        return;
    j->owns = 0;
    gw_log_info("decay: board %s: no longer runs the rebuild (%s)", j->board->name, why);
}

static int send_rebuild(struct job *j, struct gw_redis *redis);
static int send_rebuild_cb(struct job *j, struct gw_redis *redis, gw_redis_reply_cb *cb);

static void on_acquired(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0)
        return;
    if (rc == 1) {
        j->owns = 1;
        gw_log_info("decay: board %s: this gateway now runs the rebuild (lock %s, token %s)", j->board->name,
                    j->keys[K_LOCK], j->d->token);
        if (j->d->app->redis)
            send_rebuild(j, j->d->app->redis);
    } else if (rc == RC_E_INTERNAL) {
        gw_job_warn_err(&j->base, "taking the rebuild lock", err);
    }
    /* 0: another gateway holds it; try again next tick */
}

/* SET lock TOKEN NX PX 3*rebuild_every. */
static int send_acquire(struct job *j, struct gw_redis *redis)
{
    if (gw_lock_acquire(redis, j->keys[K_LOCK], j->d->token, rc_decay_lock_ttl_ms(&j->board->decay), on_acquired, j) != 0)
        return -1;
    gw_job_sent(&j->base);
    return 0;
}

/* Anything to rebuild? Then take the lock. */
static void on_probed(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0 || !r)
        return;
    if (r->type == REDIS_REPLY_INTEGER && r->integer > 0)
        send_acquire(j, j->d->app->redis);
    else if (r->type != REDIS_REPLY_INTEGER)
        gw_job_warn_once(&j->base, "looking for buckets", r);
}

/* EXISTS rc:{B|}:z and the window's buckets: a board nobody writes to never
 * takes the lock. */
static int send_probe(struct job *j, struct gw_redis *redis)
{
    unsigned nw = 0, n;
    size_t used = 0;
    if (add_word(j, &nw, &used, "EXISTS") != 0 || add_word(j, &nw, &used, j->keys[K_READ]) != 0 ||
        put_window_keys(j, &nw, &used, &n) != 0)
        return -1;
    if (gw_redis_command(redis, j->keys[K_READ], strlen(j->keys[K_READ]), (int)nw, j->words, j->lens, on_probed, j) != 0)
        return -1;
    gw_job_sent(&j->base);
    return 0;
}

static void on_renewed(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0)
        return;
    if (rc == 0)
        lost_lock(j, "its lock expired");
    else if (rc == RC_E_INTERNAL)
        gw_job_warn_err(&j->base, "renewing the rebuild lock", err);
}

static int send_renew(struct job *j, struct gw_redis *redis)
{
    if (gw_lock_renew(&j->d->lock, redis, j->keys[K_LOCK], j->d->token, rc_decay_lock_ttl_ms(&j->board->decay),
                      on_renewed, j) != 0)
        return -1;
    gw_job_sent(&j->base);
    return 0;
}

static void on_released(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    (void)rc;
    (void)err;
    gw_job_answered(&j->base); /* only sent while stopping: nothing more to do */
}

/* ---- decay = buckets: the rebuild ---------------------------------------------- */

static void on_rebuilt(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0 || !r)
        return;
    if (r->type == REDIS_REPLY_INTEGER && r->integer < 0)
        lost_lock(j, "the lock is not ours");
    else if (r->type == REDIS_REPLY_INTEGER)
        gw_job_ok(&j->base);
    else
        gw_job_warn_once(&j->base, "rebuild", r);
}

/* rebuild.lua over the window at the app's now (header of lua/rebuild.lua):
 * KEYS the buckets, tmp, z, seq, lock, rebuilds; ARGV token, weights, TTL. */
static int send_rebuild(struct job *j, struct gw_redis *redis)
{
    return send_rebuild_cb(j, redis, on_rebuilt);
}

static int send_rebuild_cb(struct job *j, struct gw_redis *redis, gw_redis_reply_cb *cb)
{
    const int tail[] = {K_TMP, K_READ, K_SEQ, K_LOCK, K_REBUILDS};
    unsigned n, nw = 0;
    size_t used = 0;
    char buf[NUM_MAX];
    int rc = put_window_keys(j, &nw, &used, &n);
    for (int k = 0; k < 5 && rc == 0; k++)
        rc = add_word(j, &nw, &used, j->keys[tail[k]]);
    rc = rc ? rc : add_word(j, &nw, &used, j->d->token);
    for (unsigned i = 0; i < n && rc == 0; i++) {
        snprintf(buf, sizeof buf, "%.17g", j->win[i].weight);
        rc = add_word(j, &nw, &used, buf);
    }
    snprintf(buf, sizeof buf, "%" PRId64, j->board->decay.result_ttl_ms);
    rc = rc ? rc : add_word(j, &nw, &used, buf);
    if (rc != 0 || gw_redis_eval(redis, &j->d->rebuild, (int)n + 5, (int)nw, j->words, j->lens, cb, j) != 0)
        return -1;
    gw_job_sent(&j->base);
    return 0;
}

static void on_rebuild_tick(uv_timer_t *t)
{
    struct job *j = t->data;
    struct gw_decay *d = j->d;
    struct gw_redis *redis = d->app->redis;
    if (!gw_job_idle(&j->base) || !redis || !gw_redis_is_up(redis))
        return;
    if (!j->started) {
        /* Redis is up: from now on, the configured pace */
        j->started = 1;
        uv_timer_set_repeat(t, (uint64_t)j->board->decay.rebuild_ms);
    }
    if (!j->owns)
        send_probe(j, redis);
    else if (send_renew(j, redis) == 0)
        send_rebuild(j, redis); /* pipelined: checks the token itself */
}

/* ---- decay = scale ---------------------------------------------------------------- */

static void on_scaled(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0 || !r)
        return;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || r->element[0]->type != REDIS_REPLY_INTEGER ||
        r->element[1]->type != REDIS_REPLY_INTEGER) {
        gw_job_warn_once(&j->base, "scale", r);
        return;
    }
    gw_job_ok(&j->base);
    j->has_last = 1;
    j->last_ms = r->element[1]->integer;
    long long k = r->element[0]->integer;
    if (k > 0)
        gw_log_info("decay: board %s: scaled by %g^%lld", j->board->name, j->board->decay.scale_factor, k);
}

/* scale.lua on j's board at now (header of lua/scale.lua). */
static int send_scale(struct job *j, struct gw_redis *redis, int64_t now, gw_redis_reply_cb *cb)
{
    const struct rc_decay_spec *spec = &j->board->decay;
    char nums[3][NUM_MAX];
    snprintf(nums[0], NUM_MAX, "%" PRId64, now);
    snprintf(nums[1], NUM_MAX, "%" PRId64, spec->scale_every_ms);
    snprintf(nums[2], NUM_MAX, "%.17g", spec->scale_factor);
    const char *argv[] = {j->keys[K_READ], j->keys[K_SCALED_AT], j->keys[K_SEQ], nums[0], nums[1], nums[2]};
    size_t lens[6];
    for (int i = 0; i < 6; i++)
        lens[i] = strlen(argv[i]);
    if (gw_redis_eval(redis, &j->d->scale, 3, 6, argv, lens, cb, j) != 0)
        return -1;
    gw_job_sent(&j->base);
    return 0;
}

static void on_scale_tick(uv_timer_t *t)
{
    struct job *j = t->data;
    struct gw_decay *d = j->d;
    const struct rc_decay_spec *spec = &j->board->decay;
    struct gw_redis *redis = d->app->redis;
    int64_t now, due, next;
    if (!gw_job_idle(&j->base) || !redis || !gw_redis_is_up(redis))
        return;
    now = gw_now_ms(d->app);
    if (rc_decay_scale_due(spec, j->has_last, j->last_ms, now, &due, &next) != 0 || (j->has_last && due == 0))
        return;
    send_scale(j, redis, now, on_scaled);
}

/* The keys of j's board (a template's job: of the board in hand). Returns 0
 * or -1. */
static int job_keys(struct job *j)
{
    static const enum rc_decay_key which[K_COUNT] = {
        [K_TMP] = RC_DK_TMP,   [K_READ] = RC_DK_READ,         [K_SEQ] = RC_DK_SEQ,
        [K_LOCK] = RC_DK_LOCK, [K_REBUILDS] = RC_DK_REBUILDS, [K_SCALED_AT] = RC_DK_SCALED_AT,
    };
    for (int k = 0; k < K_COUNT; k++)
        if (rc_decay_key(j->keys[k], RC_KEY_MAX, j->board->name, which[k], 0) != 0)
            return -1;
    return 0;
}

/* Keys and, for buckets, the scratch of one rebuild call. Returns 0 or -1. */
int gw_decay_job_init(struct gw_decay *d, struct job *j, const struct rc_board *b)
{
    j->d = d;
    j->board = b;
    gw_job_init(&j->base, &d->rel, "decay", b->name);
    if (job_keys(j) != 0)
        return -1;
    if (b->decay.kind != RC_DECAY_BUCKETS)
        return 0;
    j->nwin = rc_decay_nbuckets(&b->decay);
    if (j->nwin == 0)
        return -1;
    /* words, at most: N bucket keys + 5 keys + token + N weights + TTL (a
     * rebuild); a probe needs N + 2 */
    j->nwords = 2 * (size_t)j->nwin + 7;
    j->text_cap = (size_t)j->nwin * (RC_KEY_MAX + NUM_MAX) + K_COUNT * RC_KEY_MAX + TOKEN_MAX + NUM_MAX;
    j->win = calloc(j->nwin, sizeof *j->win);
    j->words = calloc(j->nwords, sizeof *j->words);
    j->lens = calloc(j->nwords, sizeof *j->lens);
    j->text = malloc(j->text_cap);
    return j->win && j->words && j->lens && j->text ? 0 : -1;
}

static void log_job(const struct job *j)
{
    const struct rc_decay_spec *s = &j->board->decay;
    if (s->kind == RC_DECAY_BUCKETS)
        gw_log_info("decay: board %s: rebuild every %" PRId64 " ms over %u buckets of %" PRId64 " ms (%s), "
                    "lock TTL %" PRId64 " ms",
                    j->board->name, s->rebuild_ms, j->nwin, s->bucket_ms,
                    s->weighting == RC_WEIGHT_HALFLIFE ? "halflife" : "linear", rc_decay_lock_ttl_ms(s));
    else
        gw_log_info("decay: board %s: scale by %g every %" PRId64 " ms", j->board->name, s->scale_factor,
                    s->scale_every_ms);
}

/* ---- templates: their boards from the index --------------------------------------- */

static void tmpl_next(struct tmpl *tp);

/* The board in hand is done (whatever the answer): on to the next. */
static void on_tmpl_rebuilt(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0)
        return;
    if (r && r->type == REDIS_REPLY_INTEGER)
        gw_job_ok(&j->base);
    else if (r)
        gw_job_warn_once(&j->base, "rebuild", r);
    tmpl_next(j->tmpl);
}

static void on_tmpl_acquired(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0)
        return;
    struct gw_redis *redis = j->d->app->redis;
    if (rc == RC_E_INTERNAL)
        gw_job_warn_err(&j->base, "taking the rebuild lock", err);
    if (rc == 1 && redis && send_rebuild_cb(j, redis, on_tmpl_rebuilt) == 0)
        return;
    tmpl_next(j->tmpl); /* 0: another gateway rebuilds this board */
}

/* Renewed: still ours, rebuild; 0: not ours (yet), try to take it. */
static void on_tmpl_renewed(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0)
        return;
    struct gw_redis *redis = j->d->app->redis;
    if (rc == RC_E_INTERNAL)
        gw_job_warn_err(&j->base, "renewing the rebuild lock", err);
    if (redis && rc == 1 && send_rebuild_cb(j, redis, on_tmpl_rebuilt) == 0)
        return;
    if (redis && rc == 0 &&
        gw_lock_acquire(redis, j->keys[K_LOCK], j->d->token, rc_decay_lock_ttl_ms(&j->board->decay),
                        on_tmpl_acquired, j) == 0) {
        gw_job_sent(&j->base);
        return;
    }
    tmpl_next(j->tmpl);
}

static void on_tmpl_scaled(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0)
        return;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[0]->type == REDIS_REPLY_INTEGER) {
        if (r->element[0]->integer > 0)
            gw_log_info("decay: board %s: scaled by %g^%lld", j->board->name, j->board->decay.scale_factor,
                        (long long)r->element[0]->integer);
    } else if (r) {
        gw_job_warn_once(&j->base, "scale", r);
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
    while (!d->rel.stopping && redis && tp->at < tp->n) {
        memcpy(tp->inst.name, tp->names[tp->at], sizeof tp->names[tp->at]);
        tp->at++;
        if (job_keys(j) != 0)
            continue;
        if (tp->decl->decay.kind == RC_DECAY_SCALE) {
            if (send_scale(j, redis, gw_now_ms(d->app), on_tmpl_scaled) == 0)
                return;
        } else if (gw_lock_renew(&d->lock, redis, j->keys[K_LOCK], d->token, rc_decay_lock_ttl_ms(&tp->decl->decay),
                                 on_tmpl_renewed, j) == 0) {
            gw_job_sent(&j->base);
            return;
        }
    }
}

static void on_tmpl_index(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    struct tmpl *tp = j->tmpl;
    if (gw_job_answered(&j->base) != 0)
        return;
    tp->n = tp->at = 0;
    if (!r || r->type != REDIS_REPLY_ARRAY) {
        if (r)
            gw_job_warn_once(&j->base, "reading the template's index", r);
        return;
    }
    for (size_t i = 0; i < r->elements && tp->n < TMPL_BATCH; i++) {
        const redisReply *e = r->element[i];
        if (e->type == REDIS_REPLY_STRING && rc_instances_of(tp->decl, e->str, e->len)) {
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
static void on_tmpl_tick(uv_timer_t *t)
{
    struct job *j = t->data;
    struct tmpl *tp = j->tmpl;
    struct gw_decay *d = j->d;
    struct gw_redis *redis = d->app->redis;
    if (!gw_job_idle(&j->base) || !redis || !gw_redis_is_up(redis))
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
        gw_job_sent(&j->base);
}

/* A template's job: the template copied as the board in hand (renamed for
 * each of its boards), its index key and the names of one batch. */
int gw_decay_job_init_tmpl(struct gw_decay *d, struct tmpl *tp, const struct rc_board *b)
{
    tp->decl = b;
    tp->inst = *b;
    tp->inst.is_template = 0;
    tp->job.tmpl = tp;
    if (rc_instances_index_key(tp->key, sizeof tp->key, b) != 0 || !(tp->names = calloc(TMPL_BATCH, sizeof *tp->names)))
        return -1;
    return gw_decay_job_init(d, &tp->job, &tp->inst);
}

static void log_tmpl(const struct tmpl *tp)
{
    gw_log_info("decay: template %s: its boards from %s, up to %d per %s", tp->decl->name, tp->key, TMPL_BATCH,
                tp->decl->decay.kind == RC_DECAY_BUCKETS ? "rebuild_every" : "second");
    log_job(&tp->job);
}

/* ---- start and stop ------------------------------------------------------------------ */

/* A rebuild job first ticks every FIRST_TRY_MS until Redis is up, so the lock
 * is settled (and the board built) right after start, not rebuild_every
 * later; then every rebuild_every. A scale job looks every second. */
void gw_decay_job_start(struct job *j)
{
    uv_loop_t *loop = j->d->app->loop;
    if (j->tmpl) {
        gw_job_start(&j->base, loop, on_tmpl_tick, j, 0,
                     (uint64_t)(j->board->decay.kind == RC_DECAY_BUCKETS ? j->board->decay.rebuild_ms : SCALE_CHECK_MS));
        log_tmpl(j->tmpl);
    } else if (j->board->decay.kind == RC_DECAY_BUCKETS) {
        gw_job_start(&j->base, loop, on_rebuild_tick, j, 0, FIRST_TRY_MS);
        log_job(j);
    } else {
        gw_job_start(&j->base, loop, on_scale_tick, j, SCALE_CHECK_MS, SCALE_CHECK_MS);
        log_job(j);
    }
}

/* Closes j's timer; an owner gives its lock up (compare-and-DEL): a declared
 * board's, or a template's for the boards of its last batch (all of them, up
 * to TMPL_BATCH; compare-and-DEL deletes only the locks that are ours).
 * redis: NULL when it is not up. Returns how many releases went out. */
size_t gw_decay_job_stop(struct job *j, struct gw_redis *redis)
{
    struct gw_decay *d = j->d;
    struct tmpl *tp = j->tmpl;
    size_t released = 0;
    gw_job_close(&j->base);
    if (!tp) {
        if (j->owns && redis && gw_lock_release(&d->lock, redis, j->keys[K_LOCK], d->token, on_released, j) == 0) {
            gw_job_sent(&j->base);
            released++;
            gw_log_info("decay: board %s: releasing the rebuild lock", j->board->name);
        }
        return released;
    }
    char lock[RC_KEY_MAX];
    for (size_t k = 0; redis && tp->decl->decay.kind == RC_DECAY_BUCKETS && k < tp->n; k++)
        if (rc_decay_key(lock, sizeof lock, tp->names[k], RC_DK_LOCK, 0) == 0 &&
            gw_lock_release(&d->lock, redis, lock, d->token, on_released, j) == 0) {
            gw_job_sent(&j->base);
            released++;
        }
    if (released)
        gw_log_info("decay: template %s: releasing the rebuild locks it holds of %zu boards", tp->decl->name,
                    released);
    return released;
}

void gw_decay_job_free(struct job *j)
{
    free(j->win);
    free(j->words);
    free(j->lens);
    free(j->text);
    if (j->tmpl)
        free(j->tmpl->names);
}
