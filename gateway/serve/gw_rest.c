/* gw_rest.c - the REST handlers, one per route of gw_http_routes.c: the
 * board list, /healthz, /metrics and member profiles answered here; scores,
 * snapshots, ranks and admin actions turned into a struct rc_request and
 * handed to the ops layer, which answers through gw_http_on_op_done. */
#include "serve/gw_rest.h"

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
#include "ops/gw_admin.h"
#include "ops/gw_freeze.h"
#include "ops/gw_get.h"
#include "ops/gw_stats.h"
#include "net/gw_peers.h"
#include "redis/gw_redis.h"
#include "serve/gw_http_req.h"
#include "store/gw_profile.h"
#include "rc_hostport.h"
#include "rc_json_gate.h"
#include "rc_keys.h"
#include "rc_names.h"

void gw_rest_boards(struct gw_http_req *q, const struct gw_rest_target *t)
{
    (void)t;
    static const char *const ops[] = {"incr", "set", "best", "submit"};
    static const char *const decays[] = {"none", "buckets", "scale"};
    cJSON *root = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(root, "boards");
    for (size_t i = 0; i < q->app->conf->nboards; i++) {
        const struct rc_board *b = &q->app->conf->boards[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(list, o);
        cJSON_AddStringToObject(o, "name", b->name);
        cJSON_AddBoolToObject(o, "template", b->is_template);
        cJSON_AddStringToObject(o, "order", b->layout.order == RC_ORDER_DESC ? "desc" : "asc");
        cJSON_AddStringToObject(o, "period", rc_period_kind_name(b->period.kind));
        cJSON *a = cJSON_AddArrayToObject(o, "ops");
        for (unsigned k = 0; k < 4; k++)
            if (b->ops & (1u << k))
                cJSON_AddItemToArray(a, cJSON_CreateString(ops[k]));
        cJSON *f = cJSON_AddArrayToObject(o, "fields");
        for (unsigned k = 0; k < b->layout.nfields; k++)
            cJSON_AddItemToArray(f, cJSON_CreateString(b->layout.fields[k].name));
        cJSON_AddStringToObject(o, "decay", decays[b->decay.kind]);
        cJSON_AddStringToObject(o, "write_mode", b->queue.mode == RC_WRITE_QUEUED ? "queued" : "direct");
        cJSON_AddNumberToObject(o, "shards", b->shards); /* 1: not split (docs/sharded.md) */
        if (!b->layout.nfields && b->decay.kind == RC_DECAY_NONE) {
            cJSON_AddNumberToObject(o, "points_min", (double)b->layout.points_min);
            cJSON_AddNumberToObject(o, "points_max", (double)b->layout.points_max);
        }
        /* team boards (docs/teams.md): which feeds which, for pages */
        if (b->teams[0])
            cJSON_AddStringToObject(o, "teams", b->teams);
        if (b->team_of[0])
            cJSON_AddStringToObject(o, "team_of", b->team_of);
    }
    char *json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    gw_http_respond_json(q, json ? 0 : RC_E_INTERNAL, json);
}

static void on_profile_read(redisReply *reply, void *privdata)
{
    struct gw_http_req *q = privdata;
    if (!reply || reply->type != REDIS_REPLY_ARRAY) {
        gw_http_respond_error(q, reply ? RC_E_INTERNAL : RC_E_UNAVAILABLE, reply ? "profile read failed" : "Redis is unreachable");
    } else {
        cJSON *o = cJSON_CreateObject();
        for (size_t i = 0; i + 1 < reply->elements; i += 2)
            cJSON_AddStringToObject(o, reply->element[i]->str, reply->element[i + 1]->str);
        char *json = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        gw_http_respond_json(q, 0, json);
    }
    gw_http_req_unref(q);
}

static void on_profile_written(redisReply *reply, void *privdata)
{
    struct gw_http_req *q = privdata;
    if (!reply || reply->type != REDIS_REPLY_INTEGER)
        gw_http_respond_error(q, reply ? RC_E_INTERNAL : RC_E_UNAVAILABLE, reply ? "profile write failed" : "Redis is unreachable");
    else
        gw_http_respond_json(q, 0, strdup(q->body));
    gw_http_req_unref(q);
}

void gw_rest_profile_get(struct gw_http_req *q, const struct gw_rest_target *t)
{
    const char *member = t->member;
    char key[RC_KEY_MAX];
    if (!q->app->redis || rc_profile_key(key, sizeof key, member)) {
        gw_http_respond_error(q, RC_E_UNAVAILABLE, "Redis is unreachable");
        return;
    }
    const char *argv[] = {"HGETALL", key};
    q->refs++;
    if (gw_redis_command(q->app->redis, key, strlen(key), 2, argv, NULL, on_profile_read, q) != 0) {
        q->refs--;
        gw_http_respond_error(q, RC_E_UNAVAILABLE, "Redis is unreachable");
    }
}

void gw_rest_profile_put(struct gw_http_req *q, const struct gw_rest_target *t)
{
    const char *member = t->member;
    struct rc_kv kv[GW_PROFILE_MAX_FIELDS];
    unsigned n = 0;
    struct rc_error gate = {0, ""};
    cJSON *o = NULL;
    /* the same strict gate as a WebSocket message: "a\u0000b" must not be
     * stored as "a", nor a duplicate key as whichever copy cJSON kept */
    if (rc_json_parse_strict(q->body ? q->body : "", q->body_len, &o, &gate) < 0) {
        gw_http_respond_error(q, gate.code, gate.msg);
        return;
    }
    const cJSON *it;
    const char *bad = NULL;
    cJSON_ArrayForEach(it, o) {
        if (bad)
            break;
        if (n == GW_PROFILE_MAX_FIELDS)
            bad = "at most 16 profile fields";
        else if (!rc_field_name_valid(it->string, strlen(it->string)))
            bad = "profile field names are 1..32 of [a-z0-9_], starting with a letter";
        else if (!cJSON_IsString(it) || strlen(it->valuestring) > GW_PROFILE_MAX_VALUE)
            bad = "profile values must be strings of at most 256 bytes";
        else
            kv[n++] = (struct rc_kv){it->string, it->valuestring};
    }
    char key[RC_KEY_MAX];
    if (bad || rc_profile_key(key, sizeof key, member)) {
        gw_http_respond_error(q, RC_E_BAD_REQUEST, bad ? bad : "member name too long");
    } else {
        /* Replace, atomically: lua/profile_set.lua (DEL + HSET of the one key;
         * a script, not MULTI, so a cluster redirect can resend it whole). */
        const char *argv[1 + 2 * GW_PROFILE_MAX_FIELDS];
        size_t lens[1 + 2 * GW_PROFILE_MAX_FIELDS];
        argv[0] = key;
        for (unsigned i = 0; i < n; i++) {
            argv[1 + 2 * i] = kv[i].key;
            argv[2 + 2 * i] = kv[i].value;
        }
        for (unsigned i = 0; i < 1 + 2 * n; i++)
            lens[i] = strlen(argv[i]);
        q->refs++;
        int rc = q->app->redis ? gw_redis_eval(q->app->redis, &q->app->profile_script, 1, 1 + 2 * (int)n, argv, lens,
                                               on_profile_written, q)
                               : RC_E_UNAVAILABLE;
        if (rc != 0) {
            q->refs--;
            gw_http_respond_error(q, RC_E_UNAVAILABLE, "Redis is unreachable: nothing was written");
        } else {
            gw_profiles_put(q->app->profiles, member, kv, n);
            gw_fanout_profile_changed(q->app->fanout);
            /* keep the canonical body for the answer */
            char *canon = cJSON_PrintUnformatted(o);
            if (canon) {
                free(q->body);
                q->body = canon;
            }
        }
    }
    cJSON_Delete(o);
}

/* ---- /healthz and /metrics ------------------------------------------------ */

/* "host:port" ("[host]:port" for an IPv6 literal), malloc'd; NULL when out
 * of memory. */
static char *node_name(const char *host, int port)
{
    int n = rc_format_hostport(NULL, 0, host, port);
    char *name = n < 0 ? NULL : malloc((size_t)n + 1);
    if (name)
        rc_format_hostport(name, (size_t)n + 1, host, port);
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
    return gw_op_authorize(q->app, &q->who, RC_SCOPE_ADMIN, NULL, err);
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
void gw_rest_health(struct gw_http_req *q, const struct gw_rest_target *t)
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
        gw_http_respond(q, healthy ? 200 : 503, "application/json", json);
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
    gw_http_respond(q, healthy ? 200 : 503, "application/json", json);
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

void gw_rest_metrics_publish(struct gw_app *app)
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

void gw_rest_metrics(struct gw_http_req *q, const struct gw_rest_target *t)
{
    (void)t;
    size_t len, nnodes;
    int up = gw_redis_is_up(q->app->redis);
    struct gw_metrics_redis rs;
    struct gw_metrics_node *nodes;
    char *text = NULL;
    struct rc_error err = {0, ""};
    if (details_refused(q, &err)) {
        gw_http_respond_error(q, err.code, err.msg);
        return;
    }
    gw_rest_metrics_publish(q->app);
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
    gw_http_respond(q, text ? 200 : 500, "text/plain; version=0.0.4", text);
}

/* ---- handed to the ops layer ------------------------------------------- */

/* Hands r to op, which answers q through gw_http_on_op_done (one reference). */
static void to_op(struct gw_http_req *q, const struct rc_request *r,
                  void (*op)(struct gw_app *, const struct gw_caller *, const struct rc_request *, gw_op_done *, void *))
{
    q->refs++;
    op(q->app, &q->who, r, gw_http_on_op_done, q);
}

void gw_rest_write(struct gw_http_req *q, const struct gw_rest_target *t)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    int code = rc_request_decode_write_body(t->board, q->body ? q->body : "", q->body_len, &r, &err);
    if (code)
        gw_http_respond_error(q, code, err.msg);
    else
        to_op(q, &r, gw_op_write);
    rc_request_free(&r);
}

/* PUT .../members/{m}/team with {"team": ID|null} (docs/teams.md). */
void gw_rest_team(struct gw_http_req *q, const struct gw_rest_target *t)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    int code = rc_request_decode_team_body(t->board, t->member, q->body ? q->body : "", q->body_len, &r, &err);
    if (code)
        gw_http_respond_error(q, code, err.msg);
    else
        to_op(q, &r, gw_op_write);
    rc_request_free(&r);
}

