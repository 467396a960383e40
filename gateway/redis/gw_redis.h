/* gw_redis.h - the gateway's Redis: one server or a Redis Cluster, found out
 * by itself. Everything above gateway/redis/ talks to Redis through this.
 *
 * `seeds` is one HOST:PORT or a comma-separated list. Every seed gets a node
 * (redis/gw_node.h: a command and a subscribe connection, kept alive, scripts
 * loaded, patterns subscribed) that asks INFO cluster on connect; the first
 * seed to answer decides:
 * - a plain server (cluster_enabled:0), given as the only seed: single mode.
 *   Every command goes to it, exactly as before clusters existed.
 * - a cluster node: cluster mode. The slot map comes from CLUSTER SLOTS; one
 *   node per primary (created and stopped as the map changes); each command
 *   goes to the primary of its key's slot (CRC16 of the hash tag); MOVED
 *   updates the map and retries there, ASK retries once on the named node
 *   after ASKING, TRYAGAIN retries after a pause; CLUSTERDOWN, a slot with no
 *   reachable primary and a lost connection answer NULL (the caller says
 *   unavailable: nothing is known to be written, never a false ack).
 *   A plain server in a list of several seeds is reported and left out.
 * Change events: on one server the caller's pattern (gw_redis_channel_pattern)
 * covers every board channel; on a cluster the scripts SPUBLISH and each
 * channel the caller adds is SSUBSCRIBEd on the node that owns its slot, and
 * moved when the slot moves or a replica takes over; on_channel_ready tells
 * the caller each time a channel's subscription (re)starts, so it re-reads
 * what it may have missed. Keyspace patterns (gw_redis_psubscribe) go to every
 * node: notifications are per node.
 */
#ifndef GW_REDIS_H
#define GW_REDIS_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>
#include <hiredis/hiredis.h>

#include "redis/gw_script.h"

struct gw_redis;

struct gw_redis_hooks {
    void *data;
    /* Every key can be served again (first time, or after an outage). */
    void (*on_up)(void *data);
    /* Some keys cannot be served any more (once per outage). */
    void (*on_down)(void *data, const char *reason);
    /* A message: the pattern that matched (NULL for a shard channel's
     * message on a cluster), channel, payload (borrowed for the call only;
     * payload is not NUL-terminated, use len). */
    void (*on_message)(void *data, const char *pattern, const char *channel, const char *payload,
                       size_t len);
    /* Cluster mode: channel's subscription (re)started on its node; events
     * published from now on arrive. May be NULL. */
    void (*on_channel_ready)(void *data, const char *channel);
};

struct gw_redis_opts {
    const char *seeds;          /* borrowed for the call: "HOST:PORT[,HOST:PORT...]",
                                 * each optionally redis://HOST:PORT */
    int64_t backoff_min_ms;     /* first retry delay, e.g. 50 */
    int64_t backoff_max_ms;     /* cap, from config reconnect_max */
    int64_t ping_every_ms;      /* watchdog period, e.g. 1000 */
    int64_t ping_timeout_ms;    /* no PONG within this: drop and reconnect */
    int keyspace_events;        /* 1: CONFIG SET notify-keyspace-events on connect */
    const char *username;       /* borrowed for the call (copied): ACL user for AUTH, NULL = none */
    const char *password;       /* borrowed for the call (copied): AUTH on every connection to every
                                 * node (seeds, primaries from the slot map and redirects); NULL = none */
};

/* Creates the front and starts connecting. Borrows loop and hooks' data;
 * copies opts. Returns NULL when seeds is not a list of HOST:PORT (reason
 * logged) or memory runs out. */
struct gw_redis *gw_redis_start(uv_loop_t *loop, const struct gw_redis_opts *opts,
                                const struct gw_redis_hooks *hooks);

/* Registers a script to load on every node, on every connect. Borrowed: s
 * must outlive r. */
void gw_redis_add_script(struct gw_redis *r, struct gw_script *s);

/* PSUBSCRIBE pattern on every node, now and after every reconnect (keyspace
 * notifications). Returns 0, RC_E_BAD_REQUEST (empty) or RC_E_INTERNAL. */
int gw_redis_psubscribe(struct gw_redis *r, const char *pattern);

/* Single mode only: the pattern that covers every board channel (PUBLISH
 * from the scripts). Not subscribed on a cluster (the scripts SPUBLISH
 * there). Returns as gw_redis_psubscribe. */
int gw_redis_channel_pattern(struct gw_redis *r, const char *pattern);

/* A board channel the caller needs (counted: as many removes as adds).
 * Cluster: SSUBSCRIBEd on its slot's primary, kept there; single: the
 * pattern covers it. Returns 0 or RC_E_INTERNAL (out of memory). */
int gw_redis_channel_add(struct gw_redis *r, const char *channel);
void gw_redis_channel_remove(struct gw_redis *r, const char *channel);

/* 1 in cluster mode, 0 single, -1 not known yet (nothing answered). */
int gw_redis_is_cluster(const struct gw_redis *r);

typedef void gw_redis_reply_cb(redisReply *reply, void *privdata);

/* Why a reply callback got NULL, asked inside that callback (one loop
 * thread: the value is set just before the call and reset after it).
 * GW_REDIS_NULL_LOST is the only one whose outcome is unknown: the command
 * was in flight when its connection went. The others were never run by
 * Redis (a redirect or TRYAGAIN means not run), so the caller may say so. */
