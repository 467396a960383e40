/* gw_read_at_chain.c - a moment rebuilt in bounded calls (see
 * gw_read_at_chain.h): "changes" calls from the checkpoint towards the
 * moment until every change between is folded, then one "base" call. Each
 * call is its own script run: the loop serves other clients between them,
 * and none holds Redis longer than one moment read within the cap. */
#include "store/gw_read_at_chain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "store/gw_store.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_err.h"
#include "rc_members.h"
#include "rc_proto.h"

struct chain_call {
    const struct gw_store *s;
    struct rc_moment_chain ch;
    struct rc_moment_chain_view v;
    char member[RC_MEMBER_MAX + 1];
    char *members;              /* LIST: the names, back to back (owned) */
    struct rc_moment_bound *bounds; /* COUNTS, NEAR (owned) */
    char board[RC_BOARD_MAX + 8];
    char period[RC_PERIOD_ID_MAX];
    enum rc_order order;
    gw_read_at_chain_cb *cb;
    void *privdata;
};

static int send_next(struct chain_call *c);

static void chain_free(struct chain_call *c)
{
    rc_moment_chain_free(&c->ch);
    free(c->members);
    free(c->bounds);
    free(c);
}

static void finish(struct chain_call *c, int code, struct rc_moment_reply *r)
{
    c->cb(code, code ? NULL : r, c->privdata);
    chain_free(c);
}

static void on_reply(redisReply *reply, void *privdata)
{
    struct chain_call *c = privdata;
    struct rc_reply_item *items = NULL;
    struct rc_moment_reply r;
    memset(&r, 0, sizeof r);
    if (!reply) {
        finish(c, RC_E_UNAVAILABLE, NULL);
        return;
    }
    if (reply->type != REDIS_REPLY_ARRAY || !(items = malloc((reply->elements + 1) * sizeof *items)) ||
        gw_script_reply_items(reply, items, reply->elements) != reply->elements) {
        free(items);
        finish(c, RC_E_INTERNAL, NULL);
        return;
    }
    int code;
    if (!rc_moment_chain_done(&c->ch)) {
        code = rc_moment_chain_changes_take(&c->ch, items, reply->elements, &r);
        free(items);
        if (code == 1)
            finish(c, 0, &r); /* (the history moved on: GONE) */
        else if (code || (code = send_next(c)) != 0)
            finish(c, code, NULL);
        return;
    }
    code = rc_moment_chain_base_take(&c->ch, items, reply->elements, &c->v, &r);
    finish(c, code, &r); /* (r's members borrow items: freed after) */
    rc_moment_args_reply_free(&r);
    free(items);
}

/* The next call: changes while some are left, then the base. Returns 0 or
 * an RC_E_*. */
static int send_next(struct chain_call *c)
{
    struct rc_moment_chain_args a;
    int rc = rc_moment_chain_done(&c->ch)
                 ? rc_moment_chain_base_args(&c->ch, c->board, c->period, c->order, &c->v, &a)
                 : rc_moment_chain_changes_args(&c->ch, c->board, c->period, c->order,
                                                c->s->history_undo_max ? c->s->history_undo_max : 10000, &a);
    if (rc)
        return rc;
    const char *words[RC_READ_NKEYS + 10];
    size_t lens[RC_READ_NKEYS + 10];
    if (!c->s->redis) {
        rc_moment_chain_args_free(&a);
        return RC_E_UNAVAILABLE;
    }
    unsigned n = gw_script_call_words(a.keys, RC_READ_NKEYS, a.argv, a.nargv, words, lens);
    rc = gw_redis_eval(c->s->redis, c->s->read_script, RC_READ_NKEYS, (int)n, words, lens, on_reply, c);
    rc_moment_chain_args_free(&a);
    return rc == RC_E_INTERNAL ? RC_E_INTERNAL : rc ? RC_E_UNAVAILABLE : 0;
}

int gw_read_at_chain(const struct gw_store *s, const char *board, const char *period, enum rc_order order,
                     const struct rc_moment_chain_view *v, const struct rc_moment_reply *deep,
                     gw_read_at_chain_cb *cb, void *privdata)
{
    if ((unsigned)v->view > RC_MOMENT_NEAR)
        return RC_E_BAD_REQUEST;
    struct chain_call *c = calloc(1, sizeof *c);
    if (!c)
        return RC_E_INTERNAL;
    int rc = rc_moment_chain_init(&c->ch, deep);
    if (rc) {
        free(c);
        return rc;
    }
    c->s = s;
    c->v = *v;
    c->order = order;
    c->cb = cb;
    c->privdata = privdata;
    snprintf(c->board, sizeof c->board, "%s", board);
    snprintf(c->period, sizeof c->period, "%s", period ? period : "");
    if (v->member) {
        snprintf(c->member, sizeof c->member, "%s", v->member);
        c->v.member = c->member;
    }
    if (v->view == RC_MOMENT_LIST) {
        if (!(c->members = rc_members_dup(v->members, v->nmembers, NULL))) {
            chain_free(c);
            return RC_E_INTERNAL;
        }
        c->v.members = c->members;
    }
    if ((v->view == RC_MOMENT_COUNTS || v->view == RC_MOMENT_NEAR) && v->bounds && v->nbounds) {
        if (!(c->bounds = malloc(v->nbounds * sizeof *c->bounds))) {
            chain_free(c);
            return RC_E_INTERNAL;
        }
        memcpy(c->bounds, v->bounds, v->nbounds * sizeof *c->bounds);
        c->v.bounds = c->bounds;
    }
    if ((rc = send_next(c)) != 0)
        chain_free(c);
    else if (s->chain_reads)
        (*s->chain_reads)++;
    return rc;
}
