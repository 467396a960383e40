/* gw_read_at_shard_chain.c - a shard's moment past history_undo_max from
 * both its bases (docs/history.md, "A moment no base serves within the
 * cap"), for the sharded readers (gw_read_at_shard.c, _member.c, _list.c,
 * _span.c): the shard's "deep" reply that names a checkpoint is read by
 * store/gw_read_at_chain.c, and the readers get the moment as the one call
 * would have answered it (the same reply shape), so none of them changes. */
#include "store/gw_read_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "store/gw_read_at_chain.h"
#include "store/gw_store.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_err.h"
#include "rc_members.h"
#include "rc_shard.h"

struct wrap {
    const struct gw_store *s;
    enum rc_order order;
    char shard[RC_SHARD_NAME_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    struct rc_moment_chain_view v; /* member, members, bounds: ours */
    char member[RC_MEMBER_MAX + 1];
    char *members;
    struct rc_moment_bound *bounds;
    gw_redis_reply_cb *cb;
    void *privdata;
};

static void wrap_free(struct wrap *w)
{
    free(w->members);
    free(w->bounds);
    free(w);
}

/* A reply built here: the array and its items, freed by fake_free. */
struct fake {
    redisReply top;
    redisReply *el;
    redisReply **ptr;
    size_t n, cap;
    int bad;
};

static void put(struct fake *f, int type, long long v, const char *s)
{
    if (f->bad || f->n == f->cap) {
        f->bad = 1;
        return;
    }
    redisReply *e = &f->el[f->n];
    e->type = type;
    e->integer = v;
    if (s) {
        if (!(e->str = strdup(s))) {
            f->bad = 1;
            return;
        }
        e->len = strlen(s);
    }
    f->ptr[f->n] = e;
    f->n++;
}

static void put_int(struct fake *f, int64_t v) { put(f, REDIS_REPLY_INTEGER, (long long)v, NULL); }
static void put_str(struct fake *f, const char *s) { put(f, REDIS_REPLY_STRING, 0, s); }
static void put_num(struct fake *f, int has, double c)
{
    char buf[32] = "";
    if (has)
        snprintf(buf, sizeof buf, "%.17g", c);
    put_str(f, buf);
}

static void fake_free(struct fake *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->el[i].str);
    free(f->el);
    free(f->ptr);
}

/* r as read.lua's moment answers it for view v (lua/read.lua, "moment
 * reply"). Returns 0 or -1 (out of memory). */
static int fake_of(const struct rc_moment_reply *r, enum rc_moment_view v, struct fake *f)
{
    memset(f, 0, sizeof *f);
    f->cap = RC_READ_HEAD + 8 + 4 * r->nchanges + 4 * r->ntargets + 2 * r->nrows + 2 * r->nlisted;
    f->el = calloc(f->cap, sizeof *f->el);
    f->ptr = calloc(f->cap, sizeof *f->ptr);
    if (!f->el || !f->ptr) {
        fake_free(f);
        return -1;
    }
    const struct rc_read_head *h = &r->head;
    put_int(f, h->seq);
    put_int(f, h->total);
    put_int(f, h->first_rank);
    put_str(f, h->epoch);
    put_int(f, h->freeze.frozen);
    put_int(f, h->freeze.seq);
    put_int(f, h->freeze.shown);
    put_int(f, h->freeze.version);
    if (r->status == RC_MOMENT_GONE) {
        put_str(f, "gone");
        put_int(f, r->oldest);
        put_num(f, r->has_oldest_at, (double)r->oldest_at);
    } else {
        put_str(f, "ok");
        put_int(f, r->oldest);
        put_int(f, r->smin);
        put_int(f, (int64_t)r->nchanges);
        for (size_t i = 0; i < r->nchanges; i++) {
            const struct rc_moment_change *c = &r->changes[i];
            put_int(f, r->change_seq[i]);
            put_str(f, c->member);
            put_num(f, c->has_new, c->c);
            put_num(f, c->has_old, c->old_c);
        }
        put_int(f, (int64_t)r->ntargets);
        for (size_t i = 0; i < r->ntargets; i++) {
            const struct rc_moment_target *t = &r->targets[i];
            put_int(f, t->seq);
            put_num(f, t->has_at, (double)t->at);
            put_num(f, t->has_c, t->c);
            put_int(f, t->ahead);
        }
        if (v == RC_MOMENT_LIST) {
            for (size_t i = 0; i < r->nlisted; i++) {
                put_num(f, r->listed[i].has_c, r->listed[i].c);
                put_int(f, r->listed[i].ahead);
            }
        } else if (v == RC_MOMENT_RANGE || v == RC_MOMENT_AROUND || v == RC_MOMENT_NEAR) {
            put_int(f, r->lo);
            for (size_t i = 0; i < r->nrows; i++) {
                put_str(f, r->rows[i].member);
                put_num(f, 1, r->rows[i].c);
            }
        }
    }
    if (f->bad) {
        fake_free(f);
        return -1;
    }
    f->top.type = REDIS_REPLY_ARRAY;
    f->top.elements = f->n;
    f->top.element = f->ptr;
    return 0;
}

