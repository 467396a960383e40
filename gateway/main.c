/* main.c - the rankcast process: config, the loop, start and clean shutdown.
 *
 *   rankcast [--config FILE] [--listen HOST:PORT] [--redis HOST:PORT|redis://HOST:PORT]
 *            [--state DIR]
 *   rankcast --check-config FILE
 *
 * Flags beat the environment (RANKCAST_LISTEN, RANKCAST_REDIS, RANKCAST_STATE),
 * which beats the file (DESIGN.md, "Operating it").
 */
#include <uv.h>
#include <libwebsockets.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gw_app.h"
#include "jobs/gw_archive.h"
#include "base/gw_conf.h"
#include "jobs/gw_decay.h"
#include "fanout/gw_fanout.h"
#include "base/gw_log.h"
#include "store/gw_profile.h"
#include "redis/gw_redis.h"
#include "serve/gw_server.h"
#include "serve/gw_ws.h"
#include "rc_lua.h"

#define SHUTDOWN_GRACE_MS 300 /* time for 1001 close frames to go out */

struct options {
    const char *config;
    const char *listen;
    const char *redis;
    const char *state;
    const char *check;
};

static int usage(void)
{
    fprintf(stderr, "usage: rankcast [--config FILE] [--listen HOST:PORT] [--redis HOST:PORT] [--state DIR]\n"
                    "       rankcast --check-config FILE\n");
    return 2;
}

static int parse_args(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    o->config = "conf/rankcast.conf";
    for (int i = 1; i < argc; i++) {
        const char **slot = NULL;
        if (strcmp(argv[i], "--config") == 0)
            slot = &o->config;
        else if (strcmp(argv[i], "--listen") == 0)
            slot = &o->listen;
        else if (strcmp(argv[i], "--redis") == 0)
            slot = &o->redis;
        else if (strcmp(argv[i], "--state") == 0)
            slot = &o->state;
        else if (strcmp(argv[i], "--check-config") == 0)
            slot = &o->check;
        if (!slot || i + 1 >= argc)
            return -1;
        *slot = argv[++i];
    }
    return 0;
}

/* "host:port", "[v6]:port" or "redis://host:port" -> host and port. */
static int split_hostport(const char *s, char *host, size_t cap, int *port)
{
    if (strncmp(s, "redis://", 8) == 0)
        s += 8;
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s)
        return -1;
    const char *h = s, *he = colon;
    if (*h == '[' && he[-1] == ']')
        h++, he--;
    if ((size_t)(he - h) >= cap || he == h)
        return -1;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || p < 1 || p > 65535)
        return -1;
    memcpy(host, h, (size_t)(he - h));
    host[he - h] = '\0';
    *port = (int)p;
    return 0;
}

/* Applies flag > environment > file for one string key. */
static int override(char *dst, size_t cap, const char *flag, const char *env_name)
{
    const char *v = flag ? flag : getenv(env_name);
    if (!v || !*v)
        return 0;
    if (strlen(v) >= cap)
        return -1;
    strcpy(dst, v);
    return 0;
}

static int check_config(const char *path)
{
    struct rc_conf *c = malloc(sizeof *c);
    struct rc_error err = {0, ""};
    if (!c)
        return 1;
    int rc = gw_conf_load(path, c, &err);
    if (rc)
        fprintf(stderr, "rankcast: %s\n", err.msg);
    else
        printf("%s: ok, %zu boards\n", path, c->nboards);
    free(c);
    return rc ? 1 : 0;
}

/* Fills secrets given by environment variable, and adds RANKCAST_ADMIN_KEY
 * as a key with every scope for every board. Logs key names, never secrets. */
