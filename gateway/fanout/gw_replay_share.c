/* gw_replay_share.c - the reads of replays, shared (docs/history.md,
 * "Replays of one board share their reads").
 *
 * Twenty viewers replaying one board's last minutes at once would each read
 * the same moments from Redis, twenty times the work for the same answer.
 * Each read a replay makes goes through here instead: a read of the same
 * view and audience already out (or just answered) serves every replay
 * that asks for it, and Redis sees one.
 *
 * - A moment read by seq (a replay's start) is shared by the same seq: the
 *   board right after a change never changes.
 * - A moment read by time (each later step) is shared by replays whose
 *   pace stands within tol_ms of board time of its target (the caller's:
 *   a quarter second of its own wall time at its speed). The moment shown is
 *   then the one its pace reaches a little earlier or later, as a step
 *   coalesces the changes of a tick anyway; each replay still only moves
 *   forward (gw_replay.c ignores a moment at or before the one it shows)
 *   and goes live by its own rule.
 * - A feed's log read is shared by the seq it reads after; a full page is
 *   kept REPLAY_SHARE_LOG_KEEP_US after its last use, so a slower replay of
 *   the same range takes it from here. A short page (the log's end then)
 *   is not kept: a later replay must see the changes made since.
 *
 * A waiter that joins a read already answered gets its copy at the next
 * tick (gw_replay_share_tick), never from inside the call that asked: the
 * replay code is not reentered. Every waiter's callback runs exactly once
 * (with RC_E_UNAVAILABLE when the fan-out goes), since a replay lives until
 * its read is back. Whoever shares, each replay pays its own read from its
 * connection's read budget (gw_replay.c, may_read), as if it had read
 * alone: a client's budget does not depend on who else replays. */
#include "fanout/gw_replay_share.h"

#include "fanout/gw_fanout_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "rc_event.h"

/* A moment by time answered is served for this long after its answer: it
 * stands for the pace then, not later. */
#define REPLAY_SHARE_MOMENT_KEEP_US (1000 * 1000)
/* A full log page is served for this long after its last use. */
#define REPLAY_SHARE_LOG_KEEP_US (10 * 1000 * 1000)

struct waiter {
    struct waiter *next;
    gw_replay_share_moment_cb *mcb;
    gw_replay_share_log_cb *lcb;
    void *privdata;
};

struct gw_replay_read {
    struct gw_replay_read *next;
    struct gw_fanout *f;       /* NULL once the fan-out is gone (the answer frees it) */
    int is_log;
    char *key;                 /* what must match besides the target (key_*) */
    int by_time;
    int64_t target;            /* the seq or time read (a log read: the seq after) */
    int64_t max;               /* a log read's page size */
    int done, keep;
    int code;
    int64_t sent_us, dur_us, used_us;
    struct gw_read_at_result res; /* a moment's answer; res.w owned */
    int64_t log_seq;           /* a log read's answer */
    char log_epoch[RC_EPOCH_MAX + 1];
    struct rc_event *evs;
    size_t nevs;
    struct waiter *waiters;
};

static void read_free(struct gw_replay_read *e)
{
    if (e->res.w)
        gw_window_free(e->res.w);
    free(e->evs);
    free(e->key);
    while (e->waiters) {
        struct waiter *w = e->waiters;
        e->waiters = w->next;
        free(w);
    }
    free(e);
}

static void unlink_read(struct gw_replay_read *e)
{
    if (!e->f)
        return;
    for (struct gw_replay_read **p = &e->f->replay_reads; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            break;
        }
    e->f = NULL;
}

/* One waiter's answer: a moment's window is copied for it (each replay
 * frees its own). */
static void answer(struct gw_replay_read *e, struct waiter *w)
{
    if (e->is_log) {
        w->lcb(e->code, e->log_seq, e->log_epoch, e->evs, e->nevs, e->dur_us, w->privdata);
        return;
    }
    if (e->code) {
        w->mcb(e->code, NULL, e->target, e->dur_us, w->privdata);
        return;
    }
    struct gw_read_at_result res = e->res;
    res.points = NULL;
    res.npoints = 0;
    if (e->res.w) {
        res.w = calloc(1, sizeof *res.w);
        if (!res.w || gw_window_copy(res.w, e->res.w) != 0) {
            free(res.w);
            w->mcb(RC_E_INTERNAL, NULL, e->target, e->dur_us, w->privdata);
            return;
        }
    }
    w->mcb(0, &res, e->target, e->dur_us, w->privdata);
}

