/* gw_webhook_run.c - one delivery of the period-close webhook: who sends it,
 * when, and how often (docs/webhooks.md). The body, signature, delivery id
 * and retry schedule are core/rc_webhook.c; the POSTs are
 * jobs/gw_webhook_http.c (libcurl multi on this loop); jobs/gw_webhook.c
 * starts and stops the job and runs its timer.
 *
 * Once per period across gateways. Every gateway that learns a period is
 * archived (the archive job's marker rc:{B|P}:archived, set by it or seen)
 * queues a delivery, which runs:
 *   1. EXISTS rc:{B|P}:hooked            set: sent (or given up) already; drop
 *   2. SET rc:{B|P}:hooking TOKEN NX PX lock_ttl (redis/gw_lock)
 *                                        taken: another gateway is sending;
 *                                        look again in WATCH_MS (it may die)
 *   3. EXISTS rc:{B|P}:hooked            again, under the lock: a gateway that
 *                                        finished between 1 and 2 set it first
 *   4. the top rows (Redis; the archive database when the keys are gone),
 *      the body and its signature, built once
 *   5. POST, retried after failures (no response, or not 2xx) with capped
 *      backoff, the lock renewed every lock_ttl/3 meanwhile
 *   6. SET rc:{B|P}:hooked sent|gave-up PX TTL (as long as the period's keys)
 *   7. release the lock (compare-and-DEL)
 * The hooked marker is set before the lock is released, so step 3 of the next
 * taker sees it. A gateway that dies (or stops) mid-retry leaves the lock to
 * expire (or releases it) and a gateway still watching takes over. This is
 * at least once: a receiver that answered 2xx to a gateway that died before
 * step 6, or that took longer than the timeout, gets the body again, with the
 * same X-Rankcast-Delivery id.
 *
 * Nothing blocks: Redis calls and POSTs are callbacks on the loop; the job's
 * timer (gw_webhook_run_due) starts waits that are over and renews locks.
 */
#include "jobs/gw_webhook_run.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "jobs/gw_webhook_http.h"
#include "redis/gw_lock.h"
#include "redis/gw_redis.h"
#include "store/gw_archive_read.h"
#include "store/gw_read.h"
#include "rc_err.h"
#include "rc_expiry.h"
#include "rc_keys.h"
#include "rc_period.h"
#include "rc_webhook.h"

#define WATCH_MS 3000         /* a delivery another gateway holds is looked at again after this */
#define REDIS_RETRY_MS 1000   /* after a Redis step failed */

static uint64_t now_of(const struct gw_webhook *w)
{
    return uv_now(w->app->loop);
}

/* Unlinks and frees d; the caller ends every call of d first. */
static void drop(struct delivery *d)
{
    struct gw_webhook *w = d->w;
    for (struct delivery **pp = &w->list; *pp; pp = &(*pp)->next) {
        if (*pp == d) {
            *pp = d->next;
            break;
        }
    }
    w->n--;
    free(d->body);
    free(d);
    w->idle(w);
}

static int command(struct delivery *d, gw_redis_reply_cb *cb, int argc, const char *const *argv)
{
    struct gw_app *app = d->w->app;
    if (d->w->rel.stopping || !app->redis)
        return -1;
    if (gw_redis_command(app->redis, argv[1], strlen(argv[1]), argc, argv, NULL, cb, d) != 0)
        return -1;
    d->op = 1;
    return 0;
}

static void wait_check(struct delivery *d, uint64_t ms)
{
    d->state = ST_WAIT_CHECK;
    d->due = now_of(d->w) + ms;
}

/* ---- the end: step 7, or dropping what we do not hold --------------------- */

static void on_released(int rc, const char *err, void *data)
{
    struct delivery *d = data;
    (void)rc;
    (void)err;
    d->op = 0;
    drop(d);
}

