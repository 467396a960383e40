/* gw_http.c - the REST API, /healthz and /metrics (PROTOCOL.md, "REST API").
 *
 * lws calls us with a request's method and path (LWS_CALLBACK_HTTP), then the
 * body in pieces, then BODY_COMPLETION. We route it, start the operation and
 * return; the answer may come later from Redis. Then we ask for a writeable
 * callback and write the headers and, on the next one, the body. A request
 * object is refcounted because the client may hang up while Redis is busy:
 * the late answer then finds wsi == NULL and is dropped.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <uv.h>
#include <libwebsockets.h>

#include "serve/gw_http.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>
#include <hiredis/hiredis.h>

#include "ops/gw_admin.h"
#include "gw_app.h"
#include "fanout/gw_fanout.h"
#include "base/gw_log.h"
#include "ops/gw_ops.h"
#include "net/gw_peers.h"
#include "store/gw_profile.h"
#include "redis/gw_redis.h"
#include "net/gw_urlarg.h"
#include "rc_keys.h"
#include "rc_names.h"

struct gw_http_req {
    unsigned refs;
    struct gw_app *app;
    struct lws *wsi;              /* NULL once the client is gone */
    int method;                   /* LWSHUMETH_* */
    char path[600];
    char *body;
    size_t body_len;
    int too_large;
    int routed;                   /* complete and dispatched: lws must not hand it over again */
    int pipelined;                /* the client sent more before this was answered (see write_now) */
    int answered;                 /* the answer is written */
    int close_now;                /* answer impossible (a file that failed to open): hang up */
    struct gw_caller who;         /* from the Authorization header */
    /* the answer */
    int ready;
    int headers_sent;
    unsigned status;
    const char *ctype;
    unsigned char *out;           /* LWS_PRE headroom, then the body */
    size_t out_len;
};

static void req_unref(struct gw_http_req *q)
{
    if (q && --q->refs == 0) {
        free(q->body);
        free(q->out);
        free(q);
    }
}

/* Every answer closes its connection ("connection: close"): lws 4.1 reads
 * a next request on a kept-alive connection out of its own input buffer,
 * and there it replays, garbles (a request's headers handed over as its
 * body) or reads freed memory (found by tests/fuzz/sockfuzz.sh). REST
 * clients open a connection per request; viewers use the WebSocket. */
static int write_headers(struct lws *wsi, struct gw_http_req *q)
{
    unsigned char hdr[LWS_PRE + 512], *p = hdr + LWS_PRE, *end = hdr + sizeof hdr - 1;
    if (lws_add_http_common_headers(wsi, q->status, q->ctype, q->out_len, &p, end) ||
        lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:", (const unsigned char *)"no-store",
                                    8, &p, end) ||
        lws_add_http_header_by_name(wsi, (const unsigned char *)"connection:", (const unsigned char *)"close", 5, &p,
                                    end) ||
        lws_finalize_write_http_header(wsi, hdr + LWS_PRE, &p, end))
        return -1;
    q->headers_sent = 1;
    return 0;
}

/* Pipelining. lws 4.1 cannot hold a request back while an earlier one on the
 * same connection is being answered: a request pipelined behind a POST makes
 * lws hand the POST's BODY_COMPLETION over again on every loop turn (two
 * pipelined POSTs froze the gateway at 100 % CPU), and once a pipelined
 * request is itself parsed from lws' input buffer, lws_http_action feeds the
 * rest of that buffer back in a loop that never ends while a body waits for
 * its answer. One pipelined behind any other request is parsed at once,
 * replacing it in lws' header table. Rx flow control stops lws' own replays,
 * but it also stops its writeable callbacks on an HTTP connection. So a
 * connection seen pipelining stops reading, gets the answer it was waiting
 * for written at once (outside a writeable callback), and is closed: the
 * client sends the rest again on a new connection, as HTTP/1.1 allows (RFC
 * 9112, 9.3.2). Browsers, curl and Node do not pipeline. */
