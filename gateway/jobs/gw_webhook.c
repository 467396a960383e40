/* gw_webhook.c - the webhook on period close (gw_webhook.h,
 * docs/webhooks.md): starts and stops the job, takes the archive job's calls
 * and runs one timer (TIMER_MS, only while deliveries exist) that looks at
 * each delivery. The steps of a delivery, and why it is sent once per period
 * across gateways (at least once): jobs/gw_webhook_run.c.
 *
 * Lifetime: gw_webhook_stop drops POSTs in flight, gives back locks and
 * closes the timer; the job is freed once the timer is closed and the last
 * delivery's Redis call has come back.
 */
#include "jobs/gw_webhook.h"
#include "jobs/gw_webhook_run.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "redis/gw_lock.h"
#include "jobs/gw_webhook_http.h"
#include "rc_err.h"
#include "rc_expiry.h"

#define TIMER_MS 100          /* how often waits and renewals are looked at */
#define MAX_DELIVERIES 4096   /* queued at once; more are refused with a warning */

/* w is freed once it is stopping, its timer closed and its last delivery
 * freed (base/gw_release). */
static struct gw_webhook *webhook_of(const struct gw_release *rel)
{
    return (struct gw_webhook *)((char *)rel - offsetof(struct gw_webhook, rel));
}

static int webhook_busy(const struct gw_release *rel)
{
    return webhook_of(rel)->list != NULL;
}

static void webhook_free(struct gw_release *rel)
{
    free(webhook_of(rel));
}

static void maybe_free(struct gw_webhook *w)
{
    gw_release_check(&w->rel);
}

static void on_timer(uv_timer_t *t)
{
    struct gw_webhook *w = t->data;
    uint64_t now = uv_now(w->app->loop);
    struct delivery *next;
    for (struct delivery *d = w->list; d; d = next) {
        next = d->next;
        gw_webhook_run_due(d, now);
    }
    if (!w->list && w->timer_on) {
        uv_timer_stop(&w->timer);
        w->timer_on = 0;
    }
}

static void timer_need(struct gw_webhook *w)
{
    if (!w->timer_on && !w->rel.stopping) {
        uv_timer_start(&w->timer, on_timer, TIMER_MS, TIMER_MS);
        w->timer_on = 1;
    }
}

/* ---- the archive's call, start and stop ------------------------------------------- */

void gw_webhook_archived(struct gw_app *app, const struct rc_board *decl, const char *board,
                         const struct rc_period *p)
{
    struct gw_webhook *w = app->webhook;
    if (!w || w->rel.stopping || strlen(board) > RC_BOARD_MAX)
        return;
    for (struct delivery *d = w->list; d; d = d->next)
        if (strcmp(d->board, board) == 0 && strcmp(d->period.id, p->id) == 0)
            return;
    if (w->n >= MAX_DELIVERIES) {
        gw_log_warn("webhook %s %s: %d deliveries already queued; not queued here", board, p->id,
                    MAX_DELIVERIES);
        return;
    }
    struct delivery *d = calloc(1, sizeof *d);
    if (!d)
        return;
    d->w = w;
    d->decl = decl;
    snprintf(d->board, sizeof d->board, "%s", board);
    d->period = *p;
    int64_t ttl;
    if (rc_expiry_period_ttl_ms(decl, p, gw_now_ms(app), &ttl, NULL) != 0)
        ttl = 86400000;
    d->give_up_at = uv_now(app->loop) + (uint64_t)ttl;
    if (rc_keys_board(d->hooked, sizeof d->hooked, board, p->id, "hooked", NULL) ||
        rc_keys_board(d->lock, sizeof d->lock, board, p->id, "hooking", NULL)) {
        free(d);
        return;
    }
    rc_webhook_delivery_id(board, p->id, d->id);
    d->next = w->list;
    w->list = d;
    w->n++;
    timer_need(w);
    gw_webhook_run_check(d);
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
    w->idle = maybe_free;
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
    if (!(w->http = gw_webhook_http_new(app->loop))) {
        free(w);
        return RC_E_INTERNAL;
    }
    gw_lock_scripts_init(&w->lock);
    gw_lock_token(w->token);
    uv_timer_init(app->loop, &w->timer);
    w->timer.data = w;
    gw_release_init(&w->rel, webhook_free, webhook_busy);
    gw_release_hold(&w->rel);
    app->webhook = w;
    gw_log_info("webhook: periods archived are sent (top %u, timeout %" PRId64 " ms, %u retries)", c->top,
                c->timeout_ms, c->retries);
    return 0;
}

void gw_webhook_stop(struct gw_app *app)
{
    struct gw_webhook *w = app->webhook;
    if (!w)
        return;
    app->webhook = NULL;
    gw_release_stop(&w->rel); /* the timer holds it: freed after its close callback at the earliest */
    size_t abandoned = 0;
    struct delivery *next;
    for (struct delivery *d = w->list; d; d = next) {
        next = d->next;
        if (d->state != ST_END)
            abandoned++;
        gw_webhook_run_stop(d);
    }
    if (abandoned)
        gw_log_warn("webhook: %zu deliveries not done at shutdown; another gateway or the next start sends them",
                    abandoned);
    gw_webhook_http_free(w->http);
    w->http = NULL;
    uv_timer_stop(&w->timer);
    gw_release_close(&w->rel, (uv_handle_t *)&w->timer);
}
