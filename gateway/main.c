/* main.c - the rankcast process: config, the loop, start and clean shutdown.
 *
 *   rankcast [--config FILE] [--listen HOST:PORT] [--redis HOST:PORT[,HOST:PORT...]|redis://HOST:PORT]
 *            [--state DIR] [--workers N]
 *   rankcast --check-config FILE
 *   rankcast token --scope read --board demo --ttl 30d [--sub NAME] [--config FILE]   (gw_token_cmd.c)
 *   rankcast export|import ...   (cli/gw_cli.h)
 *   rankcast teams rebuild ...   (cli/gw_cli.h, docs/teams.md)
 *   rankcast --version | --help  (gw_version.c, gw_help.c: the text of rankcast(1) too)
 *
 * Flags beat the environment (RANKCAST_LISTEN, RANKCAST_REDIS, RANKCAST_STATE,
 * RANKCAST_WORKERS), which beats the file (DESIGN.md, "Operating it").
 * With workers > 1 this process becomes the supervisor (gw_workers.c) and
 * each worker it forks runs the rest of main as a whole gateway.
 */
#include <uv.h>
#include <libwebsockets.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_app.h"
#include "cli/gw_cli.h"
#include "jobs/gw_archive.h"
#include "base/gw_conf.h"
#include "base/gw_env.h"
#include "base/gw_jwt.h"
#include "base/gw_redis_pass.h"
#include "gw_token_cmd.h"
#include "gw_help.h"
#include "gw_paths.h"
#include "gw_version.h"
#include "gw_workers.h"
#include "base/gw_group.h"
#include "serve/gw_rest_status.h"
#include "jobs/gw_ckpt.h"
#include "jobs/gw_decay.h"
#include "jobs/gw_queue.h"
#include "jobs/gw_webhook.h"
#include "ops/gw_instances.h"
#include "ops/gw_idem.h"
#include "fanout/gw_fanout.h"
#include "base/gw_log.h"
#include "base/gw_trim.h"
#include "store/gw_profile.h"
#include "redis/gw_redis.h"
#include "serve/gw_listen.h"
#include "serve/gw_server.h"
#include "serve/gw_ws.h"
#include "rc_err.h"
#include "rc_hostport.h"
#include "rc_lua.h"
#include "rc_workers.h"

#define SHUTDOWN_GRACE_MS 300 /* time for 1001 close frames to go out */

struct options {
    const char *config;
    struct gw_env_flags flags; /* --listen, --redis, --state */
    const char *check;
    const char *workers; /* --workers N; NULL = not given */
    int help, version;   /* --help, --version: print and exit */
};

static int usage(void)
{
    fprintf(stderr, "usage: rankcast [--config FILE] [--listen HOST:PORT] [--redis HOST:PORT[,HOST:PORT...]] [--state DIR]\n"
                    "                [--workers N]\n"
                    "       rankcast --check-config FILE\n"
                    "       rankcast token --scope read --board demo --ttl 30d [--sub NAME] [--config FILE]\n"
                    "       rankcast export|import BOARD ...   (docs/export-import.md)\n"
                    "       rankcast teams rebuild BOARD [--period P]   (docs/teams.md)\n"
                    "       rankcast --version | --help\n");
    return 2;
}

/* getopt_long: six flags with a value, --help and --version. opterr is off
 * so that a bad command line prints only the usage, as it always has. */
static int parse_args(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},
        {"listen", required_argument, NULL, 'l'},
        {"redis", required_argument, NULL, 'r'},
        {"state", required_argument, NULL, 's'},
        {"check-config", required_argument, NULL, 'k'},
        {"workers", required_argument, NULL, 'w'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'v'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->config = "conf/rankcast.conf";
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'c': o->config = optarg; break;
        case 'l': o->flags.listen = optarg; break;
        case 'r': o->flags.redis = optarg; break;
        case 's': o->flags.state = optarg; break;
        case 'k': o->check = optarg; break;
        case 'w': o->workers = optarg; break;
        case 'h': o->help = 1; break;
        case 'v': o->version = 1; break;
        default: return RC_E_BAD_REQUEST;
        }
    }
    return optind == argc ? 0 : RC_E_BAD_REQUEST; /* no positional arguments */
}