static void on_chain(int code, struct rc_moment_reply *r, void *privdata)
{
    struct wrap *w = privdata;
    struct fake f;
    if (!code && fake_of(r, w->v.view, &f) == 0) {
        w->cb(&f.top, w->privdata);
        fake_free(&f);
    } else {
        w->cb(NULL, w->privdata); /* (taken as Redis not answering: unavailable) */
    }
    wrap_free(w);
}

static void on_reply(redisReply *reply, void *privdata)
{
    struct wrap *w = privdata;
    if (reply && reply->type == REDIS_REPLY_ARRAY) {
        struct rc_reply_item *items = malloc((reply->elements + 1) * sizeof *items);
        struct rc_moment_reply r;
        memset(&r, 0, sizeof r);
        int chained = items && gw_script_reply_items(reply, items, reply->elements) == reply->elements &&
                      rc_moment_args_parse(items, reply->elements, w->v.view, &r) == 0 &&
                      r.status == RC_MOMENT_DEEP && r.has_chain &&
                      gw_read_at_chain(w->s, w->shard, w->period, w->order, &w->v, &r, on_chain, w) == 0;
        rc_moment_args_reply_free(&r);
        free(items);
        if (chained)
            return;
    }
    w->cb(reply, w->privdata);
    wrap_free(w);
}

int gw_read_at_shard_chain_eval(const struct gw_store *s, enum rc_order order, const char *shard,
                                const char *period, const struct rc_moment_req *req, unsigned nwords,
                                const char **words, const size_t *lens, gw_redis_reply_cb *cb, void *privdata)
{
    struct wrap *w = calloc(1, sizeof *w);
    if (!w)
        return RC_E_INTERNAL;
    *w = (struct wrap){.s = s, .order = order, .cb = cb, .privdata = privdata};
    /* (POINTS: all its targets, at the one moment a chain reads) */
    w->v = (struct rc_moment_chain_view){.view = req->view, .first = req->first, .count = req->count,
                                         .radius = req->radius, .ntargets = req->ntargets};
    snprintf(w->shard, sizeof w->shard, "%s", shard);
    snprintf(w->period, sizeof w->period, "%s", period ? period : "");
    if (req->member) {
        snprintf(w->member, sizeof w->member, "%s", req->member);
        w->v.member = w->member;
    }
    if (req->view == RC_MOMENT_LIST && req->members) {
        if (!(w->members = rc_members_dup(req->members, req->nmembers, NULL))) {
            wrap_free(w);
            return RC_E_INTERNAL;
        }
        w->v.members = w->members;
        w->v.nmembers = req->nmembers;
    }
    if ((req->view == RC_MOMENT_COUNTS || req->view == RC_MOMENT_NEAR) && req->bounds) {
        size_t nb = req->view == RC_MOMENT_NEAR ? 1 : req->ntargets;
        if (!(w->bounds = malloc(nb * sizeof *w->bounds))) {
            wrap_free(w);
            return RC_E_INTERNAL;
        }
        memcpy(w->bounds, req->bounds, nb * sizeof *w->bounds);
        w->v.bounds = w->bounds;
        w->v.nbounds = nb;
    }
    int rc = gw_redis_eval(s->redis, s->read_script, RC_READ_NKEYS, (int)nwords, words, lens, on_reply, w);
    if (rc)
        wrap_free(w);
    return rc;
}
