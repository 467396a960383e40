/* gw_server.h - the libwebsockets context on the app's libuv loop: one port
 * for WebSocket (/ws), the static dashboard (/), the REST API (/api/v1),
 * /healthz and /metrics. */
#ifndef GW_SERVER_H
#define GW_SERVER_H

struct gw_app;

/* Creates the lws context listening on host:port (IPv6 off for an IPv4 host,
 * so "127.0.0.1" binds loopback only). Returns 0 or -1 (logged). */
int gw_server_start(struct gw_app *app, const char *host, int port);

/* Destroys the context following lws' foreign-loop rules (STYLE.md, Known
 * traps); the loop must then be run until it has no handles. */
void gw_server_stop(struct gw_app *app);

/* Frees what gw_server_start allocated besides the context (after the loop
 * has run down). */
void gw_server_free(struct gw_app *app);

#endif
