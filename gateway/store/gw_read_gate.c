/* gw_read_gate.c - the cap on rows of board reads in flight (gw_read_gate.h). */
#include "store/gw_read_gate.h"

#include <stdlib.h>
#include <string.h>

#include "base/gw_metrics.h"
#include "redis/gw_redis.h"
#include "store/gw_read.h"
#include "rc_err.h"

/* A read sent through the gate: what its answer gives back. */
struct call {
    struct gw_read_gate *g;
    int64_t rows;
    struct gw_read_owner *owner[2]; /* charged, one reference each (or NULL) */
    gw_script_reply_cb *cb;
    void *privdata;
};

/* A read waiting for room: its words copied (one allocation). */
struct gw_read_gate_item {
    struct gw_read_gate_item *next;
    struct gw_script *script;
    struct gw_redis *redis;
    int64_t rows;
    struct gw_read_owner *owner[2];
    gw_script_reply_cb *cb;
    void *privdata;
    unsigned nwords;
    const char *words[RC_READ_NKEYS + RC_READ_ARGV_MAX];
    size_t lens[RC_READ_NKEYS + RC_READ_ARGV_MAX];
};

struct gw_read_owner *gw_read_gate_owner_new(void)
{
    struct gw_read_owner *o = calloc(1, sizeof *o);
    if (o)
        o->refs = 1;
    return o;
}

void gw_read_gate_owner_unref(struct gw_read_owner *o)
{
    if (o && --o->refs == 0)
        free(o);
}

void gw_read_gate_charge(struct gw_read_gate *g, struct gw_read_owner *conn, struct gw_read_owner *addr)
{
    if (!g)
        return;
    g->charge[0] = conn;
    g->charge[1] = addr;
}

/* Charges rows to the owners in by (taking a reference each) into to. */
static void take(struct gw_read_owner *const by[2], struct gw_read_owner *to[2], int64_t rows)
{
    for (int i = 0; i < 2; i++) {
        to[i] = by[i];
        if (to[i]) {
            to[i]->refs++;
            to[i]->rows += rows;
        }
    }
}

/* The read charged to owner[] is answered (or given up): its rows are off. */
static void give_back(struct gw_read_owner *owner[2], int64_t rows)
{
    for (int i = 0; i < 2; i++) {
        if (owner[i])
            owner[i]->rows -= rows;
        gw_read_gate_owner_unref(owner[i]);
        owner[i] = NULL;
    }
}

int64_t gw_read_gate_rows(const struct rc_read_req *req)
{
    switch (req->kind) {
    case RC_READ_RANGE:
        return req->count > 0 ? req->count : 1;
    case RC_READ_AROUND:
    case RC_READ_NEAR:
        return 2 * (req->radius > 0 ? req->radius : 0) + 1;
    case RC_READ_MEMBERS:
        return req->nmembers > 0 ? req->nmembers : 1;
    case RC_READ_ROSTER:
        return req->best > 0 ? req->best : 1;
    default:
        return 1;
    }
}

static void publish(struct gw_read_gate *g, int64_t queued_delta)
{
    if (!g->m)
        return;
    g->m->read_rows_in_flight = (uint64_t)g->in_flight;
    if (g->m->read_rows_in_flight > g->m->read_rows_in_flight_max)
        g->m->read_rows_in_flight_max = g->m->read_rows_in_flight;
    g->m->reads_waiting = (uint64_t)((int64_t)g->m->reads_waiting + queued_delta);
}

static int fits(const struct gw_read_gate *g, int64_t rows)
{
    return g->in_flight == 0 || g->in_flight + rows <= g->cap;
}

static void drain(struct gw_read_gate *g);

static void on_answer(redisReply *reply, void *privdata)
{
    struct call *k = privdata;
    struct gw_read_gate *g = k->g;
    gw_script_reply_cb *cb = k->cb;
    void *pd = k->privdata;
    g->in_flight -= k->rows;
    give_back(k->owner, k->rows);
    free(k);
    publish(g, 0);
    cb(reply, pd);
    drain(g);
}

/* Sends the words with the gate's bookkeeping; the charge moves from owner
 * (whose references it takes over) to the call. Returns as gw_redis_eval,
 * owner untouched then. */
