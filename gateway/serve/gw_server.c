/* gw_server.c - the lws context, its protocols and mounts, and the one
 * callback that hands HTTP reasons to gw_http and WebSocket ones to gw_ws. */
#include "serve/gw_server.h"

#include <uv.h>
#include <libwebsockets.h>


#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gw_app.h"
#include "serve/gw_http.h"
#include "serve/gw_http_strict.h"
#include "serve/gw_listen.h"
#include "rc_err.h"
#include "base/gw_log.h"
#include "serve/gw_peers.h"
#include "serve/gw_rawreq.h"
#include "serve/gw_tlsread.h"
#include "serve/gw_wsguard.h"
#include "ops/gw_idem.h"
#include "serve/gw_ws.h"

/* What lws keeps per connection: the HTTP side or the WebSocket side. */
struct gw_pss {
    struct gw_http_pss http;
    struct gw_conn *conn;
};

static int is_ws_reason(enum lws_callback_reasons r)
{
    return r == LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION || r == LWS_CALLBACK_ESTABLISHED ||
           r == LWS_CALLBACK_RECEIVE || r == LWS_CALLBACK_SERVER_WRITEABLE || r == LWS_CALLBACK_CLOSED;
}

static int is_http_reason(enum lws_callback_reasons r)
{
    return r == LWS_CALLBACK_HTTP || r == LWS_CALLBACK_HTTP_BODY || r == LWS_CALLBACK_HTTP_BODY_COMPLETION ||
           r == LWS_CALLBACK_HTTP_WRITEABLE || r == LWS_CALLBACK_CLOSED_HTTP || r == LWS_CALLBACK_HTTP_FILE_COMPLETION ||
           r == LWS_CALLBACK_HTTP_DROP_PROTOCOL;
}