static int check_config(const char *path)
{
    struct rc_conf *c = malloc(sizeof *c);
    struct rc_error err = {0, ""};
    if (!c)
        return 1;
    struct gw_jwt jwt;
    int rc = gw_conf_load(path, c, &err);
    if (rc == 0 && (rc = gw_jwt_load(&jwt, c, &err)) == 0) /* the token key file, too */
        gw_jwt_free(&jwt);
    if (rc == 0)
        rc = gw_redis_pass_check_file(c, &err); /* and the Redis password file */
    if (rc) {
        fprintf(stderr, "rankcast: %s\n", err.msg);
    } else {
        char warn[512];
        gw_idem_floor_warning(c, warn, sizeof warn); /* allowed, but said: ops/gw_idem.h */
        if (warn[0])
            fprintf(stderr, "rankcast: warning: %s\n", warn);
        printf("%s: ok, %zu boards\n", path, c->nboards);
    }
    free(c);
    return rc ? 1 : 0;
}

/* ---- Redis hooks -------------------------------------------------------------- */

static void on_redis_up(void *data)
{
    struct gw_app *app = data;
    struct gw_redis_stats st;
    gw_redis_get_stats(app->redis, &st);
    app->metrics.redis_reconnects = st.reconnects;
    gw_fanout_redis_up(app->fanout);
    gw_listen_ready(app->listen); /* a worker joins the port once it can serve */
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
    gw_ckpt_heard_message(app, pattern, channel); /* a change: its checkpoints may be due */
}

static void on_redis_channel_ready(void *data, const char *channel)
{
    struct gw_app *app = data;
    gw_fanout_channel_ready(app->fanout, channel);
}

/* ---- loop callbacks --------------------------------------------------------------- */

static void on_tick(uv_timer_t *t)
{
    static struct gw_trim trim; /* the process's heap: one per process */
    struct gw_app *app = t->data;
    gw_fanout_tick(app->fanout);
    gw_ws_tick(app);
    gw_trim_maybe(&trim, gw_clock_mono_us() / 1000); /* memory a burst freed goes back */
    gw_log_abuse_flush();                            /* a flood's suppressed tail */
    if (app->group)
        gw_rest_status_publish(app); /* this worker's slot of the group's /metrics */
}

/* The flush list (net/gw_conn.h, "acks first"): view traffic is written in
 * slices of about FLUSH_SLICE_NS per loop turn (FLUSH_STEP connections at a
 * time), so the loop reads its sockets (Redis replies: acks; requests)
 * between slices of a big fan-out. While the list is not empty the idle
 * handle keeps poll from blocking. */
#define FLUSH_SLICE_NS 1000000u
#define FLUSH_STEP 32

static void on_flush_idle(uv_idle_t *h)
{
    struct gw_app *app = h->data;
    uint64_t t0 = uv_hrtime();
    int more;
    while ((more = gw_conn_flush_run(&app->flush, FLUSH_STEP)) && uv_hrtime() - t0 < FLUSH_SLICE_NS)
        ;
    if (!more)
        uv_idle_stop(h);
}

static void flush_kick(void *data)
{
    struct gw_app *app = data;
    if (app->loop_hooks)
        uv_idle_start(&app->flush_idle, on_flush_idle);
}

/* After the I/O of a loop turn (every change event it read is applied):
 * boards whose change found them quiet go out now (the leading edge). */
static void on_edge_check(uv_check_t *h)
{
    struct gw_app *app = h->data;
    gw_fanout_tick_edge(app->fanout);
}

static void loop_hooks_start(struct gw_app *app)
{
    app->flush = (struct gw_conn_flush){.kick = flush_kick, .data = app};
    uv_idle_init(app->loop, &app->flush_idle);
    app->flush_idle.data = app;
    uv_check_init(app->loop, &app->edge_check);
    app->edge_check.data = app;
    uv_check_start(&app->edge_check, on_edge_check);
    gw_first_loop_start(app->fanout, app->loop);
    gw_members_loop_start(app->fanout, app->loop);
    app->loop_hooks = 1;
}

static void loop_hooks_stop(struct gw_app *app)
{
    if (!app->loop_hooks)
        return;
    app->loop_hooks = 0;
    uv_close((uv_handle_t *)&app->flush_idle, NULL);
    uv_close((uv_handle_t *)&app->edge_check, NULL);
    gw_first_loop_stop(app->fanout);
    gw_members_loop_stop(app->fanout);
}

