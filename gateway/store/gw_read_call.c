/* gw_read_call.c - one lua/read.lua call: sent through the store's script
 * and Redis, its reply copied into core/rc_read_args's shapes. Every read
 * path uses it: the board reads (gw_read.c), the merged reads of sharded
 * boards (gw_read_shard.c), the one-shard counts (gw_read_call_counts), the
 * archive job. */
#include "store/gw_read.h"

#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "store/gw_read_gate.h"
#include "store/gw_read_int.h"
#include "store/gw_store.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_err.h"
#include "rc_read_args.h"

int gw_read_call_send(struct gw_script *script, struct gw_redis *redis, const struct rc_read_args *a,
                 gw_script_reply_cb *cb, void *privdata)
{
    const char *words[RC_READ_NKEYS + RC_READ_ARGV_MAX];
    size_t lens[RC_READ_NKEYS + RC_READ_ARGV_MAX];
    if (!redis)
        return RC_E_UNAVAILABLE;
    unsigned nwords = gw_script_call_words(a->keys, RC_READ_NKEYS, a->argv, a->nargv, words, lens);
    int rc = gw_redis_eval(redis, script, RC_READ_NKEYS, (int)nwords, words, lens, cb, privdata);
    return rc == RC_E_INTERNAL ? RC_E_INTERNAL : rc ? RC_E_UNAVAILABLE : 0;
}

int gw_read_call(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                 const struct rc_read_req *req, gw_script_reply_cb *cb, void *privdata)
{
    struct rc_read_args a;
    int rc = rc_read_args_build(board, period, b->layout.order, req, &a);
    if (rc)
        return rc;
    if (!gw_read_gate_active(s->read_gate)) /* no cap: straight to Redis */
        return gw_read_call_send(s->read_script, s->redis, &a, cb, privdata);
    return gw_read_gate_send(s->read_gate, s->read_script, s->redis, &a, gw_read_gate_rows(req), cb, privdata);
}

/* r's items (malloc'ed, free them) and room for its rows (*rows, malloc'ed):
 * 0, RC_E_UNAVAILABLE (no reply) or RC_E_INTERNAL (not an array: an error
 * reply of the script, or out of memory). */
static int reply_items(const redisReply *r, struct rc_reply_item **items, struct rc_read_row **rows, size_t *cap)
{
    *items = NULL;
    *rows = NULL;
    if (!r)
        return RC_E_UNAVAILABLE;
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 3)
        return RC_E_INTERNAL;
    *cap = rc_read_args_rows_max(r->elements);
    *items = malloc(r->elements * sizeof **items);
    *rows = malloc((*cap ? *cap : 1) * sizeof **rows);
    if (!*items || !*rows || gw_script_reply_items(r, *items, r->elements) != r->elements) {
        free(*items);
        free(*rows);
        *items = NULL;
        *rows = NULL;
        return RC_E_INTERNAL;
    }
    return 0;
}

/* The reply's rows by the parser of its kind: places (pl), near (nr) or
 * plain rows. */
static int read_reply(const redisReply *r, struct rc_read_head *head, struct rc_read_places *pl,
                      struct rc_read_near *nr, struct rc_read_row **rows, size_t *n)
{
    struct rc_reply_item *items;
    size_t cap = 0;
    *n = 0;
    int rc = reply_items(r, &items, rows, &cap);
    if (rc)
        return rc;
    if (nr)
        rc = rc_read_args_near_parse(items, r->elements, head, nr, *rows, cap, n);
    else if (pl)
        rc = rc_read_args_rows_parse_places(items, r->elements, head, pl, *rows, cap, n);
    else
        rc = rc_read_args_rows_parse(items, r->elements, head, *rows, cap, n);
    free(items);
    if (rc) {
        free(*rows);
        *rows = NULL;
    }
    return rc;
}

int gw_read_call_reply(const redisReply *r, struct rc_read_head *head, struct rc_read_row **rows, size_t *n)
{
    return read_reply(r, head, NULL, NULL, rows, n);
}

int gw_read_call_reply_places(const redisReply *r, struct rc_read_head *head, struct rc_read_places *pl,
                         struct rc_read_row **rows, size_t *n)
{
    return read_reply(r, head, pl, NULL, rows, n);
}

int gw_read_call_reply_near(const redisReply *r, struct rc_read_head *head, struct rc_read_near *nr,
                       struct rc_read_row **rows, size_t *n)
{
    return read_reply(r, head, NULL, nr, rows, n);
}

/* ---- one shard's counts ---------------------------------------------------- */

struct counts_call {
    gw_read_counts_cb *cb;
    void *privdata;
    size_t n;
};

static void on_counts(redisReply *r, void *privdata)
{
    struct counts_call *k = privdata;
    struct rc_reply_item items[RC_READ_HEAD + RC_READ_COUNTS_MAX];
    int64_t counts[RC_READ_COUNTS_MAX];
    struct rc_read_head head;
    size_t n = gw_script_reply_items(r, items, RC_READ_HEAD + RC_READ_COUNTS_MAX);
    int code = !r ? RC_E_UNAVAILABLE : rc_read_args_counts_parse(items, n, k->n, &head, counts) ? RC_E_INTERNAL : 0;
    k->cb(code, code ? NULL : &head, code ? NULL : counts, code ? 0 : k->n, k->privdata);
    free(k);
}

int gw_read_call_counts(const struct gw_store *s, const struct rc_board *b, const char *shard_board, const char *period,
                   const double *bounds, const int *inclusive, size_t n, gw_read_counts_cb *cb, void *privdata)
{
    const struct rc_read_req req = {.kind = RC_READ_COUNTS, .bounds = bounds, .inclusives = inclusive, .nbounds = n};
    struct counts_call *k = malloc(sizeof *k);
    if (!k)
        return RC_E_INTERNAL;
    *k = (struct counts_call){cb, privdata, n};
    int rc = gw_read_call(s, b, shard_board, period, &req, on_counts, k);
    if (rc)
        free(k);
    return rc;
}
