/* gw_redis_wait.c - the WAIT behind writes with ack_replicas (gw_redis_int.h).
 *
 * WAIT must go on the connection that carried the write (it counts the
 * replicas that have that client's writes), and it blocks that client, so
 * Redis runs the connection's next commands only after it answers. One WAIT
 * per write therefore made N writes in flight to a primary without a live
 * replica take N x ack_timeout, and the watchdog PING, queued behind them
 * on the same connection, failed the link. Instead each write connection
 * has at most one WAIT in flight (core/rc_ackbatch): a write sent before it
 * (answered while it runs: it was queued behind it) is in its batch, a
 * write sent after it waits, and the next WAIT, sent when it answers,
 * covers every write answered before. Each write is answered with its own batch's
 * WAIT answer: the replicas that have it, never a later count. A lost
 * connection answers -1 (unknown) to the batch in flight and the pending.
 */
#include "redis/gw_redis_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The WAIT in flight (its batch is in the node's rc_ackbatch): node is
 * valid until the node's contexts are freed, which runs on_wait (with NULL)
 * first. */
struct wait_out {
    struct gw_node *node;
    uv_loop_t *loop;
};

static struct gw_rreq *req_of(struct rc_ackbatch_item *it)
{
    return (struct gw_rreq *)(void *)((char *)it - offsetof(struct gw_rreq, ack));
}

/* A deep copy of a reply, freeable with freeReplyObject (hiredis 0.14
 * allocates replies with malloc and frees them with free). NULL when out of
 * memory. */
static redisReply *copy_reply(const redisReply *r)
{
    redisReply *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->type = r->type;
    c->integer = r->integer;
    if (r->str) {
        if (!(c->str = malloc(r->len + 1))) {
            free(c);
            return NULL;
        }
        memcpy(c->str, r->str, r->len);
        c->str[r->len] = '\0';
        c->len = r->len;
    }
    if (r->type == REDIS_REPLY_ARRAY && r->elements > 0) {
        if (!(c->element = calloc(r->elements, sizeof *c->element))) {
            freeReplyObject(c);
            return NULL;
        }
        c->elements = r->elements;
        for (size_t i = 0; i < r->elements; i++)
            if (!(c->element[i] = copy_reply(r->element[i]))) {
                freeReplyObject(c);
                return NULL;
            }
    }
    return c;
}

/* Every write of list gets replicas n (its callback may send more writes:
 * their answers come from the loop later, never into list). */
static void answer(struct rc_ackbatch_item *list, int n)
{
    while (list) {
        struct rc_ackbatch_item *next = list->next;
        struct gw_rreq *q = req_of(list);
        redisReply *held = q->held;
        gw_redis_wait_cb *wcb = q->wcb;
        void *privdata = q->privdata;
        free(q);
        wcb(held, n, privdata);
        freeReplyObject(held);
        list = next;
    }
}

static void on_wait(redisAsyncContext *ac, void *reply, void *privdata);

/* One WAIT for every pending write of node's write connection, unless one
 * is in flight. */
static void start(uv_loop_t *loop, struct gw_node *node)
{
    struct rc_ackbatch *b = gw_node_wr_acks(node);
    int n;
    int64_t ms;
    if (!rc_ackbatch_start(b, uv_now(loop), &n, &ms))
        return;
    redisAsyncContext *ac = gw_node_wr(node);
    struct wait_out *w = malloc(sizeof *w);
    char ns[16], mss[24];
    snprintf(ns, sizeof ns, "%d", n);
    snprintf(mss, sizeof mss, "%lld", (long long)ms);
    if (w) {
        w->node = node;
        w->loop = loop;
    }
    if (!ac || !w || redisAsyncCommand(ac, on_wait, w, "WAIT %s %s", ns, mss) != REDIS_OK) {
        free(w);
        answer(rc_ackbatch_done(b), -1);
    }
}

static void on_wait(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct wait_out *w = privdata;
    redisReply *rep = reply;
    (void)ac;
    int n = rep && rep->type == REDIS_REPLY_INTEGER ? (int)rep->integer : -1;
    struct gw_node *node = w->node;
    uv_loop_t *loop = w->loop;
    free(w);
    struct rc_ackbatch *b = gw_node_wr_acks(node);
    struct rc_ackbatch_item *batch = rc_ackbatch_done(b);
    /* the next WAIT first (the writes pending are on this live connection);
     * with no reply the connection is gone and nothing can cover them */
    if (rep)
        start(loop, node);
    else
        answer(rc_ackbatch_take_pending(b), -1);
    answer(batch, n);
}

void gw_redis_wait_add(struct gw_rreq *q, redisReply *reply)
{
    struct gw_node *node = q->sent_to && q->sent_to->up ? q->sent_to->node : NULL;
    /* the connection that carried the write, still the node's: a WAIT on
     * another would not count this write */
    if (!node || !q->sent_ac || gw_node_wr(node) != q->sent_ac || !(q->held = copy_reply(reply))) {
        gw_redis_wait_cb *wcb = q->wcb;
        void *privdata = q->privdata;
        free(q);
        wcb(reply, -1, privdata);
        return;
    }
    q->ack.replicas = q->wait_n;
    q->ack.timeout_ms = q->wait_ms;
    if (rc_ackbatch_add(gw_node_wr_acks(node), &q->ack, q->ack_seq))
        start(q->r->loop, node);
}