static int resolve_keys(struct rc_conf *c)
{
    struct rc_auth *a = &c->auth;
    for (unsigned i = 0; i < a->nkeys; i++) {
        struct rc_key *k = &a->keys[i];
        if (!k->secret_env[0])
            continue;
        const char *v = getenv(k->secret_env);
        size_t n = v ? strlen(v) : 0;
        if (n < RC_SECRET_MIN || n > RC_SECRET_MAX) {
            gw_log_error("key %s: environment variable %s is %s", k->name, k->secret_env,
                         v ? "not 16..128 characters long" : "not set");
            return -1;
        }
        memcpy(k->secret, v, n + 1);
        k->secret_len = n;
    }
    const char *admin = getenv("RANKCAST_ADMIN_KEY");
    if (admin && *admin) {
        static const char *const all[] = {"*"};
        if (rc_auth_add_key(a, "env-admin", admin, strlen(admin), RC_SCOPE_READ | RC_SCOPE_WRITE | RC_SCOPE_ADMIN,
                            all, 1) != 0) {
            gw_log_error("RANKCAST_ADMIN_KEY must be 16..128 characters (and the key table not full)");
            return -1;
        }
    }
    gw_log_info("auth: %u API keys; reads %s; writes need a key", a->nkeys, a->reads_need_key ? "need a key" : "open");
    return 0;
}

/* ---- Redis hooks -------------------------------------------------------------- */

static void on_redis_up(void *data)
{
    struct gw_app *app = data;
    struct gw_redis_stats st;
    gw_redis_get_stats(app->redis, &st);
    app->metrics.redis_reconnects = st.reconnects;
    gw_fanout_redis_up(app->fanout);
}

static void on_redis_down(void *data, const char *reason)
{
    (void)data;
    (void)reason;
}

static void on_redis_message(void *data, const char *pattern, const char *channel, const char *payload, size_t len)
{
    struct gw_app *app = data;
    gw_fanout_on_message(app->fanout, pattern, channel, payload, len);
}

/* ---- loop callbacks --------------------------------------------------------------- */

static void on_tick(uv_timer_t *t)
{
    struct gw_app *app = t->data;
    gw_fanout_tick(app->fanout);
}

/* Lifecycle hooks (gw_lifecycle.c owns the signals and the grace timer). */
static void begin_stop(void *data, int signum)
{
    struct gw_app *app = data;
    app->stopping = 1;
    gw_log_info("received %s: closing clients and shutting down", signum == SIGINT ? "SIGINT" : "SIGTERM");
    uv_timer_stop(&app->tick);
    uv_close((uv_handle_t *)&app->tick, NULL);
    gw_ws_close_all(app);
}

static void finish_stop(void *data)
{
    struct gw_app *app = data;
    gw_decay_stop(app);
    gw_archive_stop(app);
    gw_redis_stop(app->redis);
    app->redis = NULL;
    gw_server_stop(app);
}

static void log_leftover(uv_handle_t *h, void *arg)
{
    (void)arg;
    gw_log_warn("shutdown: libuv handle still open: %s", uv_handle_type_name(h->type));
}

/* ---- start ---------------------------------------------------------------------------- */

