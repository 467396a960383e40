/* gw_rest_status.c - what the gateway says of itself over HTTP: /healthz
 * (200 or 503, and with the admin scope or metrics_public the Redis nodes
 * and queue consumers) and /metrics (the Prometheus text; in a worker group
 * the whole group's), and the publishing of this worker's counters. */
#include "serve/gw_rest_status.h"

#include <uv.h>
#include <libwebsockets.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_group.h"
#include "base/gw_metrics.h"
#include "fanout/gw_fanout.h"
#include "jobs/gw_queue.h"
#include "serve/gw_peers.h"
#include "redis/gw_redis.h"
#include "serve/gw_http_req.h"
#include "rc_hostport.h"

/* "host:port" ("[host]:port" for an IPv6 literal), malloc'd; NULL when out
 * of memory. */
static char *node_name(const char *host, int port)
{
    int n = rc_hostport_format(NULL, 0, host, port);
    char *name = n < 0 ? NULL : malloc((size_t)n + 1);
    if (name)
        rc_hostport_format(name, (size_t)n + 1, host, port);
    return name;
}

/* 0 when q may see what /metrics and the detailed /healthz tell (Redis
 * node addresses, last errors, queue consumers): [server] metrics_public,
 * or a caller with the admin scope. Else the code, with err filled
 * (PROTOCOL.md v1.2, "Metrics and health"). */
static int details_refused(struct gw_http_req *q, struct rc_error *err)
{
    if (q->app->conf->metrics_public)
        return 0;
    return gw_ops_authorize(q->app, &q->who, RC_SCOPE_ADMIN, NULL, err);
}

/* One node of gw_redis_node_info as a /healthz entry, added to list.
 * Returns 0 or -1 (out of memory). */
static int health_node(cJSON *list, const struct gw_redis_node_info *ni)
{
    char *name = node_name(ni->host, ni->port);
    cJSON *o = cJSON_CreateObject();
    int ok = name && o && cJSON_AddStringToObject(o, "node", name) && cJSON_AddBoolToObject(o, "up", ni->up) &&
             cJSON_AddNumberToObject(o, "slots", ni->primary_slots) &&
             cJSON_AddNumberToObject(o, "reconnects", (double)ni->reconnects) &&
             cJSON_AddNumberToObject(o, "failures", (double)ni->failures) &&
             cJSON_AddStringToObject(o, "last_error", ni->last_error ? ni->last_error : "");
    free(name);
    if (!ok || !cJSON_AddItemToArray(list, o)) {
        cJSON_Delete(o);
        return -1;
    }
    return 0;
}

/* The queued boards as /healthz entries (added to list); *why gets the first
 * board whose oldest entry is older than its queue_lag_max. Returns 0 or -1
 * (out of memory). */
static int health_queues(const struct gw_app *app, cJSON *list, char *why, size_t cap)
{
    struct gw_queue_stats st;
    for (size_t i = 0; gw_queue_stats(app, i, &st) == 0; i++) {
        int lagging = st.known && st.oldest_age_ms > st.lag_max_ms;
        cJSON *o = cJSON_CreateObject();
        int ok = o && cJSON_AddStringToObject(o, "board", st.board) && cJSON_AddBoolToObject(o, "known", st.known) &&
                 cJSON_AddNumberToObject(o, "length", (double)st.length) &&
                 cJSON_AddNumberToObject(o, "oldest_age_ms", (double)st.oldest_age_ms) &&
                 cJSON_AddNumberToObject(o, "lag_max_ms", (double)st.lag_max_ms) &&
                 cJSON_AddBoolToObject(o, "lagging", lagging) && cJSON_AddBoolToObject(o, "consumer", st.owner);
        if (!ok || !cJSON_AddItemToArray(list, o)) {
            cJSON_Delete(o);
            return -1;
        }
        if (lagging && !why[0])
            snprintf(why, cap, "the write queue of board %s lags: its oldest unapplied entry is %lld ms old "
                     "(queue_lag_max %lld ms)", st.board, (long long)st.oldest_age_ms, (long long)st.lag_max_ms);
    }
    return 0;
}

