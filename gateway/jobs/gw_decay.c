/* gw_decay.c - the background jobs of decaying boards (see gw_decay.h,
 * DESIGN.md "Hot (decaying) boards", docs/gateway.md "Hot boards").
 *
 * One job per declared exact-name board with decay, and one per template
 * with decay ("hot:*"), whose boards are born at their first write: every
 * write of such a board records it in the template's index (rc:{hot:*}:boards,
 * core/rc_instances.h, fed by ops/gw_instances.c), which the template's job
 * reads (see "Templates" below).
 *
 * decay = buckets: a repeating timer every rebuild_every.
 *   not the owner:  EXISTS on the read board and the window's buckets; when
 *                   there is anything to rebuild, SET rc:{B|}:lock TOKEN NX
 *                   PX 3*rebuild_every; on OK we own it and rebuild at once.
 *                   (A board nobody writes to costs nothing: no lock, no
 *                   writes, nothing to release at shutdown.)
 *   the owner:      lock_renew.lua (compare-and-PEXPIRE) and rebuild.lua,
 *                   pipelined; a renew answering 0 (or a rebuild answering
 *                   -1) means the lock expired and may be someone else's
 *   stop:           the owner sends lock_release.lua (compare-and-DEL), so
 *                   another gateway takes over at its next tick instead of
 *                   after the lock expires
 * rebuild.lua checks the token itself, so a gateway whose lock expired while
 * its renew was in flight never rebuilds alongside the new owner.
 *
 * decay = scale: a timer every second; scale.lua runs only when the schedule
 * (core/rc_decay.c, from the script's last answer) says a period is due. The
 * script re-checks against rc:{B|}:scaled_at atomically, so several gateways
 * scale exactly once per period without a lock.
 *
 * Templates: a timer every rebuild_every (buckets) or every second (scale)
 * reads up to TMPL_BATCH boards from the template's index (ZRANGEBYSCORE;
 * buckets: only boards written within the window, by the score, the end of
 * their newest bucket), then handles them one after the other:
 *   buckets: lock_renew.lua; answered 0, SET NX PX (the lock of that board,
 *            rc:{B|}:lock, the same as a declared board's); held: rebuild.lua
 *   scale:   scale.lua (it checks the schedule itself)
 * A template with more boards than TMPL_BATCH goes on from where it stopped at
 * the next tick, so each board is visited every ceil(N / TMPL_BATCH) ticks.
 * After each full pass, boards whose newest bucket left the window are
 * removed from the index (their read board expires by its result_ttl). At
 * stop, the locks of the boards of the last batch are released
 * (compare-and-DEL: only ours go), so with up to TMPL_BATCH boards another
 * gateway takes over at its next tick; the others expire (3 x rebuild_every).
 *
 * Nothing blocks the loop: every command is async on the command connection.
 * A tick that finds Redis down (gw_redis_is_up 0) or its job's previous
 * commands unanswered does nothing. Time is the app clock (gw_now_ms), which
 * tests shift through POST /api/v1/debug/clock.
 *
 * Ownership: struct gw_decay owns its jobs, their timers and scratch buffers,
 * and the four scripts. gw_redis borrows the scripts (gw_redis_add_script) and
 * touches them only while (re)connecting, never after gw_redis_stop, which
 * main calls right after gw_decay_stop. The struct is freed once every timer
 * is closed and every command it sent has been answered (gw_redis_stop
 * answers the pending ones with NULL), whichever comes last.
 */
#include "jobs/gw_decay.h"

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

#define SCALE_CHECK_MS 1000 /* how often a scale job looks at its schedule */
#define FIRST_TRY_MS 50     /* a rebuild job retries this often until Redis is first up */
#define TOKEN_MAX 128
#define NUM_MAX 32          /* one weight or number as text */
#define TMPL_BATCH 64       /* boards of a template handled per tick */

/* The keys of a job that never change. */
enum { K_TMP, K_READ, K_SEQ, K_LOCK, K_REBUILDS, K_SCALED_AT, K_COUNT };

struct tmpl;

