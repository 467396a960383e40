/* gw_ckpt.c - the history checkpoint job (see gw_ckpt.h).
 *
 * One timer every GW_CKPT_TICK_MS for all the boards. At each tick, every board that has
 * changed since its last call (gw_ckpt_heard: this process wrote it, or
 * heard its change event) and has no call of ours in flight gets one call
 * of lua/ckpt.lua on its current period's keys (an unchanged board costs
 * Redis nothing; every board is called once every GW_CKPT_IDLE_TICKS ticks
 * all the same, for the sweep and for changes this process does not hear:
 * `rankcast import`, another gateway's writes to a board nobody watches
 * here on a cluster): the script drops the checkpoints no read can use, and
 * starts a build when the present is `every` changes past the newest
 * checkpoint (or continues ours). While it answers "copying" the next call
 * goes out at once on its reply: one slice of GW_CKPT_SLICE members each,
 * the writes going on between the calls, then the correction from the log;
 * after a "done" too (the next checkpoint may be due already).
 * A build some other gateway owns answers "busy": we leave it alone.
 *
 * Test knobs, read only with [server] test_clock = on (never in production)
 * and logged when in force: RANKCAST_TEST_CKPT_SLICE=N members per slice,
 * RANKCAST_TEST_CKPT_PAUSE_MS=MS between two slices (so a test can write
 * while a copy is half done). */
#include "jobs/gw_ckpt.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>
#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "fanout/gw_fanout.h"
#include "jobs/gw_job.h"
#include "redis/gw_lock.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_conf.h"
#include "rc_keys.h"
#include "rc_lua.h"
#include "rc_period.h"
#include "rc_shard.h"

/* members a slice copies (~3 ms of script; a correction slice undoes half
 * as many changes): few enough calls that a copy of a big board is not
 * held back by the writes queued ahead of each (docs/history.md) */
#define GW_CKPT_SLICE 4000
#define GW_CKPT_LEASE_MS 30000 /* a build whose owner went quiet this long is anyone's */
#define GW_CKPT_NKEYS 7
/* The timer: often, so a build starts close to its C (its correction
 * undoes the changes since C); an idle call is a few reads. */
#define GW_CKPT_TICK_MS 100
#define GW_CKPT_SWEEP_EVERY 50 /* calls: a sweep of the index every few seconds */
#define GW_CKPT_IDLE_TICKS 100 /* every board once every 10 s, changed or not */
/* Boards of a template ([board match:*] with history = full) join when this
 * process first hears of a change to them, up to this many at once, and
 * leave after GW_CKPT_FORGET_MS without one (their checkpoints stay in
 * Redis: the next change brings the board back) */
#define GW_CKPT_TEMPLATE_MAX 256
#define GW_CKPT_FORGET_MS (10 * 60 * 1000)

struct ckpt_board {
    struct gw_ckpt *owner;
    const struct rc_board *b;
    char name[RC_BOARD_MAX + 8]; /* the board, or one of its shards "B#i" */
    int inflight;                /* a call of ours is out */
    int heard;                   /* changed since our last call was sent (gw_ckpt_heard) */
    int going;                   /* our last call answered copying or done: a build goes on, or the
                                  * next may be due (the test knob's ticks call on) */
    int64_t members;             /* its size at our last call: an "auto" interval grows with it */
    int dyn;                     /* a template's board (GW_CKPT_TEMPLATE_MAX) */
    uint64_t heard_at;           /* dyn: the loop's time of its last change heard */
    int warned;                  /* a failure was logged: quiet until a success */
    unsigned calls;              /* calls sent: every GW_CKPT_SWEEP_EVERY-th sweeps the index */
};

struct gw_ckpt {
    struct gw_app *app;
    struct gw_release rel;
    struct gw_job job;           /* the timer, the commands in flight */
    struct gw_script script;     /* lua/ckpt.lua */
    char token[GW_LOCK_TOKEN_MAX];
    unsigned ticks;
    unsigned slice;
    int64_t pause_ms;            /* test knob: > 0, one slice per tick of this period */
    struct ckpt_board **boards;  /* each its own allocation: a call in flight points at it */
    size_t n, cap;
    size_t ndyn;                 /* template boards among them */
    int templates;               /* a template keeps its history: look changed boards up */
    int full_warned;             /* GW_CKPT_TEMPLATE_MAX was logged */
};

