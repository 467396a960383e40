/* gw_redis_nodes.c - the front's node set (gw_redis_int.h): one gw_node per
 * server we talk to, the slot map read from CLUSTER SLOTS, and "covered"
 * (every key has an up primary), which drives the on_up/on_down hooks.
 *
 * The map is read after cluster mode is decided, soon after anything that
 * says it changed (MOVED, a node down, a sunsubscribe from the server), every
 * REFRESH_DOWN_MS while some slot has no up primary, and every
 * REFRESH_IDLE_MS otherwise. Applying it starts nodes for new primaries and
 * retires nodes that serve no slot (replicas, a failed primary now demoted);
 * seeds that are not primaries are retired too (once their first attempt
 * ended: a plain server or a bad name among them is still reported), and
 * started again only when no node at all is up to ask.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gw_log.h"
#include "rc_hostport.h"
#include "redis/gw_redis_int.h"
#include "redis/gw_slotmap.h"

#define REFRESH_DOWN_MS 250
#define REFRESH_IDLE_MS 5000

struct gw_rnode *gw_redis_nodes_find(struct gw_redis *r, const char *host, int port)
{
    for (struct gw_rnode *n = r->nodes; n; n = n->next)
        if (n->port == port && strcmp(n->host, host) == 0)
            return n;
    return NULL;
}

struct gw_rnode *gw_redis_nodes_add(struct gw_redis *r, const char *host, int port, int seed)
{
    struct gw_rnode *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->r = r;
    snprintf(n->host, sizeof n->host, "%s", host);
    n->port = port;
    n->seed = seed;
    struct gw_node_opts o = r->node_opts;
    o.host = n->host;
    o.port = port;
    struct gw_node_hooks h = r->node_hooks;
    h.data = n;
    n->node = gw_node_start(r->loop, &o, &h);
    if (!n->node) {
        free(n);
        return NULL;
    }
    for (size_t i = 0; i < r->nscripts; i++)
        gw_node_add_script(n->node, r->scripts[i]);
    for (size_t i = 0; i < r->npatterns; i++)
        gw_node_psubscribe(n->node, r->patterns[i]);
    n->next = r->nodes;
    r->nodes = n;
    r->stats.nodes++;
    return n;
}

void gw_redis_nodes_retire(struct gw_rnode *n)
{
    struct gw_redis *r = n->r;
    if (r->before_retire)
        r->before_retire(r, n);
    for (unsigned s = 0; s < RC_SLOTS; s++)
        if (r->slots[s] == n)
            r->slots[s] = NULL;
    for (struct gw_rnode **p = &r->nodes; *p; p = &(*p)->next)
        if (*p == n) {
            *p = n->next;
            break;
        }
    r->stats.nodes--;
    struct gw_node_stats st;
    gw_node_get_stats(n->node, &st);
    r->gone_reconnects += st.reconnects;
    r->gone_failures += st.failures;
    r->gone_resolutions += st.resolutions;
    /* pending callbacks run in here with NULL replies; n is unlinked already */
    gw_node_stop(n->node);
    free(n);
}

void gw_redis_nodes_stop_all(struct gw_redis *r)
{
    while (r->nodes)
        gw_redis_nodes_retire(r->nodes);
}

struct gw_rnode *gw_redis_nodes_any_up(struct gw_redis *r)
{
    for (struct gw_rnode *n = r->nodes; n; n = n->next)
        if (n->up)
            return n;
    return NULL;
}

/* ---- covered ---------------------------------------------------------- */

static int count_uncovered(const struct gw_redis *r, const struct gw_rnode **first_down)
{
    int missing = 0;
    *first_down = NULL;
    for (unsigned s = 0; s < RC_SLOTS; s++) {
        const struct gw_rnode *n = r->slots[s];
        if (!n || !n->up) {
            missing++;
            if (n && !*first_down)
                *first_down = n;
        }
    }
    return missing;
}

void gw_redis_nodes_check_covered(struct gw_redis *r)
{
    if (r->stopped)
        return;
    const struct gw_rnode *down = NULL;
    int missing = r->mode == GW_MODE_PROBING ? RC_SLOTS : count_uncovered(r, &down);
    if (missing == 0) {
        r->why[0] = '\0';
        if (!r->covered) {
            r->covered = 1;
            r->ever_covered = 1;
            if (r->mode == GW_MODE_CLUSTER)
                gw_log_info("redis cluster: every slot served (%lu nodes)", r->stats.nodes);
            if (r->hooks.on_up)
                r->hooks.on_up(r->hooks.data);
        }
        return;
    }
    if (r->mode == GW_MODE_PROBING) {
        /* the why is set by whoever knows (seed errors) */
    } else if (down) {
        char name[RC_HOSTPORT_NAME_MAX];
        rc_hostport_format(name, sizeof name, down->host, down->port);
        snprintf(r->why, sizeof r->why, "%d slots on %s, which is down: %s", missing, name,
                 gw_node_last_error(down->node)[0] ? gw_node_last_error(down->node) : "connecting");
    } else if (r->mode == GW_MODE_CLUSTER) {
        snprintf(r->why, sizeof r->why, "%d slots have no primary in the cluster's slot map%s", missing,
                 r->map_known ? "" : " (not read yet)");
    }
    if (r->covered) {
        r->covered = 0;
        if (r->hooks.on_down)
            r->hooks.on_down(r->hooks.data, r->why);
    }
    if (r->mode == GW_MODE_CLUSTER)
        gw_redis_nodes_refresh_soon(r, REFRESH_DOWN_MS);
}

