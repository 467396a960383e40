/* gw_listen.c - one job: a worker's SO_REUSEPORT listening socket, its
 * accepts handed to lws (gw_listen.h). */
#define _DEFAULT_SOURCE /* accept4's flags */
#define _GNU_SOURCE     /* accept4 */
#include "serve/gw_listen.h"

#include <uv.h>
#include <libwebsockets.h>


#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "serve/gw_peers.h"
#include "serve/gw_wsguard.h"

#define ACCEPT_BATCH 64     /* accepts per readable event, then back to the loop */
#define FULL_PAUSE_MS 100   /* out of descriptors: stop accepting this long */

struct gw_listen {
    struct gw_app *app;
    int fd;
    uv_poll_t poll;
    uv_timer_t pause;       /* the wait before listening; later restarts the poll after EMFILE/ENFILE */
    int listening, closing, handles;
};

static void on_closed(uv_handle_t *h)
{
    struct gw_listen *l = h->data;
    if (--l->handles == 0) {
        if (l->fd >= 0)
            close(l->fd);
        free(l);
    }
}

static void on_readable(uv_poll_t *p, int status, int events);

static void on_pause_over(uv_timer_t *t)
{
    struct gw_listen *l = t->data;
    if (!l->closing)
        uv_poll_start(&l->poll, UV_READABLE, on_readable);
}

/* One accepted socket: the accept-time check, then lws. */
static void hand_over(struct gw_listen *l, int fd, const struct sockaddr *peer)
{
    struct gw_app *app = l->app;
    enum gw_peer_verdict v = gw_peers_on_accept(app->peers, peer);
    if (v == GW_PEER_RATE) {
        gw_log_abuse("refusing a connection: its address is over ip_handshake_rate (%u/s), closed at once",
                     app->conf->ip_handshake_rate);
        close(fd);
        return;
    }
    if (v == GW_PEER_DROP) {
        gw_log_abuse("refusing a connection: max_conns (%u) or max_conns_per_ip (%u) reached, closed at once",
                     app->conf->max_conns, app->conf->max_conns_per_ip);
        close(fd);
        return;
    }
    if (v != GW_PEER_ACCEPT)
        gw_log_abuse("refusing a connection: max_conns (%u) or max_conns_per_ip (%u) reached, answered 503",
                     app->conf->max_conns, app->conf->max_conns_per_ip);
    gw_wsguard_reset(fd); /* nothing read from it yet (gw_wsguard.h) */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct lws_vhost *vh = app->lws ? lws_get_vhost_by_name(app->lws, "default") : NULL;
    if (!vh || !lws_adopt_socket_vhost(vh, fd)) /* lws closes fd when it fails */
        gw_log_warn("listen: lws did not take an accepted socket");
}

static void on_readable(uv_poll_t *p, int status, int events)
{
    (void)events;
    struct gw_listen *l = p->data;
    if (status < 0 || l->closing)
        return;
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        int fd = accept4(l->fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                gw_log_abuse("listen: accept: %s; pausing accepts for %d ms", strerror(errno), FULL_PAUSE_MS);
                uv_poll_stop(&l->poll);
                uv_timer_start(&l->pause, on_pause_over, FULL_PAUSE_MS, 0);
            }
            return; /* EAGAIN: drained; anything else (ECONNABORTED...): next event */
        }
        hand_over(l, fd, (const struct sockaddr *)&ss);
    }
}

/* socket + SO_REUSEADDR + SO_REUSEPORT + bind on the first address of host
 * that works (listen comes later). Returns the fd or -1 (logged). */
static int bind_shared(const char *host, int port)
{
    char service[16];
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    snprintf(service, sizeof service, "%d", port);
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        gw_log_error("cannot listen on %s:%d: %s", host, port, gai_strerror(rc));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        int one = 1;
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
            setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
            (a->ai_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) ||
            bind(fd, a->ai_addr, a->ai_addrlen) != 0) {
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        gw_log_error("cannot listen on %s:%d: %s (in use by a process that does not share the port?)", host, port,
                     strerror(err));
    return fd;
}

void gw_listen_ready(struct gw_listen *l)
{
    if (!l || l->listening || l->closing)
        return;
    l->listening = 1;
    uv_timer_stop(&l->pause);
    if (listen(l->fd, SOMAXCONN) != 0) {
        gw_log_error("listen: %s: this worker takes no connections", strerror(errno));
        return;
    }
    uv_poll_start(&l->poll, UV_READABLE, on_readable);
}

static void on_wait_over(uv_timer_t *t)
{
    gw_listen_ready(t->data); /* Redis not up yet: serve anyway, as one gateway does (503, unavailable) */
}

struct gw_listen *gw_listen_start(struct gw_app *app, const char *host, int port, uint64_t wait_ms)
{
    struct gw_listen *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->app = app;
    if ((l->fd = bind_shared(host, port)) < 0) {
        free(l);
        return NULL;
    }
    uv_poll_init(app->loop, &l->poll, l->fd);
    uv_timer_init(app->loop, &l->pause);
    l->poll.data = l->pause.data = l;
    l->handles = 2;
    uv_timer_start(&l->pause, on_wait_over, wait_ms, 0);
    return l;
}

void gw_listen_stop(struct gw_listen *l)
{
    if (!l || l->closing)
        return;
    l->closing = 1;
    uv_close((uv_handle_t *)&l->poll, on_closed);
    uv_close((uv_handle_t *)&l->pause, on_closed);
}
