/* gw_decay_job.c - one decay job (see gw_decay_int.h, and gw_decay.c's
 * banner for the design): its lifetime, the scratch of one call, the
 * rebuild lock, the rebuild and scale calls, and the ticks of a declared
 * board. */
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

/* ---- lifetime -------------------------------------------------------------- */

static void free_job(struct job *j)
{
    free(j->win);
    free(j->words);
    free(j->lens);
    free(j->text);
}

void gw_dk_maybe_free(struct gw_decay *d)
{
    if (!d->stopping || d->open_timers > 0 || d->inflight > 0)
        return;
    for (size_t i = 0; i < d->njobs; i++)
        free_job(&d->jobs[i]);
    for (size_t i = 0; i < d->ntmpls; i++) {
        free_job(&d->tmpls[i].job);
        free(d->tmpls[i].names);
    }
    free(d->jobs);
    free(d->tmpls);
    free(d);
}

void gw_dk_on_timer_closed(uv_handle_t *h)
{
    struct job *j = h->data;
    struct gw_decay *d = j->d;
    d->open_timers--;
    gw_dk_maybe_free(d);
}

/* Every reply callback starts here: the command is answered. Returns 0 when
 * the caller may go on, or -1 when we are stopping (d may be freed by then;
 * touch nothing). */
int gw_dk_answered(struct job *j)
{
    struct gw_decay *d = j->d;
    j->busy--;
    d->inflight--;
    if (d->stopping) {
        gw_dk_maybe_free(d);
        return -1;
    }
    return 0;
}

void gw_dk_sent(struct job *j)
{
    j->busy++;
    j->d->inflight++;
}

/* Logs a failed command once, until the job succeeds again. */
void gw_dk_warn_once(struct job *j, const char *what, const redisReply *r)
{
    if (j->warned)
        return;
    j->warned = 1;
    gw_log_warn("decay: board %s: %s failed: %.150s", j->board->name, what,
                r && r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
}

/* The same, for an error text (or none). */
void gw_dk_warn_err(struct job *j, const char *what, const char *err)
{
    if (j->warned)
        return;
    j->warned = 1;
    gw_log_warn("decay: board %s: %s failed: %.150s", j->board->name, what, err ? err : "unexpected reply");
}

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

static void on_acquired(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    if (gw_dk_answered(j) != 0)
        return;
    if (rc == 1) {
        j->owns = 1;
        gw_log_info("decay: board %s: this gateway now runs the rebuild (lock %s, token %s)", j->board->name,
                    j->keys[K_LOCK], j->d->token);
        if (j->d->app->redis)
            send_rebuild(j, j->d->app->redis);
    } else if (rc == RC_E_INTERNAL) {
        gw_dk_warn_err(j, "taking the rebuild lock", err);
    }
    /* 0: another gateway holds it; try again next tick */
}

/* SET lock TOKEN NX PX 3*rebuild_every. */
static int send_acquire(struct job *j, struct gw_redis *redis)
{
    if (gw_lock_acquire(redis, j->keys[K_LOCK], j->d->token, rc_decay_lock_ttl_ms(&j->board->decay), on_acquired, j) != 0)
        return -1;
    gw_dk_sent(j);
    return 0;
}

/* Anything to rebuild? Then take the lock. */
static void on_probed(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_dk_answered(j) != 0 || !r)
        return;
    if (r->type == REDIS_REPLY_INTEGER && r->integer > 0)
        send_acquire(j, j->d->app->redis);
    else if (r->type != REDIS_REPLY_INTEGER)
        gw_dk_warn_once(j, "looking for buckets", r);
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
    gw_dk_sent(j);
    return 0;
}

static void on_renewed(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    if (gw_dk_answered(j) != 0)
        return;
    if (rc == 0)
        lost_lock(j, "its lock expired");
    else if (rc == RC_E_INTERNAL)
        gw_dk_warn_err(j, "renewing the rebuild lock", err);
}

static int send_renew(struct job *j, struct gw_redis *redis)
{
    if (gw_lock_renew(&j->d->lock, redis, j->keys[K_LOCK], j->d->token, rc_decay_lock_ttl_ms(&j->board->decay),
                      on_renewed, j) != 0)
        return -1;
    gw_dk_sent(j);
    return 0;
}

void gw_dk_on_released(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    (void)rc;
    (void)err;
    gw_dk_answered(j); /* only sent while stopping: nothing more to do */
}

/* ---- decay = buckets: the rebuild ---------------------------------------------- */

static void on_rebuilt(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_dk_answered(j) != 0 || !r)
        return;
    if (r->type == REDIS_REPLY_INTEGER && r->integer < 0)
        lost_lock(j, "the lock is not ours");
    else if (r->type == REDIS_REPLY_INTEGER)
        j->warned = 0;
    else
        gw_dk_warn_once(j, "rebuild", r);
}

/* rebuild.lua over the window at the app's now (header of lua/rebuild.lua):
 * KEYS the buckets, tmp, z, seq, lock, rebuilds; ARGV token, weights, TTL. */
static int send_rebuild(struct job *j, struct gw_redis *redis)
{
    return gw_dk_send_rebuild_cb(j, redis, on_rebuilt);
}

int gw_dk_send_rebuild_cb(struct job *j, struct gw_redis *redis, gw_redis_reply_cb *cb)
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
    gw_dk_sent(j);
    return 0;
}

void gw_dk_on_rebuild_tick(uv_timer_t *t)
{
    struct job *j = t->data;
    struct gw_decay *d = j->d;
    struct gw_redis *redis = d->app->redis;
    if (d->stopping || j->busy || !redis || !gw_redis_is_up(redis))
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
    if (gw_dk_answered(j) != 0 || !r)
        return;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || r->element[0]->type != REDIS_REPLY_INTEGER ||
        r->element[1]->type != REDIS_REPLY_INTEGER) {
        gw_dk_warn_once(j, "scale", r);
        return;
    }
    j->warned = 0;
    j->has_last = 1;
    j->last_ms = r->element[1]->integer;
    long long k = r->element[0]->integer;
    if (k > 0)
        gw_log_info("decay: board %s: scaled by %g^%lld", j->board->name, j->board->decay.scale_factor, k);
}

/* scale.lua on j's board at now (header of lua/scale.lua). */
int gw_dk_send_scale(struct job *j, struct gw_redis *redis, int64_t now, gw_redis_reply_cb *cb)
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
    gw_dk_sent(j);
    return 0;
}

void gw_dk_on_scale_tick(uv_timer_t *t)
{
    struct job *j = t->data;
    struct gw_decay *d = j->d;
    const struct rc_decay_spec *spec = &j->board->decay;
    struct gw_redis *redis = d->app->redis;
    int64_t now, due, next;
    if (d->stopping || j->busy || !redis || !gw_redis_is_up(redis))
        return;
    now = gw_now_ms(d->app);
    if (rc_decay_scale_due(spec, j->has_last, j->last_ms, now, &due, &next) != 0 || (j->has_last && due == 0))
        return;
    gw_dk_send_scale(j, redis, now, on_scaled);
}

/* Keys and, for buckets, the scratch of one rebuild call. Returns 0 or -1. */
/* The keys of j's board (a template's job: of the board in hand). */
int gw_dk_job_keys(struct job *j)
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

int gw_dk_init_job(struct gw_decay *d, struct job *j, const struct rc_board *b)
{
    j->d = d;
    j->board = b;
    if (gw_dk_job_keys(j) != 0)
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

void gw_dk_log_job(const struct job *j)
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
