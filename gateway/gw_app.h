/* gw_app.h - the gateway process's shared state: one per process, owned by
 * main, handed to every module. Everything runs on one libuv loop thread. */
#ifndef GW_APP_H
#define GW_APP_H

#include <stdint.h>

#include <uv.h>

#include "base/gw_clock.h"
#include "base/gw_jwt.h"
#include "base/gw_metrics.h"
#include "gw_lifecycle.h"
#include "net/gw_conn.h"
#include "redis/gw_script.h"
#include "store/gw_read_gate.h"
#include "store/gw_store.h"
#include "rc_auth.h"
#include "rc_conf.h"

struct lws_context;
struct gw_redis;
struct gw_fanout;
struct gw_profiles;
struct gw_conn;
struct gw_ws_drain;
struct gw_decay;
struct gw_ckpt;
struct gw_peers;
struct gw_archive;
struct gw_webhook;
struct gw_queue;
struct gw_group;
struct gw_listen;
struct gw_idem;

struct gw_app {
    uv_loop_t *loop;
    struct rc_conf *conf;           /* owned; read-only after start */
    const char *config_path;
    struct lws_context *lws;
    struct gw_redis *redis;
    struct gw_script write_script;
    struct gw_script read_script;
    struct gw_script admin_script;
    struct gw_script freeze_script; /* lua/freeze.lua (ops/gw_freeze.c) */
    struct gw_script profile_script;
    struct gw_script enqueue_script; /* lua/enqueue.lua: writes to queued boards (ops/gw_ops.c) */
    struct gw_script teams_script;  /* lua/teams.lua: team boards after admin ops (ops/gw_teams.c) */
    struct gw_queue *queue;         /* the consumers of queued boards (jobs/gw_queue.c) */
    struct gw_fanout *fanout;
    struct gw_profiles *profiles;
    struct gw_decay *decay;         /* decay jobs (gw_decay.c) */
    struct gw_ckpt *ckpt;           /* history checkpoints (jobs/gw_ckpt.c); NULL when none */
    struct gw_archive *archive;     /* archive of finished periods (gw_archive.c) */
    struct gw_webhook *webhook;     /* webhook on period close (jobs/gw_webhook.c); NULL without [webhook] */
    struct gw_store store;          /* what store/ reads need (main and the archive job fill it) */
    struct gw_read_gate read_gate;  /* rows of board reads in flight (store.read_gate points here) */
    struct gw_metrics metrics;
    struct rc_bucket key_buckets[RC_AUTH_MAX_KEYS]; /* write rate per API key */
    struct gw_idem *idem;           /* idempotency records per writer, capped (ops/gw_idem.h) */
    struct gw_jwt jwt;              /* token keys (base/gw_jwt.h) */
    struct gw_conn *conns;          /* open WebSocket connections (list) */
    struct gw_conn_ctx conn_ctx;    /* what every connection shares (serve/gw_ws.c sets it) */
    struct gw_ws_drain *ws_drain;   /* compressed messages lws must be pushed to inflate (serve/gw_ws.c) */
    struct gw_peers *peers;         /* every accepted socket: counts per address, deadlines */
    uv_timer_t tick;                /* the coalescing tick */
    struct gw_conn_flush flush;     /* connections with view traffic to write (net/gw_conn.h) */
    uv_idle_t flush_idle;           /* writes a slice of them per loop turn, while there are any */
    uv_check_t edge_check;          /* after each turn's I/O: the fan-out's leading edge */
    int loop_hooks;                 /* flush_idle and edge_check are open */
    struct gw_lifecycle life;       /* signals and the stop sequence (gw_lifecycle.c) */
    int stopping;
    /* a worker group (workers > 1; gw_workers.h): NULL for one process */
    struct gw_group *group;         /* the shared region (base/gw_group.h), mapped by the supervisor */
    unsigned worker;                /* this worker's slot, 0..workers-1 */
    uint64_t worker_restarts;       /* times the supervisor started this slot again */
    struct gw_listen *listen;       /* the worker's SO_REUSEPORT listener (serve/gw_listen.h) */
    struct gw_clock clock;          /* wall clock with the test offset (base/gw_clock.h) */
    struct gw_instances *instances; /* template boards recorded in their index (ops/gw_instances.c; NULL until the first) */
};

/* The time the gateway believes it is (base/gw_clock.h). */
static inline int64_t gw_now_ms(const struct gw_app *app)
{
    return gw_clock_now_ms(&app->clock);
}

#endif
