/* gw_http_req.c - an HTTP request's life after routing: its answer is
 * written (headers, then the body, in writeable callbacks) and the
 * request freed with its last reference. */
#include "serve/gw_http_req.h"

#include <uv.h>
#include <libwebsockets.h>


#include <stdlib.h>
#include <string.h>

#include "gw_app.h"

void gw_http_req_unref(struct gw_http_req *q)
{
    if (q && --q->refs == 0) {
        free(q->body);
        free(q->out);
        gw_urlarg_free(&q->args);
        gw_caller_release(&q->who);
        free(q);
    }
}

/* Every answer closes its connection ("connection: close"): lws 4.1 reads
 * a next request on a kept-alive connection out of its own input buffer,
 * and there it replays, garbles (a request's headers handed over as its
 * body) or reads freed memory (found by tests/fuzz/sockfuzz.sh). REST
 * clients open a connection per request; viewers use the WebSocket. */
int gw_http_req_write_head(struct lws *wsi, unsigned status, const char *ctype, size_t len)
{
    unsigned char hdr[LWS_PRE + 512], *p = hdr + LWS_PRE, *end = hdr + sizeof hdr - 1;
    if (lws_add_http_common_headers(wsi, status, ctype, len, &p, end) ||
        lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:", (const unsigned char *)"no-store",
                                    8, &p, end) ||
        lws_add_http_header_by_name(wsi, (const unsigned char *)"connection:", (const unsigned char *)"close", 5, &p,
                                    end) ||
        lws_finalize_write_http_header(wsi, hdr + LWS_PRE, &p, end))
        return -1;
    return 0;
}

static int write_headers(struct lws *wsi, struct gw_http_req *q)
{
    if (gw_http_req_write_head(wsi, q->status, q->ctype, q->out_len))
        return -1;
    q->headers_sent = 1;
    return 0;
}

int gw_http_req_refuse_now(struct lws *wsi, struct gw_app *app, int code, const char *message)
{
    char *json = gw_ops_error(app, NULL, code, message);
    size_t len = json ? strlen(json) : 0;
    unsigned char *out = json ? malloc(LWS_PRE + len) : NULL;
    if (out && gw_http_req_write_head(wsi, (unsigned)rc_err_code_http_status(code), "application/json", len) == 0) {
        memcpy(out + LWS_PRE, json, len);
        (void)lws_write(wsi, out + LWS_PRE, len, LWS_WRITE_HTTP_FINAL);
    }
    free(out);
    free(json);
    return -1;
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

void gw_http_req_pipelined(struct gw_http_req *q)
{
    if (q->pipelined || !q->wsi)
        return;
    q->pipelined = 1;
    lws_rx_flow_control(q->wsi, 0);
    write_now(q); /* when its answer is already there; else gw_http_req_respond() does */
}

/* Takes ownership of text (malloc'd, NUL-terminated) as the response body. */
void gw_http_req_respond(struct gw_http_req *q, unsigned status, const char *ctype, char *text)
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

void gw_http_req_respond_json(struct gw_http_req *q, int code, char *json)
{
    gw_http_req_respond(q, (unsigned)rc_err_code_http_status(code), "application/json", json);
}

void gw_http_req_respond_error(struct gw_http_req *q, int code, const char *message)
{
    gw_http_req_respond_json(q, code, gw_ops_error(q->app, NULL, code, message));
}

/* gw_op_done for REST: the op's JSON is the body. */
void gw_http_req_on_op_done(void *privdata, int code, char *json)
{
    struct gw_http_req *q = privdata;
    gw_http_req_respond_json(q, code, json);
    gw_http_req_unref(q);
}

int gw_http_req_writeable(struct lws *wsi, struct gw_http_req *q)
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
