/* gw_server.c - the lws context, its protocols and mounts, and the one
 * callback that hands HTTP reasons to gw_http and WebSocket ones to gw_ws. */
#include <uv.h>
#include <libwebsockets.h>

#include "gw_server.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw_app.h"
#include "gw_http.h"
#include "gw_iplimit.h"
#include "gw_log.h"
#include "gw_ws.h"

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
           r == LWS_CALLBACK_HTTP_WRITEABLE || r == LWS_CALLBACK_CLOSED_HTTP ||
           r == LWS_CALLBACK_HTTP_DROP_PROTOCOL;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    struct gw_app *app = lws_context_user(lws_get_context(wsi));
    struct gw_pss *pss = user;
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

static struct lws_http_mount mounts[4];

static void setup_mounts(const char *web_root)
{
    static const char *const dynamic[3] = {"/api/v1", "/healthz", "/metrics"};
    memset(mounts, 0, sizeof mounts);
    for (int i = 0; i < 3; i++) {
        mounts[i].mount_next = &mounts[i + 1];
        mounts[i].mountpoint = dynamic[i];
        mounts[i].mountpoint_len = (unsigned char)strlen(dynamic[i]);
        mounts[i].protocol = "http";
        mounts[i].origin_protocol = LWSMPRO_CALLBACK;
    }
    mounts[3].mountpoint = "/";
    mounts[3].mountpoint_len = 1;
    mounts[3].origin = web_root;
    mounts[3].def = "index.html";
    mounts[3].origin_protocol = LWSMPRO_FILE;
}

static void lws_logger(int level, const char *line)
{
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    if (level & LLL_ERR)
        gw_log_error("lws: %.*s", (int)n, line);
    else
        gw_log_warn("lws: %.*s", (int)n, line);
}

/* Ping a WebSocket silent for half the idle timeout; close it when nothing
 * (not even a pong) came for the whole of it. */
static lws_retry_bo_t idle_policy;

int gw_server_start(struct gw_app *app, const char *host, int port)
{
    struct lws_context_creation_info info;
    const struct rc_conf *c = app->conf;
    void *foreign[1] = {app->loop};
    memset(&info, 0, sizeof info);
    lws_set_log_level(getenv("RANKCAST_LWS_LOG") ? atoi(getenv("RANKCAST_LWS_LOG")) : (LLL_ERR | LLL_WARN), lws_logger);
    setup_mounts(app->conf->web_root);
    info.port = port;
    info.iface = host;
    info.protocols = protocols;
    info.mounts = mounts;
    info.user = app;
    info.foreign_loops = foreign;
    info.pcontext = &app->lws;
    info.options = LWS_SERVER_OPTION_LIBUV;
    /* lws binds every address when IPv6 is on, whatever iface says. */
    if (!strchr(host, ':'))
        info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    info.timeout_secs = 10;
    int64_t idle_s = c->idle_timeout_ms / 1000;
    idle_policy.secs_since_valid_ping = (uint16_t)(idle_s / 2 > 0 ? idle_s / 2 : 1);
    idle_policy.secs_since_valid_hangup = (uint16_t)(idle_s > 65535 ? 65535 : idle_s);
    info.retry_and_idle_policy = &idle_policy;
    if (c->tls_cert[0] || c->tls_key[0]) {
        if (!c->tls_cert[0] || !c->tls_key[0] || access(c->tls_cert, R_OK) || access(c->tls_key, R_OK)) {
            gw_log_error("TLS needs both tls_cert and tls_key, readable (%s, %s)", c->tls_cert, c->tls_key);
            return -1;
        }
        info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        info.ssl_cert_filepath = c->tls_cert;
        info.ssl_private_key_filepath = c->tls_key;
    }
    app->per_ip = gw_iplimit_new();
    if (!app->per_ip)
        return -1;
    app->lws = lws_create_context(&info);
    /* With a foreign loop lws may hand back a context whose listening vhost
     * failed (port in use): check the vhost, not just the context. */
    if (app->lws && !lws_get_vhost_by_name(app->lws, "default")) {
        gw_log_error("cannot listen on %s:%d: address in use or not available", host, port);
        return -1;
    }
    if (!app->lws) {
        gw_log_error("cannot listen on %s:%d (port in use, or libwebsockets-evlib-uv missing?)", host, port);
        return -1;
    }
    return 0;
}

void gw_server_stop(struct gw_app *app)
{
    if (app->lws)
        lws_context_destroy(app->lws);
}

void gw_server_free(struct gw_app *app)
{
    gw_iplimit_free(app->per_ip);
    app->per_ip = NULL;
}
