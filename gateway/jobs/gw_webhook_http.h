/* gw_webhook_http.h - HTTP POSTs for the webhook job, made by libcurl's
 * multi interface on the gateway's libuv loop (curl_multi_socket_action:
 * one uv_poll per socket curl asks for, one uv_timer for curl's timeout), so
 * a slow or hanging receiver never blocks the loop. */
#ifndef GW_WEBHOOK_HTTP_H
#define GW_WEBHOOK_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

struct gw_hclient;
struct gw_hreq;

/* A request ended: ok 1 when an HTTP response came back (status is its
 * code), 0 when none did (err says why: a timeout, a refused or reset
 * connection). Called once per request that was not cancelled. */
typedef void gw_hreq_cb(int ok, long status, const char *err, void *data);

/* A client on loop, or NULL (logged). */
struct gw_hclient *gw_webhook_http_new(uv_loop_t *loop);

/* POSTs body[0..len) (copied) to url with headers[0..n) ("Name: value",
 * copied), giving up after timeout_ms in total. Returns the request (live
 * until cb runs or gw_webhook_http_cancel), or NULL (cb not called). */
struct gw_hreq *gw_webhook_http_post(struct gw_hclient *c, const char *url, const char *const *headers, size_t n,
                                const char *body, size_t len, int64_t timeout_ms, gw_hreq_cb *cb, void *data);

/* Drops a request in flight; its cb is never called. */
void gw_webhook_http_cancel(struct gw_hclient *c, struct gw_hreq *r);

/* Cancels every request (no callbacks), then closes the client's handles
 * and frees it once they are closed (the loop must run on until then). */
void gw_webhook_http_free(struct gw_hclient *c);

#endif