/* Lifecycle hooks (gw_lifecycle.c owns the signals and the grace timer). */
static void begin_stop(void *data, int signum)
{
    struct gw_app *app = data;
    app->stopping = 1;
    gw_log_info("received %s: closing clients and shutting down", signum == SIGINT ? "SIGINT" : "SIGTERM");
    uv_timer_stop(&app->tick);
    uv_close((uv_handle_t *)&app->tick, NULL);
    gw_webhook_stop(app); /* now, while Redis is up: its locks are released during the grace */
    gw_listen_stop(app->listen); /* a worker leaves the port now: new clients go to the others */
    app->listen = NULL;
    gw_ws_close_all(app);
}

static void finish_stop(void *data)
{
    struct gw_app *app = data;
    gw_viewers_stop(app->fanout); /* our viewer counts leave Redis while it is up */
    gw_decay_stop(app);
    gw_ckpt_stop(app);
    gw_queue_stop(app);
    gw_archive_stop(app);
    gw_redis_stop(app->redis);
    app->redis = app->store.redis = NULL;
    loop_hooks_stop(app);
    gw_server_stop(app);
}

static void log_leftover(uv_handle_t *h, void *arg)
{
    (void)arg;
    gw_log_warn("shutdown: libuv handle still open: %s", uv_handle_type_name(h->type));
}

/* ---- start ---------------------------------------------------------------------------- */

/* Loads the config (a worker has it already in app->conf: the one its
 * supervisor read, so a file edited since does not reach one worker alone),
 * then starts every module and wires their hooks.
 * Returns 0, RC_E_BAD_REQUEST (the configuration) or RC_E_INTERNAL. */
