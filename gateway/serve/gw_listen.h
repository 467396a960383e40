/* gw_listen.h - a worker's own listening socket (workers > 1): bound with
 * SO_REUSEPORT, so every worker of a group listens on the same port and the
 * kernel spreads new connections over them. lws 4.1 as packaged here
 * (LWS_MAX_SMP 1) never sets SO_REUSEPORT itself, whatever
 * LWS_SERVER_OPTION_ALLOW_LISTEN_SHARE says, so the worker's vhost listens on
 * nothing (CONTEXT_PORT_NO_LISTEN_SERVER) and this file accepts and hands
 * each socket to lws (lws_adopt_socket_vhost), after the same accept-time
 * check lws' own listener makes through LWS_CALLBACK_FILTER_NETWORK_CONNECTION
 * (serve/gw_peers). */
#ifndef GW_LISTEN_H
#define GW_LISTEN_H

#include <stdint.h>

struct gw_app;
struct gw_listen;

/* Binds host:port (a numeric or resolvable host) with SO_REUSEADDR and
 * SO_REUSEPORT now, so a port held by another program fails the start; but
 * listens (joins the port: the kernel only hands connections to listening
 * sockets) only at gw_listen_ready or after wait_ms, whichever comes first,
 * so a restarted worker takes no client before its Redis is up while the
 * others serve. Then accepts on app->loop into app->lws's default vhost.
 * Returns the listener, or NULL (logged: address in use by a process that
 * did not ask to share it, not available, out of memory). */
struct gw_listen *gw_listen_start(struct gw_app *app, const char *host, int port, uint64_t wait_ms);

/* Joins the port now if not yet (main calls it when Redis is up). NULL is
 * fine. */
void gw_listen_ready(struct gw_listen *l);

/* Stops accepting and closes the socket; the listener is freed once its
 * poll handle is closed (the loop must run). NULL is fine. */
void gw_listen_stop(struct gw_listen *l);

#endif