/* Gives the lock back (when ours) and forgets d. */
static void finish(struct delivery *d)
{
    struct gw_webhook *w = d->w;
    struct gw_app *app = w->app;
    if (d->req) {
        gw_webhook_http_cancel(w->http, d->req);
        d->req = NULL;
        app->metrics.webhooks_in_flight--;
    }
    d->state = ST_END;
    if (d->owns && app->redis && gw_lock_release(&w->lock, app->redis, d->lock, w->token, on_released, d) == 0) {
        d->owns = 0;
        d->op = 1;
        return;
    }
    drop(d);
}

/* Gives the lock back and looks again later (a Redis step failed). */
static void on_released_retry(int rc, const char *err, void *data)
{
    struct delivery *d = data;
    (void)rc;
    (void)err;
    d->op = 0;
    if (d->w->rel.stopping)
        drop(d);
    else
        wait_check(d, REDIS_RETRY_MS);
}

static void retry_later(struct delivery *d)
{
    struct gw_webhook *w = d->w;
    if (w->rel.stopping) {
        finish(d);
        return;
    }
    if (d->owns && w->app->redis &&
        gw_lock_release(&w->lock, w->app->redis, d->lock, w->token, on_released_retry, d) == 0) {
        d->owns = 0;
        d->op = 1;
        return;
    }
    d->owns = 0;
    wait_check(d, REDIS_RETRY_MS);
}

/* ---- step 6 ------------------------------------------------------------------ */

static void on_marked(redisReply *rep, void *data)
{
    struct delivery *d = data;
    d->op = 0;
    if (!rep || rep->type != REDIS_REPLY_STATUS)
        gw_log_warn("webhook %s %s: the delivered marker could not be set (%s); another gateway may send it again",
                    d->board, d->period.id, rep && rep->type == REDIS_REPLY_ERROR ? rep->str : "no reply");
    finish(d);
}

static void mark(struct delivery *d, const char *value)
{
    int64_t ttl;
    char px[24];
    if (rc_expiry_period_ttl_ms(d->decl, &d->period, gw_now_ms(d->w->app), &ttl, NULL) != 0)
        ttl = 86400000;
    snprintf(px, sizeof px, "%" PRId64, ttl);
    const char *argv[] = {"SET", d->hooked, value, "PX", px};
    d->state = ST_END;
    if (command(d, on_marked, 5, argv) != 0)
        finish(d);
}

/* ---- step 5 ------------------------------------------------------------------ */

static void send_now(struct delivery *d);

static void on_posted(int ok, long status, const char *err, void *data)
{
    struct delivery *d = data;
    struct gw_webhook *w = d->w;
    struct gw_metrics *m = &w->app->metrics;
    d->req = NULL;
    m->webhooks_in_flight--;
    if (ok && rc_webhook_delivered(status)) {
        m->webhooks_sent++;
        gw_log_info("webhook %s %s: delivered (HTTP %ld, attempt %u)", d->board, d->period.id, status,
                    d->attempt);
        mark(d, "sent");
        return;
    }
    m->webhook_failures++;
    char why[160];
    if (ok)
        snprintf(why, sizeof why, "HTTP %ld", status);
    else
        snprintf(why, sizeof why, "%.150s", err);
    if (d->attempt > w->conf->retries) {
        m->webhooks_gave_up++;
        gw_log_error("webhook %s %s: attempt %u failed (%s); giving up", d->board, d->period.id, d->attempt,
                     why);
        mark(d, "gave-up");
        return;
    }
    int64_t wait = rc_webhook_backoff_ms(w->conf->backoff_base_ms, w->conf->backoff_cap_ms, d->attempt);
    gw_log_warn("webhook %s %s: attempt %u failed (%s); retrying in %" PRId64 " ms", d->board, d->period.id,
                d->attempt, why, wait);
    d->state = ST_WAIT_SEND;
    d->due = now_of(w) + (uint64_t)wait;
}