static int send_step(struct ckpt_board *cb);

static void warn(struct ckpt_board *cb, const char *why)
{
    if (cb->warned)
        return;
    cb->warned = 1;
    gw_log_warn("checkpoint: board %s: %.150s", cb->name, why);
}

static void on_step(redisReply *r, void *privdata)
{
    struct ckpt_board *cb = privdata;
    struct gw_ckpt *k = cb->owner;
    cb->inflight = 0;
    if (gw_job_answered(&k->job) != 0)
        return; /* stopping: k may be gone */
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 4 || r->element[0]->type != REDIS_REPLY_STRING ||
        r->element[1]->type != REDIS_REPLY_INTEGER || r->element[3]->type != REDIS_REPLY_INTEGER) {
        warn(cb, r && r->type == REDIS_REPLY_ERROR ? r->str : r ? "unexpected reply" : "no answer");
        return;
    }
    cb->warned = 0;
    cb->members = r->element[3]->integer;
    const char *state = r->element[0]->str;
    cb->going = strcmp(state, "copying") == 0 || strcmp(state, "done") == 0;
    k->app->metrics.history_checkpoints_dropped += (uint64_t)r->element[1]->integer;
    if (strcmp(state, "done") == 0)
        k->app->metrics.history_checkpoints++;
    if ((strcmp(state, "copying") == 0 || strcmp(state, "done") == 0) && k->pause_ms <= 0 &&
        gw_redis_is_up(k->app->redis) && send_step(cb) != 0)
        /* the next slice at once (the writes queued meanwhile go first), or
         * after a checkpoint the next one when it is due already: writes
         * faster than a copy must not leave the checkpoints behind */
        warn(cb, "cannot send the checkpoint step");
}

/* One call of lua/ckpt.lua on the board's current keys. Returns 0 or -1. */
static int send_step(struct ckpt_board *cb)
{
    struct gw_ckpt *k = cb->owner;
    const char *period = "";
    struct rc_period per;
    if (cb->b->period.kind != RC_PERIOD_NONE) {
        if (rc_period_at(&cb->b->period, gw_now_ms(k->app), &per) != 0)
            return -1;
        period = per.id;
    }
    static const char *const suffix[GW_CKPT_NKEYS] = {"z", "seq", "log", "epoch", "ck", "ckb", "ckt"};
    char keys[GW_CKPT_NKEYS][RC_KEY_MAX];
    for (int i = 0; i < GW_CKPT_NKEYS; i++)
        if (rc_keys_board(keys[i], sizeof keys[i], cb->name, period, suffix[i], NULL) != 0)
            return -1;
    char every[24], lease[24], slice[24], fixmax[24];
    snprintf(every, sizeof every, "%u", rc_conf_checkpoint_every_at(k->app->conf, cb->members));
    snprintf(lease, sizeof lease, "%d", GW_CKPT_LEASE_MS);
    snprintf(slice, sizeof slice, "%u", k->slice);
    /* how far behind the present a build may start: ten caps of changes
     * to undo in slices, beyond which the job is not keeping up */
    snprintf(fixmax, sizeof fixmax, "%llu", 10ull * k->app->conf->history_undo_max);
    const char *argv[GW_CKPT_NKEYS + 6];
    for (int i = 0; i < GW_CKPT_NKEYS; i++)
        argv[i] = keys[i];
    argv[GW_CKPT_NKEYS] = k->token;
    argv[GW_CKPT_NKEYS + 1] = every;
    argv[GW_CKPT_NKEYS + 2] = lease;
    argv[GW_CKPT_NKEYS + 3] = slice;
    argv[GW_CKPT_NKEYS + 4] = fixmax;
    argv[GW_CKPT_NKEYS + 5] = ++cb->calls % GW_CKPT_SWEEP_EVERY == 1 ? "1" : "0";
    size_t lens[GW_CKPT_NKEYS + 6];
    for (int i = 0; i < GW_CKPT_NKEYS + 6; i++)
        lens[i] = strlen(argv[i]);
    if (gw_redis_eval(k->app->redis, &k->script, GW_CKPT_NKEYS, GW_CKPT_NKEYS + 6, argv, lens, on_step, cb) != 0)
        return -1;
    cb->inflight = 1;
    cb->heard = 0; /* (a change heard from now on calls again: this call may not see it) */
    gw_job_sent(&k->job);
    return 0;
}