enum gw_redis_null_why {
    GW_REDIS_NULL_LOST = 0,    /* in flight on a lost connection: outcome unknown */
    GW_REDIS_NULL_MOVING,      /* not run: the slot is being migrated (TRYAGAIN, ASK) past the retry time */
    GW_REDIS_NULL_NOT_RUN,     /* not run: no reachable or ready primary for the slot in time */
};
enum gw_redis_null_why gw_redis_route_why_null(void);
/* The cause as a phrase for a client's error message (static text). */
const char *gw_redis_route_why_text(enum gw_redis_null_why why);

/* EVALSHA of s with nkeys (>= 1) keys followed by the other args:
 * argv[0..argc) (keys first), routed by argv[0]'s slot. Copies argv. cb gets
 * the reply (borrowed), or NULL when nothing is known (connection lost,
 * cluster down, redirected too often). Returns 0, or when nothing was sent
 * (cb is not called): RC_E_UNAVAILABLE (no reachable node for the key),
 * RC_E_INTERNAL (out of memory, or s has no SHA-1 yet). */
int gw_redis_eval(struct gw_redis *r, struct gw_script *s, int nkeys, int argc, const char *const *argv,
                  const size_t *argvlen, gw_redis_reply_cb *cb, void *privdata);

/* As gw_redis_eval, on each node's write connection: the clients' writes,
 * which must not wait behind a backlog of page reads on the command
 * connection (Redis answers a connection in order; docs/gateway.md "The
 * Redis links"). Nothing else should go there: it is what the watchdog
 * PING measures. */
int gw_redis_eval_write(struct gw_redis *r, struct gw_script *s, int nkeys, int argc, const char *const *argv,
                        const size_t *argvlen, gw_redis_reply_cb *cb, void *privdata);

/* As gw_redis_eval_write, then, when the script answered (not with an error),
 * WAIT nreplicas timeout_ms on the node that ran it: cb gets the script's
 * reply (borrowed) and how many replicas confirmed the write (-1 when WAIT
 * could not be asked or answered: the write is done, its copies unknown). */
typedef void gw_redis_wait_cb(redisReply *reply, int replicas, void *privdata);
int gw_redis_eval_wait(struct gw_redis *r, struct gw_script *s, int nkeys, int argc, const char *const *argv,
                       const size_t *argvlen, int nreplicas, int64_t timeout_ms, gw_redis_wait_cb *cb,
                       void *privdata);

/* Any other command, routed by key (keylen bytes; NULL: any node). argvlen
 * NULL: strlen. cb may be NULL. Returns as gw_redis_eval. */
int gw_redis_command(struct gw_redis *r, const char *key, size_t keylen, int argc, const char *const *argv,
                     const size_t *argvlen, gw_redis_reply_cb *cb, void *privdata);

/* Writes what is queued on every command connection to its socket now
 * (best effort): for a last command queued just before gw_redis_stop, which
 * frees the connections without writing their buffers. */
void gw_redis_flush(struct gw_redis *r);

/* 1 when every key can be served: the one server is up, or every slot has a
 * primary that is up. */
int gw_redis_is_up(const struct gw_redis *r);

/* Whether the servers accepted CONFIG SET for keyspace events: 1 all of
 * those up did, 0 one refused, -1 unknown. */
int gw_redis_keyspace_ok(const struct gw_redis *r);

struct gw_redis_stats {
    unsigned long reconnects;   /* successful connects after the first, all nodes */
    unsigned long failures;     /* failed attempts and drops, all nodes */
    unsigned long resolutions;  /* host name lookups started, all nodes */
    unsigned long moved;        /* MOVED redirects followed */
    unsigned long ask;          /* ASK redirects followed */
    unsigned long tryagain;     /* TRYAGAIN answers retried */
    unsigned long clusterdown;  /* CLUSTERDOWN/MASTERDOWN answers (unavailable) */
    unsigned long refreshes;    /* slot map reads (CLUSTER SLOTS) answered */
    unsigned long nodes;        /* nodes now */
};
void gw_redis_get_stats(const struct gw_redis *r, struct gw_redis_stats *out);

/* One node's state, for /healthz and /metrics: index 0.. until it returns
 * non-zero. */
struct gw_redis_node_info {
    const char *host; /* borrowed until the next return to the loop */
    int port;
    int up;
    int primary_slots;          /* slots it serves in the map (single: 16384) */
    unsigned long reconnects, failures;
    const char *last_error;     /* "" when none */
};
int gw_redis_node_info(const struct gw_redis *r, size_t i, struct gw_redis_node_info *out);

/* Why keys cannot be served right now ("" when up), for /healthz. Borrowed
 * until the next call. */
const char *gw_redis_why_down(struct gw_redis *r);

/* A problem with the seeds that does not stop service (a plain server in a
 * list of cluster seeds), "" when none. */
const char *gw_redis_warning(const struct gw_redis *r);

/* Disconnects everything, stops timers, frees r once every libuv handle is
 * closed (the loop must keep running). Pending callbacks get NULL replies. */
void gw_redis_stop(struct gw_redis *r);

#endif
