/* gw_read_at_shard.c - a sharded board (docs/sharded.md) at a past time
 * (docs/history.md, "Sharded boards"): each shard "B#i" rebuilt as of the
 * time by its own moment read (core/rc_moment), then the shards' runs merged
 * as a present sharded read is (gw_read_merge.c). A sharded seq is a sum of
 * the shards' seqs and names no single state, so only times reach here. */
#include "store/gw_read_at.h"

#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "store/gw_join.h"
#include "store/gw_read_int.h"
#include "store/gw_store.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_err.h"
#include "rc_shard.h"

struct shard_at;

struct one {
    struct shard_at *all;
    unsigned index;
};

struct shard_at {
    const struct gw_store *s;
    const struct rc_board *b;
    int64_t first, count;
    unsigned nshards, pending;
    int code;
    int deep;                  /* a shard refused the moment past history_undo_max */
    struct one one[RC_SHARDS_MAX];
    struct gw_shard_part parts[RC_SHARDS_MAX];
    gw_read_at_cb *cb;
    void *privdata;
    struct gw_read_at_result res;
};

static void all_free(struct shard_at *a)
{
    for (unsigned i = 0; i < a->nshards; i++)
        gw_read_merge_part_clear(&a->parts[i]);
    free(a);
}

static void on_joined(struct gw_window *w, void *privdata)
{
    struct shard_at *a = privdata;
    a->res.w = w;
    a->cb(0, &a->res, a->privdata); /* the window is the callback's */
    all_free(a);
}

/* Every shard answered: the merged window, or the first refusal. */
static void settle(struct shard_at *a)
{
    if (a->code || a->res.status != RC_MOMENT_OK) {
        if (!a->code && a->deep && a->s->undo_refused)
            (*a->s->undo_refused)++; /* one refusal a read, however many shards */
        a->cb(a->code, a->code ? NULL : &a->res, a->privdata);
        all_free(a);
        return;
    }
    struct gw_window *w = calloc(1, sizeof *w);
    int rc = w ? gw_read_merge_range(a->b, a->parts, a->nshards, a->first, a->count, 0, w) : RC_E_INTERNAL;
    if (rc) {
        gw_window_free(w);
        a->cb(rc, NULL, a->privdata);
        all_free(a);
        return;
    }
    a->res.at_seq = w->seq; /* the sum of the shards' seqs shown */
    memcpy(a->res.head.epoch, w->epoch, sizeof a->res.head.epoch);
    gw_join_profiles(a->s->profiles, w, on_joined, a);
}

/* One shard's moment: its window of first + count + 1 rows as of the time. */
static int shard_rows(struct shard_at *a, unsigned i, const struct rc_moment_reply *r)
{
    const struct rc_moment_target *t = &r->targets[0];
    size_t from = rc_moment_args_after(r, t->seq);
    struct rc_moment_in in = {.desc = a->b->layout.order == RC_ORDER_DESC, .slice = r->rows, .nslice = r->nrows,
                              .lo = r->lo, .total = r->head.total, .changes = r->changes + from,
                              .nchanges = r->nchanges - from};
    struct rc_moment_out out;
    int rc = rc_moment_range(&in, 0, a->first + a->count + 1, &out);
    if (rc)
        return rc;
    struct rc_read_row *rows = malloc((out.n ? out.n : 1) * sizeof *rows);
    if (!rows) {
        rc_moment_out_free(&out);
        return RC_E_INTERNAL;
    }
    for (size_t k = 0; k < out.n; k++)
        rows[k] = (struct rc_read_row){out.rows[k].member, out.rows[k].c};
    struct gw_shard_part *p = &a->parts[i];
    rc = gw_read_merge_part_set_rows(p, rows, out.n);
    p->head = r->head;
    p->head.seq = t->seq;
    p->head.total = out.total;
    free(rows);
    rc_moment_out_free(&out);
    if (!rc && t->has_at && (!a->res.has_at_time || t->at > a->res.at_time)) {
        a->res.has_at_time = 1; /* the latest change shown, of any shard */
        a->res.at_time = t->at;
    }
    return rc;
}

static void on_reply(redisReply *reply, void *privdata)
{
    struct one *o = privdata;
    struct shard_at *a = o->all;
    struct rc_moment_reply r;
    int code = gw_read_at_shard_take(reply, RC_MOMENT_RANGE, 1, &a->res, &a->deep, &r);
    if (!code && r.status == RC_MOMENT_OK && !a->code && a->res.status == RC_MOMENT_OK)
        code = shard_rows(a, o->index, &r);
    if (code && !a->code)
        a->code = code;
    rc_moment_args_reply_free(&r);
    if (--a->pending == 0)
        settle(a);
}