/* Answers every waiter of e now (each callback may add waiters to other
 * reads, never to e: e is done, and joins of a done read wait for a tick). */
static void answer_all(struct gw_replay_read *e)
{
    struct waiter *list = e->waiters;
    e->waiters = NULL;
    while (list) {
        struct waiter *w = list;
        list = w->next;
        answer(e, w);
        free(w);
    }
}

static void finish(struct gw_replay_read *e)
{
    e->done = 1;
    int64_t now = gw_clock_mono_us();
    e->dur_us = now - e->sent_us;
    e->used_us = now;
    if (!e->f) { /* the fan-out is gone: its waiters were answered then */
        read_free(e);
        return;
    }
    answer_all(e);
    if (!e->keep) {
        unlink_read(e);
        read_free(e);
    }
}

static void on_moment(int code, struct gw_read_at_result *res, void *privdata)
{
    struct gw_replay_read *e = privdata;
    e->code = code;
    if (!code && res) {
        e->res = *res; /* takes res->w */
        e->res.points = NULL;
        e->res.npoints = 0;
        /* kept for others only when it shows a moment; refusals and
         * errors answer the replays that asked, and go */
        e->keep = res->status == RC_MOMENT_OK && res->w;
    }
    finish(e);
}

static void on_log(int code, int64_t seq, int64_t total, const char *epoch, const struct rc_freeze *fr,
                   struct rc_event *evs, size_t n, void *privdata)
{
    struct gw_replay_read *e = privdata;
    (void)total;
    (void)fr;
    e->code = code;
    e->log_seq = seq;
    snprintf(e->log_epoch, sizeof e->log_epoch, "%s", !code && epoch ? epoch : "");
    if (!code && n) {
        e->evs = malloc(n * sizeof *e->evs);
        if (e->evs) {
            memcpy(e->evs, evs, n * sizeof *evs);
            e->nevs = n;
        } else {
            e->code = RC_E_INTERNAL;
        }
    }
    e->keep = !e->code && (int64_t)e->nevs == e->max;
    finish(e);
}

/* The moment read's key: the board, period, audience and view, members
 * included (a list is compared whole). */
static char *key_moment(const char *board, const char *period, const struct rc_moment_req *req)
{
    size_t list = 0;
    for (uint32_t i = 0; i < req->nmembers; i++)
        list += strlen(req->members + list) + 1;
    char head[RC_BOARD_MAX + RC_PERIOD_ID_MAX + RC_MEMBER_MAX + 128];
    int n = snprintf(head, sizeof head, "M|%s|%s|%d|%d|%lld|%lld|%s|%lld|%u|", board, period, req->audience,
                     (int)req->view, (long long)req->first, (long long)req->count, req->member ? req->member : "",
                     (long long)req->radius, (unsigned)req->nmembers);
    if (n < 0 || (size_t)n >= sizeof head)
        return NULL;
    char *k = malloc((size_t)n + list + 1);
    if (!k)
        return NULL;
    memcpy(k, head, (size_t)n);
    for (size_t i = 0; i < list; i++) /* the names' NULs as separators */
        k[(size_t)n + i] = req->members[i] ? req->members[i] : '|';
    k[(size_t)n + list] = '\0';
    return k;
}

static char *key_log(const char *board, const char *period, int live, int64_t max)
{
    char k[RC_BOARD_MAX + RC_PERIOD_ID_MAX + 64];
    int n = snprintf(k, sizeof k, "L|%s|%s|%d|%lld", board, period, live, (long long)max);
    return n < 0 || (size_t)n >= sizeof k ? NULL : strdup(k);
}

static int usable(const struct gw_replay_read *e, int64_t now)
{
    if (!e->done)
        return 1;
    if (!e->keep)
        return 0;
    return now - e->used_us <= (e->is_log ? REPLAY_SHARE_LOG_KEEP_US : REPLAY_SHARE_MOMENT_KEEP_US);
}

static int join(struct gw_fanout *f, struct gw_replay_read *e, gw_replay_share_moment_cb *mcb,
                gw_replay_share_log_cb *lcb, void *privdata)
{
    struct waiter *w = calloc(1, sizeof *w);
    if (!w)
        return RC_E_INTERNAL;
    *w = (struct waiter){.next = e->waiters, .mcb = mcb, .lcb = lcb, .privdata = privdata};
    e->waiters = w;
    if (e->is_log) /* a log page's keep runs from its last use; a moment's from its answer */
        e->used_us = gw_clock_mono_us();
    f->app->metrics.replay_reads_shared++;
    return 0;
}

