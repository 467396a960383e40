/* gw_webhook.c - the webhook on period close (gw_webhook.h,
 * docs/webhooks.md). The body, signature, delivery id and retry schedule are
 * core/rc_webhook.c; the POSTs are jobs/gw_webhook_http.c (libcurl multi on
 * this loop); this file decides who sends what, when.
 *
 * Once per period across gateways. Every gateway that learns a period is
 * archived (the archive job's marker rc:{B|P}:archived, set by it or seen)
 * queues a delivery, which runs:
 *   1. EXISTS rc:{B|P}:hooked            set: sent (or given up) already; drop
 *   2. SET rc:{B|P}:hooking TOKEN NX PX LOCK_MS (redis/gw_lock)
 *                                        taken: another gateway is sending;
 *                                        look again in WATCH_MS (it may die)
 *   3. EXISTS rc:{B|P}:hooked            again, under the lock: a gateway that
 *                                        finished between 1 and 2 set it first
 *   4. the top rows (Redis; the archive database when the keys are gone),
 *      the body and its signature, built once
 *   5. POST, retried after failures (no response, or not 2xx) with capped
 *      backoff, the lock renewed every LOCK_MS/3 meanwhile
 *   6. SET rc:{B|P}:hooked sent|gave-up PX TTL (as long as the period's keys)
 *   7. release the lock (compare-and-DEL)
 * The hooked marker is set before the lock is released, so step 3 of the next
 * taker sees it. A gateway that dies (or stops) mid-retry leaves the lock to
 * expire (or releases it) and a gateway still watching takes over. This is
 * at least once: a receiver that answered 2xx to a gateway that died before
 * step 6, or that took longer than the timeout, gets the body again, with the
 * same X-Rankcast-Delivery id.
 *
 * Nothing blocks: Redis calls and POSTs are callbacks on the loop; one timer
 * (TIMER_MS, running only while deliveries exist) starts waits that are over
 * and renews locks.
 */
#include "jobs/gw_webhook.h"

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

#define TIMER_MS 100          /* how often waits and renewals are looked at */
#define LOCK_MS 30000         /* expiry of rc:{B|P}:hooking; renewed every LOCK_MS / 3 */
#define WATCH_MS 3000         /* a delivery another gateway holds is looked at again after this */
#define REDIS_RETRY_MS 1000   /* after a Redis step failed */
#define MAX_DELIVERIES 4096   /* queued at once; more are refused with a warning */

enum state {
    ST_CHECK,                 /* steps 1-4 in flight (d->op) */
    ST_WAIT_CHECK,            /* step 1 again at d->due */
    ST_SEND,                  /* a POST in flight (d->req) */
    ST_WAIT_SEND,             /* the next attempt at d->due */
    ST_END,                   /* steps 6-7 in flight */
};

struct delivery {
    struct gw_webhook *w;
    struct delivery *next;
    const struct rc_board *decl;   /* borrowed from the configuration */
    struct rc_period period;
    char hooked[RC_KEY_MAX];       /* rc:{B|P}:hooked */
    char lock[RC_KEY_MAX];         /* rc:{B|P}:hooking */
    char id[RC_WEBHOOK_ID_MAX];
    enum state state;
    int op;                        /* a Redis or store call of ours is in flight */
    int owns;                      /* we hold d->lock */
    uint64_t locked_at;            /* uv_now when taken or last renewed */
    uint64_t due;                  /* ST_WAIT_*: when to go on */
    uint64_t give_up_at;           /* stop watching (the period's keys are gone by then) */
    unsigned attempt;              /* POSTs made */
    char *body;
    size_t len;
    char sig[RC_WEBHOOK_SIG_MAX];
    struct gw_hreq *req;           /* the POST in flight */
};

struct gw_webhook {
    struct gw_app *app;
    const struct rc_webhook_conf *conf;
    char secret[RC_SECRET_MAX + 1];
    struct gw_hclient *http;
    struct gw_lock_scripts lock;
    char token[33];
    uv_timer_t timer;
    int timer_on, timer_closed;
    int stopping;
    struct delivery *list;
    size_t n;
};

static uint64_t now_of(const struct gw_webhook *w)
{
    return uv_now(w->app->loop);
}

static void maybe_free(struct gw_webhook *w)
{
    if (w->stopping && w->timer_closed && !w->list)
        free(w);
}

static void timer_need(struct gw_webhook *w);

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
    maybe_free(w);
}

static int command(struct delivery *d, gw_redis_reply_cb *cb, int argc, const char *const *argv)
{
    struct gw_app *app = d->w->app;
    if (d->w->stopping || !app->redis)
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
        gw_hclient_cancel(w->http, d->req);
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
    if (d->w->stopping)
        drop(d);
    else
        wait_check(d, REDIS_RETRY_MS);
}

static void retry_later(struct delivery *d)
{
    struct gw_webhook *w = d->w;
    if (w->stopping) {
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
                    d->decl->name, d->period.id, rep && rep->type == REDIS_REPLY_ERROR ? rep->str : "no reply");
    finish(d);
}