static void send_now(struct delivery *d)
{
    struct gw_webhook *w = d->w;
    char sig[32 + RC_WEBHOOK_SIG_MAX], id[32 + RC_WEBHOOK_ID_MAX], attempt[48];
    snprintf(sig, sizeof sig, "X-Rankcast-Signature: %s", d->sig);
    snprintf(id, sizeof id, "X-Rankcast-Delivery: %s", d->id);
    snprintf(attempt, sizeof attempt, "X-Rankcast-Attempt: %u", d->attempt + 1);
    const char *headers[] = {"Content-Type: application/json", sig, id, attempt, "Expect:"};
    d->state = ST_SEND;
    d->req = gw_webhook_http_post(w->http, w->conf->url, headers, sizeof headers / sizeof headers[0], d->body, d->len,
                             w->conf->timeout_ms, on_posted, d);
    if (!d->req) {
        gw_log_error("webhook %s %s: the request could not be made (memory)", d->board, d->period.id);
        retry_later(d);
        return;
    }
    d->attempt++;
    w->app->metrics.webhooks_in_flight++;
}

/* ---- step 4 ------------------------------------------------------------------ */

/* The body from w's first rows; w stays the caller's. Returns 0 or -1 (memory). */
static int build_body(struct delivery *d, const struct gw_window *win)
{
    struct rc_rows_out rows = gw_window_rows_out(win, d->decl);
    d->body = rc_webhook_body(d->board, d->period.id, win->total, &rows);
    if (!d->body)
        return -1;
    d->len = strlen(d->body);
    const char *secret = d->w->secret;
    return rc_webhook_sign(secret, strlen(secret), d->body, d->len, d->sig) == 0 ? 0 : -1;
}

static void have_rows(struct delivery *d, int code, struct gw_window *win)
{
    if (d->w->rel.stopping) {
        if (win)
            gw_window_free(win);
        finish(d);
        return;
    }
    if (code) {
        gw_log_warn("webhook %s %s: the standings could not be read (%s); trying again", d->board,
                    d->period.id, rc_err_code_name(code));
        retry_later(d);
        return;
    }
    int rc = build_body(d, win);
    gw_window_free(win);
    if (rc) {
        gw_log_error("webhook %s %s: the body could not be built", d->board, d->period.id);
        retry_later(d);
        return;
    }
    send_now(d);
}

static void on_archive_rows(int code, struct gw_window *win, void *data)
{
    struct delivery *d = data;
    d->op = 0;
    have_rows(d, code, win);
}

/* Redis first (the keys live `keep` periods); once they are gone, the
 * archive database of this gateway. */
static void on_redis_rows(int code, struct gw_window *win, void *data)
{
    struct delivery *d = data;
    struct gw_app *app = d->w->app;
    d->op = 0;
    if (code == 0 && win->total == 0 && !d->w->rel.stopping) {
        /* the live board: a period's final standings, frozen or not */
    const struct gw_read_spec spec = {.kind = GW_READ_RANGE, .first = 0, .count = d->w->conf->top, .live = 1};
        gw_window_free(win);
        if (gw_archive_read(&app->store, d->decl, d->board, d->period.id, &spec, on_archive_rows, d) == 0) {
            d->op = 1;
            return;
        }
        code = RC_E_NOT_FOUND;
        win = NULL;
    }
    have_rows(d, code, win);
}

static void read_rows(struct delivery *d)
{
    struct gw_app *app = d->w->app;
    /* the live board: a period's final standings, frozen or not */
    const struct gw_read_spec spec = {.kind = GW_READ_RANGE, .first = 0, .count = d->w->conf->top, .live = 1};
    if (d->w->rel.stopping || !app->redis ||
        gw_read(&app->store, d->decl, d->board, d->period.id, &spec, on_redis_rows, d) != 0) {
        retry_later(d);
        return;
    }
    d->op = 1;
}

/* ---- steps 1-3 ---------------------------------------------------------------- */

static void on_hooked_locked(redisReply *rep, void *data)
{
    struct delivery *d = data;
    d->op = 0;
    if (d->w->rel.stopping || !rep || rep->type != REDIS_REPLY_INTEGER) {
        retry_later(d);
        return;
    }
    if (rep->integer == 1) {
        finish(d); /* another gateway finished just before we took the lock */
        return;
    }
    read_rows(d);
}