/* Every socket, before lws knows what it will be (gw_peers.h). */
static int on_socket(struct lws *wsi, enum lws_callback_reasons reason, void *user, struct gw_app *app)
{
    switch (reason) {
    case LWS_CALLBACK_FILTER_NETWORK_CONNECTION: {
        /* lws passes the peer's address as `user` here (and the fd as `in`) */
        const struct lws_filter_network_conn_args *a = user;
        enum gw_peer_verdict v = gw_peers_on_accept(app->peers, (const struct sockaddr *)&a->cli_addr);
        if (v == GW_PEER_RATE) {
            gw_log_abuse("refusing a connection: its address is over ip_handshake_rate (%u/s), closed at once",
                         app->conf->ip_handshake_rate);
            return -1;
        }
        if (v != GW_PEER_ACCEPT)
            gw_log_abuse("refusing a connection: max_conns (%u) or max_conns_per_ip (%u) reached%s",
                         app->conf->max_conns, app->conf->max_conns_per_ip,
                         v == GW_PEER_DROP ? ", closed at once" : ", answered 503");
        return v == GW_PEER_DROP ? -1 : 0;
    }
    case LWS_CALLBACK_WSI_CREATE:
        return gw_peers_on_create(app->peers, wsi);
    case LWS_CALLBACK_WSI_DESTROY:
        gw_peers_on_destroy(app->peers, wsi);
        return 0;
    default:
        return 0;
    }
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    struct gw_app *app = lws_context_user(lws_get_context(wsi));
    struct gw_pss *pss = user;
    if (app->peers && wsi)
        gw_peers_touch(app->peers, wsi);
    if (reason == LWS_CALLBACK_FILTER_NETWORK_CONNECTION) {
        gw_rawreq_reset((int)(intptr_t)in); /* lws passes the accepted fd as `in`; nothing read from it yet */
        gw_wsguard_reset((int)(intptr_t)in);
    }
    if (reason == LWS_CALLBACK_HTTP_CONFIRM_UPGRADE) /* before lws upgrades (h2c, websocket) */
        return gw_http_strict_upgrade(wsi, in, app);
    if (reason == LWS_CALLBACK_FILTER_NETWORK_CONNECTION || reason == LWS_CALLBACK_WSI_CREATE ||
        reason == LWS_CALLBACK_WSI_DESTROY) {
        if (app->peers)
            return on_socket(wsi, reason, user, app);
        return 0;
    }
    if (pss && is_ws_reason(reason))
        return gw_ws_callback(wsi, reason, &pss->conn, in, len, app);
    if (pss && is_http_reason(reason)) {
        int rc = gw_http_callback(wsi, reason, &pss->http, in, len, app);
        if (reason == LWS_CALLBACK_HTTP_DROP_PROTOCOL || reason == LWS_CALLBACK_CLOSED_HTTP)
            return lws_callback_http_dummy(wsi, reason, user, in, len);
        return rc;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* protocols[0] serves HTTP and WebSocket clients that ask for no
 * subprotocol; "rankcast.v1" serves those that do: both the same. */
static const struct lws_protocols protocols[] = {
    {"http", callback, sizeof(struct gw_pss), 0, 0, NULL, 0},
    {"rankcast.v1", callback, sizeof(struct gw_pss), 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* One mount: every path comes to gw_http, which serves the API and the
 * dashboard's files itself (lws' own file mount follows symlinks out of
 * web_root). */
static struct lws_http_mount mount = {
    .mountpoint = "/",
    .mountpoint_len = 1,
    .origin = "http",
    .origin_protocol = LWSMPRO_CALLBACK,
    .protocol = "http",
};

/* permessage-deflate (RFC 7692), listed only with [server] compression = on.
 * lws answers a client's offer with it and inflates what the client sends
 * compressed; what the gateway sends, it frames and compresses itself
 * (gw_ws.c, net/gw_msg.h). */
static const struct lws_extension extensions[] = {
    {"permessage-deflate", lws_extension_callback_pm_deflate, "permessage-deflate"},
    {NULL, NULL, NULL},
};

static int lws_verbose; /* RANKCAST_LWS_LOG set: every line, unthrottled (debugging) */

static void lws_logger(int level, const char *line)
{
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    /* lws warns about what clients send (bad frames, bad headers): one line
     * per bad packet would let anyone fill the disk, so these are throttled. */
    if (lws_verbose)
        gw_log_warn("lws: %.*s", (int)n, line);
    else
        gw_log_abuse("lws%s: %.*s", level & LLL_ERR ? " error" : "", (int)n, line);
}

/* Ping a WebSocket silent for half the idle timeout; close it when nothing
 * (not even a pong) came for the whole of it. */
static lws_retry_bo_t idle_policy;

/* A worker joins the port when its Redis is up (main calls gw_listen_ready),
 * or after this long without it. */
#define JOIN_WAIT_MS 2000

/* Sockets kept back from max_conns for Redis, the archive, the listener and
 * libuv's own descriptors. */
#define FD_RESERVE 256

/* Raises the soft fd limit to the hard one and resolves max_conns = auto
 * to what it allows; an explicit max_conns the limit cannot hold refuses
 * to start (the fd limit would otherwise be hit first, stalling accept). */
static int resolve_max_conns(struct rc_conf *c)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        gw_log_error("getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
        return RC_E_INTERNAL;
    }
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit up = {rl.rlim_max, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &up) == 0)
            rl = up;
    }
    rlim_t fds = rl.rlim_cur == RLIM_INFINITY ? 1000000 + FD_RESERVE : rl.rlim_cur;
    if (fds <= FD_RESERVE + 16) {
        gw_log_error("the file descriptor limit (%llu) leaves no room for connections: raise ulimit -n",
                     (unsigned long long)fds);
        return RC_E_INTERNAL;
    }
    rlim_t room = fds - FD_RESERVE;
    if (room > 1000000)
        room = 1000000;
    if (c->max_conns == 0) {
        c->max_conns = (unsigned)room;
    } else if (c->max_conns > room) {
        gw_log_error("max_conns = %u needs %u file descriptors (%d kept for Redis and files), but the limit is "
                     "%llu: lower max_conns, set it to auto, or raise ulimit -n",
                     c->max_conns, c->max_conns + FD_RESERVE, FD_RESERVE, (unsigned long long)fds);
        return RC_E_INTERNAL;
    }
    return 0;
}