static void write_now(struct gw_http_req *q)
{
    struct lws *wsi = q->wsi;
    if (q->answered || !q->ready)
        return;
    q->answered = 1;
    if (write_headers(wsi, q) == 0)
        lws_write(wsi, q->out + LWS_PRE, q->out_len, LWS_WRITE_HTTP_FINAL);
    lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

static void pipelined(struct gw_http_req *q)
{
    if (q->pipelined || !q->wsi)
        return;
    q->pipelined = 1;
    lws_rx_flow_control(q->wsi, 0);
    write_now(q); /* when its answer is already there; else respond() does */
}

/* Takes ownership of text (malloc'd, NUL-terminated) as the response body. */
static void respond(struct gw_http_req *q, unsigned status, const char *ctype, char *text)
{
    size_t len = text ? strlen(text) : 0;
    q->out = malloc(LWS_PRE + len + 1);
    if (q->out) {
        memcpy(q->out + LWS_PRE, text ? text : "", len);
        q->out_len = len;
    } else {
        status = 500;
        q->out_len = 0;
    }
    free(text);
    q->status = status;
    q->ctype = ctype;
    q->ready = 1;
    if (q->wsi && q->pipelined)
        write_now(q);
    else if (q->wsi)
        lws_callback_on_writable(q->wsi);
}

static void respond_json(struct gw_http_req *q, int code, char *json)
{
    respond(q, (unsigned)rc_code_http_status(code), "application/json", json);
}

static void respond_error(struct gw_http_req *q, int code, const char *message)
{
    respond_json(q, code, gw_op_error(q->app, NULL, code, message));
}

/* gw_op_done for REST: the op's JSON is the body. */
static void on_op_done(void *privdata, int code, char *json)
{
    struct gw_http_req *q = privdata;
    respond_json(q, code, json);
    req_unref(q);
}

/* ---- query strings ----------------------------------------------------------- */

/* The longest query value any route reads (a member name, a period, a
 * token); route() refuses a request with a longer one before anything
 * reads it, so no value is ever cut or taken for absent. */
#define QUERY_VALUE_MAX 255

/* Value of query arg `name` (without '='), or NULL when absent. buf must
 * hold QUERY_VALUE_MAX + 1 bytes. */
static const char *arg(struct lws *wsi, const char *name, char *buf)
{
    return gw_urlarg(wsi, name, buf, QUERY_VALUE_MAX + 1) >= 0 ? buf : NULL;
}

/* 1 when some query argument is longer than QUERY_VALUE_MAX. */
static int query_too_long(struct lws *wsi)
{
    for (int i = 0;; i++) {
        int n = lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, i);
        if (n <= 0)
            return 0;
        if (n > QUERY_VALUE_MAX)
            return 1;
    }
}

/* A query integer in lo..hi: digits only. Returns 0, 1 when absent, -1 bad. */
static int arg_int(struct lws *wsi, const char *name, long lo, long hi, uint32_t *out)
{
    char buf[QUERY_VALUE_MAX + 1];
    const char *v = arg(wsi, name, buf);
    if (!v)
        return 1;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (*v < '0' || *v > '9' || *end || errno || n < lo || n > hi)
        return -1;
    *out = (uint32_t)n;
    return 0;
}

/* Fills r->view (and r->period) from ?top=N | ?offset=O&limit=L |
 * ?around=M&radius=R, and ?period=. No view at all means top 10. */
static int view_from_query(struct lws *wsi, struct rc_request *r, struct rc_error *err)
{
    char buf[QUERY_VALUE_MAX + 1];
    int top = arg_int(wsi, "top", 1, RC_VIEW_MAX_ROWS, &r->view.limit);
    int offset = arg_int(wsi, "offset", 0, 2147483647L, &r->view.offset);
    int limit = arg_int(wsi, "limit", 1, RC_VIEW_MAX_ROWS, &r->view.limit);
    const char *around = arg(wsi, "around", buf);
    if (top < 0 || offset < 0 || limit < 0)
        return rc_error_set(err, RC_E_BAD_REQUEST, "top and limit must be integers 1..%d, offset 0..2147483647",
                            RC_VIEW_MAX_ROWS);
    if (top == 0) {
        r->view.kind = RC_VIEW_TOP;
        arg_int(wsi, "top", 1, RC_VIEW_MAX_ROWS, &r->view.limit);
    } else if (around) {
        if (!rc_member_name_valid(around, strlen(around)))
            return rc_error_set(err, RC_E_BAD_REQUEST, "around must be a member name");
        r->view.kind = RC_VIEW_AROUND;
        snprintf(r->view.around, sizeof r->view.around, "%s", around);
        r->view.radius = 5;
        if (arg_int(wsi, "radius", 0, RC_VIEW_MAX_RADIUS, &r->view.radius) < 0)
            return rc_error_set(err, RC_E_BAD_REQUEST, "radius must be an integer 0..%d", RC_VIEW_MAX_RADIUS);
    } else if (offset == 0 || limit == 0) {
        r->view.kind = RC_VIEW_PAGE;
        if (offset != 0)
            r->view.offset = 0;
        if (limit != 0)
            r->view.limit = 10;
    } else {
        r->view.kind = RC_VIEW_TOP;
        r->view.limit = 10;
    }
    const char *period = arg(wsi, "period", buf);
    if (period) {
        if (strlen(period) > RC_PERIOD_SEL_MAX)
            return rc_error_set(err, RC_E_BAD_REQUEST, "period is too long");
        snprintf(r->period, sizeof r->period, "%s", period);
    }
    return 0;
}