/* The fields single-Redis clients read ("ok", "redis", "scripts",
 * "keyspace_events": unchanged), then "mode" ("single", "cluster", or
 * "unknown" before any seed answered), "nodes" (every server held, with its
 * slots and last error), and when there is one "why" (not healthy),
 * "warning" (a seed left out) and "keyspace" ("missing": keyspace
 * notifications are off on a server; "unknown": nobody could tell);
 * "test_clock": true when [server] test_clock is on (its clock may be
 * moved: never so in production). */
void gw_rest_status_health(struct gw_http_req *q, const struct gw_rest_target *t)
{
    (void)t;
    struct gw_redis *r = q->app->redis;
    int up = gw_redis_is_up(r);
    int events = r && gw_redis_keyspace_ok(r) == 1;
    int cluster = r ? gw_redis_is_cluster(r) : -1;
    const char *why = r && !up ? gw_redis_why_down(r) : "";
    const char *warning = r ? gw_redis_warning(r) : "";
    cJSON *o = cJSON_CreateObject(), *nodes = NULL, *queues = NULL;
    char *json = NULL, lag_why[256] = "";
    int ok = o && cJSON_AddBoolToObject(o, "ok", up) && cJSON_AddStringToObject(o, "redis", up ? "up" : "down") &&
             cJSON_AddStringToObject(o, "scripts", up ? "loaded" : "unknown") &&
             cJSON_AddBoolToObject(o, "keyspace_events", events) &&
             cJSON_AddStringToObject(o, "mode", cluster == 1 ? "cluster" : cluster == 0 ? "single" : "unknown") &&
             (nodes = cJSON_AddArrayToObject(o, "nodes")) != NULL;
    struct gw_redis_node_info ni;
    for (size_t i = 0; ok && r && gw_redis_node_info(r, i, &ni) == 0; i++)
        ok = health_node(nodes, &ni) == 0;
    if (ok && q->app->queue)
        ok = (queues = cJSON_AddArrayToObject(o, "queues")) != NULL &&
             health_queues(q->app, queues, lag_why, sizeof lag_why) == 0;
    int healthy = up && !lag_why[0];
    struct rc_error err = {0, ""};
    if (ok && details_refused(q, &err)) {
        /* the bare status: what a load balancer needs, nothing an attacker can use */
        cJSON_Delete(o);
        json = strdup(healthy ? "{\"ok\":true}" : "{\"ok\":false}");
        gw_http_req_respond(q, healthy ? 200 : 503, "application/json", json);
        return;
    }
    if (ok && !healthy)
        cJSON_ReplaceItemInObject(o, "ok", cJSON_CreateFalse());
    if (ok && !(why && why[0]) && lag_why[0])
        why = lag_why;
    if (ok && why && why[0])
        ok = cJSON_AddStringToObject(o, "why", why) != NULL;
    if (ok && warning && warning[0])
        ok = cJSON_AddStringToObject(o, "warning", warning) != NULL;
    /* only when up and not confirmed on: the healthy answer keeps its shape */
    if (ok && up && !events)
        ok = cJSON_AddStringToObject(o, "keyspace", gw_redis_keyspace_ok(r) == 0 ? "missing" : "unknown") != NULL;
    if (ok && q->app->conf->test_clock)
        ok = cJSON_AddTrueToObject(o, "test_clock") != NULL;
    if (ok)
        json = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    gw_http_req_respond(q, healthy ? 200 : 503, "application/json", json);
}

/* The Redis side of /metrics: counters from gw_redis_get_stats and one entry
 * per node. *nodes (*count entries, each name malloc'd) is the caller's to
 * free with free_nodes, whatever the result. Returns 0 or -1 (out of
 * memory). */
static int gather_redis(struct gw_redis *r, struct gw_metrics_redis *rs, struct gw_metrics_node **nodes,
                        size_t *count)
{
    struct gw_redis_stats st;
    struct gw_redis_node_info ni;
    size_t n = 0;
    memset(rs, 0, sizeof *rs);
    *nodes = NULL;
    *count = 0;
    if (!r)
        return 0;
    gw_redis_get_stats(r, &st);
    while (gw_redis_node_info(r, n, &ni) == 0)
        n++;
    if (n && !(*nodes = calloc(n, sizeof **nodes)))
        return -1;
    *count = n;
    for (size_t i = 0; i < n && gw_redis_node_info(r, i, &ni) == 0; i++) {
        struct gw_metrics_node *m = &(*nodes)[i];
        if (!(m->name = node_name(ni.host, ni.port)))
            return -1;
        m->up = ni.up;
        m->slots = ni.primary_slots;
        m->reconnects = ni.reconnects;
        m->failures = ni.failures;
    }
    rs->failures = st.failures;
    rs->moved = st.moved;
    rs->ask = st.ask;
    rs->tryagain = st.tryagain;
    rs->clusterdown = st.clusterdown;
    rs->refreshes = st.refreshes;
    rs->nodes = st.nodes;
    rs->node = *nodes;
    rs->nnodes = n;
    return 0;
}

