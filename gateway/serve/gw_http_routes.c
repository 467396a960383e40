/* gw_http_routes.c - the REST route table (PROTOCOL.md, "REST API"): the
 * one place that maps a method and a path to its handler, with the checks
 * every route shares (query, read rate, board and member names). */
#include <uv.h>
#include <libwebsockets.h>

#include "serve/gw_http_routes.h"

#include <string.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "gw_app.h"
#include "net/gw_peers.h"
#include "ops/gw_admin.h"
#include "serve/gw_http_debug.h"
#include "serve/gw_http_req.h"
#include "serve/gw_http_static.h"
#include "serve/gw_rest.h"
#include "rc_json_gate.h"
#include "rc_names.h"

/* Splits "/a/b/c" into up to max segments (in place). Returns the count. */
static int split(char *path, char **seg, int max)
{
    int n = 0;
    for (char *s = strtok(path, "/"); s && n < max + 1; s = strtok(NULL, "/"))
        seg[n++] = s;
    return n;
}

static void route_member(struct gw_http_req *q, const char *member, const char *what)
{
    if (!rc_member_name_valid(member, strlen(member))) {
        gw_http_respond_error(q, RC_E_BAD_REQUEST, "member must be 1..128 characters of [A-Za-z0-9_.:@-]");
        return;
    }
    if (strcmp(what, "profile") != 0) {
        gw_http_respond_error(q, RC_E_NOT_FOUND, "no such path");
        return;
    }
    struct rc_error err = {0, ""};
    if (q->method != LWSHUMETH_GET && q->method != LWSHUMETH_PUT) {
        gw_http_respond_error(q, RC_E_BAD_REQUEST, "use GET or PUT");
        return;
    }
    if (gw_op_authorize(q->app, &q->who, q->method == LWSHUMETH_PUT ? RC_SCOPE_WRITE : RC_SCOPE_READ, NULL, &err)) {
        gw_http_respond_error(q, err.code, err.msg);
        return;
    }
    if (q->method == LWSHUMETH_PUT) {
        gw_rest_profile_put(q, member);
        return;
    }
    gw_rest_profile_get(q, member);
}

/* Admin routes: DELETE .../members/{m}[?block=1], DELETE .../blocked/{m},
 * POST .../reverse {"req"}, POST .../reset; ?period= or "period" optional.
 * Returns 1 when q was one of them (answered or under way). */
static int route_admin(struct gw_http_req *q, char **seg, int n)
{
    struct rc_request r;
    struct rc_query qs = gw_http_query(q);
    memset(&r, 0, sizeof r);
    if (q->method == LWSHUMETH_DELETE && n == 3 && (!strcmp(seg[1], "members") || !strcmp(seg[1], "blocked"))) {
        r.op = !strcmp(seg[1], "members") ? RC_OP_REMOVE : RC_OP_UNBLOCK;
        if (!rc_member_name_valid(seg[2], strlen(seg[2]))) {
            gw_http_respond_error(q, RC_E_BAD_REQUEST, "member must be 1..128 characters of [A-Za-z0-9_.:@-]");
            return 1;
        }
        snprintf(r.member, sizeof r.member, "%s", seg[2]);
        r.block = rc_query_block(&qs);
    } else if (q->method == LWSHUMETH_POST && n == 2 && (!strcmp(seg[1], "reverse") || !strcmp(seg[1], "reset"))) {
        r.op = !strcmp(seg[1], "reverse") ? RC_OP_REVERSE : RC_OP_RESET;
        /* No body means {}; a body passes the same strict gate as a WebSocket message. */
        struct rc_error gate = {0, ""};
        cJSON *o = NULL;
        int gated = q->body_len ? rc_json_parse_strict(q->body, q->body_len, &o, &gate)
                    : (o = cJSON_CreateObject()) ? 0 : rc_error_set(&gate, RC_E_INTERNAL, "out of memory");
        if (gated < 0) {
            gw_http_respond_error(q, gate.code, gate.msg);
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
            gw_http_respond_error(q, RC_E_BAD_REQUEST, bad);
            return 1;
        }
    } else {
        return 0;
    }
    snprintf(r.board, sizeof r.board, "%s", seg[0]);
    const char *period = rc_query_get(&qs, "period");
    if (period && !r.period[0])
        snprintf(r.period, sizeof r.period, "%.*s", RC_PERIOD_SEL_MAX, period);
    q->refs++;
    gw_op_admin(q->app, &q->who, &r, gw_http_on_op_done, q);
    return 1;
}