static void on_tick(uv_timer_t *t)
{
    struct gw_ckpt *k = t->data;
    if (k->rel.stopping || !k->app->redis || !gw_redis_is_up(k->app->redis))
        return;
    int all = k->ticks++ % GW_CKPT_IDLE_TICKS == 0;
    uint64_t now = uv_now(k->app->loop);
    for (size_t i = 0; i < k->n; i++) {
        struct ckpt_board *cb = k->boards[i];
        if (all && cb->dyn && !cb->inflight && !cb->going && !cb->heard && now - cb->heard_at > GW_CKPT_FORGET_MS) {
            /* a template's board quiet this long: forgotten until it changes */
            free(cb);
            k->boards[i--] = k->boards[--k->n];
            k->ndyn--;
            continue;
        }
        if (!cb->inflight && (all || cb->heard || cb->going) && send_step(cb) != 0)
            warn(cb, "cannot send the checkpoint step");
    }
}

/* A new entry for board b stored as `name`: 0 or -1 (out of memory). */
static int add_board(struct gw_ckpt *k, const struct rc_board *b, const char *name, int dyn)
{
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 8;
        struct ckpt_board **nb = realloc(k->boards, cap * sizeof *nb);
        if (!nb)
            return -1;
        k->boards = nb;
        k->cap = cap;
    }
    struct ckpt_board *cb = calloc(1, sizeof *cb);
    if (!cb)
        return -1;
    cb->owner = k;
    cb->b = b;
    cb->dyn = dyn;
    snprintf(cb->name, sizeof cb->name, "%s", name);
    k->boards[k->n++] = cb;
    return 0;
}

/* Entries for b (each shard of a sharded one) named after `board`. */
static int add_boards(struct gw_ckpt *k, const struct rc_board *b, const char *board, int dyn)
{
    unsigned shards = b->shards > 1 ? b->shards : 1;
    for (unsigned j = 0; j < shards; j++) {
        char name[RC_BOARD_MAX + 8];
        if (shards == 1)
            snprintf(name, sizeof name, "%s", board);
        else
            rc_shard_name(name, sizeof name, board, j);
        if (add_board(k, b, name, dyn) != 0)
            return -1;
        if (dyn) {
            k->ndyn++;
            k->boards[k->n - 1]->heard = 1;
            k->boards[k->n - 1]->heard_at = uv_now(k->app->loop);
        }
    }
    return 0;
}

void gw_ckpt_heard_message(struct gw_app *app, const char *pattern, const char *channel)
{
    char name[RC_SHARD_NAME_MAX + 1], period[RC_PERIOD_ID_MAX];
    if (!app || !app->ckpt || (pattern && strcmp(pattern, GW_FANOUT_KEYSPACE_TM_PATTERN) == 0) ||
        rc_keys_parse_tag(channel, name, sizeof name, period, sizeof period) != 0)
        return;
    gw_ckpt_heard(app, name); /* (watched here or not) */
}

