/* gw_redis_route.c - sending a command to the node that serves its key
 * (gw_redis_int.h), and following the cluster's answers:
 *
 *   MOVED slot host:port   the map was stale: the slot is set to that node
 *                          (started if new), the whole map is read again
 *                          soon, and the command goes there
 *   ASK slot host:port     the slot is being migrated and this key is
 *                          already on the target: ASKING + the command go
 *                          there once; the map stays
 *   TRYAGAIN               a multi-key command during a migration: again
 *                          after TRYAGAIN_MS, doubled each time up to
 *                          TRYAGAIN_MAX_MS (Redis runs a script with a key
 *                          that exists on neither side - a new req record,
 *                          a channel name - only once the slot is handed
 *                          over, so a long move is waited out, not polled)
 *   LOADING, READONLY      the node is not ready / not a primary any more:
 *                          again after a pause (the map is read again)
 *   CLUSTERDOWN, MASTERDOWN  NULL to the caller: unavailable
 *
 * A command whose next node is not up yet waits ("parked") until it is. A
 * command older than the ping timeout, or redirected more than MAX_HOPS
 * times, ends with NULL to the caller. Nothing is ever answered that Redis did not answer:
 * a redirect or TRYAGAIN means the command was not run, so sending it again
 * is safe; a lost connection ends in NULL (unknown), never in a retry.
 * Every NULL carries its cause (gw_redis_route_why_null): only a lost
 * connection leaves the outcome unknown; a command that ran out of retries
 * was never run, and the caller's message says which (docs/cluster.md).
 * Single mode sends scripts straight to the one node (no copy, no extra
 * callback); plain commands take the same path as on a cluster.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_err.h"
#include "rc_slot.h"
#include "redis/gw_redis_int.h"

#define MAX_HOPS 6
#define TRYAGAIN_MS 25
#define TRYAGAIN_MAX_MS 200
#define NOT_READY_MS 100
#define PARK_TICK_MS 20

/* The cause of the NULL being handed to a callback right now; LOST outside
 * finish(), so a NULL from elsewhere (single mode, a WAIT cut off) stays
 * "unknown". */
static enum gw_redis_null_why null_why = GW_REDIS_NULL_LOST;

enum gw_redis_null_why gw_redis_route_why_null(void)
{
    return null_why;
}

const char *gw_redis_route_why_text(enum gw_redis_null_why why)
{
    switch (why) {
    case GW_REDIS_NULL_MOVING:
        return "the board's Redis Cluster slot is being moved to another node (Redis answered TRYAGAIN until "
               "the retry time ran out)";
    case GW_REDIS_NULL_NOT_RUN:
        return "no Redis primary for the board's slot was reachable and ready in time";
    default:
        return "Redis connection lost";
    }
}

static void finish(struct gw_rreq *q, redisReply *reply)
{
    gw_redis_reply_cb *cb = q->cb;
    gw_redis_wait_cb *wcb = q->wcb;
    void *privdata = q->privdata;
    null_why = reply ? GW_REDIS_NULL_LOST : (enum gw_redis_null_why)q->why;
    free(q);
    if (wcb)
        wcb(reply, -1, privdata);
    else if (cb)
        cb(reply, privdata);
    null_why = GW_REDIS_NULL_LOST;
}

/* n's write or command connection, NULL while n is not up. */
static redisAsyncContext *link_of(struct gw_rnode *n, int wr)
{
    return wr ? gw_node_wr(n->node) : gw_node_cmd(n->node);
}

/* The script answered: with a WAIT to do, the reply waits for the WAIT of
 * its connection (gw_redis_wait.c), which covers this write. */
static void finish_or_wait(struct gw_rreq *q, redisReply *reply)
{
    if (!q->wcb || !reply || reply->type == REDIS_REPLY_ERROR || q->wait_n <= 0)
        finish(q, reply);
    else
        gw_redis_wait_add(q, reply);
}

static struct gw_rnode *target(struct gw_rreq *q)
{
    if (q->ask)
        return q->ask;
    if (q->any)
        return gw_redis_nodes_any_up(q->r);
    return q->r->slots[q->slot];
}

static void on_reply(struct gw_rreq *q, redisReply *reply);

static void on_script_reply(redisReply *reply, void *privdata)
{
    on_reply(privdata, reply);
}

static void on_cmd_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    (void)ac;
    on_reply(privdata, reply);
}

