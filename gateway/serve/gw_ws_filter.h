/* gw_ws_filter.h - the checks of a WebSocket handshake before lws accepts
 * it (LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION, serve/gw_ws.c). */
#ifndef GW_WS_FILTER_H
#define GW_WS_FILTER_H

struct lws;
struct gw_app;

/* Only /ws upgrades, only from allowed origins ([server] allowed_origins),
 * and not from a socket accepted over max_conns or max_conns_per_ip
 * (serve/gw_peers: it gets 503). 0 to accept; -1 once refused with an HTTP
 * status. */
int gw_ws_filter(struct lws *wsi, struct gw_app *app);

#endif