struct job {
    struct gw_decay *d;             /* owner */
    struct tmpl *tmpl;              /* a template's job: its state; NULL for an exact board */
    const struct rc_board *board;   /* borrowed from app->conf, which outlives us */
    uv_timer_t timer;
    unsigned busy;                  /* commands of this job not answered yet */
    int owns;                       /* buckets: we hold the lock, as far as we know */
    int started;                    /* buckets: the first lock attempt went out */
    int warned;                     /* an error was logged; quiet until a success */
    int has_last;                   /* scale: last_ms is known */
    int64_t last_ms;                /* scale: scaled_at from the script's last answer */
    char keys[K_COUNT][RC_KEY_MAX];
    /* buckets: scratch for one call (probe or rebuild), sized at start for the window
     * (gw_script_call copies what it sends) */
    struct rc_decay_bucket *win;
    unsigned nwin;
    const char **words;
    size_t *lens;
    size_t nwords;
    char *text;
    size_t text_cap;
};

/* A template with decay: one job whose board is renamed for each of the
 * template's boards in turn (see the banner, "Templates"). */
struct tmpl {
    struct job job;                 /* job.board = &inst, job.tmpl = this */
    struct rc_board inst;           /* the template, named for the board in hand */
    const struct rc_board *decl;    /* the template, in app->conf */
    char key[RC_KEY_MAX];           /* its index */
    char (*names)[RC_BOARD_MAX + 1]; /* boards read at this tick */
    size_t n, at;                   /* how many; the next to handle */
    size_t cursor;                  /* where the next read of the index starts */
};

struct gw_decay {
    struct gw_app *app;             /* borrowed */
    struct gw_script rebuild, scale;
    struct gw_lock_scripts lock;     /* the rebuild lock's renewal and release */
    char token[TOKEN_MAX];          /* "host:pid:random": names this gateway in the lock */
    struct job *jobs;
    size_t njobs;
    struct tmpl *tmpls;
    size_t ntmpls;
    int open_timers;
    unsigned inflight;              /* commands sent and not answered, all jobs */
    int stopping;
};

/* ---- lifetime -------------------------------------------------------------- */

static void free_job(struct job *j)
{
    free(j->win);
    free(j->words);
    free(j->lens);
    free(j->text);
}

static void maybe_free(struct gw_decay *d)
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

static void on_timer_closed(uv_handle_t *h)
{
    struct job *j = h->data;
    struct gw_decay *d = j->d;
    d->open_timers--;
    maybe_free(d);
}

/* Every reply callback starts here: the command is answered. Returns 0 when
 * the caller may go on, or -1 when we are stopping (d may be freed by then;
 * touch nothing). */
static int answered(struct job *j)
{
    struct gw_decay *d = j->d;
    j->busy--;
    d->inflight--;
    if (d->stopping) {
        maybe_free(d);
        return -1;
    }
    return 0;
}

static void sent(struct job *j)
{
    j->busy++;
    j->d->inflight++;
}