/* Returns 0 or RC_E_UNAVAILABLE / RC_E_INTERNAL (nothing sent). */
static int send_to(struct gw_rreq *q, struct gw_rnode *n)
{
    redisAsyncContext *ac = n && n->up ? link_of(n, q->wr) : NULL;
    if (!ac)
        return RC_E_UNAVAILABLE;
    if (q->ask) {
        if (redisAsyncCommand(ac, NULL, NULL, "ASKING") != REDIS_OK)
            return RC_E_UNAVAILABLE;
        q->ask = NULL;
    }
    q->sent_to = n;
    q->sent_ac = ac;
    if (q->wcb && q->wr && q->wait_n > 0)
        q->ack_seq = rc_ackbatch_sent(gw_node_wr_acks(n->node));
    if (q->s)
        return gw_script_call(q->s, ac, q->nkeys, q->argc, q->argv, q->argvlen, on_script_reply, q);
    return redisAsyncCommandArgv(ac, on_cmd_reply, q, q->argc, q->argv, q->argvlen) == REDIS_OK ? 0
                                                                                              : RC_E_UNAVAILABLE;
}

static void on_park_tick(uv_timer_t *t)
{
    gw_redis_route_retry_parked(t->data);
}

static void park(struct gw_rreq *q, uint64_t delay_ms)
{
    struct gw_redis *r = q->r;
    uint64_t now = uv_now(r->loop);
    if (!q->parked_at)
        q->parked_at = now;
    q->retry_at = now + delay_ms;
    q->next = r->parked;
    r->parked = q;
    if (!uv_is_active((uv_handle_t *)&r->park_timer))
        uv_timer_start(&r->park_timer, on_park_tick, PARK_TICK_MS, PARK_TICK_MS);
}

/* Sends q again (a redirect, or a retry after delay_ms), now when its
 * node is up, else parked until it is. Gives up (NULL) after MAX_HOPS
 * redirects, or once the command is older than the ping timeout. */
static void again(struct gw_rreq *q, uint64_t delay_ms, int redirect)
{
    struct gw_redis *r = q->r;
    if ((redirect && ++q->hops > MAX_HOPS) || r->stopped ||
        uv_now(r->loop) - q->born > (uint64_t)r->node_opts.ping_timeout_ms) {
        finish(q, NULL);
        return;
    }
    if (delay_ms == 0 && send_to(q, target(q)) == 0)
        return;
    park(q, delay_ms);
}

static void on_reply(struct gw_rreq *q, redisReply *reply)
{
    struct gw_redis *r = q->r;
    /* from here on it was answered (not run) or lost (unknown) */
    q->why = reply ? GW_REDIS_NULL_NOT_RUN : GW_REDIS_NULL_LOST;
    if (!reply || reply->type != REDIS_REPLY_ERROR || r->mode != GW_MODE_CLUSTER || r->stopped || !reply->str) {
        finish_or_wait(q, reply);
        return;
    }
    struct rc_redirect to;
    struct gw_rnode *n;
    switch (rc_slot_classify_error(reply->str, reply->len)) {
    case RC_REDIS_ERR_MOVED:
    case RC_REDIS_ERR_ASK:
        if (rc_slot_parse_redirect(reply->str, reply->len, &to) != 0 || to.slot >= RC_SLOTS) {
            finish(q, reply);
            return;
        }
        if (!to.host[0] && q->sent_to) /* no endpoint named: the host of the node that answered */
            snprintf(to.host, sizeof to.host, "%s", q->sent_to->host);
        n = gw_redis_nodes_find(r, to.host, to.port);
        if (!n)
            n = gw_redis_nodes_add(r, to.host, to.port, 0);
        if (!n) {
            finish(q, NULL);
            return;
        }
        if (to.kind == RC_REDIS_ERR_MOVED) {
            r->stats.moved++;
            if (r->slots[to.slot] != n) {
                if (r->slots[to.slot])
                    r->slots[to.slot]->nslots--;
                r->slots[to.slot] = n;
                n->nslots++;
            }
            gw_redis_nodes_refresh_soon(r, 0);
        } else {
            r->stats.ask++;
            q->ask = n;
            q->why = GW_REDIS_NULL_MOVING;
        }
        again(q, 0, 1);
        return;
    case RC_REDIS_ERR_TRYAGAIN:
        r->stats.tryagain++;
        q->why = GW_REDIS_NULL_MOVING;
        again(q, q->tryagains >= 3 ? TRYAGAIN_MAX_MS : (uint64_t)TRYAGAIN_MS << q->tryagains++, 0);
        return;
    case RC_REDIS_ERR_LOADING:
    case RC_REDIS_ERR_READONLY:
        gw_redis_nodes_refresh_soon(r, 0);
        again(q, NOT_READY_MS, 0);
        return;
    case RC_REDIS_ERR_CLUSTERDOWN:
    case RC_REDIS_ERR_MASTERDOWN:
        r->stats.clusterdown++;
        gw_redis_nodes_refresh_soon(r, 0);
        finish(q, NULL);
        return;
    default:
        finish_or_wait(q, reply);
        return;
    }
}