/* ---- routes -------------------------------------------------------------------- */

/* Splits "/a/b/c" into up to max segments (in place). Returns the count. */
static int split(char *path, char **seg, int max)
{
    int n = 0;
    for (char *s = strtok(path, "/"); s && n < max + 1; s = strtok(NULL, "/"))
        seg[n++] = s;
    return n;
}

static void get_boards(struct gw_http_req *q)
{
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
        if (!b->layout.nfields && b->decay.kind == RC_DECAY_NONE) {
            cJSON_AddNumberToObject(o, "points_min", (double)b->layout.points_min);
            cJSON_AddNumberToObject(o, "points_max", (double)b->layout.points_max);
        }
    }
    char *json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    respond_json(q, json ? 0 : RC_E_INTERNAL, json);
}

static void on_profile_read(redisAsyncContext *ac, void *r, void *privdata)
{
    struct gw_http_req *q = privdata;
    redisReply *reply = r;
    (void)ac;
    if (!reply || reply->type != REDIS_REPLY_ARRAY) {
        respond_error(q, reply ? RC_E_INTERNAL : RC_E_UNAVAILABLE, reply ? "profile read failed" : "Redis is unreachable");
    } else {
        cJSON *o = cJSON_CreateObject();
        for (size_t i = 0; i + 1 < reply->elements; i += 2)
            cJSON_AddStringToObject(o, reply->element[i]->str, reply->element[i + 1]->str);
        char *json = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        respond_json(q, 0, json);
    }
    req_unref(q);
}

static void on_profile_written(redisAsyncContext *ac, void *r, void *privdata)
{
    struct gw_http_req *q = privdata;
    redisReply *reply = r;
    (void)ac;
    if (!reply || reply->type != REDIS_REPLY_ARRAY)
        respond_error(q, reply ? RC_E_INTERNAL : RC_E_UNAVAILABLE, reply ? "profile write failed" : "Redis is unreachable");
    else
        respond_json(q, 0, strdup(q->body));
    req_unref(q);
}