void gw_rest_snapshot(struct gw_http_req *q, const struct gw_rest_target *t)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    struct rc_query qs = gw_http_query(q);
    memset(&r, 0, sizeof r);
    snprintf(r.board, sizeof r.board, "%s", t->board);
    if (rc_query_view(&qs, &r, &err)) {
        gw_http_respond_error(q, err.code, err.msg);
        rc_request_free(&r);
        return;
    }
    /* the present or a moment (?at_seq= / ?at=) of any view, rosters included */
    to_op(q, &r, gw_get_read);
    rc_request_free(&r); /* (a member list's names: the read copies them) */
}

/* ?period= (at most RC_PERIOD_SEL_MAX: rc_query_check saw to it) into r,
 * unless r has one already (from a body). */
static void query_period(struct gw_http_req *q, struct rc_request *r)
{
    struct rc_query qs = gw_http_query(q);
    const char *period = rc_query_get(&qs, "period");
    if (period && !r->period[0])
        snprintf(r->period, sizeof r->period, "%.*s", RC_PERIOD_SEL_MAX, period);
}

void gw_rest_rank(struct gw_http_req *q, const struct gw_rest_target *t)
{
    struct rc_request r;
    memset(&r, 0, sizeof r);
    snprintf(r.board, sizeof r.board, "%s", t->board);
    snprintf(r.member, sizeof r.member, "%s", t->member);
    query_period(q, &r);
    to_op(q, &r, gw_op_rank);
}