static void route_board(struct gw_http_req *q, char **seg, int n)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    memset(&r, 0, sizeof r);
    if (!rc_board_name_valid(seg[0], strlen(seg[0]))) {
        gw_http_respond_error(q, RC_E_BAD_REQUEST, "board must be 1..64 characters of [A-Za-z0-9_.:-]");
        return;
    }
    if (route_admin(q, seg, n))
        return;
    if (q->method == LWSHUMETH_POST && n == 2 && strcmp(seg[1], "scores") == 0) {
        int code = rc_request_decode_write_body(seg[0], q->body ? q->body : "", q->body_len, &r, &err);
        if (code)
            gw_http_respond_error(q, code, err.msg);
        else {
            q->refs++;
            gw_op_write(q->app, &q->who, &r, gw_http_on_op_done, q);
        }
        rc_request_free(&r);
        return;
    }
    if (q->method != LWSHUMETH_GET) {
        gw_http_respond_error(q, RC_E_NOT_FOUND, "no such path for this method");
        return;
    }
    if (!rc_board_name_valid(seg[0], strlen(seg[0]))) {
        gw_http_respond_error(q, RC_E_BAD_REQUEST, "board must be 1..64 characters of [A-Za-z0-9_.:-]");
        return;
    }
    snprintf(r.board, sizeof r.board, "%s", seg[0]);
    if (n == 1) {
        struct rc_query qs = gw_http_query(q);
        if (rc_query_view(&qs, &r, &err)) {
            gw_http_respond_error(q, err.code, err.msg);
            return;
        }
        q->refs++;
        gw_op_snapshot(q->app, &q->who, &r, gw_http_on_op_done, q);
    } else if (n == 3 && strcmp(seg[1], "members") == 0) {
        struct rc_query qs = gw_http_query(q);
        const char *period = rc_query_get(&qs, "period");
        if (!rc_member_name_valid(seg[2], strlen(seg[2]))) {
            gw_http_respond_error(q, RC_E_BAD_REQUEST, "member must be 1..128 characters of [A-Za-z0-9_.:@-]");
            return;
        }
        snprintf(r.member, sizeof r.member, "%s", seg[2]);
        if (period) /* at most RC_PERIOD_SEL_MAX: route() checked */
            snprintf(r.period, sizeof r.period, "%.*s", RC_PERIOD_SEL_MAX, period);
        q->refs++;
        gw_op_rank(q->app, &q->who, &r, gw_http_on_op_done, q);
    } else {
        gw_http_respond_error(q, RC_E_NOT_FOUND, "no such path");
    }
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

/* Dispatches a complete request (body received). */
void gw_http_route(struct gw_http_req *q)
{
    char path[sizeof q->path], *seg[8];
    struct rc_query qs = gw_http_query(q);
    struct rc_error err = {0, ""};
    if (q->too_large) {
        gw_http_respond_error(q, RC_E_TOO_LARGE, "request body exceeds max_frame");
        return;
    }
    if (rc_query_check(&qs, &err)) {
        gw_http_respond_error(q, err.code, err.msg);
        return;
    }
    memcpy(path, q->path, sizeof path);
    int n = split(path, seg, 7);
    if (n == 1 && strcmp(seg[0], "healthz") == 0)
        gw_rest_health(q);
    else if (n == 1 && strcmp(seg[0], "metrics") == 0)
        gw_rest_metrics(q);
    else if (n >= 3 && strcmp(seg[0], "api") == 0 && strcmp(seg[1], "v1") == 0) {
        /* Every API read takes a token from its address's read bucket. */
        if (q->method == LWSHUMETH_GET && read_limited(q, &err)) {
            gw_http_respond_error(q, err.code, err.msg);
            return;
        }
        if (n == 3 && strcmp(seg[2], "boards") == 0 && q->method == LWSHUMETH_GET) {
            if (gw_op_authorize(q->app, &q->who, RC_SCOPE_READ, NULL, &err))
                gw_http_respond_error(q, err.code, err.msg);
            else
                gw_rest_boards(q);
        }
        else if (n >= 4 && n <= 6 && strcmp(seg[2], "boards") == 0)
            route_board(q, seg + 3, n - 3);
        else if (n == 5 && strcmp(seg[2], "members") == 0)
            route_member(q, seg[3], seg[4]);
        else if (n == 4 && strcmp(seg[2], "debug") == 0 && strcmp(seg[3], "clock") == 0)
            gw_http_debug_clock(q);
        else
            gw_http_respond_error(q, RC_E_NOT_FOUND, "no such path");
    } else if (q->method == LWSHUMETH_GET || q->method == LWSHUMETH_HEAD) {
        gw_http_static(q);
    } else {
        gw_http_respond_error(q, RC_E_NOT_FOUND, "no such path");
    }
}