static void on_locked(int rc, const char *err, void *data)
{
    struct delivery *d = data;
    (void)err;
    d->op = 0;
    if (rc == 1) {
        d->owns = 1;
        d->locked_at = now_of(d->w);
    }
    if (d->w->rel.stopping) {
        finish(d);
        return;
    }
    if (rc != 1) {
        wait_check(d, rc == 0 ? WATCH_MS : REDIS_RETRY_MS); /* 0: another gateway is sending */
        return;
    }
    const char *argv[] = {"EXISTS", d->hooked};
    if (command(d, on_hooked_locked, 2, argv) != 0)
        retry_later(d);
}

static void on_hooked(redisReply *rep, void *data)
{
    struct delivery *d = data;
    struct gw_webhook *w = d->w;
    d->op = 0;
    if (w->rel.stopping) {
        finish(d);
        return;
    }
    if (!rep || rep->type != REDIS_REPLY_INTEGER) {
        wait_check(d, REDIS_RETRY_MS);
        return;
    }
    if (rep->integer == 1) {
        finish(d);
        return;
    }
    if (!w->app->redis || gw_lock_acquire(w->app->redis, d->lock, w->token, w->conf->lock_ttl_ms, on_locked, d) != 0) {
        wait_check(d, REDIS_RETRY_MS);
        return;
    }
    d->op = 1;
}

void gw_webhook_run_check(struct delivery *d)
{
    const char *argv[] = {"EXISTS", d->hooked};
    d->state = ST_CHECK;
    if (now_of(d->w) >= d->give_up_at) {
        finish(d);
        return;
    }
    if (command(d, on_hooked, 2, argv) != 0)
        wait_check(d, REDIS_RETRY_MS);
}

/* ---- the timer: waits over, locks renewed --------------------------------------- */

static void on_renewed(int rc, const char *err, void *data)
{
    struct delivery *d = data;
    struct gw_webhook *w = d->w;
    (void)err;
    d->op = 0;
    if (w->rel.stopping) {
        finish(d);
        return;
    }
    if (rc == 1) {
        d->locked_at = now_of(w);
    } else if (rc == 0) {
        /* Expired: another gateway may be sending it now. Stand back. */
        gw_log_warn("webhook %s %s: lost the delivery lock; another gateway may take over", d->board,
                    d->period.id);
        d->owns = 0;
        if (d->req) {
            gw_webhook_http_cancel(w->http, d->req);
            d->req = NULL;
            w->app->metrics.webhooks_in_flight--;
        }
        free(d->body);
        d->body = NULL;
        d->attempt = 0;
        wait_check(d, WATCH_MS);
    } /* else: Redis trouble; the next tick tries again */
}

void gw_webhook_run_due(struct delivery *d, uint64_t now)
{
    struct gw_webhook *w = d->w;
    if (d->op)
        return;
    /* ([webhook] lock_ttl: the expiry of rc:{B|P}:hooking, 30 s unless set) */
    const int64_t ttl = w->conf->lock_ttl_ms;
    if (d->owns && now - d->locked_at >= (uint64_t)ttl / 3 && w->app->redis) {
        if (gw_lock_renew(&w->lock, w->app->redis, d->lock, w->token, ttl, on_renewed, d) == 0)
            d->op = 1;
        return;
    }
    if (d->state == ST_WAIT_CHECK && now >= d->due)
        gw_webhook_run_check(d);
    else if (d->state == ST_WAIT_SEND && now >= d->due)
        send_now(d);
}

void gw_webhook_run_stop(struct delivery *d)
{
    if (d->req) {
        gw_webhook_http_cancel(d->w->http, d->req);
        d->req = NULL;
        d->w->app->metrics.webhooks_in_flight--;
    }
    if (!d->op)
        finish(d); /* else its callback ends it */
}
