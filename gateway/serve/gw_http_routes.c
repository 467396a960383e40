/* gw_http_routes.c - the REST route table (PROTOCOL.md, "REST API"): the
 * one place that maps a method and a path to its handler, with the checks
 * every route shares (body size, query, read rate, names in the path, scope).
 *
 * A request is answered in this order, which clients see in the error they
 * get when several things are wrong at once:
 *   1. a body over max_frame (413), then a bad query (400);
 *   2. its area (areas[]): the most specific prefix whose segment count
 *      fits. Under /api/v1/ every GET takes a token from its address's read
 *      bucket (429 when empty), then the names in the area's prefix are
 *      checked ({b} under /api/v1/boards/{b}/..., 400 whatever follows);
 *   3. the first row of routes[] with this path and method; none: the area's
 *      miss answer (its first entry that fits the method);
 *   4. the row's other names ({m} of .../members/{m}), then its scope when
 *      the row's handler has no board to check it against (RT_OP_SCOPE: the
 *      ops layer checks the scope per board after decoding), then the row's
 *      handler. */
#include "serve/gw_http_routes.h"

#include <uv.h>
#include <libwebsockets.h>


#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gw_app.h"
#include "serve/gw_peers.h"
#include "serve/gw_http_debug.h"
#include "serve/gw_http_req.h"
#include "serve/gw_http_static.h"
#include "serve/gw_rest.h"
#include "serve/gw_rest_status.h"
#include "rc_auth.h"
#include "rc_names.h"
#include "rc_query.h"
#include "rc_registry.h"

#define MAX_SEGS 8 /* a longer path matches no route: its first 8 segments are looked at */

/* Methods as a set. */
#define RM_GET (1u << 0)
#define RM_HEAD (1u << 1)
#define RM_POST (1u << 2)
#define RM_PUT (1u << 3)
#define RM_DELETE (1u << 4)
#define RM_OTHER (1u << 5) /* OPTIONS, PATCH, ... (no route takes them) */
#define RM_ANY (~0u)

/* Row flags. */
#define RT_OP_SCOPE (1u << 0)   /* the ops layer checks .scope for the board, after decoding */
#define RT_TEST_CLOCK (1u << 1) /* the row exists only with [server] test_clock = on */

struct route {
    unsigned methods;  /* RM_* */
    const char *path;  /* segments; {b} a board name, {m} a member name */
    unsigned scope;    /* RC_SCOPE_* the caller needs, 0 for none */
    unsigned flags;    /* RT_* */
    gw_rest_fn *fn;
};

static gw_rest_fn debug_clock, static_file;