void gw_redis_route_retry_parked(struct gw_redis *r)
{
    struct gw_rreq *list = r->parked;
    r->parked = NULL;
    uint64_t now = uv_now(r->loop);
    while (list) {
        struct gw_rreq *q = list;
        list = q->next;
        q->next = NULL;
        if (r->stopped || now - q->born > (uint64_t)r->node_opts.ping_timeout_ms) {
            finish(q, NULL);
            continue;
        }
        if (now < q->retry_at || send_to(q, target(q)) != 0) {
            q->next = r->parked;
            r->parked = q;
        }
    }
    if (!r->parked && !r->stopped)
        uv_timer_stop(&r->park_timer);
}

void gw_redis_route_forget_node(struct gw_redis *r, struct gw_rnode *n)
{
    for (struct gw_rreq *q = r->parked; q; q = q->next)
        if (q->ask == n)
            q->ask = NULL;
}

void gw_redis_route_fail_parked(struct gw_redis *r)
{
    while (r->parked) {
        struct gw_rreq *q = r->parked;
        r->parked = q->next;
        finish(q, NULL);
    }
}

/* Single mode, a script: straight to the node, as before clusters. */
static int send_single_script(struct gw_redis *r, struct gw_script *s, int wr, int nkeys, int argc,
                              const char *const *argv, const size_t *argvlen, gw_redis_reply_cb *cb, void *privdata)
{
    struct gw_rnode *n = r->nodes;
    redisAsyncContext *ac = n && n->up ? link_of(n, wr) : NULL;
    if (!ac)
        return RC_E_UNAVAILABLE;
    return gw_script_call(s, ac, nkeys, argc, argv, argvlen, cb, privdata);
}

/* A request with copies of argv (one allocation), or NULL. */
static struct gw_rreq *new_req(struct gw_redis *r, struct gw_script *s, int nkeys, int argc, const char *const *argv,
                               const size_t *argvlen)
{
    size_t bytes = sizeof(struct gw_rreq) + (size_t)argc * (sizeof(char *) + sizeof(size_t));
    for (int i = 0; i < argc; i++)
        bytes += (argvlen ? argvlen[i] : strlen(argv[i])) + 1;
    struct gw_rreq *q = calloc(1, bytes);
    if (!q)
        return NULL;
    q->r = r;
    q->s = s;
    q->nkeys = nkeys;
    q->why = GW_REDIS_NULL_NOT_RUN; /* until it is sent */
    q->born = uv_now(r->loop);
    q->argc = argc;
    q->argv = (const char **)(q + 1);
    q->argvlen = (size_t *)(q->argv + argc);
    char *text = (char *)(q->argvlen + argc);
    for (int i = 0; i < argc; i++) {
        size_t len = argvlen ? argvlen[i] : strlen(argv[i]);
        memcpy(text, argv[i], len);
        text[len] = '\0';
        q->argv[i] = text;
        q->argvlen[i] = len;
        text += len + 1;
    }
    return q;
}

int gw_redis_route_send(struct gw_redis *r, struct gw_script *s, int wr, const char *key, size_t keylen, int nkeys,
                  int argc, const char *const *argv, const size_t *argvlen, gw_redis_reply_cb *cb, void *privdata)
{
    if (r->stopped || r->mode == GW_MODE_PROBING || argc <= 0)
        return RC_E_UNAVAILABLE;
    if (s && r->mode == GW_MODE_SINGLE)
        return send_single_script(r, s, wr, nkeys, argc, argv, argvlen, cb, privdata);
    if (s && !s->sha[0])
        return RC_E_INTERNAL;
    struct gw_rreq *q = new_req(r, s, nkeys, argc, argv, argvlen);
    if (!q)
        return RC_E_INTERNAL;
    q->cb = cb;
    q->privdata = privdata;
    q->wr = wr;
    q->any = key == NULL;
    q->slot = key ? rc_slot_of_key(key, keylen) : 0;
    int rc = send_to(q, target(q));
    if (rc != 0)
        free(q);
    return rc;
}

int gw_redis_route_send_wait(struct gw_redis *r, struct gw_script *s, int nkeys, int argc, const char *const *argv,
                       const size_t *argvlen, int nreplicas, int64_t timeout_ms, gw_redis_wait_cb *cb,
                       void *privdata)
{
    if (r->stopped || r->mode == GW_MODE_PROBING || argc < nkeys || nkeys < 1)
        return RC_E_UNAVAILABLE;
    if (!s->sha[0])
        return RC_E_INTERNAL;
    struct gw_rreq *q = new_req(r, s, nkeys, argc, argv, argvlen);
    if (!q)
        return RC_E_INTERNAL;
    q->wcb = cb;
    q->privdata = privdata;
    q->wr = 1;
    q->wait_n = nreplicas;
    q->wait_ms = timeout_ms;
    q->slot = rc_slot_of_key(argv[0], argvlen[0]);
    int rc = send_to(q, target(q));
    if (rc != 0)
        free(q);
    return rc;
}