static int send_read(struct gw_read_gate *g, struct gw_script *script, struct gw_redis *redis, unsigned nwords,
                     const char *const *words, const size_t *lens, int64_t rows, struct gw_read_owner *owner[2],
                     gw_script_reply_cb *cb, void *privdata)
{
    struct call *k = malloc(sizeof *k);
    if (!k)
        return RC_E_INTERNAL;
    *k = (struct call){g, rows, {owner[0], owner[1]}, cb, privdata};
    int rc = redis ? gw_redis_eval(redis, script, RC_READ_NKEYS, (int)nwords, words, lens, on_answer, k)
                   : RC_E_UNAVAILABLE;
    if (rc) {
        free(k);
        return rc == RC_E_INTERNAL ? RC_E_INTERNAL : RC_E_UNAVAILABLE;
    }
    g->in_flight += rows;
    publish(g, 0);
    return 0;
}

/* The waiting reads that fit now, in order. One that cannot be sent is
 * answered NULL (the caller says unavailable); the list is consistent
 * before every call-out, which may send or queue reads of its own. */
static void drain(struct gw_read_gate *g)
{
    while (g->head && fits(g, g->head->rows)) {
        struct gw_read_gate_item *it = g->head;
        g->head = it->next;
        if (!g->head)
            g->tail = NULL;
        publish(g, -1);
        if (send_read(g, it->script, it->redis, it->nwords, it->words, it->lens, it->rows, it->owner, it->cb,
                      it->privdata) != 0) {
            give_back(it->owner, it->rows);
            it->cb(NULL, it->privdata);
        }
        free(it);
    }
}

/* A copy of the words a waits with, or NULL (out of memory). */
static struct gw_read_gate_item *new_item(const struct rc_read_args *a)
{
    const char *words[RC_READ_NKEYS + RC_READ_ARGV_MAX];
    size_t lens[RC_READ_NKEYS + RC_READ_ARGV_MAX];
    unsigned n = gw_script_call_words(a->keys, RC_READ_NKEYS, a->argv, a->nargv, words, lens);
    size_t bytes = sizeof(struct gw_read_gate_item);
    for (unsigned i = 0; i < n; i++)
        bytes += lens[i] + 1;
    struct gw_read_gate_item *it = calloc(1, bytes);
    if (!it)
        return NULL;
    char *text = (char *)(it + 1);
    for (unsigned i = 0; i < n; i++) {
        memcpy(text, words[i], lens[i]);
        text[lens[i]] = '\0';
        it->words[i] = text;
        it->lens[i] = lens[i];
        text += lens[i] + 1;
    }
    it->nwords = n;
    return it;
}

int gw_read_gate_active(const struct gw_read_gate *g)
{
    return g && g->cap > 0;
}

int gw_read_gate_send(struct gw_read_gate *g, struct gw_script *script, struct gw_redis *redis,
                      const struct rc_read_args *a, int64_t rows, gw_script_reply_cb *cb, void *privdata)
{
    if (!gw_read_gate_active(g))
        return RC_E_INTERNAL; /* the caller sends straight: gw_read_call_send */
    if (!redis)
        return RC_E_UNAVAILABLE;
    if (!g->head && fits(g, rows)) {
        const char *words[RC_READ_NKEYS + RC_READ_ARGV_MAX];
        size_t lens[RC_READ_NKEYS + RC_READ_ARGV_MAX];
        unsigned n = gw_script_call_words(a->keys, RC_READ_NKEYS, a->argv, a->nargv, words, lens);
        struct gw_read_owner *owner[2];
        take(g->charge, owner, rows);
        int rc = send_read(g, script, redis, n, words, lens, rows, owner, cb, privdata);
        if (rc)
            give_back(owner, rows);
        return rc;
    }
    struct gw_read_gate_item *it = new_item(a);
    if (!it)
        return RC_E_INTERNAL;
    it->script = script;
    it->redis = redis;
    it->rows = rows;
    take(g->charge, it->owner, rows);
    it->cb = cb;
    it->privdata = privdata;
    if (g->tail)
        g->tail->next = it;
    else
        g->head = it;
    g->tail = it;
    if (g->m)
        g->m->reads_waited++;
    publish(g, 1);
    return 0;
}
