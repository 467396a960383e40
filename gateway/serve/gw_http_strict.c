/* gw_http_strict.c - HTTP/1.1 framing and path rules before routing
 * (gw_http_strict.h).
 *
 * lws 4.1 is lenient where a proxy may not be: it takes the first of two
 * Content-Length headers (lws_hdr_copy joins them "37,40"; atoll reads 37),
 * reads "+37" as 37, uses Content-Length when Transfer-Encoding is there
 * too, never decodes a chunked request body (it would hand the chunk sizes
 * over as body bytes), and decodes and folds the path before any callback.
 * Each is refused here, before a route or an upgrade sees the request,
 * with the RFC 9112 answer for an invalid message: 400, then close.
 */
#include "serve/gw_http_strict.h"

#include <uv.h>
#include <libwebsockets.h>


#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "serve/gw_rawreq.h"
#include "rc_err.h"
#include "rc_httpstrict.h"
#include "serve/gw_http_req.h"

#define CL_MAX 64 /* a longer value is no number we take */

/* 1 when the request has a header h at position idx (0: the first; a
 * repeated header is a next fragment), even with an empty value, which
 * lws_hdr_total_length counts as none. */
static int has_header(struct lws *wsi, enum lws_token_indexes h, int idx)
{
    char one[2];
    return lws_hdr_fragment_length(wsi, h, idx) > 0 || lws_hdr_copy_fragment(wsi, one, sizeof one, h, idx) >= 0;
}

/* NULL when the request's framing and path may be routed, else why not. */
static const char *refusal(struct lws *wsi)
{
    if (has_header(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING, 0))
        return "Transfer-Encoding is not supported: send a body with one Content-Length (RFC 9112, 6.1)";
    if (has_header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, 0)) {
        char cl[CL_MAX];
        uint64_t n;
        /* a second header is a second fragment (lws_hdr_copy would join them with ',') */
        if (has_header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, 1) ||
            lws_hdr_copy_fragment(wsi, cl, sizeof cl, WSI_TOKEN_HTTP_CONTENT_LENGTH, 0) < 0 ||
            rc_httpstrict_content_length(cl, strlen(cl), &n) != 0)
            return "Content-Length must be one header holding one decimal number (RFC 9112, 6.3)";
    }
    switch (gw_rawreq_verdict(lws_get_socket_fd(wsi))) {
    case RC_HTTPSTRICT_ENCODED_SLASH:
        return "the path holds %2F inside a segment: send '/' between segments only";
    case RC_HTTPSTRICT_DOT_SEGMENT:
        return "the path holds a segment that is '.' or '..' (plain or %-encoded)";
    default:
        return NULL; /* fine, or not seen (TLS): lws' own rules only */
    }
}

int gw_http_strict_request(struct lws *wsi, struct gw_app *app)
{
    const char *why = refusal(wsi);
    if (!why)
        return 0;
    gw_log_abuse("refusing an HTTP request before routing: %s", why);
    return gw_http_req_refuse_now(wsi, app, RC_E_BAD_REQUEST, why);
}

int gw_http_strict_upgrade(struct lws *wsi, const char *proto, struct gw_app *app)
{
    if (proto && strcasecmp(proto, "websocket") == 0)
        return gw_http_strict_request(wsi, app);
    if (!proto || strcasecmp(proto, "h2c") != 0)
        return -1; /* lws answered it 403 already: just close */
    gw_log_abuse("refusing an HTTP request before routing: Upgrade: h2c");
    return gw_http_req_refuse_now(wsi, app, RC_E_BAD_REQUEST, "Upgrade is only to websocket, on /ws (no h2c)");
}
