/* gw_viewers.c - viewer counts across gateways (docs/protocol-additions.md,
 * "Viewer counts").
 *
 * Each gateway knows its own open subscriptions per board name (any view,
 * any period). Every viewers_every ([server], 2 s), for each name with viewers here
 * (or whose count we still have to take out), one EVALSHA of lua/viewers.lua
 * on the name's own hash, rc:{B|}:viewers, writes our count with an expiry
 * (5/2 of viewers_every, Redis's clock) and answers the live sum of the other
 * gateways'. Viewers are shown that sum plus our count now, so our own
 * changes show at once and other gateways' within about two passes; a
 * gateway that dies drops out when its field expires. No per-viewer keys:
 * one hash field per gateway per board name, one call per board name with
 * viewers per pass, at most GW_VIEWERS_BATCH of them per tick.
 *
 * When the answer comes back, the name's window views whose viewers were
 * told another count get a delta without rows (gw_view_tell_viewers) on
 * the next tick, at most one per pass; a delta or snapshot that goes out
 * anyway carries the new count itself.
 *
 * Ownership: the fan-out owns the counts (f->vmap, f->vall); a count lives
 * while a board of its name does, or a call is in flight on it, or our field
 * in Redis may still hold a count (it is written 0 on the next pass, then
 * freed). */
#include <uv.h>

#include "fanout/gw_fanout_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "redis/gw_redis.h"
#include "rc_err.h"
#include "rc_keys.h"

/* The count changed for some of vc's window views: each tells its viewers on
 * the next tick (unless a message going out anyway carries it first). */
static void vc_notify(struct gw_vcount *vc)
{
    for (struct gw_board *b = vc->boards; b; b = b->vcnext) {
        int64_t shown = gw_vcount_shown(b);
        int any = 0;
        for (struct gw_view *v = gw_fo_first_view(b); v; v = gw_fo_view_next(v)) {
            if (v->r.spec.kind == RC_VIEW_FEED || !v->last || v->viewers_sent == shown)
                continue;
            v->viewers_due = 1;
            gw_board_view_due(v);
            any = 1;
        }
        if (any)
            gw_board_wake(b);
    }
}

/* "COUNT:EXPIRES" for every gateway but us is summed by the script: its
 * reply is one non-negative integer. Returns 0 or -1. */
static int reply_sum(const redisReply *r, int64_t *out)
{
    if (!r || r->type != REDIS_REPLY_INTEGER || r->integer < 0)
        return -1;
    *out = r->integer;
    return 0;
}

/* Sends our count `count` of board `name`; reply goes to cb(reply, privdata). */
static int send_count(struct gw_fanout *f, const char *name, int64_t count, gw_redis_reply_cb *cb, void *privdata)
{
    struct gw_app *app = f->app;
    char key[RC_KEY_MAX], num[24], ttl[24];
    if (!app->redis)
        return RC_E_UNAVAILABLE;
    if (rc_keys_board(key, sizeof key, name, "", "viewers", NULL) != 0)
        return RC_E_INTERNAL;
    snprintf(num, sizeof num, "%" PRId64, count);
    snprintf(ttl, sizeof ttl, "%" PRId64, app->conf->viewers_every_ms * 5 / 2);
    const char *argv[] = {key, f->vid, num, ttl};
    size_t lens[] = {strlen(key), strlen(f->vid), strlen(num), strlen(ttl)};
    return gw_redis_eval(app->redis, &f->vscript, 1, 4, argv, lens, cb, privdata);
}

struct refresh {
    struct gw_fanout *f;
    struct gw_vcount *vc;
};

