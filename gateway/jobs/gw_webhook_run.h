/* gw_webhook_run.h - private to the webhook job (jobs/gw_webhook.c and
 * jobs/gw_webhook_run.c): its state, and the steps of one delivery. */
#ifndef GW_WEBHOOK_RUN_H
#define GW_WEBHOOK_RUN_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/gw_release.h"
#include "redis/gw_lock.h"
#include "rc_conf.h"
#include "rc_keys.h"
#include "rc_names.h"
#include "rc_period.h"
#include "rc_webhook.h"

struct gw_app;
struct gw_hclient;
struct gw_hreq;

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
    char board[RC_BOARD_MAX + 1];  /* the board's name (a template's instance for a template) */
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
    char token[GW_LOCK_TOKEN_MAX];
    uv_timer_t timer;
    int timer_on;
    struct gw_release rel;         /* held by the timer until its close callback; busy while a
                                      delivery is listed */
    struct delivery *list;
    size_t n;
    void (*idle)(struct gw_webhook *w); /* a delivery was freed: the job may free itself */
};

/* Step 1 for d (gw_webhook_run.c's banner has the steps). */
void gw_webhook_run_check(struct delivery *d);

/* The timer's look at d: renews a lock a third of the way to its expiry,
 * and goes on from a wait that is over. Idle while a call of d is in flight.
 * May free d. */
void gw_webhook_run_due(struct delivery *d, uint64_t now);

/* At stop: drops d's POST, gives back its lock; d is freed now or when its
 * call in flight comes back. */
void gw_webhook_run_stop(struct delivery *d);

#endif