/* PUT /api/v1/members/{m}/profile: the body replaces the profile. */
static void put_profile(struct gw_http_req *q, const char *member)
{
    struct rc_kv kv[GW_PROFILE_MAX_FIELDS];
    unsigned n = 0;
    struct rc_error gate = {0, ""};
    cJSON *o = NULL;
    /* the same strict gate as a WebSocket message: "a\u0000b" must not be
     * stored as "a", nor a duplicate key as whichever copy cJSON kept */
    if (rc_json_parse_strict(q->body ? q->body : "", q->body_len, &o, &gate) < 0) {
        respond_error(q, gate.code, gate.msg);
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
    redisAsyncContext *ac = gw_redis_cmd(q->app->redis);
    char key[RC_KEY_MAX];
    if (bad || rc_profile_key(key, sizeof key, member)) {
        respond_error(q, RC_E_BAD_REQUEST, bad ? bad : "member name too long");
    } else if (!ac) {
        respond_error(q, RC_E_UNAVAILABLE, "Redis is unreachable: nothing was written");
    } else {
        /* Replace, atomically: MULTI, DEL, HSET, EXEC on one connection. */
        const char *argv[2 + 2 * GW_PROFILE_MAX_FIELDS];
        argv[0] = "HSET";
        argv[1] = key;
        for (unsigned i = 0; i < n; i++) {
            argv[2 + 2 * i] = kv[i].key;
            argv[3 + 2 * i] = kv[i].value;
        }
        redisAsyncCommand(ac, NULL, NULL, "MULTI");
        redisAsyncCommand(ac, NULL, NULL, "DEL %s", key);
        if (n)
            redisAsyncCommandArgv(ac, NULL, NULL, 2 + 2 * (int)n, argv, NULL);
        q->refs++;
        if (redisAsyncCommand(ac, on_profile_written, q, "EXEC") != REDIS_OK) {
            q->refs--;
            respond_error(q, RC_E_UNAVAILABLE, "Redis is unreachable");
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

static void route_member(struct gw_http_req *q, const char *member, const char *what)
{
    char key[RC_KEY_MAX];
    if (!rc_member_name_valid(member, strlen(member))) {
        respond_error(q, RC_E_BAD_REQUEST, "member must be 1..128 characters of [A-Za-z0-9_.:@-]");
        return;
    }
    if (strcmp(what, "profile") != 0) {
        respond_error(q, RC_E_NOT_FOUND, "no such path");
        return;
    }
    struct rc_error err = {0, ""};
    if (q->method != LWSHUMETH_GET && q->method != LWSHUMETH_PUT) {
        respond_error(q, RC_E_BAD_REQUEST, "use GET or PUT");
        return;
    }
    if (gw_op_authorize(q->app, &q->who, q->method == LWSHUMETH_PUT ? RC_SCOPE_WRITE : RC_SCOPE_READ, NULL, &err)) {
        respond_error(q, err.code, err.msg);
        return;
    }
    if (q->method == LWSHUMETH_PUT) {
        put_profile(q, member);
        return;
    }
    redisAsyncContext *ac = gw_redis_cmd(q->app->redis);
    if (!ac || rc_profile_key(key, sizeof key, member)) {
        respond_error(q, RC_E_UNAVAILABLE, "Redis is unreachable");
        return;
    }
    q->refs++;
    if (redisAsyncCommand(ac, on_profile_read, q, "HGETALL %s", key) != REDIS_OK) {
        q->refs--;
        respond_error(q, RC_E_UNAVAILABLE, "Redis is unreachable");
    }
}

/* Admin routes: DELETE .../members/{m}[?block=1], DELETE .../blocked/{m},
 * POST .../reverse {"req"}, POST .../reset; ?period= or "period" optional.
 * Returns 1 when q was one of them (answered or under way). */
static int route_admin(struct gw_http_req *q, char **seg, int n)
{
    struct rc_request r;
    char buf[QUERY_VALUE_MAX + 1];
    memset(&r, 0, sizeof r);
    if (q->method == LWSHUMETH_DELETE && n == 3 && (!strcmp(seg[1], "members") || !strcmp(seg[1], "blocked"))) {
        r.op = !strcmp(seg[1], "members") ? RC_OP_REMOVE : RC_OP_UNBLOCK;
        if (!rc_member_name_valid(seg[2], strlen(seg[2]))) {
            respond_error(q, RC_E_BAD_REQUEST, "member must be 1..128 characters of [A-Za-z0-9_.:@-]");
            return 1;
        }
        snprintf(r.member, sizeof r.member, "%s", seg[2]);
        const char *block = arg(q->wsi, "block", buf);
        r.block = block && (!strcmp(block, "1") || !strcmp(block, "true"));
    } else if (q->method == LWSHUMETH_POST && n == 2 && (!strcmp(seg[1], "reverse") || !strcmp(seg[1], "reset"))) {
        r.op = !strcmp(seg[1], "reverse") ? RC_OP_REVERSE : RC_OP_RESET;
        /* No body means {}; a body passes the same strict gate as a WebSocket message. */
        struct rc_error gate = {0, ""};
        cJSON *o = NULL;
        int gated = q->body_len ? rc_json_parse_strict(q->body, q->body_len, &o, &gate)
                    : (o = cJSON_CreateObject()) ? 0 : rc_error_set(&gate, RC_E_INTERNAL, "out of memory");
        if (gated < 0) {
            respond_error(q, gate.code, gate.msg);
            return 1;
        }
        const cJSON *req = cJSON_GetObjectItemCaseSensitive(o, "req");
        const cJSON *per = cJSON_GetObjectItemCaseSensitive(o, "period");
        const char *bad = !cJSON_IsObject(o) ? "body must be a JSON object" : NULL;
        if (!bad && r.op == RC_OP_REVERSE &&
            (!cJSON_IsString(req) || !rc_req_valid(req->valuestring, strlen(req->valuestring))))
            bad = "req must be the request id (1..64 printable characters) of the write to reverse";
        if (!bad && per && (!cJSON_IsString(per) || strlen(per->valuestring) > RC_PERIOD_SEL_MAX))
            bad = "period must be a string";
        if (!bad && cJSON_IsString(req))
            snprintf(r.req, sizeof r.req, "%s", req->valuestring);
        if (!bad && cJSON_IsString(per))
            snprintf(r.period, sizeof r.period, "%s", per->valuestring);
        cJSON_Delete(o);
        if (bad) {
            respond_error(q, RC_E_BAD_REQUEST, bad);
            return 1;
        }
    } else {
        return 0;
    }
    snprintf(r.board, sizeof r.board, "%s", seg[0]);
    const char *period = arg(q->wsi, "period", buf);
    if (period && !r.period[0])
        snprintf(r.period, sizeof r.period, "%.*s", RC_PERIOD_SEL_MAX, period);
    q->refs++;
    gw_op_admin(q->app, &q->who, &r, on_op_done, q);
    return 1;
}

static void route_board(struct gw_http_req *q, char **seg, int n)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    memset(&r, 0, sizeof r);
    if (!rc_board_name_valid(seg[0], strlen(seg[0]))) {
        respond_error(q, RC_E_BAD_REQUEST, "board must be 1..64 characters of [A-Za-z0-9_.:-]");
        return;
    }
    if (route_admin(q, seg, n))
        return;
    if (q->method == LWSHUMETH_POST && n == 2 && strcmp(seg[1], "scores") == 0) {
        int code = rc_request_decode_write_body(seg[0], q->body ? q->body : "", q->body_len, &r, &err);
        if (code)
            respond_error(q, code, err.msg);
        else {
            q->refs++;
            gw_op_write(q->app, &q->who, &r, on_op_done, q);
        }
        rc_request_free(&r);
        return;
    }
    if (q->method != LWSHUMETH_GET) {
        respond_error(q, RC_E_NOT_FOUND, "no such path for this method");
        return;
    }
    if (!rc_board_name_valid(seg[0], strlen(seg[0]))) {
        respond_error(q, RC_E_BAD_REQUEST, "board must be 1..64 characters of [A-Za-z0-9_.:-]");
        return;
    }
    snprintf(r.board, sizeof r.board, "%s", seg[0]);
    if (n == 1) {
        if (view_from_query(q->wsi, &r, &err)) {
            respond_error(q, err.code, err.msg);
            return;
        }
        q->refs++;
        gw_op_snapshot(q->app, &q->who, &r, on_op_done, q);
    } else if (n == 3 && strcmp(seg[1], "members") == 0) {
        char buf[QUERY_VALUE_MAX + 1];
        const char *period = arg(q->wsi, "period", buf);
        if (!rc_member_name_valid(seg[2], strlen(seg[2]))) {
            respond_error(q, RC_E_BAD_REQUEST, "member must be 1..128 characters of [A-Za-z0-9_.:@-]");
            return;
        }
        snprintf(r.member, sizeof r.member, "%s", seg[2]);
        if (period) /* at most RC_PERIOD_SEL_MAX: route() checked */
            snprintf(r.period, sizeof r.period, "%.*s", RC_PERIOD_SEL_MAX, period);
        q->refs++;
        gw_op_rank(q->app, &q->who, &r, on_op_done, q);
    } else {
        respond_error(q, RC_E_NOT_FOUND, "no such path");
    }
}

static void get_health(struct gw_http_req *q)
{
    int up = gw_redis_is_up(q->app->redis);
    char *json = malloc(160);
    if (json)
        snprintf(json, 160, "{\"ok\":%s,\"redis\":\"%s\",\"scripts\":\"%s\",\"keyspace_events\":%s}",
                 up ? "true" : "false", up ? "up" : "down", up ? "loaded" : "unknown",
                 gw_redis_keyspace_ok(q->app->redis) == 1 ? "true" : "false");
    respond(q, up ? 200 : 503, "application/json", json);
}

static void get_metrics(struct gw_http_req *q)
{
    size_t len;
    int up = gw_redis_is_up(q->app->redis);
    struct gw_metrics *m = &q->app->metrics;
    m->sockets = gw_peers_open(q->app->peers);
    m->sockets_refused = gw_peers_refused(q->app->peers);
    m->sockets_timed_out = gw_peers_timed_out(q->app->peers);
    respond(q, 200, "text/plain; version=0.0.4", gw_metrics_render(&q->app->metrics, up, up, &len));
}

/* POST /api/v1/debug/clock {"offset_ms": N} or {"now_ms": T}: shifts the
 * gateway's clock. Only with [server] test_clock = on, and only for the admin
 * scope: tests cross period boundaries and decay windows without waiting. */
static void debug_clock(struct gw_http_req *q)
{
    struct rc_error err = {0, ""};
    if (!q->app->conf->test_clock || q->method != LWSHUMETH_POST) {
        respond_error(q, RC_E_NOT_FOUND, "no such path");
        return;
    }
    if (gw_op_authorize(q->app, &q->who, RC_SCOPE_ADMIN, NULL, &err)) {
        respond_error(q, err.code, err.msg);
        return;
    }
    cJSON *o = NULL;
    if (rc_json_parse_strict(q->body ? q->body : "", q->body_len, &o, &err) < 0) {
        respond_error(q, err.code, err.msg);
        return;
    }
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(o, "offset_ms");
    const cJSON *now = cJSON_GetObjectItemCaseSensitive(o, "now_ms");
    if (cJSON_IsNumber(off) && fabs(off->valuedouble) < 1e15) {
        q->app->clock.offset_ms = (int64_t)off->valuedouble;
    } else if (cJSON_IsNumber(now) && now->valuedouble > 0 && now->valuedouble < 1e15) {
        q->app->clock.offset_ms += (int64_t)now->valuedouble - gw_now_ms(q->app);
    } else {
        cJSON_Delete(o);
        respond_error(q, RC_E_BAD_REQUEST, "give {\"offset_ms\": N} or {\"now_ms\": T}");
        return;
    }
    cJSON_Delete(o);
    char *json = malloc(96);
    if (json)
        snprintf(json, 96, "{\"now_ms\":%lld,\"offset_ms\":%lld}", (long long)gw_now_ms(q->app),
                 (long long)q->app->clock.offset_ms);
    gw_log_warn("test clock: offset now %lld ms", (long long)q->app->clock.offset_ms);
    respond_json(q, 0, json);
}

/* 1 (err filled) when the request's address has no read token left. */
static int read_limited(struct gw_http_req *q, struct rc_error *err)
{
    const struct rc_conf *c = q->app->conf;
    struct rc_bucket *b = q->wsi ? gw_peer_read_bucket(q->wsi) : NULL;
    if (!b || rc_bucket_take(b, c->ip_read_rate, c->ip_read_burst, (int64_t)uv_now(q->app->loop)))
        return 0;
    q->app->metrics.reads_limited++;
    rc_error_set(err, RC_E_RATE_LIMITED, "too many reads from this address (ip_read_rate %u/s)", c->ip_read_rate);
    return 1;
}

/* The dashboard's files: a path under web_root, resolved with realpath so
 * neither ".." nor a symlink leads out of it (404 instead). */
static void serve_static(struct gw_http_req *q)
{
    char want[PATH_MAX], real[PATH_MAX], root[PATH_MAX];
    const char *rel = q->path[0] == '/' ? q->path + 1 : q->path;
    int n = snprintf(want, sizeof want, "%s/%s%s", q->app->conf->web_root, rel,
                     !*rel || rel[strlen(rel) - 1] == '/' ? "index.html" : "");
    struct stat st;
    if (n < 0 || (size_t)n >= sizeof want || !realpath(q->app->conf->web_root, root) || !realpath(want, real) ||
        strncmp(real, root, strlen(root)) != 0 || real[strlen(root)] != '/' || stat(real, &st) != 0 ||
        !S_ISREG(st.st_mode)) {
        respond_error(q, RC_E_NOT_FOUND, "no such path");
        return;
    }
    const char *mime = lws_get_mimetype(real, NULL);
    /* lws sends it and reports LWS_CALLBACK_HTTP_FILE_COMPLETION */
    if (lws_serve_http_file(q->wsi, real, mime ? mime : "application/octet-stream", NULL, 0) < 0)
        q->close_now = 1;
}

/* Dispatches a complete request (body received). */
static void route(struct gw_http_req *q)
{
    char path[sizeof q->path], *seg[8], buf[QUERY_VALUE_MAX + 1];
    struct rc_error err = {0, ""};
    if (q->too_large) {
        respond_error(q, RC_E_TOO_LARGE, "request body exceeds max_frame");
        return;
    }
    if (q->wsi && query_too_long(q->wsi)) {
        respond_error(q, RC_E_BAD_REQUEST, "a query argument is too long");
        return;
    }
    const char *period = q->wsi ? arg(q->wsi, "period", buf) : NULL;
    if (period && strlen(period) > RC_PERIOD_SEL_MAX) {
        respond_error(q, RC_E_BAD_REQUEST, "period is too long");
        return;
    }
    memcpy(path, q->path, sizeof path);
    int n = split(path, seg, 7);
    if (n == 1 && strcmp(seg[0], "healthz") == 0)
        get_health(q);
    else if (n == 1 && strcmp(seg[0], "metrics") == 0)
        get_metrics(q);
    else if (n >= 3 && strcmp(seg[0], "api") == 0 && strcmp(seg[1], "v1") == 0) {
        /* Every API read takes a token from its address's read bucket. */
        if (q->method == LWSHUMETH_GET && read_limited(q, &err)) {
            respond_error(q, err.code, err.msg);
            return;
        }
        if (n == 3 && strcmp(seg[2], "boards") == 0 && q->method == LWSHUMETH_GET) {
            if (gw_op_authorize(q->app, &q->who, RC_SCOPE_READ, NULL, &err))
                respond_error(q, err.code, err.msg);
            else
                get_boards(q);
        }
        else if (n >= 4 && n <= 6 && strcmp(seg[2], "boards") == 0)
            route_board(q, seg + 3, n - 3);
        else if (n == 5 && strcmp(seg[2], "members") == 0)
            route_member(q, seg[3], seg[4]);
        else if (n == 4 && strcmp(seg[2], "debug") == 0 && strcmp(seg[3], "clock") == 0)
            debug_clock(q);
        else
            respond_error(q, RC_E_NOT_FOUND, "no such path");
    } else if (q->method == LWSHUMETH_GET || q->method == LWSHUMETH_HEAD) {
        serve_static(q);
    } else {
        respond_error(q, RC_E_NOT_FOUND, "no such path");
    }
}

/* ---- the lws side -------------------------------------------------------------- */

static void release(struct gw_http_pss *pss)
{
    if (pss->req) {
        pss->req->wsi = NULL;
        req_unref(pss->req);
        pss->req = NULL;
    }
}

/* The request is complete: answer it (now or when Redis replies). lws
 * calling again for a request already dispatched means the client
 * pipelined a request behind it. */
static int dispatch(struct gw_http_req *q)
{
    if (q->routed) {
        /* Once: stop lws' replays from its input list. Again at once: lws
         * is replaying from inside its own loop (lws_http_action), which
         * only a close ends; an answer not there yet is then lost with
         * the connection, and the client retries (RFC 9112, 9.3.2). */
        if (q->pipelined)
            return -1;
        pipelined(q);
        return 0;
    }
    q->routed = 1;
    q->refs++; /* route() may end in lws closing the connection (a HEAD of a file), which releases q */
    route(q);
    int rc = q->close_now ? -1 : 0;
    req_unref(q);
    return rc;
}

static int on_http(struct lws *wsi, struct gw_http_pss *pss, struct gw_app *app)
{
    char *uri;
    int len;
    if (pss->req && !pss->req->answered) {
        /* the previous request is still being answered: pipelining */
        pipelined(pss->req);
        return 0;
    }
    release(pss); /* keep-alive: the previous request on this connection is done */
    gw_peer_headers_done(wsi);
    if (gw_peer_refused(wsi)) {
        /* accepted over max_conns or max_conns_per_ip: told so, then closed */
        lws_return_http_status(wsi, HTTP_STATUS_SERVICE_UNAVAILABLE,
                               "too many connections (max_conns or max_conns_per_ip)");
        return -1;
    }
    int method = lws_http_get_uri_and_method(wsi, &uri, &len);
    struct gw_http_req *q = calloc(1, sizeof *q);
    if (!q)
        return -1;
    q->refs = 1;
    q->app = app;
    q->wsi = wsi;
    q->method = method;
    snprintf(q->path, sizeof q->path, "%.*s", len < 0 ? 0 : len, uri ? uri : "");
    pss->req = q;
    char auth[RC_SECRET_MAX + 16];
    int n = gw_header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, auth, sizeof auth);
    if (n > 0)
        gw_op_identify(app, auth, (size_t)n, 1, &q->who.key, &q->who.bad_token);
    else if (n != GW_URLARG_ABSENT)
        q->who.bad_token = 1; /* empty or too long to be any key: a bad credential, never "none" */
    memset(auth, 0, sizeof auth);
    /* A POST or PUT that announces a length, even 0, is dispatched from
     * BODY_COMPLETION: lws calls it for "Content-Length: 0" too, and a
     * request dispatched twice would look pipelined. */
    if ((method == LWSHUMETH_POST || method == LWSHUMETH_PUT) &&
        lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0) {
        gw_peer_body_expected(wsi);
        return 0; /* the body follows */
    }
    return dispatch(q);
}

/* 1 when a body's first bytes are a request line ("POST /..."): lws 4.1
 * parses a request pipelined behind one it already answered from its
 * input list, and then feeds that list again from its start as the body
 * (lws_http_action), so the body it hands over is the request's own
 * headers. No JSON body starts that way. */
static int refed_headers(const char *in, size_t len)
{
    static const char *const methods[] = {"GET /", "POST /", "PUT /", "DELETE /", "HEAD /", "OPTIONS /", "PATCH /"};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        size_t n = strlen(methods[i]);
        if (len >= n && memcmp(in, methods[i], n) == 0)
            return 1;
    }
    return 0;
}

static int on_body(struct gw_http_req *q, const char *in, size_t len)
{
    size_t max = q->app->conf->max_frame;
    if (!len)
        return 0;
    if (q->body_len == 0 && refed_headers(in, len))
        return -1; /* a pipelined request lws cannot give us whole: close, the client retries */
    if (gw_peer_body_late(q->wsi))
        return -1; /* body_timeout is a total: a late chunk closes the connection */
    if (q->too_large || q->body_len + len > max) {
        q->too_large = 1;
        return 0;
    }
    char *b = realloc(q->body, q->body_len + len + 1);
    if (!b)
        return -1;
    memcpy(b + q->body_len, in, len);
    q->body = b;
    q->body_len += len;
    q->body[q->body_len] = '\0';
    return 0;
}

static int on_writeable(struct lws *wsi, struct gw_http_req *q)
{
    if (!q || !q->ready)
        return 0;
    if (q->answered)
        return 0;
    if (!q->headers_sent) {
        if (write_headers(wsi, q))
            return -1;
        lws_callback_on_writable(wsi);
        return 0;
    }
    if (lws_write(wsi, q->out + LWS_PRE, q->out_len, LWS_WRITE_HTTP_FINAL) != (int)q->out_len)
        return -1;
    q->answered = 1; /* written: nothing more for this request */
    return -1;       /* one request per connection (see write_headers) */
}

int gw_http_callback(struct lws *wsi, enum lws_callback_reasons reason, struct gw_http_pss *pss, void *in,
                     size_t len, struct gw_app *app)
{
    switch (reason) {
    case LWS_CALLBACK_HTTP:
        return on_http(wsi, pss, app);
    case LWS_CALLBACK_HTTP_BODY:
        /* a body behind a pipelined request belongs to a request we never
         * take: close rather than let lws loop over it */
        return pss->req && !pss->req->pipelined ? on_body(pss->req, in, len) : -1;
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        gw_peer_body_done(wsi);
        return pss->req ? dispatch(pss->req) : -1;
    case LWS_CALLBACK_HTTP_WRITEABLE:
        return on_writeable(wsi, pss->req);
    case LWS_CALLBACK_HTTP_FILE_COMPLETION:
        if (pss->req)
            pss->req->answered = 1;
        return -1; /* one request per connection (see write_headers) */
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
    case LWS_CALLBACK_CLOSED_HTTP:
        release(pss);
        return 0;
    default:
        return 0;
    }
}
