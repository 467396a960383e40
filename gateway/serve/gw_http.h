/* gw_http.h - REST API, /healthz and /metrics on the lws HTTP side. */
#ifndef GW_HTTP_H
#define GW_HTTP_H

#include <uv.h> /* before libwebsockets.h (../shared/STYLE.md) */
#include <libwebsockets.h>
#include <stddef.h>

struct lws;
struct gw_app;
struct gw_http_req;

/* Per-connection data lws keeps for an HTTP connection. */
struct gw_http_pss {
    struct gw_http_req *req; /* the request being answered, a reference */
};

/* Handles the HTTP reasons of the lws callback. Returns what lws expects. */
int gw_http_callback(struct lws *wsi, enum lws_callback_reasons reason, struct gw_http_pss *pss, void *in,
                     size_t len, struct gw_app *app);

#endif