static void mark(struct delivery *d, const char *value)
{
    int64_t ttl;
    char px[24];
    if (rc_period_ttl_ms(d->decl, &d->period, gw_now_ms(d->w->app), &ttl, NULL) != 0)
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
        gw_log_info("webhook %s %s: delivered (HTTP %ld, attempt %u)", d->decl->name, d->period.id, status,
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
        gw_log_error("webhook %s %s: attempt %u failed (%s); giving up", d->decl->name, d->period.id, d->attempt,
                     why);
        mark(d, "gave-up");
        return;
    }
    int64_t wait = rc_webhook_backoff_ms(w->conf->backoff_base_ms, w->conf->backoff_cap_ms, d->attempt);
    gw_log_warn("webhook %s %s: attempt %u failed (%s); retrying in %" PRId64 " ms", d->decl->name, d->period.id,
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
    d->req = gw_hclient_post(w->http, w->conf->url, headers, sizeof headers / sizeof headers[0], d->body, d->len,
                             w->conf->timeout_ms, on_posted, d);
    if (!d->req) {
        gw_log_error("webhook %s %s: the request could not be made (memory)", d->decl->name, d->period.id);
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
    size_t n = win->n;
    struct rc_out_row *rows = calloc(n ? n : 1, sizeof *rows);
    struct rc_field_value *fv = calloc((n ? n : 1) * RC_MAX_FIELDS, sizeof *fv);
    int rc = -1;
    if (rows && fv) {
        gw_window_out_rows(win, d->decl, rows, fv);
        d->body = rc_webhook_body(d->decl->name, d->period.id, win->total, rows, n);
        if (d->body) {
            d->len = strlen(d->body);
            const char *secret = d->w->secret;
            rc = rc_webhook_sign(secret, strlen(secret), d->body, d->len, d->sig) == 0 ? 0 : -1;
        }
    }
    free(rows);
    free(fv);
    return rc;
}

static void have_rows(struct delivery *d, int code, struct gw_window *win)
{
    if (d->w->stopping) {
        if (win)
            gw_window_free(win);
        finish(d);
        return;
    }
    if (code) {
        gw_log_warn("webhook %s %s: the standings could not be read (%s); trying again", d->decl->name,
                    d->period.id, rc_code_name(code));
        retry_later(d);
        return;
    }
    int rc = build_body(d, win);
    gw_window_free(win);
    if (rc) {
        gw_log_error("webhook %s %s: the body could not be built", d->decl->name, d->period.id);
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
    if (code == 0 && win->total == 0 && !d->w->stopping) {
        const struct gw_read_spec spec = {.kind = GW_READ_RANGE, .first = 0, .count = d->w->conf->top};
        gw_window_free(win);
        if (gw_archive_read(&app->store, d->decl, d->decl->name, d->period.id, &spec, on_archive_rows, d) == 0) {
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
    const struct gw_read_spec spec = {.kind = GW_READ_RANGE, .first = 0, .count = d->w->conf->top};
    if (d->w->stopping || !app->redis ||
        gw_read(&app->store, d->decl, d->decl->name, d->period.id, &spec, on_redis_rows, d) != 0) {
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
    if (d->w->stopping || !rep || rep->type != REDIS_REPLY_INTEGER) {
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
    if (d->w->stopping) {
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
    if (w->stopping) {
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
    if (!w->app->redis || gw_lock_acquire(w->app->redis, d->lock, w->token, LOCK_MS, on_locked, d) != 0) {
        wait_check(d, REDIS_RETRY_MS);
        return;
    }
    d->op = 1;
}

static void check(struct delivery *d)
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
    if (w->stopping) {
        finish(d);
        return;
    }
    if (rc == 1) {
        d->locked_at = now_of(w);
    } else if (rc == 0) {
        /* Expired: another gateway may be sending it now. Stand back. */
        gw_log_warn("webhook %s %s: lost the delivery lock; another gateway may take over", d->decl->name,
                    d->period.id);
        d->owns = 0;
        if (d->req) {
            gw_hclient_cancel(w->http, d->req);
            d->req = NULL;
            w->app->metrics.webhooks_in_flight--;
        }
        free(d->body);
        d->body = NULL;
        d->attempt = 0;
        wait_check(d, WATCH_MS);
    } /* else: Redis trouble; the next tick tries again */
}

static void on_timer(uv_timer_t *t)
{
    struct gw_webhook *w = t->data;
    uint64_t now = now_of(w);
    struct delivery *next;
    for (struct delivery *d = w->list; d; d = next) {
        next = d->next;
        if (d->op)
            continue;
        if (d->owns && now - d->locked_at >= LOCK_MS / 3 && w->app->redis) {
            if (gw_lock_renew(&w->lock, w->app->redis, d->lock, w->token, LOCK_MS, on_renewed, d) == 0)
                d->op = 1;
            continue;
        }
        if (d->state == ST_WAIT_CHECK && now >= d->due)
            check(d);
        else if (d->state == ST_WAIT_SEND && now >= d->due)
            send_now(d);
    }
    if (!w->list && w->timer_on) {
        uv_timer_stop(&w->timer);
        w->timer_on = 0;
    }
}

static void timer_need(struct gw_webhook *w)
{
    if (!w->timer_on && !w->stopping) {
        uv_timer_start(&w->timer, on_timer, TIMER_MS, TIMER_MS);
        w->timer_on = 1;
    }
}

/* ---- the archive's call, start and stop ------------------------------------------- */

void gw_webhook_archived(struct gw_app *app, const struct rc_board *decl, const struct rc_period *p)
{
    struct gw_webhook *w = app->webhook;
    if (!w || w->stopping)
        return;
    for (struct delivery *d = w->list; d; d = d->next)
        if (d->decl == decl && strcmp(d->period.id, p->id) == 0)
            return;
    if (w->n >= MAX_DELIVERIES) {
        gw_log_warn("webhook %s %s: %d deliveries already queued; not queued here", decl->name, p->id,
                    MAX_DELIVERIES);
        return;
    }
    struct delivery *d = calloc(1, sizeof *d);
    if (!d)
        return;
    d->w = w;
    d->decl = decl;
    d->period = *p;
    int64_t ttl;
    if (rc_period_ttl_ms(decl, p, gw_now_ms(app), &ttl, NULL) != 0)
        ttl = 86400000;
    d->give_up_at = now_of(w) + (uint64_t)ttl;
    if (rc_board_key(d->hooked, sizeof d->hooked, decl->name, p->id, "hooked", NULL) ||
        rc_board_key(d->lock, sizeof d->lock, decl->name, p->id, "hooking", NULL)) {
        free(d);
        return;
    }
    rc_webhook_delivery_id(decl->name, p->id, d->id);
    d->next = w->list;
    w->list = d;
    w->n++;
    timer_need(w);
    check(d);
}

/* A random token naming this instance in the locks it takes. */
static void make_token(char *out)
{
    unsigned char raw[16];
    if (uv_random(NULL, NULL, raw, sizeof raw, 0, NULL) != 0) {
        uint64_t x = uv_hrtime() ^ ((uint64_t)uv_os_getpid() << 32);
        memcpy(raw, &x, sizeof x);
        memcpy(raw + 8, &x, sizeof x);
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

int gw_webhook_start(struct gw_app *app)
{
    const struct rc_webhook_conf *c = &app->conf->webhook;
    if (!c->url[0])
        return 0;
    struct gw_webhook *w = calloc(1, sizeof *w);
    if (!w)
        return RC_E_INTERNAL;
    w->app = app;
    w->conf = c;
    const char *secret = c->secret;
    if (c->secret_env[0]) {
        secret = getenv(c->secret_env);
        size_t n = secret ? strlen(secret) : 0;
        if (n < RC_SECRET_MIN || n > RC_SECRET_MAX) {
            gw_log_error("[webhook] secret_env %s is %s (the secret: %d..%d characters)", c->secret_env,
                         secret ? "of the wrong length" : "not set", RC_SECRET_MIN, RC_SECRET_MAX);
            free(w);
            return RC_E_BAD_REQUEST;
        }
    }
    snprintf(w->secret, sizeof w->secret, "%s", secret);
    if (!(w->http = gw_hclient_new(app->loop))) {
        free(w);
        return RC_E_INTERNAL;
    }
    gw_lock_scripts_init(&w->lock);
    make_token(w->token);
    uv_timer_init(app->loop, &w->timer);
    w->timer.data = w;
    app->webhook = w;
    gw_log_info("webhook: periods archived are sent (top %u, timeout %" PRId64 " ms, %u retries)", c->top,
                c->timeout_ms, c->retries);
    return 0;
}

static void on_timer_closed(uv_handle_t *h)
{
    struct gw_webhook *w = h->data;
    w->timer_closed = 1;
    maybe_free(w);
}

void gw_webhook_stop(struct gw_app *app)
{
    struct gw_webhook *w = app->webhook;
    if (!w)
        return;
    app->webhook = NULL;
    w->stopping = 1;
    size_t abandoned = 0;
    struct delivery *next;
    for (struct delivery *d = w->list; d; d = next) {
        next = d->next;
        if (d->state != ST_END)
            abandoned++;
        if (d->req) {
            gw_hclient_cancel(w->http, d->req);
            d->req = NULL;
            app->metrics.webhooks_in_flight--;
        }
        if (!d->op)
            finish(d); /* else its callback ends it */
    }
    if (abandoned)
        gw_log_warn("webhook: %zu deliveries not done at shutdown; another gateway or the next start sends them",
                    abandoned);
    gw_hclient_free(w->http);
    w->http = NULL;
    uv_timer_stop(&w->timer);
    uv_close((uv_handle_t *)&w->timer, on_timer_closed);
}
