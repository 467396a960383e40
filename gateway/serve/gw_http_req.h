/* gw_http_req.h - one HTTP request and its answer, shared by the HTTP
 * lifecycle (gw_http.c), the route table (gw_http_routes.c) and the
 * handlers. A request is refcounted because the client may hang up while
 * Redis is busy: the late answer then finds wsi == NULL and is dropped. */
#ifndef GW_HTTP_REQ_H
#define GW_HTTP_REQ_H

#include <stddef.h>

#include "serve/gw_urlarg.h"
#include "ops/gw_ops.h"
#include "rc_query.h"

struct lws;
struct gw_app;

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
    struct gw_urlargs args;       /* the query, copied when the headers came */
    /* the answer */
    int ready;
    int headers_sent;
    unsigned status;
    const char *ctype;
    unsigned char *out;           /* LWS_PRE headroom, then the body */
    size_t out_len;
};

/* Drops one reference; the last frees the request. */
void gw_http_req_unref(struct gw_http_req *q);

/* The query of q as the pure mapping reads it (borrowed from q). */
static inline struct rc_query gw_http_query(const struct gw_http_req *q)
{
    return (struct rc_query){(const char *const *)q->args.args, q->args.n};
}

/* Takes ownership of text (malloc'd, NUL-terminated, may be NULL) as the
 * response body and has it written. */
void gw_http_req_respond(struct gw_http_req *q, unsigned status, const char *ctype, char *text);
/* The same with the PROTOCOL.md status of code (0: 200), as JSON. */
void gw_http_req_respond_json(struct gw_http_req *q, int code, char *json);
/* An error body built by the ops layer (the same as over WebSocket). */
void gw_http_req_respond_error(struct gw_http_req *q, int code, const char *message);
/* gw_op_done for REST: the op's JSON is the body; drops one reference. */
void gw_http_req_on_op_done(void *privdata, int code, char *json);

/* Writes the status line and headers every answer has (content-type,
 * content-length len, cache-control: no-store, connection: close) on wsi,
 * at once. Returns 0 or -1. */
int gw_http_req_write_head(struct lws *wsi, unsigned status, const char *ctype, size_t len);

/* Answers wsi's request at once with the error body of code (its
 * PROTOCOL.md status), without a struct gw_http_req: a request refused
 * before it is taken (serve/gw_http_strict.c). Returns -1, for the caller
 * to return to lws: the connection is closed (lws flushes what was
 * written, then shuts the socket down). */
int gw_http_req_refuse_now(struct lws *wsi, struct gw_app *app, int code, const char *message);

/* The client pipelined behind q: stop reading, answer q at once, close. */
void gw_http_req_pipelined(struct gw_http_req *q);
/* LWS_CALLBACK_HTTP_WRITEABLE: headers, then the body. Returns what lws expects. */
int gw_http_req_writeable(struct lws *wsi, struct gw_http_req *q);

#endif
