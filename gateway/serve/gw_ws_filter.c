/* gw_ws_filter.c - the WebSocket handshake's checks (see gw_ws_filter.h). */
#include "serve/gw_ws_filter.h"

#include <string.h>

#include <uv.h>
#include <libwebsockets.h>

#include "gw_app.h"
#include "serve/gw_peers.h"

/* 1 when the handshake's Origin is allowed: any when allowed_origins is
 * empty; else it must be listed. A client that sends no Origin is not a
 * browser page (origins protect against other sites' pages) and passes. */
static int origin_allowed(struct lws *wsi, const char *allowed)
{
    char origin[256];
    if (!*allowed || lws_hdr_copy(wsi, origin, sizeof origin, WSI_TOKEN_ORIGIN) <= 0)
        return 1;
    size_t n = strlen(origin);
    for (const char *p = allowed; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ',' && *e != ' ')
            e++;
        if ((size_t)(e - p) == n && strncmp(p, origin, n) == 0)
            return 1;
        if (e - p == 1 && *p == '*')
            return 1;
        p = e;
    }
    return 0;
}

int gw_ws_filter(struct lws *wsi, struct gw_app *app)
{
    char uri[64];
    if (gw_peers_wsi_refused(wsi)) {
        lws_return_http_status(wsi, HTTP_STATUS_SERVICE_UNAVAILABLE,
                               "too many connections (max_conns or max_conns_per_ip)");
        return -1;
    }
    if (lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) < 0 || strcmp(uri, "/ws") != 0) {
        lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, "WebSocket endpoint is /ws");
        return -1;
    }
    if (!origin_allowed(wsi, app->conf->allowed_origins)) {
        lws_return_http_status(wsi, HTTP_STATUS_FORBIDDEN, "origin not allowed");
        return -1;
    }
    return 0;
}