static int start(struct gw_app *app, const struct options *o)
{
    char host[256];
    int port;
    struct rc_error err = {0, ""};
    if (!app->group && gw_conf_load(o->config, app->conf, &err) != 0) {
        gw_log_error("config: %s", err.msg);
        return RC_E_BAD_REQUEST;
    }
    app->config_path = o->config;
    if (gw_paths_web_root(app->conf->web_root, sizeof app->conf->web_root))
        gw_log_info("dashboard pages from %s", app->conf->web_root); /* the installed ones */
    if (gw_env_apply_overrides(app->conf, &o->flags) != 0 || gw_env_resolve_keys(app->conf) != 0 ||
        gw_env_check_test_clock(app->conf) != 0)
        return RC_E_BAD_REQUEST;
    if (gw_jwt_load(&app->jwt, app->conf, &err) != 0) {
        gw_log_error("config: %s", err.msg);
        return RC_E_BAD_REQUEST;
    }
    if (gw_jwt_enabled(&app->jwt))
        gw_log_info("auth: tokens accepted: %s%s%s", app->jwt.secret_len ? "HS256" : "",
                    app->jwt.secret_len && app->jwt.pem_len ? ", " : "",
                    !app->jwt.pem_len ? "" : app->jwt.pem_alg == RC_JWT_RS256 ? "RS256" : "ES256");
    if (rc_hostport_split(app->conf->listen, host, sizeof host, &port) != 0) {
        gw_log_error("listen address '%s' is not HOST:PORT", app->conf->listen);
        return RC_E_BAD_REQUEST;
    }
    if (mkdir(app->conf->state_dir, 0755) != 0 && errno != EEXIST) {
        gw_log_error("state directory %s: %s", app->conf->state_dir, strerror(errno));
        return RC_E_INTERNAL;
    }
    gw_script_init(&app->write_script, rc_lua_write);
    gw_script_init(&app->read_script, rc_lua_read);
    gw_script_init(&app->admin_script, rc_lua_admin);
    gw_script_init(&app->freeze_script, rc_lua_freeze);
    gw_script_init(&app->profile_script, rc_lua_profile_set);
    gw_script_init(&app->enqueue_script, rc_lua_enqueue);
    gw_script_init(&app->teams_script, rc_lua_teams);
    app->store.read_script = &app->read_script;
    app->store.clock = &app->clock;
    app->store.history_undo_max = app->conf->history_undo_max;
    app->store.undo_refused = &app->metrics.history_undo_refused;
    app->store.chain_reads = &app->metrics.history_chain_reads;
    app->read_gate = (struct gw_read_gate){.cap = app->conf->read_rows_in_flight, .m = &app->metrics};
    app->store.read_gate = &app->read_gate;
    app->profiles = app->store.profiles = gw_profile_new(&app->store, 10000, 100000);
    app->fanout = gw_fanout_new(app);
    if (!app->profiles || !app->fanout)
        return RC_E_INTERNAL;
    gw_ws_setup(app);

    struct gw_redis_cred cred;
    if (gw_redis_pass_resolve(app->conf, &cred, &err) != 0) {
        gw_log_error("config: %s", err.msg);
        return RC_E_BAD_REQUEST;
    }
    if (cred.password[0])
        gw_log_info("redis: AUTH%s%s with the password from %s", cred.username[0] ? " as user " : "", cred.username,
                    cred.source);
    struct gw_redis_opts ro = {
        .seeds = app->conf->redis,
        .backoff_min_ms = 50,
        .backoff_max_ms = app->conf->reconnect_max_ms,
        .ping_every_ms = 1000,
        .ping_timeout_ms = 3000,
        .keyspace_events = app->conf->keyspace_events,
        .username = cred.username,
        .password = cred.password,
    };
    struct gw_redis_hooks hooks = {app, on_redis_up, on_redis_down, on_redis_message, on_redis_channel_ready};
    app->redis = app->store.redis = gw_redis_start(app->loop, &ro, &hooks);
    gw_redis_pass_wipe(&cred); /* gw_redis keeps its own copy */
    if (!app->redis)
        return RC_E_BAD_REQUEST; /* the seeds (logged), or memory */
    gw_redis_add_script(app->redis, &app->write_script);
    gw_redis_add_script(app->redis, &app->read_script);
    gw_redis_add_script(app->redis, &app->admin_script);
    gw_redis_add_script(app->redis, &app->freeze_script);
    gw_redis_add_script(app->redis, &app->profile_script);
    gw_redis_add_script(app->redis, &app->enqueue_script);
    gw_redis_add_script(app->redis, &app->teams_script);
    gw_redis_channel_pattern(app->redis, GW_FANOUT_CHANNEL_PATTERN);
    gw_redis_psubscribe(app->redis, GW_FANOUT_KEYSPACE_PATTERN);
    gw_redis_psubscribe(app->redis, GW_FANOUT_KEYSPACE_TM_PATTERN);

    if (gw_archive_start(app) != 0 || gw_decay_start(app) != 0 || gw_queue_start(app) != 0 || gw_ckpt_start(app) != 0 ||
        gw_webhook_start(app) != 0)
        return RC_E_INTERNAL;
    if (gw_server_start(app, host, port) != 0)
        return RC_E_INTERNAL;
    loop_hooks_start(app);
    uv_timer_init(app->loop, &app->tick);
    app->tick.data = app;
    uv_timer_start(&app->tick, on_tick, (uint64_t)app->conf->tick_ms, (uint64_t)app->conf->tick_ms);
    struct gw_lifecycle_hooks lh = {app, begin_stop, finish_stop};
    if (gw_lifecycle_start(&app->life, app->loop, SHUTDOWN_GRACE_MS, &lh) != 0)
        return RC_E_INTERNAL;
    int tls = app->conf->tls_cert[0] != '\0';
    gw_log_info("listening on %s://%s:%d/ (dashboard), %s://%s:%d/ws; redis %s; %zu boards from %s",
                tls ? "https" : "http", host, port, tls ? "wss" : "ws", host, port, app->conf->redis, app->conf->nboards,
                o->config);
    return 0;
}

/* How many workers: --workers > RANKCAST_WORKERS > [server] workers.
 * Returns 0 with *n set and the loaded file in *conf (malloc'd, the
 * caller's), or -1 (logged). A config file that does not load leaves the
 * count to the flag and the environment: with one worker, start reports it
 * as it always has; a group refuses here, before any fork. */
