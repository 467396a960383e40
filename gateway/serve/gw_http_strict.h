/* gw_http_strict.h - the HTTP/1.1 framing and path rules checked before a
 * request is routed or upgraded: a request a proxy in front could read
 * differently from the gateway (request smuggling, a path rule walked
 * past) is answered 400 bad_request with the JSON error body and closed
 * (docs/security.md, "Strict HTTP"). */
#ifndef GW_HTTP_STRICT_H
#define GW_HTTP_STRICT_H

struct lws;
struct gw_app;

/* LWS_CALLBACK_HTTP, before anything else looks at the request: 0 when it
 * may be routed, else -1 with the 400 written (return it to lws). Checks
 * Content-Length (one header, one plain decimal number), Transfer-Encoding
 * (none: no route takes a chunked body), and the raw path (no %2F inside a
 * segment, no "." or ".." segment: serve/gw_rawreq.h). */
int gw_http_strict_request(struct lws *wsi, struct gw_app *app);

/* LWS_CALLBACK_HTTP_CONFIRM_UPGRADE (proto: the Upgrade header's value):
 * 0 for a websocket upgrade that passes gw_http_strict_request; else -1,
 * the connection closed after the 400 (lws has already answered an Upgrade
 * it does not know, "Upgrade: foo", with its own 403). Without this lws
 * answers "Upgrade: h2c" 101 and then drops the connection. */
int gw_http_strict_upgrade(struct lws *wsi, const char *proto, struct gw_app *app);

#endif