static struct gw_replay_read *new_read(struct gw_fanout *f, char *key, int is_log, int by_time, int64_t target)
{
    struct gw_replay_read *e = calloc(1, sizeof *e);
    struct waiter *w = calloc(1, sizeof *w);
    if (!key || !e || !w) {
        free(key);
        free(e);
        free(w);
        return NULL;
    }
    *e = (struct gw_replay_read){.f = f, .is_log = is_log, .key = key, .by_time = by_time,
                                 .target = target, .waiters = w, .sent_us = gw_clock_mono_us()};
    return e;
}

int gw_replay_share_moment(struct gw_fanout *f, const struct rc_board *decl, const char *board, const char *period,
                           const struct rc_moment_req *req, int64_t tol_ms, gw_replay_share_moment_cb *cb,
                           void *privdata)
{
    char *key = key_moment(board, period, req);
    if (!key)
        return RC_E_INTERNAL;
    int64_t want = req->targets[0], now = gw_clock_mono_us();
    struct gw_replay_read *best = NULL;
    int64_t best_d = 0;
    for (struct gw_replay_read *e = f->replay_reads; e; e = e->next) {
        if (e->is_log || e->by_time != req->by_time || !usable(e, now) || strcmp(e->key, key) != 0)
            continue;
        int64_t d = e->target > want ? e->target - want : want - e->target;
        if (d > (req->by_time ? tol_ms : 0) || (best && d >= best_d))
            continue;
        best = e;
        best_d = d;
    }
    if (best) {
        free(key);
        return join(f, best, cb, NULL, privdata);
    }
    struct gw_replay_read *e = new_read(f, key, 0, req->by_time, want);
    if (!e)
        return RC_E_INTERNAL;
    e->waiters->mcb = cb;
    e->waiters->privdata = privdata;
    int rc = gw_read_at(&f->app->store, decl, board, period, req, on_moment, e);
    if (rc) {
        read_free(e);
        return rc;
    }
    f->app->metrics.replay_redis_reads++;
    e->next = f->replay_reads;
    f->replay_reads = e;
    return 0;
}

int gw_replay_share_log(struct gw_fanout *f, const struct rc_board *decl, const char *board, const char *period,
                        int live, int64_t after, int64_t max, gw_replay_share_log_cb *cb, void *privdata)
{
    char *key = key_log(board, period, live, max);
    if (!key)
        return RC_E_INTERNAL;
    int64_t now = gw_clock_mono_us();
    for (struct gw_replay_read *e = f->replay_reads; e; e = e->next)
        if (e->is_log && e->target == after && usable(e, now) && strcmp(e->key, key) == 0) {
            free(key);
            return join(f, e, NULL, cb, privdata);
        }
    struct gw_replay_read *e = new_read(f, key, 1, 0, after);
    if (!e)
        return RC_E_INTERNAL;
    e->max = max;
    e->waiters->lcb = cb;
    e->waiters->privdata = privdata;
    int rc = gw_read_log_after(&f->app->store, decl, board, period, live, after, max, on_log, e);
    if (rc) {
        read_free(e);
        return rc;
    }
    f->app->metrics.replay_redis_reads++;
    e->next = f->replay_reads;
    f->replay_reads = e;
    return 0;
}

void gw_replay_share_tick(struct gw_fanout *f)
{
    int64_t now = gw_clock_mono_us();
    for (struct gw_replay_read *next, *e = f->replay_reads; e; e = next) {
        next = e->next;
        if (!e->done)
            continue;
        if (e->waiters)
            answer_all(e); /* (joins of this tick wait for the next: no reentry) */
        if (!usable(e, now)) {
            unlink_read(e);
            read_free(e);
        }
    }
}

void gw_replay_share_free_all(struct gw_fanout *f)
{
    while (f->replay_reads) {
        struct gw_replay_read *e = f->replay_reads;
        f->replay_reads = e->next;
        e->f = NULL;
        struct waiter *list = e->waiters;
        e->waiters = NULL;
        for (struct waiter *w; (w = list) != NULL; free(w)) {
            list = w->next;
            if (w->mcb)
                w->mcb(RC_E_UNAVAILABLE, NULL, e->target, 0, w->privdata);
            else
                w->lcb(RC_E_UNAVAILABLE, 0, "", NULL, 0, 0, w->privdata);
        }
        if (e->done)
            read_free(e);
        /* else its answer frees it */
    }
}
