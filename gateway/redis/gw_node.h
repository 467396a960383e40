/* gw_node.h - one Redis server: the gateway's three connections to it, kept
 * alive. (gw_redis.h, above it, routes commands over one node or over the
 * primaries of a cluster; nothing outside gateway/redis/ uses a node.)
 *
 * One connection for commands (reads, the jobs' scripts), one for pub/sub
 * (the script's change events and keyspace notifications: a subscribed
 * hiredis connection cannot run other commands), and one for writes and the
 * watchdog PING, so that neither waits behind a backlog of page reads (Redis
 * answers a connection's commands in order). All live on the gateway's
 * libuv loop.
 *
 * The module owns reconnection: each attempt first resolves the host name
 * without blocking the loop (uv_getaddrinfo), so a name whose address
 * changes is followed. When any connection fails or drops it
 * schedules a new attempt with capped exponential backoff and jitter (a new
 * hiredis context each time; hiredis frees the old one), runs a PING watchdog
 * on the write connection (hiredis 0.14 has no command timeouts), and on
 * every (re)connect: first AUTH on every connection when a password is
 * given (a refusal ends the attempt, logged without the password), then loads the registered scripts (SCRIPT LOAD), optionally
 * turns on keyspace notifications (CONFIG SET notify-keyspace-events), and
 * re-issues every PSUBSCRIBE pattern registered so far. "Up" means all three
 * connections are connected, the scripts are loaded and the patterns are
 * subscribed; only then is on_up called.
 */
#ifndef GW_NODE_H
#define GW_NODE_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>
#include <hiredis/async.h>

#include "redis/gw_script.h"

struct gw_node;
struct rc_ackbatch;

struct gw_node_hooks {
    void *data;
    /* All connections ready again (first connect or after an outage). */
    void (*on_up)(void *data);
    /* Either connection lost (once per outage, before reconnecting starts). */
    void (*on_down)(void *data, const char *reason);
    /* A pub/sub message: pattern that matched, channel, payload (borrowed
     * for the call only; payload is not NUL-terminated, use len). */
    void (*on_message)(void *data, const char *pattern, const char *channel, const char *payload,
                       size_t len);
    /* Sharded pub/sub (Redis 7): a message on a shard channel (pattern NULL
     * in on_message), and on_shard when SSUBSCRIBE of channel is confirmed
     * (subscribed 1) or the subscription ended (0): our SUNSUBSCRIBE, or the
     * server's when the channel's slot left this node. */
    void (*on_shard)(void *data, const char *channel, int subscribed);
};

struct gw_node_opts {
    const char *host;           /* borrowed for the call; a name or a numeric
                                 * address, looked up (off the loop) before
                                 * every attempt */
    int port;
    int64_t backoff_min_ms;     /* first retry delay, e.g. 50 */
    int64_t backoff_max_ms;     /* cap, from config reconnect_max */
    int64_t ping_every_ms;      /* watchdog period, e.g. 1000 */
    int64_t ping_timeout_ms;    /* no PONG within this: drop and reconnect */
    int keyspace_events;        /* 1: CONFIG SET notify-keyspace-events on connect */
    const char *username;       /* borrowed for the call (copied): ACL user, NULL or "" = none */
    const char *password;       /* borrowed for the call (copied): NULL or "" = no AUTH; never logged */
};

/* Creates the manager and starts connecting. Borrows loop and hooks' data;
 * copies opts. Returns NULL on allocation failure. */
struct gw_node *gw_node_start(uv_loop_t *loop, const struct gw_node_opts *opts,
                                const struct gw_node_hooks *hooks);

/* Registers a script to (re)load on every connect. Borrowed: s must outlive r. */
void gw_node_add_script(struct gw_node *r, struct gw_script *s);

/* Adds a pattern to PSUBSCRIBE now (if connected) and after every reconnect.
 * Returns 0, RC_E_BAD_REQUEST (empty) or RC_E_INTERNAL (out of memory). */
int gw_node_psubscribe(struct gw_node *r, const char *pattern);

/* SSUBSCRIBE / SUNSUBSCRIBE channel on the subscribe connection. Not
 * remembered across reconnects (the caller re-sends after on_up). Returns 0,
 * or RC_E_UNAVAILABLE when the node is not up. */
int gw_node_sub_ssubscribe(struct gw_node *r, const char *channel);
int gw_node_sub_sunsubscribe(struct gw_node *r, const char *channel);

/* host:port as configured (for logs, /healthz); the resolved address. */
const char *gw_node_host(const struct gw_node *r);
int gw_node_port(const struct gw_node *r);

/* The command connection, or NULL while it is not up. Borrowed: valid until
 * the next return to the loop. */
redisAsyncContext *gw_node_cmd(struct gw_node *r);
/* The write connection, likewise: the gateway's writes (their WAIT too). */
redisAsyncContext *gw_node_wr(struct gw_node *r);
/* The write connection's WAIT batch (rc_ackbatch.h), kept by gw_redis_wait.c;
 * the watchdog allows for the WAIT in flight (docs/gateway.md). */
struct rc_ackbatch *gw_node_wr_acks(struct gw_node *r);

/* Writes what is queued on the command connection to the socket now, without
 * waiting (best effort: a full socket keeps the rest). For a last command
 * queued just before gw_node_stop, which frees the connection without
 * writing its buffer (a lock release at shutdown). */
void gw_node_flush(struct gw_node *r);

/* 1 when up (see above). */
int gw_node_is_up(const struct gw_node *r);

/* From INFO cluster, asked on every connect: 1 a cluster node, 0 a plain
 * server, -1 not known yet. Valid once the node was up. */
int gw_node_cluster_enabled(const struct gw_node *r);

/* Why the last attempt or session failed ("" before any failure). */
const char *gw_node_last_error(const struct gw_node *r);

/* Whether the server accepted CONFIG SET for keyspace events (-1 unknown). */
int gw_node_keyspace_ok(const struct gw_node *r);

struct gw_node_stats {
    unsigned long reconnects; /* successful connects after the first */
    unsigned long failures;   /* failed attempts and drops */
    unsigned long resolutions; /* host name lookups started (one per attempt) */
};
void gw_node_get_stats(const struct gw_node *r, struct gw_node_stats *out);

/* Disconnects every connection, stops timers, and frees r once every libuv
 * handle is closed (the loop must keep running until then). Pending command
 * callbacks are called with a NULL reply. */
void gw_node_stop(struct gw_node *r);

#endif