/* One row per REST route of PROTOCOL.md. */
static const struct route routes[] = {
    {RM_ANY, "/healthz", 0, 0, gw_rest_status_health},
    {RM_ANY, "/metrics", 0, 0, gw_rest_status_metrics},
    {RM_GET, "/api/v1/boards", RC_SCOPE_READ, 0, gw_rest_boards},
    {RM_GET, "/api/v1/boards/{b}", RC_SCOPE_READ, RT_OP_SCOPE, gw_rest_snapshot},
    {RM_POST, "/api/v1/boards/{b}/scores", RC_SCOPE_WRITE, RT_OP_SCOPE, gw_rest_write},
    {RM_GET, "/api/v1/boards/{b}/members/{m}", RC_SCOPE_READ, RT_OP_SCOPE, gw_rest_rank},
    {RM_GET, "/api/v1/boards/{b}/stats", RC_SCOPE_READ, RT_OP_SCOPE, gw_rest_stats},
    {RM_GET, "/api/v1/members/{m}/profile", RC_SCOPE_READ, 0, gw_rest_profile_get},
    {RM_PUT, "/api/v1/members/{m}/profile", RC_SCOPE_WRITE, 0, gw_rest_profile_put},
    {RM_DELETE, "/api/v1/boards/{b}/members/{m}", RC_SCOPE_ADMIN, RT_OP_SCOPE, gw_rest_remove},
    {RM_PUT, "/api/v1/boards/{b}/members/{m}/team", RC_SCOPE_WRITE, RT_OP_SCOPE, gw_rest_team},
    {RM_GET, "/api/v1/boards/{b}/members/{m}/history", RC_SCOPE_READ, RT_OP_SCOPE, gw_rest_history},
    {RM_DELETE, "/api/v1/boards/{b}/blocked/{m}", RC_SCOPE_ADMIN, RT_OP_SCOPE, gw_rest_unblock},
    {RM_POST, "/api/v1/boards/{b}/reverse", RC_SCOPE_ADMIN, RT_OP_SCOPE, gw_rest_reverse},
    {RM_POST, "/api/v1/boards/{b}/reset", RC_SCOPE_ADMIN, RT_OP_SCOPE, gw_rest_reset},
    {RM_POST, "/api/v1/boards/{b}/freeze", RC_SCOPE_ADMIN, RT_OP_SCOPE, gw_rest_freeze},
    {RM_POST, "/api/v1/boards/{b}/reveal", RC_SCOPE_ADMIN, RT_OP_SCOPE, gw_rest_reveal},
    {RM_GET, "/api/v1/boards/{b}/freeze", RC_SCOPE_ADMIN, RT_OP_SCOPE, gw_rest_freeze_state},
    {RM_POST, "/api/v1/debug/clock", RC_SCOPE_ADMIN, RT_TEST_CLOCK, debug_clock},
};

/* What an area answers when no row takes the request: the first entry whose
 * methods hold the request's (and, with if_path, only when some row has the
 * path for another method); an error, or a handler. */
struct miss {
    unsigned methods;
    int if_path;
    int code;
    const char *msg;
    gw_rest_fn *fn;
};

/* Area flags. */
#define RA_READ_TOKEN (1u << 0) /* a GET takes a token from the address's read bucket */

struct area {
    const char *prefix;
    unsigned min_more, max_more; /* segments the path has after the prefix */
    unsigned flags;              /* RA_* */
    struct miss miss[2];
};

#define NO_PATH(m) {m, 0, RC_E_NOT_FOUND, "no such path", NULL}

/* Most specific first; the last takes every path. */
static const struct area areas[] = {
    {"/api/v1/boards/{b}/members/{m}/team", 0, 0, RA_READ_TOKEN,
     {{RM_ANY, 1, RC_E_NOT_FOUND, "no such path for this method", NULL}, NO_PATH(RM_ANY)}},
    {"/api/v1/boards/{b}/members/{m}/history", 0, 0, RA_READ_TOKEN,
     {{RM_ANY, 1, RC_E_NOT_FOUND, "no such path for this method", NULL}, NO_PATH(RM_ANY)}},
    {"/api/v1/boards/{b}", 0, 2, RA_READ_TOKEN,
     {NO_PATH(RM_GET), {RM_ANY, 0, RC_E_NOT_FOUND, "no such path for this method", NULL}}},
    {"/api/v1/members/{m}", 1, 1, RA_READ_TOKEN,
     {{RM_ANY, 1, RC_E_BAD_REQUEST, "use GET or PUT", NULL}, NO_PATH(RM_ANY)}},
    {"/api/v1", 1, UINT_MAX, RA_READ_TOKEN, {NO_PATH(RM_ANY)}},
    {"", 0, UINT_MAX, 0, {{RM_GET | RM_HEAD, 0, 0, NULL, static_file}, NO_PATH(RM_ANY)}},
};

/* A name in a path: how to check it, and the 400 when it fails. */
struct name_rule {
    const char *placeholder;
    int (*valid)(const char *s, size_t len);
    const char *msg;
    size_t slot; /* where in struct gw_rest_target the name goes */
};

static const struct name_rule names[] = {
    {"{b}", rc_names_board_name_valid, "board must be 1..64 characters of [A-Za-z0-9_.:-]",
     offsetof(struct gw_rest_target, board)},
    {"{m}", rc_names_member_name_valid, "member must be 1..128 characters of [A-Za-z0-9_.:@-]",
     offsetof(struct gw_rest_target, member)},
};