void gw_ckpt_heard(struct gw_app *app, const char *board)
{
    struct gw_ckpt *k = app ? app->ckpt : NULL;
    if (!k)
        return;
    /* board: a board, a shard "B#i" (its board's name then), or a team
     * board's source (a write there moves its team board too) */
    size_t len = strcspn(board, "#");
    int found = 0;
    for (size_t i = 0; i < k->n; i++) {
        struct ckpt_board *cb = k->boards[i];
        const struct rc_board *b = cb->b;
        const char *own = cb->dyn ? cb->name : b->name; /* (a template's board: its own name) */
        if ((strncmp(own, board, len) == 0 && (own[len] == '\0' || own[len] == '#')) ||
            (b->team_of[0] && strlen(b->team_of) == len && strncmp(b->team_of, board, len) == 0)) {
            cb->heard = 1;
            cb->heard_at = uv_now(app->loop);
            found = 1;
        }
    }
    if (found || !k->templates || len > RC_BOARD_MAX)
        return;
    /* a board of a template that keeps its history: it joins */
    char base[RC_BOARD_MAX + 1];
    memcpy(base, board, len);
    base[len] = '\0';
    const struct rc_board *b = rc_conf_board_find(app->conf, base);
    if (!b || !b->is_template || !b->history_full)
        return;
    if (k->ndyn >= GW_CKPT_TEMPLATE_MAX) {
        if (!k->full_warned)
            gw_log_warn("checkpoint: %d template boards already have checkpoints here: %s gets none until one "
                        "has been quiet %d min", GW_CKPT_TEMPLATE_MAX, base, GW_CKPT_FORGET_MS / 60000);
        k->full_warned = 1;
        return;
    }
    if (add_boards(k, b, base, 1) != 0)
        gw_log_warn("checkpoint: out of memory for board %s", base);
}

static void ckpt_free_all(struct gw_ckpt *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->boards[i]);
    free(k->boards);
    free(k);
}

static void ckpt_free(struct gw_release *rel)
{
    ckpt_free_all((struct gw_ckpt *)((char *)rel - offsetof(struct gw_ckpt, rel)));
}

/* Declarations that keep their history: boards (each shard of a sharded
 * one, and team boards: their own entries, which copy their source's
 * history) and templates (their boards join when heard of). */
static size_t count_boards(const struct rc_conf *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nboards; i++)
        if (c->boards[i].history_full)
            n++;
    return n;
}

int gw_ckpt_start(struct gw_app *app)
{
    const struct rc_conf *c = app->conf;
    unsigned every = rc_conf_checkpoint_every(c);
    size_t n = count_boards(c);
    if (!every || !n)
        return 0;
    struct gw_ckpt *k = calloc(1, sizeof *k);
    if (!k) {
        gw_log_error("checkpoint: out of memory");
        return -1;
    }
    k->app = app;
    k->slice = GW_CKPT_SLICE;
    const char *s = c->test_clock ? getenv("RANKCAST_TEST_CKPT_SLICE") : NULL;
    if (s && atoi(s) > 0) {
        k->slice = (unsigned)atoi(s);
        gw_log_warn("checkpoint: test knob RANKCAST_TEST_CKPT_SLICE=%u in force", k->slice);
    }
    s = c->test_clock ? getenv("RANKCAST_TEST_CKPT_PAUSE_MS") : NULL;
    if (s && atoll(s) > 0) {
        k->pause_ms = atoll(s);
        gw_log_warn("checkpoint: test knob RANKCAST_TEST_CKPT_PAUSE_MS=%lld in force", (long long)k->pause_ms);
    }
    for (size_t i = 0; i < c->nboards; i++) {
        const struct rc_board *b = &c->boards[i];
        if (b->is_template && b->history_full)
            k->templates = 1;
        else if (b->history_full && add_boards(k, b, b->name, 0) != 0) {
            gw_log_error("checkpoint: out of memory");
            ckpt_free_all(k);
            return -1;
        }
    }
    gw_lock_token(k->token);
    gw_release_init(&k->rel, ckpt_free, NULL);
    gw_job_init(&k->job, &k->rel, "checkpoint", "*");
    gw_script_init(&k->script, rc_lua_ckpt);
    gw_redis_add_script(app->redis, &k->script);
    uint64_t period = k->pause_ms > 0 ? (uint64_t)k->pause_ms : GW_CKPT_TICK_MS;
    gw_job_start(&k->job, app->loop, on_tick, k, period, period);
    app->ckpt = k;
    return 0;
}

void gw_ckpt_stop(struct gw_app *app)
{
    struct gw_ckpt *k = app ? app->ckpt : NULL;
    if (!k)
        return;
    app->ckpt = NULL;
    gw_release_stop(&k->rel); /* the timer holds it */
    gw_job_close(&k->job);
}