void gw_rest_history(struct gw_http_req *q, const struct gw_rest_target *t)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    struct rc_query qs = gw_http_query(q);
    memset(&r, 0, sizeof r);
    snprintf(r.board, sizeof r.board, "%s", t->board);
    snprintf(r.member, sizeof r.member, "%s", t->member);
    query_period(q, &r);
    if (rc_query_history(&qs, &r, &err))
        gw_http_respond_error(q, err.code, err.msg);
    else
        to_op(q, &r, gw_get_history);
}

void gw_rest_stats(struct gw_http_req *q, const struct gw_rest_target *t)
{
    struct rc_request r;
    memset(&r, 0, sizeof r);
    snprintf(r.board, sizeof r.board, "%s", t->board);
    query_period(q, &r);
    to_op(q, &r, gw_op_stats);
}

/* DELETE .../members/{m} (op RC_OP_REMOVE, ?block=1) or .../blocked/{m}. */
static void admin_member(struct gw_http_req *q, const struct gw_rest_target *t, enum rc_op op)
{
    struct rc_request r;
    struct rc_query qs = gw_http_query(q);
    memset(&r, 0, sizeof r);
    r.op = op;
    snprintf(r.board, sizeof r.board, "%s", t->board);
    snprintf(r.member, sizeof r.member, "%s", t->member);
    r.block = rc_query_block(&qs);
    query_period(q, &r);
    to_op(q, &r, gw_op_admin);
}

/* POST .../reverse, .../reset, .../freeze or .../reveal: the body through
 * the strict gate. */
static void admin_body(struct gw_http_req *q, const struct gw_rest_target *t, enum rc_op op)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    int code = rc_request_decode_admin_body(op, t->board, q->body, q->body_len, &r, &err);
    if (code) {
        gw_http_respond_error(q, code, err.msg);
        return;
    }
    query_period(q, &r);
    to_op(q, &r, op == RC_OP_FREEZE || op == RC_OP_REVEAL ? gw_op_freeze : gw_op_admin);
}

void gw_rest_remove(struct gw_http_req *q, const struct gw_rest_target *t)
{
    admin_member(q, t, RC_OP_REMOVE);
}

void gw_rest_unblock(struct gw_http_req *q, const struct gw_rest_target *t)
{
    admin_member(q, t, RC_OP_UNBLOCK);
}

void gw_rest_reverse(struct gw_http_req *q, const struct gw_rest_target *t)
{
    admin_body(q, t, RC_OP_REVERSE);
}

void gw_rest_reset(struct gw_http_req *q, const struct gw_rest_target *t)
{
    admin_body(q, t, RC_OP_RESET);
}

void gw_rest_freeze(struct gw_http_req *q, const struct gw_rest_target *t)
{
    admin_body(q, t, RC_OP_FREEZE);
}

void gw_rest_reveal(struct gw_http_req *q, const struct gw_rest_target *t)
{
    admin_body(q, t, RC_OP_REVEAL);
}

void gw_rest_freeze_state(struct gw_http_req *q, const struct gw_rest_target *t)
{
    struct rc_request r;
    memset(&r, 0, sizeof r);
    snprintf(r.board, sizeof r.board, "%s", t->board);
    query_period(q, &r);
    to_op(q, &r, gw_op_freeze_state);
}