int gw_read_at_shard_take(const redisReply *reply, enum rc_moment_view view, int sum, struct gw_read_at_result *res,
                          int *deep, struct rc_moment_reply *r)
{
    memset(r, 0, sizeof *r);
    if (!reply)
        return RC_E_UNAVAILABLE;
    struct rc_reply_item *items = NULL;
    int bad = reply->type != REDIS_REPLY_ARRAY || !(items = malloc((reply->elements + 1) * sizeof *items)) ||
              gw_script_reply_items(reply, items, reply->elements) != reply->elements ||
              rc_moment_args_parse(items, reply->elements, view, r) != 0;
    free(items); /* (r's strings are the reply's, not the items') */
    if (bad)
        return RC_E_INTERNAL;
    if (sum) {
        res->oldest += r->oldest;
        res->head.seq += r->head.seq;
    }
    gw_read_at_shard_oldest(res, r);
    if (r->status == RC_MOMENT_DEEP) { /* past history_undo_max on this shard */
        *deep = 1;
        r->status = RC_MOMENT_GONE;
    }
    if (r->status != RC_MOMENT_OK)
        res->status = r->status;
    return 0;
}

void gw_read_at_shard_oldest(struct gw_read_at_result *res, const struct rc_moment_reply *r)
{
    if ((r->status != RC_MOMENT_GONE && r->status != RC_MOMENT_DEEP) || res->has_oldest_time < 0)
        return;
    if (!r->has_oldest_at)
        res->has_oldest_time = -1; /* this shard holds no time a read can name */
    else if (!res->has_oldest_time || r->oldest_at > res->oldest_time) {
        res->has_oldest_time = 1; /* the latest: every refusing shard holds it */
        res->oldest_time = r->oldest_at;
    }
}

int gw_read_at_shard_send(const struct gw_store *s, const struct rc_board *b, const char *board,
                          const char *period, unsigned i, const struct rc_moment_req *req, gw_redis_reply_cb *cb,
                          void *privdata)
{
    char name[RC_SHARD_NAME_MAX + 1];
    struct rc_moment_args args;
    struct rc_moment_req one = *req;
    one.undo_max = s->history_undo_max; /* each shard undoes its own changes */
    if (rc_shard_name(name, sizeof name, board, i))
        return RC_E_INTERNAL;
    int rc = rc_moment_args_build(name, period, b->layout.order, &one, &args);
    if (rc)
        return rc;
    const char **words = malloc((RC_READ_NKEYS + args.nargv) * sizeof *words);
    size_t *lens = malloc((RC_READ_NKEYS + args.nargv) * sizeof *lens);
    if (!words || !lens) {
        rc = RC_E_INTERNAL;
    } else {
        unsigned n = gw_script_call_words(args.keys, RC_READ_NKEYS, args.argv, args.nargv, words, lens);
        /* (a moment past the cap from both its bases comes back read by a chain) */
        rc = gw_read_at_shard_chain_eval(s, b->layout.order, name, period, &one, n, words, lens, cb, privdata);
        rc = rc == RC_E_INTERNAL ? RC_E_INTERNAL : rc ? RC_E_UNAVAILABLE : 0;
    }
    free(words);
    free(lens);
    rc_moment_args_free(&args);
    return rc;
}

int gw_read_at_shard(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                     const struct rc_moment_req *req, gw_read_at_cb *cb, void *privdata)
{
    if (!req->by_time || req->view != RC_MOMENT_RANGE || req->ntargets != 1 ||
        req->first + req->count > RC_SHARD_READ_MAX)
        return RC_E_BAD_REQUEST;
    if (!s->redis)
        return RC_E_UNAVAILABLE;
    struct shard_at *a = calloc(1, sizeof *a);
    if (!a)
        return RC_E_INTERNAL;
    *a = (struct shard_at){.s = s, .b = b, .first = req->first, .count = req->count, .nshards = b->shards,
                           .cb = cb, .privdata = privdata};
    struct rc_moment_req one = *req;
    one.first = 0;
    one.count = req->first + req->count + 1;
    for (unsigned i = 0; i < b->shards; i++) {
        a->one[i] = (struct one){a, i};
        int rc = gw_read_at_shard_send(s, b, board, period, i, &one, on_reply, &a->one[i]);
        if (rc) {
            /* the calls sent answer later: the last one settles with the code */
            a->code = rc;
            if (a->pending == 0) {
                all_free(a);
                return rc;
            }
            break;
        }
        a->pending++;
    }
    return 0;
}