/* Logs a failed command once, until the job succeeds again. */
static void warn_once(struct job *j, const char *what, const redisReply *r)
{
    if (j->warned)
        return;
    j->warned = 1;
    gw_log_warn("decay: board %s: %s failed: %.150s", j->board->name, what,
                r && r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
}

/* The same, for an error text (or none). */
static void warn_err(struct job *j, const char *what, const char *err)
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
static int send_rebuild_cb(struct job *j, struct gw_redis *redis, gw_redis_reply_cb *cb);

static void on_acquired(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    if (answered(j) != 0)
        return;
    if (rc == 1) {
        j->owns = 1;
        gw_log_info("decay: board %s: this gateway now runs the rebuild (lock %s, token %s)", j->board->name,
                    j->keys[K_LOCK], j->d->token);
        if (j->d->app->redis)
            send_rebuild(j, j->d->app->redis);
    } else if (rc == RC_E_INTERNAL) {
        warn_err(j, "taking the rebuild lock", err);
    }
    /* 0: another gateway holds it; try again next tick */
}

/* SET lock TOKEN NX PX 3*rebuild_every. */
static int send_acquire(struct job *j, struct gw_redis *redis)
{
    if (gw_lock_acquire(redis, j->keys[K_LOCK], j->d->token, rc_decay_lock_ttl_ms(&j->board->decay), on_acquired, j) != 0)
        return -1;
    sent(j);
    return 0;
}

/* Anything to rebuild? Then take the lock. */
static void on_probed(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (answered(j) != 0 || !r)
        return;
    if (r->type == REDIS_REPLY_INTEGER && r->integer > 0)
        send_acquire(j, j->d->app->redis);
    else if (r->type != REDIS_REPLY_INTEGER)
        warn_once(j, "looking for buckets", r);
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
    sent(j);
    return 0;
}

static void on_renewed(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    if (answered(j) != 0)
        return;
    if (rc == 0)
        lost_lock(j, "its lock expired");
    else if (rc == RC_E_INTERNAL)
        warn_err(j, "renewing the rebuild lock", err);
}

static int send_renew(struct job *j, struct gw_redis *redis)
{
    if (gw_lock_renew(&j->d->lock, redis, j->keys[K_LOCK], j->d->token, rc_decay_lock_ttl_ms(&j->board->decay),
                      on_renewed, j) != 0)
        return -1;
    sent(j);
    return 0;
}

static void on_released(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    (void)rc;
    (void)err;
    answered(j); /* only sent while stopping: nothing more to do */
}

/* ---- decay = buckets: the rebuild ---------------------------------------------- */

static void on_rebuilt(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (answered(j) != 0 || !r)
        return;
    if (r->type == REDIS_REPLY_INTEGER && r->integer < 0)
        lost_lock(j, "the lock is not ours");
    else if (r->type == REDIS_REPLY_INTEGER)
        j->warned = 0;
    else
        warn_once(j, "rebuild", r);
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
    sent(j);
    return 0;
}

static void on_rebuild_tick(uv_timer_t *t)
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
    if (answered(j) != 0 || !r)
        return;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || r->element[0]->type != REDIS_REPLY_INTEGER ||
        r->element[1]->type != REDIS_REPLY_INTEGER) {
        warn_once(j, "scale", r);
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
    sent(j);
    return 0;
}

static void on_scale_tick(uv_timer_t *t)
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
    send_scale(j, redis, now, on_scaled);
}

/* ---- templates: their boards from the index --------------------------------------- */

static int job_keys(struct job *j);
static void tmpl_next(struct tmpl *tp);

/* The board in hand is done (whatever the answer): on to the next. */
static void on_tmpl_rebuilt(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (answered(j) != 0)
        return;
    if (r && r->type == REDIS_REPLY_INTEGER)
        j->warned = 0;
    else if (r)
        warn_once(j, "rebuild", r);
    tmpl_next(j->tmpl);
}

static void on_tmpl_acquired(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    if (answered(j) != 0)
        return;
    struct gw_redis *redis = j->d->app->redis;
    if (rc == RC_E_INTERNAL)
        warn_err(j, "taking the rebuild lock", err);
    if (rc == 1 && redis && send_rebuild_cb(j, redis, on_tmpl_rebuilt) == 0)
        return;
    tmpl_next(j->tmpl); /* 0: another gateway rebuilds this board */
}

/* Renewed: still ours, rebuild; 0: not ours (yet), try to take it. */
static void on_tmpl_renewed(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    if (answered(j) != 0)
        return;
    struct gw_redis *redis = j->d->app->redis;
    if (rc == RC_E_INTERNAL)
        warn_err(j, "renewing the rebuild lock", err);
    if (redis && rc == 1 && send_rebuild_cb(j, redis, on_tmpl_rebuilt) == 0)
        return;
    if (redis && rc == 0 &&
        gw_lock_acquire(redis, j->keys[K_LOCK], j->d->token, rc_decay_lock_ttl_ms(&j->board->decay),
                        on_tmpl_acquired, j) == 0) {
        sent(j);
        return;
    }
    tmpl_next(j->tmpl);
}