static int resolve_workers(const struct options *o, unsigned *n, struct rc_conf **conf)
{
    struct rc_error err = {0, ""}, load_err = {0, ""};
    struct rc_conf *c = malloc(sizeof *c);
    *conf = c;
    if (!c)
        return -1;
    int loaded = gw_conf_load(o->config, c, &load_err) == 0;
    unsigned file = loaded ? c->workers : 1;
    if (rc_workers_resolve(o->workers, getenv("RANKCAST_WORKERS"), file, n, &err) != 0) {
        gw_log_error("config: %s", err.msg);
        return -1;
    }
    if (*n > 1 && !loaded) {
        gw_log_error("config: %s", load_err.msg);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct options o;
    if (argc > 1 && strcmp(argv[1], "token") == 0)
        return gw_token_cmd(argc - 1, argv + 1);
    if (argc > 1 && gw_cli_is_command(argv[1]))
        return gw_cli_main(argc, argv); /* export, import (docs/export-import.md), teams rebuild */
    if (parse_args(argc, argv, &o) != 0)
        return usage();
    if (o.help || o.version) {
        (o.help ? gw_help_print : gw_version_print)(stdout);
        return 0;
    }
    if (o.check)
        return check_config(o.check);

    unsigned workers;
    struct gw_group *group = NULL;
    struct gw_worker_id me = {0, 1, 0};
    struct rc_conf *conf = NULL;
    if (resolve_workers(&o, &workers, &conf) != 0) {
        free(conf);
        return 1;
    }
    if (workers > 1) {
        /* the supervisor: nothing but the shared region exists before the forks */
        int code = 1;
        if (!(group = gw_group_create(workers))) {
            gw_log_error("workers: cannot map the shared metrics region: %s", strerror(errno));
            free(conf);
            return 1;
        }
        if (!gw_workers_run(workers, group, &me, &code)) {
            gw_group_free(group);
            free(conf);
            return code;
        }
        gw_log_info("worker %u of %u (pid %ld) starting", me.index, me.count, (long)getpid());
    }

    uv_loop_t loop;
    struct gw_app app;
    memset(&app, 0, sizeof app);
    app.group = group;
    app.clock.shared = gw_group_clock_offset(group); /* the test clock is the group's (NULL: one process) */
    app.worker = me.index;
    app.worker_restarts = me.restarts;
    uv_loop_init(&loop);
    app.loop = &loop;
    app.conf = conf; /* a worker's: loaded; one process: start loads it again, as always */
    int rc = app.conf ? start(&app, &o) : RC_E_INTERNAL;
    if (rc == 0) {
        uv_run(&loop, UV_RUN_DEFAULT);
    } else if (app.lws && !lws_get_vhost_by_name(app.lws, "default")) {
        /* lws 4.1 unloads its libuv plugin when a context whose vhost failed
         * (port in use) is destroyed, and the loop then calls into the
         * unloaded code (SIGSEGV): nothing served yet, so leave at once. */
        gw_log_error("not started");
        _exit(group ? RC_WORKER_EXIT_START : 1);
    } else {
        /* Failed to start: release what did start, without serving. */
        gw_decay_stop(&app);
        gw_ckpt_stop(&app);
        gw_queue_stop(&app);
        gw_archive_stop(&app);
        gw_webhook_stop(&app);
        if (app.redis)
            gw_redis_stop(app.redis);
        loop_hooks_stop(&app);
        gw_server_stop(&app);
    }
    /* lws with a foreign loop: run until it lets go, destroy again if needed. */
    uv_run(&loop, UV_RUN_DEFAULT);
    if (app.lws) {
        lws_context_destroy(app.lws);
        uv_run(&loop, UV_RUN_DEFAULT);
    }
    gw_conn_flush_clear(&app.flush); /* references on connections lws has closed */
    gw_fanout_free(app.fanout);
    gw_ws_free(&app);
    gw_profile_free(app.profiles);
    gw_server_free(&app);
    if (uv_loop_close(&loop) != 0)
        uv_walk(&loop, log_leftover, NULL);
    gw_jwt_free(&app.jwt);
    gw_instances_free(app.instances);
    free(app.conf);
    gw_group_free(group);
    if (rc == 0)
        gw_log_info("stopped");
    /* a worker that could not start tells its supervisor not to try again */
    return rc == 0 ? 0 : group ? RC_WORKER_EXIT_START : 1;
}