static void free_nodes(struct gw_metrics_node *nodes, size_t n)
{
    for (size_t i = 0; nodes && i < n; i++)
        free((char *)nodes[i].name);
    free(nodes);
}

/* The queued boards' queues for /metrics (malloc'd, *n of them; NULL when
 * there are none or no memory). */
static struct gw_metrics_queue *gather_queues(const struct gw_app *app, size_t *n)
{
    struct gw_queue_stats st;
    size_t k = 0;
    while (gw_queue_stats(app, k, &st) == 0)
        k++;
    *n = 0;
    struct gw_metrics_queue *out = k ? calloc(k, sizeof *out) : NULL;
    for (size_t i = 0; out && i < k && gw_queue_stats(app, i, &st) == 0; i++) {
        out[i].board = st.board;
        out[i].known = st.known;
        out[i].length = st.length > 0 ? (uint64_t)st.length : 0;
        out[i].oldest_age_s = (double)st.oldest_age_ms / 1000.0;
        out[i].lag_max_s = (double)st.lag_max_ms / 1000.0;
        out[i].owner = st.owner;
        *n = i + 1;
    }
    return out;
}

void gw_rest_status_publish(struct gw_app *app)
{
    struct gw_metrics *m = &app->metrics;
    m->sockets = gw_peers_open(app->peers);
    m->sockets_refused = gw_peers_refused(app->peers);
    m->handshakes_refused = gw_peers_handshakes_refused(app->peers);
    m->sockets_timed_out = gw_peers_timed_out(app->peers);
    if (app->group)
        gw_group_publish(app->group, app->worker, (long)getpid(), gw_redis_is_up(app->redis), app->worker_restarts, m);
}

/* A group's render: the sum of every worker's slot (this worker's fresh),
 * redis_up 1 only when every running worker has Redis, and per-worker
 * series. Returns the text (malloc'd) or NULL. */
static char *render_group(struct gw_app *app, const struct gw_metrics_redis *rs, size_t *len)
{
    unsigned n = gw_group_size(app->group);
    struct gw_group_worker *each = calloc(n, sizeof *each);
    struct gw_metrics_worker *w = calloc(n, sizeof *w);
    struct gw_metrics sum;
    char *text = NULL;
    if (each && w) {
        gw_group_read_all(app->group, each, &sum);
        int up = 1;
        for (unsigned i = 0; i < n; i++) {
            w[i] = (struct gw_metrics_worker){i, each[i].pid, each[i].redis_up, each[i].restarts, &each[i].m};
            if (each[i].pid > 0 && !each[i].redis_up)
                up = 0;
        }
        text = gw_metrics_render(&sum, up, up, rs, w, n, len);
    }
    free(each);
    free(w);
    return text;
}

void gw_rest_status_metrics(struct gw_http_req *q, const struct gw_rest_target *t)
{
    (void)t;
    size_t len, nnodes;
    int up = gw_redis_is_up(q->app->redis);
    struct gw_metrics_redis rs;
    struct gw_metrics_node *nodes;
    char *text = NULL;
    struct rc_error err = {0, ""};
    if (details_refused(q, &err)) {
        gw_http_req_respond_error(q, err.code, err.msg);
        return;
    }
    gw_rest_status_publish(q->app);
    size_t nq = 0;
    struct gw_metrics_queue *queues = gather_queues(q->app, &nq);
    if (gather_redis(q->app->redis, &rs, &nodes, &nnodes) == 0) {
        rs.queue = queues;
        rs.nqueues = nq;
        text = q->app->group ? render_group(q->app, &rs, &len)
                             : gw_metrics_render(&q->app->metrics, up, up, &rs, NULL, 0, &len);
    }
    free_nodes(nodes, nnodes);
    free(queues);
    gw_http_req_respond(q, text ? 200 : 500, "text/plain; version=0.0.4", text);
}

/* ---- handed to the ops layer ------------------------------------------- */