static void on_tmpl_scaled(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (answered(j) != 0)
        return;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[0]->type == REDIS_REPLY_INTEGER) {
        if (r->element[0]->integer > 0)
            gw_log_info("decay: board %s: scaled by %g^%lld", j->board->name, j->board->decay.scale_factor,
                        (long long)r->element[0]->integer);
    } else if (r) {
        warn_once(j, "scale", r);
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
        if (job_keys(j) != 0)
            continue;
        if (tp->decl->decay.kind == RC_DECAY_SCALE) {
            if (send_scale(j, redis, gw_now_ms(d->app), on_tmpl_scaled) == 0)
                return;
        } else if (gw_lock_renew(&d->lock, redis, j->keys[K_LOCK], d->token, rc_decay_lock_ttl_ms(&tp->decl->decay),
                                 on_tmpl_renewed, j) == 0) {
            sent(j);
            return;
        }
    }
}

static void on_tmpl_index(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    struct tmpl *tp = j->tmpl;
    if (answered(j) != 0)
        return;
    tp->n = tp->at = 0;
    if (!r || r->type != REDIS_REPLY_ARRAY) {
        if (r)
            warn_once(j, "reading the template's index", r);
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
static void on_tmpl_tick(uv_timer_t *t)
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
        sent(j);
}

/* ---- start and stop ------------------------------------------------------------------- */

/* "host:pid:16 hex digits": unique per process, and tells an operator (or a
 * test) which gateway holds a lock. */
static void make_token(char *out, size_t cap)
{
    char host[64];
    size_t hlen = sizeof host;
    unsigned char rnd[8] = {0};
    if (uv_os_gethostname(host, &hlen) != 0)
        snprintf(host, sizeof host, "host");
    if (uv_random(NULL, NULL, rnd, sizeof rnd, 0, NULL) != 0) {
        uint64_t x = uv_hrtime();
        memcpy(rnd, &x, sizeof rnd);
    }
    int n = snprintf(out, cap, "%s:%d:", host, (int)uv_os_getpid());
    for (size_t i = 0; i < sizeof rnd && n > 0 && (size_t)n + 2 < cap; i++)
        n += snprintf(out + n, cap - (size_t)n, "%02x", rnd[i]);
}

/* Keys and, for buckets, the scratch of one rebuild call. Returns 0 or -1. */
/* The keys of j's board (a template's job: of the board in hand). */
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

static int init_job(struct gw_decay *d, struct job *j, const struct rc_board *b)
{
    j->d = d;
    j->board = b;
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

/* A rebuild job first ticks every FIRST_TRY_MS until Redis is up, so the lock
 * is settled (and the board built) right after start, not rebuild_every
 * later; then every rebuild_every. A scale job looks every second. */
static void start_timer(struct gw_decay *d, struct job *j)
{
    uv_timer_init(d->app->loop, &j->timer);
    j->timer.data = j;
    if (j->tmpl)
        uv_timer_start(&j->timer, on_tmpl_tick, 0,
                       (uint64_t)(j->board->decay.kind == RC_DECAY_BUCKETS ? j->board->decay.rebuild_ms : SCALE_CHECK_MS));
    else if (j->board->decay.kind == RC_DECAY_BUCKETS)
        uv_timer_start(&j->timer, on_rebuild_tick, 0, FIRST_TRY_MS);
    else
        uv_timer_start(&j->timer, on_scale_tick, SCALE_CHECK_MS, SCALE_CHECK_MS);
    d->open_timers++;
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

/* Allocates everything before the first timer starts, so a failure leaves
 * nothing behind (app->decay stays NULL). */
/* A template's job: the template copied as the board in hand (renamed for
 * each of its boards), its index key and the names of one batch. */
static int init_tmpl(struct gw_decay *d, struct tmpl *tp, const struct rc_board *b)
{
    tp->decl = b;
    tp->inst = *b;
    tp->inst.is_template = 0;
    tp->job.tmpl = tp;
    if (rc_inst_index_key(tp->key, sizeof tp->key, b) != 0 || !(tp->names = calloc(TMPL_BATCH, sizeof *tp->names)))
        return -1;
    return init_job(d, &tp->job, &tp->inst);
}

static void log_tmpl(const struct tmpl *tp)
{
    gw_log_info("decay: template %s: its boards from %s, up to %d per %s", tp->decl->name, tp->key, TMPL_BATCH,
                tp->decl->decay.kind == RC_DECAY_BUCKETS ? "rebuild_every" : "second");
    log_job(&tp->job);
}

int gw_decay_start(struct gw_app *app)
{
    const struct rc_conf *c = app->conf;
    size_t n = 0, nt = 0;
    for (size_t i = 0; i < c->nboards; i++) {
        const struct rc_board *b = &c->boards[i];
        if (b->decay.kind == RC_DECAY_NONE)
            continue;
        if (b->is_template)
            nt++;
        else
            n++;
    }
    if (n + nt == 0)
        return 0;
    struct gw_decay *d = calloc(1, sizeof *d);
    if (!d || !(d->jobs = calloc(n ? n : 1, sizeof *d->jobs)) || !(d->tmpls = calloc(nt ? nt : 1, sizeof *d->tmpls))) {
        if (d)
            free(d->jobs);
        free(d);
        gw_log_error("decay: out of memory");
        return -1;
    }
    d->app = app;
    make_token(d->token, sizeof d->token);
    for (size_t i = 0; i < c->nboards; i++) {
        const struct rc_board *b = &c->boards[i];
        if (b->decay.kind == RC_DECAY_NONE)
            continue;
        if (b->is_template ? init_tmpl(d, &d->tmpls[d->ntmpls++], b) : init_job(d, &d->jobs[d->njobs++], b)) {
            d->stopping = 1;
            maybe_free(d);
            gw_log_error("decay: board %s: cannot set up its job", b->name);
            return -1;
        }
    }
    gw_script_init(&d->rebuild, rc_lua_rebuild);
    gw_script_init(&d->scale, rc_lua_scale);
    gw_lock_scripts_init(&d->lock);
    gw_redis_add_script(app->redis, &d->rebuild);
    gw_redis_add_script(app->redis, &d->scale);
    gw_redis_add_script(app->redis, &d->lock.renew);
    gw_redis_add_script(app->redis, &d->lock.release);
    for (size_t i = 0; i < d->njobs; i++) {
        start_timer(d, &d->jobs[i]);
        log_job(&d->jobs[i]);
    }
    for (size_t i = 0; i < d->ntmpls; i++) {
        start_timer(d, &d->tmpls[i].job);
        log_tmpl(&d->tmpls[i]);
    }
    app->decay = d;
    return 0;
}

/* Closes the timers; an owner gives its lock up (compare-and-DEL), written
 * out now because gw_redis_stop comes next and would drop it unsent. */
void gw_decay_stop(struct gw_app *app)
{
    struct gw_decay *d = app ? app->decay : NULL;
    if (!d)
        return;
    app->decay = NULL;
    d->stopping = 1;
    struct gw_redis *redis = app->redis && gw_redis_is_up(app->redis) ? app->redis : NULL;
    int queued = 0;
    for (size_t i = 0; i < d->njobs; i++) {
        struct job *j = &d->jobs[i];
        uv_timer_stop(&j->timer);
        uv_close((uv_handle_t *)&j->timer, on_timer_closed);
        if (j->owns && redis && gw_lock_release(&d->lock, redis, j->keys[K_LOCK], d->token, on_released, j) == 0) {
            sent(j);
            queued = 1;
            gw_log_info("decay: board %s: releasing the rebuild lock", j->board->name);
        }
    }
    for (size_t i = 0; i < d->ntmpls; i++) {
        struct tmpl *tp = &d->tmpls[i];
        uv_timer_stop(&tp->job.timer);
        uv_close((uv_handle_t *)&tp->job.timer, on_timer_closed);
        /* the boards of the last batch (all of them, up to TMPL_BATCH):
         * compare-and-DEL deletes only the locks that are ours */
        char lock[RC_KEY_MAX];
        size_t released = 0;
        for (size_t k = 0; redis && tp->decl->decay.kind == RC_DECAY_BUCKETS && k < tp->n; k++)
            if (rc_decay_key(lock, sizeof lock, tp->names[k], RC_DK_LOCK, 0) == 0 &&
                gw_lock_release(&d->lock, redis, lock, d->token, on_released, &tp->job) == 0) {
                sent(&tp->job);
                released++;
            }
        if (released) {
            queued = 1;
            gw_log_info("decay: template %s: releasing the rebuild locks it holds of %zu boards", tp->decl->name,
                        released);
        }
    }
    if (queued)
        gw_redis_flush(app->redis);
    maybe_free(d);
}