/* ---- the slot map ----------------------------------------------------- */

static void on_refresh_timer(uv_timer_t *t);

/* A seed whose first attempt has not ended: neither up nor failed yet. It
 * is kept until it ends (and goes with a later map), so that a plain server
 * among the seeds is still reported (gw_redis.c, when it comes up) and a
 * seed that cannot be reached or resolved is still logged, whichever seed
 * answered first. */
static int first_attempt_pending(const struct gw_rnode *n)
{
    struct gw_node_stats st;
    if (!n->seed || n->up)
        return 0;
    gw_node_get_stats(n->node, &st);
    return st.failures == 0;
}

/* Applies a CLUSTER SLOTS answer got from asked. Returns 0 or -1 (the reply
 * was not a slot map; nothing changed). An empty host ("" or "?") means the
 * node we asked. */
static int apply_map(struct gw_redis *r, const redisReply *rep, const struct gw_rnode *asked)
{
    if (gw_slotmap_check(rep) != 0)
        return -1;
    for (struct gw_rnode *n = r->nodes; n; n = n->next)
        n->nslots = 0;
    memset(r->slots, 0, sizeof r->slots);
    for (size_t i = 0; i < rep->elements; i++) {
        struct gw_slotmap_range g;
        char host[GW_HOST_MAX];
        gw_slotmap_range(rep, i, asked->host, &g);
        snprintf(host, sizeof host, "%s", g.host);
        struct gw_rnode *n = gw_redis_nodes_find(r, host, g.port);
        if (!n && !(n = gw_redis_nodes_add(r, host, g.port, 0))) {
            gw_log_error("redis cluster: out of memory adding node %s:%d", host, g.port);
            continue;
        }
        for (unsigned s = g.start; s <= g.end; s++) {
            r->slots[s] = n;
            n->nslots++;
        }
    }
    r->map_known = 1;
    /* nodes that serve nothing go (after the loop: retiring unlinks) */
    for (struct gw_rnode *n = r->nodes, *next; n; n = next) {
        next = n->next;
        if (n->nslots == 0 && !first_attempt_pending(n))
            gw_redis_nodes_retire(n);
    }
    return 0;
}

static void on_slots(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct gw_rnode *asked = privdata;
    (void)ac;
    redisReply *rep = reply;
    struct gw_redis *r = asked->r; /* asked is valid here even when retiring: freed after its node stops */
    r->refreshing = 0;
    if (r->stopped)
        return;
    if (!rep) {
        /* the node went away before answering: ask another */
        gw_redis_nodes_refresh_soon(r, REFRESH_DOWN_MS);
        return;
    }
    if (rep->type == REDIS_REPLY_ERROR || apply_map(r, rep, asked) != 0) {
        gw_log_warn("redis cluster: CLUSTER SLOTS from %s:%d: %s", asked->host, asked->port,
                    rep->type == REDIS_REPLY_ERROR ? rep->str : "not a slot map");
    } else {
        r->stats.refreshes++;
        if (r->after_map)
            r->after_map(r);
    }
    gw_redis_nodes_check_covered(r);
    if (r->refresh_again) {
        r->refresh_again = 0;
        gw_redis_nodes_refresh_soon(r, 0);
    } else if (r->covered) {
        uv_timer_start(&r->refresh_timer, on_refresh_timer, REFRESH_IDLE_MS, 0);
    }
}

/* Asks an up node (one in the map first). With none up, starts the seeds
 * that are missing, and tries again later. */
static void refresh_now(struct gw_redis *r)
{
    if (r->stopped || r->mode != GW_MODE_CLUSTER)
        return;
    if (r->refreshing) {
        r->refresh_again = 1;
        return;
    }
    struct gw_rnode *ask = NULL;
    for (struct gw_rnode *n = r->nodes; n && !ask; n = n->next)
        if (n->up && n->nslots > 0)
            ask = n;
    if (!ask)
        ask = gw_redis_nodes_any_up(r);
    redisAsyncContext *ac = ask ? gw_node_cmd(ask->node) : NULL;
    if (!ac || redisAsyncCommand(ac, on_slots, ask, "CLUSTER SLOTS") != REDIS_OK) {
        for (size_t i = 0; i < r->nseeds; i++)
            if (!gw_redis_nodes_find(r, r->seeds[i].host, r->seeds[i].port))
                gw_redis_nodes_add(r, r->seeds[i].host, r->seeds[i].port, 1);
        uv_timer_start(&r->refresh_timer, on_refresh_timer, REFRESH_DOWN_MS, 0);
        return;
    }
    r->refreshing = 1;
}

static void on_refresh_timer(uv_timer_t *t)
{
    struct gw_redis *r = t->data;
    refresh_now(r);
    if (!r->refreshing && !r->stopped && r->covered)
        uv_timer_start(&r->refresh_timer, on_refresh_timer, REFRESH_IDLE_MS, 0);
}

void gw_redis_nodes_refresh_soon(struct gw_redis *r, uint64_t delay_ms)
{
    if (r->stopped || r->mode != GW_MODE_CLUSTER)
        return;
    if (r->refreshing) {
        r->refresh_again = 1;
        return;
    }
    if (uv_is_active((uv_handle_t *)&r->refresh_timer) && uv_timer_get_due_in(&r->refresh_timer) <= delay_ms)
        return;
    uv_timer_start(&r->refresh_timer, on_refresh_timer, delay_ms, 0);
}