static int start(struct gw_app *app, const struct options *o)
{
    char host[256], rhost[256];
    int port, rport;
    struct rc_error err = {0, ""};
    if (gw_conf_load(o->config, app->conf, &err) != 0) {
        gw_log_error("config: %s", err.msg);
        return -1;
    }
    app->config_path = o->config;
    if (override(app->conf->listen, sizeof app->conf->listen, o->listen, "RANKCAST_LISTEN") ||
        override(app->conf->redis, sizeof app->conf->redis, o->redis, "RANKCAST_REDIS") ||
        override(app->conf->state_dir, sizeof app->conf->state_dir, o->state, "RANKCAST_STATE")) {
        gw_log_error("an override is too long");
        return -1;
    }
    if (resolve_keys(app->conf) != 0)
        return -1;
    if (split_hostport(app->conf->listen, host, sizeof host, &port) != 0) {
        gw_log_error("listen address '%s' is not HOST:PORT", app->conf->listen);
        return -1;
    }
    if (split_hostport(app->conf->redis, rhost, sizeof rhost, &rport) != 0) {
        gw_log_error("redis address '%s' is not HOST:PORT or redis://HOST:PORT", app->conf->redis);
        return -1;
    }
    if (mkdir(app->conf->state_dir, 0755) != 0 && errno != EEXIST) {
        gw_log_error("state directory %s: %s", app->conf->state_dir, strerror(errno));
        return -1;
    }
    gw_script_init(&app->write_script, rc_lua_write);
    gw_script_init(&app->read_script, rc_lua_read);
    gw_script_init(&app->admin_script, rc_lua_admin);
    app->profiles = gw_profiles_new(app, 10000, 100000);
    app->fanout = gw_fanout_new(app);
    if (!app->profiles || !app->fanout)
        return -1;

    struct gw_redis_opts ro = {
        .host = rhost,
        .port = rport,
        .backoff_min_ms = 50,
        .backoff_max_ms = app->conf->reconnect_max_ms,
        .ping_every_ms = 1000,
        .ping_timeout_ms = 3000,
        .keyspace_events = app->conf->keyspace_events,
    };
    struct gw_redis_hooks hooks = {app, on_redis_up, on_redis_down, on_redis_message};
    app->redis = gw_redis_start(app->loop, &ro, &hooks);
    if (!app->redis)
        return -1;
    gw_redis_add_script(app->redis, &app->write_script);
    gw_redis_add_script(app->redis, &app->read_script);
    gw_redis_add_script(app->redis, &app->admin_script);
    gw_redis_psubscribe(app->redis, GW_FANOUT_CHANNEL_PATTERN);
    gw_redis_psubscribe(app->redis, GW_FANOUT_KEYSPACE_PATTERN);

    if (gw_archive_start(app) != 0 || gw_decay_start(app) != 0)
        return -1;
    if (gw_server_start(app, host, port) != 0)
        return -1;
    uv_timer_init(app->loop, &app->tick);
    app->tick.data = app;
    uv_timer_start(&app->tick, on_tick, (uint64_t)app->conf->tick_ms, (uint64_t)app->conf->tick_ms);
    struct gw_lifecycle_hooks lh = {app, begin_stop, finish_stop};
    if (gw_lifecycle_start(&app->life, app->loop, SHUTDOWN_GRACE_MS, &lh) != 0)
        return -1;
    int tls = app->conf->tls_cert[0] != '\0';
    gw_log_info("listening on %s://%s:%d/ (dashboard), %s://%s:%d/ws; redis %s:%d; %zu boards from %s",
                tls ? "https" : "http", host, port, tls ? "wss" : "ws", host, port, rhost, rport, app->conf->nboards,
                o->config);
    return 0;
}

int main(int argc, char **argv)
{
    struct options o;
    if (parse_args(argc, argv, &o) != 0)
        return usage();
    if (o.check)
        return check_config(o.check);

    uv_loop_t loop;
    struct gw_app app;
    memset(&app, 0, sizeof app);
    uv_loop_init(&loop);
    app.loop = &loop;
    app.conf = malloc(sizeof *app.conf);
    int rc = app.conf ? start(&app, &o) : -1;
    if (rc == 0) {
        uv_run(&loop, UV_RUN_DEFAULT);
    } else {
        /* Failed to start: release what did start, without serving. */
        gw_decay_stop(&app);
        gw_archive_stop(&app);
        if (app.redis)
            gw_redis_stop(app.redis);
        gw_server_stop(&app);
    }
    /* lws with a foreign loop: run until it lets go, destroy again if needed. */
    uv_run(&loop, UV_RUN_DEFAULT);
    if (app.lws) {
        lws_context_destroy(app.lws);
        uv_run(&loop, UV_RUN_DEFAULT);
    }
    gw_fanout_free(app.fanout);
    gw_profiles_free(app.profiles);
    gw_server_free(&app);
    if (uv_loop_close(&loop) != 0)
        uv_walk(&loop, log_leftover, NULL);
    free(app.conf);
    if (rc == 0)
        gw_log_info("stopped");
    return rc == 0 ? 0 : 1;
}
