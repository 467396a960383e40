/* gw_http.c - the REST API, /healthz and /metrics (PROTOCOL.md, "REST API").
 *
 * lws calls us with a request's method and path (LWS_CALLBACK_HTTP), then the
 * body in pieces, then BODY_COMPLETION. We route it, start the operation and
 * return; the answer may come later from Redis. Then we ask for a writeable
 * callback and write the headers and, on the next one, the body. This file
 * is the lifecycle: lws callbacks, headers, body collection and the
 * pipelining rule; routes are in gw_http_routes.c, answers in gw_http_req.c.
 */
#include "serve/gw_http.h"

#include <uv.h>
#include <libwebsockets.h>


#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "serve/gw_peers.h"
#include "serve/gw_urlarg.h"
#include "serve/gw_http_req.h"
#include "serve/gw_http_routes.h"
#include "serve/gw_http_strict.h"

/* ---- the lws side -------------------------------------------------------------- */

static void release(struct gw_http_pss *pss)
{
    if (pss->req) {
        pss->req->wsi = NULL;
        gw_http_req_unref(pss->req);
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
        gw_http_req_pipelined(q);
        return 0;
    }
    q->routed = 1;
    q->refs++; /* route() may end in lws closing the connection (a HEAD of a file), which releases q */
    gw_http_routes_dispatch(q);
    int rc = q->close_now ? -1 : 0;
    gw_http_req_unref(q);
    return rc;
}

/* 1 when the request is dispatched from BODY_COMPLETION: a POST or PUT
 * that announces a length. lws 4.1 calls BODY_COMPLETION for a POST's
 * "Content-Length: 0" too (a request dispatched twice would look
 * pipelined), but not for a PUT's, which would wait unanswered until
 * body_timeout: an empty PUT is complete with its headers. */
static int body_follows(struct lws *wsi, int method)
{
    char cl[32];
    if ((method != LWSHUMETH_POST && method != LWSHUMETH_PUT) ||
        lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) <= 0)
        return 0;
    if (method == LWSHUMETH_PUT && lws_hdr_copy(wsi, cl, sizeof cl, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0 &&
        strspn(cl, "0") == strlen(cl))
        return 0;
    return 1;
}

static int on_http(struct lws *wsi, struct gw_http_pss *pss, struct gw_app *app)
{
    char *uri;
    int len;
    if (pss->req && !pss->req->answered) {
        /* the previous request is still being answered: pipelining */
        gw_http_req_pipelined(pss->req);
        return 0;
    }
    if (pss->req) {
        /* A next request on a connection whose first was answered: there is
         * no keep-alive (write_headers), and its raw request line was never
         * checked (gw_http_strict.h sees a connection's first line only).
         * Close: the client sends it again on a new connection. */
        return -1;
    }
    gw_peers_headers_done(wsi);
    if (gw_peers_wsi_refused(wsi)) {
        /* accepted over max_conns or max_conns_per_ip: told so, then closed */
        lws_return_http_status(wsi, HTTP_STATUS_SERVICE_UNAVAILABLE,
                               "too many connections (max_conns or max_conns_per_ip)");
        return -1;
    }
    if (gw_http_strict_request(wsi, app))
        return -1; /* framing or path a proxy could read otherwise: 400 written, closed */
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
    if (gw_urlarg_copy(wsi, &q->args))
        return -1; /* out of memory: pss->req is released on close */
    /* Authorization: Bearer KEY|JWT, else ?token= (a link can carry it, as
     * an overlay's does on its WebSocket). */
    char *auth = malloc(RC_JWT_MAX + 16);
    if (!auth)
        return -1;
    int n = gw_urlarg_header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, auth, RC_JWT_MAX + 16);
    int bearer = 1;
    if (n == GW_URLARG_ABSENT) {
        n = gw_urlarg(wsi, "token", auth, RC_JWT_MAX + 16);
        bearer = 0;
    }
    if (n > 0)
        gw_ops_identify(app, auth, (size_t)n, bearer, &q->who);
    else if (n != GW_URLARG_ABSENT)
        q->who.bad_token = 1; /* empty or too long to be any key: a bad credential, never "none" */
    memset(auth, 0, RC_JWT_MAX + 16);
    free(auth);
    if (body_follows(wsi, method)) {
        gw_peers_body_expected(wsi);
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
    if (gw_peers_body_late(q->wsi))
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
        gw_peers_body_done(wsi);
        return pss->req ? dispatch(pss->req) : -1;
    case LWS_CALLBACK_HTTP_WRITEABLE:
        return gw_http_req_writeable(wsi, pss->req);
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