static void debug_clock(struct gw_http_req *q, const struct gw_rest_target *t)
{
    (void)t;
    gw_http_debug_clock(q);
}

static void static_file(struct gw_http_req *q, const struct gw_rest_target *t)
{
    (void)t;
    gw_http_static(q);
}

static unsigned method_bit(int method)
{
    switch (method) {
    case LWSHUMETH_GET: return RM_GET;
    case LWSHUMETH_HEAD: return RM_HEAD;
    case LWSHUMETH_POST: return RM_POST;
    case LWSHUMETH_PUT: return RM_PUT;
    case LWSHUMETH_DELETE: return RM_DELETE;
    default: return RM_OTHER;
    }
}

/* The request's path, split on '/' (empty segments dropped). */
struct path {
    char buf[sizeof ((struct gw_http_req *)0)->path];
    const char *seg[MAX_SEGS];
    unsigned n;
};

static void split(const char *text, struct path *p)
{
    char *save = NULL;
    snprintf(p->buf, sizeof p->buf, "%s", text);
    p->n = 0;
    for (char *s = strtok_r(p->buf, "/", &save); s && p->n < MAX_SEGS; s = strtok_r(NULL, "/", &save))
        p->seg[p->n++] = s;
}

/* The next segment of pattern *pat (advanced past it): its start, length in *len. */
static const char *pattern_seg(const char **pat, size_t *len)
{
    const char *s = *pat;
    while (*s == '/')
        s++;
    *len = strcspn(s, "/");
    *pat = s + *len;
    return *len ? s : NULL;
}

static int is_placeholder(const char *s, size_t len)
{
    return len > 2 && s[0] == '{' && s[len - 1] == '}';
}

/* 1 when the first segments of p match pattern (placeholders match any
 * segment); *count gets how many segments the pattern has. */
static int prefix_matches(const char *pattern, const struct path *p, unsigned *count)
{
    size_t len;
    unsigned i = 0;
    for (const char *s; (s = pattern_seg(&pattern, &len)); i++) {
        if (i >= p->n)
            return 0;
        if (!is_placeholder(s, len) && (strlen(p->seg[i]) != len || memcmp(p->seg[i], s, len) != 0))
            return 0;
    }
    *count = i;
    return 1;
}

static int path_matches(const char *pattern, const struct path *p)
{
    unsigned count;
    return prefix_matches(pattern, p, &count) && count == p->n;
}

/* Checks the names that segments [from, to) of pattern give p, and fills
 * *t with them. Returns 0, or the rule that failed (whose 400 to answer). */
static const struct name_rule *take_names(const char *pattern, unsigned from, unsigned to, const struct path *p,
                                          struct gw_rest_target *t)
{
    size_t len;
    unsigned i = 0;
    for (const char *s; (s = pattern_seg(&pattern, &len)) && i < to; i++) {
        if (i < from || !is_placeholder(s, len))
            continue;
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            if (strlen(names[k].placeholder) != len || memcmp(names[k].placeholder, s, len) != 0)
                continue;
            if (!names[k].valid(p->seg[i], strlen(p->seg[i])))
                return &names[k];
            *(const char **)((char *)t + names[k].slot) = p->seg[i];
        }
    }
    return NULL;
}

static const struct area *area_of(const struct path *p, unsigned *prefix_len)
{
    for (size_t i = 0; i < sizeof areas / sizeof areas[0]; i++) {
        unsigned count;
        if (prefix_matches(areas[i].prefix, p, &count) && p->n - count >= areas[i].min_more &&
            p->n - count <= areas[i].max_more) {
            *prefix_len = count;
            return &areas[i];
        }
    }
    *prefix_len = 0;
    return &areas[sizeof areas / sizeof areas[0] - 1]; /* the last takes every path: not reached */
}

