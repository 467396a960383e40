/* gw_ws.h - the WebSocket side: sessions, message reassembly, dispatch of
 * PROTOCOL.md ops. */
#ifndef GW_WS_H
#define GW_WS_H

#include <uv.h> /* before libwebsockets.h (../shared/STYLE.md) */
#include <libwebsockets.h>
#include <stddef.h>

struct lws;
struct gw_app;
struct gw_conn;

/* Handles the WebSocket reasons of the lws callback; *pconn is the session's
 * slot in lws' per-session data. Returns what lws expects. */
int gw_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, struct gw_conn **pconn, void *in,
                   size_t len, struct gw_app *app);

/* Wires the connection queue (app->conn_ctx): the lws transport, the
 * fan-out's hooks, metrics and queue_bytes. Call once at start, after the
 * fan-out exists and before the server accepts. */
void gw_ws_setup(struct gw_app *app);

/* Frees what gw_ws_setup made (the compressor). Call after the last
 * connection closed. */
void gw_ws_free(struct gw_app *app);

/* Asks every open connection to close with 1001 (going away). */
void gw_ws_close_all(struct gw_app *app);

/* Called on every coalescing tick; about once a second it stops the views
 * of connections whose token expired without a refresh (auth op). */
void gw_ws_tick(struct gw_app *app);

#endif