static void on_refreshed(redisReply *reply, void *privdata)
{
    struct refresh *q = privdata;
    struct gw_fanout *f = q->f;
    struct gw_vcount *vc = q->vc;
    free(q);
    vc->inflight--;
    int64_t sum;
    if (reply_sum(reply, &sum) == 0) {
        vc->others = sum;
    } else if (reply && reply->type == REDIS_REPLY_ERROR && !f->vstopping) {
        /* once a minute at most: every board with viewers would say it each pass */
        static int64_t warned_ms;
        int64_t now = gw_clock_mono_us() / 1000;
        if (!warned_ms || now - warned_ms >= 60000) {
            warned_ms = now;
            gw_log_warn("viewers: board %s: the count script failed: %s", vc->name, reply->str);
        }
    }
    if (!f->vstopping)
        vc_notify(vc);
    gw_vcount_maybe_free(f, vc);
}

/* Writes vc's count and reads the others'. */
static void refresh(struct gw_fanout *f, struct gw_vcount *vc)
{
    struct refresh *q = malloc(sizeof *q);
    if (!q)
        return;
    q->f = f;
    q->vc = vc;
    int64_t count = f->vstopping ? 0 : vc->local;
    if (send_count(f, vc->name, count, on_refreshed, q) != 0) {
        free(q);
        if (!f->vstopping)
            vc_notify(vc); /* Redis is away: our own changes still show */
        return;
    }
    vc->inflight++;
    vc->published = count;
}

/* A pass starts every viewers_every and visits every count, at most
 * GW_VIEWERS_BATCH per tick, so many boards spread their calls over ticks.
 * (Counts made during a pass wait for the next; their own subscriptions show
 * on this gateway at once.) */
void gw_viewers_tick(struct gw_fanout *f)
{
    if (f->vstopping)
        return;
    int64_t now = gw_clock_mono_us() / 1000;
    if (!f->vcursor && now >= f->vnext_ms) {
        f->vnext_ms = now + f->app->conf->viewers_every_ms;
        f->vcursor = f->vall;
    }
    for (unsigned n = 0; f->vcursor && n < GW_VIEWERS_BATCH; n++) {
        struct gw_vcount *vc = f->vcursor;
        f->vcursor = vc->next;
        if (vc->inflight)
            continue; /* Redis is slow: the next pass */
        if (vc->local > 0 || vc->published > 0)
            refresh(f, vc);
        else
            gw_vcount_maybe_free(f, vc);
    }
}

void gw_viewers_stop(struct gw_fanout *f)
{
    if (!f || f->vstopping)
        return;
    f->vstopping = 1;
    int sent = 0;
    for (struct gw_vcount *vc = f->vall, *next; vc; vc = next) {
        next = vc->next;
        if (vc->published > 0 || vc->local > 0) {
            refresh(f, vc); /* count 0: our field goes */
            sent = 1;
        }
        gw_vcount_maybe_free(f, vc);
    }
    if (sent && f->app->redis)
        gw_redis_flush(f->app->redis);
}

struct count_call {
    struct gw_fanout *f;
    gw_fanout_viewers_cb *cb;
    void *privdata;
    char name[RC_BOARD_MAX + 1];
};

static void on_counted(redisReply *reply, void *privdata)
{
    struct count_call *c = privdata;
    int64_t sum = 0;
    int code = 0;
    if (reply_sum(reply, &sum) != 0)
        code = reply ? RC_E_INTERNAL : RC_E_UNAVAILABLE;
    struct gw_vcount *vc = gw_vcount_find(c->f, c->name);
    if (!code && vc)
        vc->others = sum;
    c->cb(code, code ? 0 : sum + (vc ? vc->local : 0), c->privdata);
    free(c);
}

int gw_viewers_count(struct gw_fanout *f, const char *board, gw_fanout_viewers_cb *cb, void *privdata)
{
    struct count_call *c = calloc(1, sizeof *c);
    if (!c)
        return RC_E_INTERNAL;
    c->f = f;
    c->cb = cb;
    c->privdata = privdata;
    snprintf(c->name, sizeof c->name, "%s", board);
    struct gw_vcount *vc = gw_vcount_find(f, board);
    int64_t count = vc && !f->vstopping ? vc->local : 0;
    int rc = send_count(f, board, count, on_counted, c);
    if (rc) {
        free(c);
        return rc;
    }
    if (vc)
        vc->published = count;
    return 0;
}
