/* gw_node_int.h - the connection manager's state, shared by its files only.
 *
 * gw_node is split by job, bottom to top (each calls only those before it):
 *   gw_redis_resolve.c  the host name to an address, off the loop
 *   gw_node_link.c     the state machine: attempts, backoff, PING watchdog,
 *                       failure, "up" (the banner there has the rules)
 *   gw_node_probe.c    whether keyspace notifications arrive, when CONFIG
 *                       cannot tell
 *   gw_node_setup.c    the command connection's setup: keyspace events and
 *                       SCRIPT LOAD; the write connection's (AUTH, PING)
 *   gw_node_sub.c      the subscribe connection: PSUBSCRIBE and messages
 *   gw_node.c          the public API (gw_node.h) and the wiring
 * The link starts each connection's setup (and the probe once up) through
 * the function pointers below (set by gw_node.c), so it never calls up into
 * setup, probe or sub.
 * Nothing outside gateway/redis/gw_node*.c includes this file.
 */
#ifndef GW_NODE_INT_H
#define GW_NODE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include "rc_ackbatch.h"
#include "base/gw_release.h"
#include "redis/gw_node.h"
#include "redis/gw_redis_resolve.h"

enum gw_node_state { GW_ST_WAITING, GW_ST_CONNECTING, GW_ST_UP, GW_ST_STOPPED };

struct gw_node_conn {
    redisAsyncContext *ac; /* NULL when none; memory owned by hiredis */
    int dropping;          /* redisAsyncFree called, disconnect callback pending */
    int setup_sent;        /* every setup command of this attempt was queued */
    int auth_out;          /* AUTH sent, its answer not read yet (the raw subscribe connection) */
};

struct gw_node {
    uv_loop_t *loop; /* borrowed */
    struct gw_node_opts opts;
    char *host; /* owned copy of opts.host */
    char *username, *password; /* owned copies (NULL: none); opts' pointers point here */
    struct gw_node_hooks hooks;
    enum gw_node_state state;
    /* cmd: reads, scripts of the jobs, setup; sub: pub/sub; wr: writes and
     * the watchdog PING only, so neither queues behind a backlog of reads
     * (docs/gateway.md, "The Redis links") */
    struct gw_node_conn cmd, sub, wr;
    /* queue each connection's setup (link -> setup/sub, see the banner) */
    void (*setup_cmd)(struct gw_node *r);
    void (*setup_sub)(struct gw_node *r);
    void (*setup_wr)(struct gw_node *r);
    void (*after_up)(struct gw_node *r); /* the state is UP, before on_up */
    struct gw_redis_resolver resolver;
    char addr[GW_REDIS_ADDR_MAX]; /* host resolved for the current attempt */
    uv_timer_t retry;    /* next attempt (backoff) */
    uv_timer_t ping;     /* PING every ping_every_ms while UP */
    uv_timer_t deadline; /* resolve, setup or PING answer overdue: drop */
    struct gw_release rel; /* holds: timers not closed yet, a running lookup after stop; busy: a context left */
    int setup_pending;   /* setup replies still expected (CONNECTING only) */
    int ping_out;        /* a watchdog PING is unanswered */
    struct rc_ackbatch wr_acks; /* the write connection's WAIT batch (gw_redis_wait.c) */
    int keyspace_ok;               /* 1 on, 0 missing, -1 not known (gw_node_probe.c) */
    int probe;                     /* the keyspace probe's step (gw_node_probe.c) */
    unsigned probe_heard;          /* its notifications heard so far */
    int cluster_enabled;           /* from INFO cluster at setup: 1, 0, -1 unknown */
    char last_error[256];          /* why the last attempt or session ended ("" none yet) */
    int ever_up;
    unsigned tries;                /* failures since the last UP: backoff exponent */
    unsigned long outage_failures; /* failures since the last UP: log throttle */
    uint64_t rng;
    struct gw_node_stats stats;
    struct gw_script **scripts; /* borrowed elements */
    size_t nscripts;
    char **patterns; /* owned copies */
    size_t npatterns;
};

/* ---- gw_node_link.c ---- */

/* Timers, resolver and first attempt (from the retry timer at 0 ms). */
void gw_node_link_init(struct gw_node *r);
/* STOPPED: drops the three connections, cancels the lookup, closes the timers;
 * r is freed once the last of them reports back. */
void gw_node_link_stop(struct gw_node *r);
/* Ends the attempt or session: see the banner of gw_node_link.c. */
void gw_node_link_fail(struct gw_node *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One setup reply arrived (counts only while CONNECTING); may call on_up. */
void gw_node_link_step_done(struct gw_node *r);
/* Which of our three connections ac is, or NULL. */
struct gw_node_conn *gw_node_link_conn_of(struct gw_node *r, const redisAsyncContext *ac);
/* "command", "subscribe" or "write": c in log lines and errors. */
const char *gw_node_link_conn_name(const struct gw_node *r, const struct gw_node_conn *c);
/* c has a connected context that we are not dropping. */
int gw_node_link_connected(const struct gw_node_conn *c);
/* A reply that belongs to the live attempt: not a NULL from a teardown, not
 * from a context we are dropping, not after stop. */
int gw_node_link_is_live(const struct gw_node *r, const struct gw_node_conn *c, const redisAsyncContext *ac,
                          const redisReply *reply);
/* Queues AUTH as c's first command when a password is set (one setup
 * step). raw: c is in the adapter's raw mode (the subscribe connection).
 * Returns 0 (sent, or nothing to send) or RC_E_UNAVAILABLE. */
int gw_node_link_send_auth(struct gw_node *r, struct gw_node_conn *c, int raw);
/* AUTH answered with an error on c: ends the attempt with a reason that
 * names the user and the connection, never the password. */
void gw_node_link_auth_refused(struct gw_node *r, const struct gw_node_conn *c, const char *why);
/* The setup PING's reply callback (either connection): one step done. */
void gw_node_link_on_setup_pong(redisAsyncContext *ac, void *reply, void *privdata);

#endif