/* 1 (err filled) when the request's address has not the read tokens left
 * that the rows its query asks for cost (1 + rows / RC_READ_ROWS_PER_TOKEN;
 * a query without a window is charged as the default top 10: 1). */
static int read_limited(struct gw_http_req *q, const struct rc_query *qs, struct rc_error *err)
{
    const struct rc_conf *c = q->app->conf;
    struct rc_bucket *b = q->wsi ? gw_peers_read_bucket(q->wsi) : NULL;
    struct rc_request vr;
    struct rc_error verr = {0, ""};
    memset(&vr, 0, sizeof vr);
    double cost = rc_auth_read_tokens(rc_query_view(qs, &vr, &verr) == 0 ? rc_registry_view_rows(&vr.view) : 1);
    rc_proto_decode_free(&vr); /* (a member list's names) */
    if (!b || rc_auth_bucket_take_n(b, c->ip_read_rate, c->ip_read_burst, cost, (int64_t)uv_now(q->app->loop)))
        return 0;
    q->app->metrics.reads_limited++;
    rc_err_set(err, RC_E_RATE_LIMITED, "too many reads from this address (ip_read_rate %u/s)", c->ip_read_rate);
    return 1;
}

static int row_exists(const struct gw_http_req *q, const struct route *r)
{
    return !(r->flags & RT_TEST_CLOCK) || q->app->conf->test_clock;
}

static void answer_miss(struct gw_http_req *q, const struct area *a, const struct path *p, unsigned method)
{
    int path_known = 0;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        path_known |= row_exists(q, &routes[i]) && path_matches(routes[i].path, p);
    for (size_t i = 0; i < sizeof a->miss / sizeof a->miss[0]; i++) {
        const struct miss *m = &a->miss[i];
        if (!(m->methods & method) || (m->if_path && !path_known))
            continue;
        if (m->fn)
            m->fn(q, &(struct gw_rest_target){NULL, NULL});
        else
            gw_http_req_respond_error(q, m->code, m->msg);
        return;
    }
    gw_http_req_respond_error(q, RC_E_NOT_FOUND, "no such path"); /* an area whose last miss is not RM_ANY */
}

/* Dispatches a complete request (body received). */
void gw_http_routes_dispatch(struct gw_http_req *q)
{
    struct path p;
    struct rc_query qs = gw_http_query(q);
    struct rc_error err = {0, ""};
    struct gw_rest_target t = {NULL, NULL};
    const struct name_rule *bad;
    unsigned method = method_bit(q->method), prefix_len = 0;

    if (q->too_large) {
        gw_http_req_respond_error(q, RC_E_TOO_LARGE, "request body exceeds max_frame");
        return;
    }
    if (rc_query_check(&qs, &err)) {
        gw_http_req_respond_error(q, err.code, err.msg);
        return;
    }
    split(q->path, &p);
    const struct area *a = area_of(&p, &prefix_len);
    if ((a->flags & RA_READ_TOKEN) && method == RM_GET && read_limited(q, &qs, &err)) {
        gw_http_req_respond_error(q, err.code, err.msg);
        return;
    }
    if ((bad = take_names(a->prefix, 0, prefix_len, &p, &t))) {
        gw_http_req_respond_error(q, RC_E_BAD_REQUEST, bad->msg);
        return;
    }
    const struct route *r = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0] && !r; i++)
        if ((routes[i].methods & method) && row_exists(q, &routes[i]) && path_matches(routes[i].path, &p))
            r = &routes[i];
    if (!r) {
        answer_miss(q, a, &p, method);
        return;
    }
    if ((bad = take_names(r->path, prefix_len, p.n, &p, &t))) {
        gw_http_req_respond_error(q, RC_E_BAD_REQUEST, bad->msg);
        return;
    }
    if (r->scope && !(r->flags & RT_OP_SCOPE) && gw_ops_authorize(q->app, &q->who, r->scope, NULL, &err)) {
        gw_http_req_respond_error(q, err.code, err.msg);
        return;
    }
    r->fn(q, &t);
}