int gw_server_start(struct gw_app *app, const char *host, int port)
{
    struct lws_context_creation_info info;
    const struct rc_conf *c = app->conf;
    void *foreign[1] = {app->loop};
    memset(&info, 0, sizeof info);
    lws_verbose = getenv("RANKCAST_LWS_LOG") != NULL;
    lws_set_log_level(getenv("RANKCAST_LWS_LOG") ? atoi(getenv("RANKCAST_LWS_LOG")) : (LLL_ERR | LLL_WARN), lws_logger);
    info.port = port;
    info.iface = host;
    info.protocols = protocols;
    info.mounts = &mount;
    info.user = app;
    info.foreign_loops = foreign;
    info.pcontext = &app->lws;
    if (c->compression)
        info.extensions = extensions;
    info.options = LWS_SERVER_OPTION_LIBUV;
    /* lws binds every address when IPv6 is on, whatever iface says. */
    if (!strchr(host, ':'))
        info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    /* A worker group: every worker listens on the same port with its own
     * SO_REUSEPORT socket (serve/gw_listen.h) and hands lws what it accepts. */
    if (app->group)
        info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
    /* header_timeout: lws times a silent socket (ESTABLISH_WITH_SERVER) and
     * headers being received (HOLDING_AH) with these; gw_peers adds the
     * total deadline across both and the body deadline. */
    int hto = (int)((c->header_timeout_ms + 999) / 1000);
    info.timeout_secs = (unsigned)hto;
    /* Room for long credentials (a JWT, a key someone pasted twice) to be
     * read and refused as bad ones: past this lws drops the connection
     * without an answer. */
    info.max_http_header_data = 16384;
    info.timeout_secs_ah_idle = (unsigned)hto;
    int64_t idle_s = c->idle_timeout_ms / 1000;
    idle_policy.secs_since_valid_ping = (uint16_t)(idle_s / 2 > 0 ? idle_s / 2 : 1);
    idle_policy.secs_since_valid_hangup = (uint16_t)(idle_s > 65535 ? 65535 : idle_s);
    info.retry_and_idle_policy = &idle_policy;
    if (c->tls_cert[0] || c->tls_key[0]) {
        if (!c->tls_cert[0] || !c->tls_key[0] || access(c->tls_cert, R_OK) || access(c->tls_key, R_OK)) {
            gw_log_error("TLS needs both tls_cert and tls_key, readable (%s, %s)", c->tls_cert, c->tls_key);
            return RC_E_INTERNAL;
        }
        /* the frame guard, frame budgets and raw-path rules read TLS through SSL_read (serve/gw_tlsread.c) */
        if (gw_tlsread_setup() != 0) {
            gw_log_error("TLS: OpenSSL's SSL_read was not found; refusing to serve TLS without the frame guard");
            return RC_E_INTERNAL;
        }
        info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        /* a worker's vhost listens on nothing: ask for its TLS context anyway */
        if (app->group)
            info.options |= LWS_SERVER_OPTION_CREATE_VHOST_SSL_CTX;
        info.ssl_cert_filepath = c->tls_cert;
        info.ssl_private_key_filepath = c->tls_key;
    }
    int max_conns_set = c->max_conns != 0; /* not auto */
    if (resolve_max_conns(app->conf) != 0)
        return RC_E_INTERNAL;
    struct gw_peers_limits lim = {
        .max_conns = c->max_conns,
        .max_conns_per_ip = c->max_conns_per_ip,
        .header_timeout_ms = (uint64_t)c->header_timeout_ms,
        .body_timeout_ms = (uint64_t)c->body_timeout_ms,
        .ip_read_rate = c->ip_read_rate,
        .ip_read_burst = c->ip_read_burst,
        .ip_handshake_rate = c->ip_handshake_rate,
        .ip_handshake_burst = c->ip_handshake_burst,
        /* workers: the connection limits are the group's (docs/gateway.md, "Workers") */
        .group = app->group,
        .worker = app->worker,
        .group_max_conns = max_conns_set,
    };
    app->peers = gw_peers_new(app->loop, &lim);
    if (!app->peers)
        return RC_E_INTERNAL;
    if (!(app->idem = gw_idem_new(app)))
        return RC_E_INTERNAL;
    app->lws = lws_create_context(&info);
    /* With a foreign loop lws may hand back a context whose listening vhost
     * failed (port in use): check the vhost, not just the context. */
    if (app->lws && !lws_get_vhost_by_name(app->lws, "default")) {
        gw_log_error("cannot listen on %s:%d: address in use or not available", host, port);
        return RC_E_INTERNAL;
    }
    if (!app->lws) {
        gw_log_error("cannot listen on %s:%d (port in use, or libwebsockets-evlib-uv missing?)", host, port);
        return RC_E_INTERNAL;
    }
    if (app->group && !(app->listen = gw_listen_start(app, host, port, JOIN_WAIT_MS)))
        return RC_E_INTERNAL;
    return 0;
}

void gw_server_stop(struct gw_app *app)
{
    gw_listen_stop(app->listen);
    app->listen = NULL;
    gw_peers_stop(app->peers);
    if (app->lws)
        lws_context_destroy(app->lws);
}

void gw_server_free(struct gw_app *app)
{
    gw_peers_free(app->peers);
    app->peers = NULL;
    gw_idem_free(app->idem);
    app->idem = NULL;
}
