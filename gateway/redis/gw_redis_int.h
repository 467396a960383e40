/* gw_redis_int.h - the front's state (gw_redis.h), shared by its files only.
 *
 * Files, bottom to top (each calls only those before it, and the nodes):
 *   gw_redis_nodes.c  the node set: seeds, one gw_node per server, the slot
 *                     map, "covered" (up/down), reading CLUSTER SLOTS
 *   gw_redis_chan.c   shard channel subscriptions, placed on the slot's node
 *   gw_redis_route.c  sending a command to its slot's node; MOVED, ASK,
 *                     TRYAGAIN; requests parked until their node is up
 *   gw_redis.c        the public API and the nodes' hooks (which call
 *                     into the three above)
 * Nothing outside gateway/redis/gw_redis*.c includes this file.
 */
#ifndef GW_REDIS_INT_H
#define GW_REDIS_INT_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "rc_ackbatch.h"
#include "rc_hmap.h"
#include "rc_slot.h"
#include "redis/gw_node.h"
#include "redis/gw_redis.h"

#define GW_HOST_MAX 256

enum gw_redis_mode { GW_MODE_PROBING, GW_MODE_SINGLE, GW_MODE_CLUSTER };

/* One server we hold connections to. */
struct gw_rnode {
    struct gw_redis *r;
    struct gw_node *node;    /* stopped and NULL once retired */
    char host[GW_HOST_MAX];
    int port;
    int seed;                /* started from the seed list */
    int up;                  /* node reported up and not down since */
    int nslots;              /* slots mapped to it */
    struct gw_rnode *next;
};

/* A board channel somebody needs (gw_redis_channel_add). */
struct gw_rchan {
    struct rc_hnode h;       /* in r->chans by name */
    char *name;
    unsigned slot;
    unsigned refs;
    struct gw_rnode *on;     /* node SSUBSCRIBE was sent to, or NULL */
    int active;              /* its confirmation came back */
    struct gw_rchan *next;   /* in r->chan_list */
};

/* A routed request in cluster mode (single mode sends straight through). */
struct gw_rreq {
    struct gw_redis *r;
    struct gw_script *s;     /* NULL: a plain command */
    int nkeys;
    int any;                 /* no key: any up node */
    int wr;                  /* a write: the node's write connection (gw_node_wr) */
    unsigned slot;
    gw_redis_reply_cb *cb;
    gw_redis_wait_cb *wcb;   /* instead of cb: WAIT after the reply */
    void *privdata;
    int wait_n;
    int64_t wait_ms;
    struct gw_rnode *sent_to; /* the node of the last send */
    redisAsyncContext *sent_ac; /* and its connection then */
    redisReply *held;        /* the script's reply, copied, while WAIT runs */
    struct rc_ackbatch_item ack; /* in its connection's WAIT batch (gw_redis_wait.c) */
    uint64_t ack_seq;        /* its number there (rc_ackbatch_sent) */
    int hops;                /* redirects and retries so far */
    int tryagains;           /* TRYAGAIN answers so far: the next pause doubles */
    int why;                 /* enum gw_redis_null_why if it ends in NULL now */
    struct gw_rnode *ask;    /* ASK: the next send goes there, after ASKING */
    uint64_t born;           /* loop ms when first sent: retries stop after the ping timeout */
    uint64_t parked_at;      /* loop ms when parked; retry_at: not before */
    uint64_t retry_at;
    struct gw_rreq *next;    /* in r->parked */
    int argc;
    const char **argv;       /* copies, one allocation with the struct */
    size_t *argvlen;
};

struct gw_redis {
    uv_loop_t *loop;
    struct gw_redis_hooks hooks;
    struct gw_node_opts node_opts; /* host/port filled per node; username/password point below */
    char *username, *password;     /* owned copies for every node's AUTH (NULL: none) */
    enum gw_redis_mode mode;
    int stopped;
    int covered;               /* last state reported: 1 after on_up, 0 after on_down */
    int ever_covered;
    char why[512];             /* why not covered */
    char warning[512];         /* a seed left out (gw_redis_warning) */
    struct gw_rnode *nodes;
    struct gw_rnode *slots[RC_SLOTS]; /* cluster: slot -> primary; single: all -> the node */
    int map_known;             /* a CLUSTER SLOTS answer was applied */
    int refreshing;            /* a CLUSTER SLOTS is in flight */
    int refresh_again;         /* another one was asked for meanwhile */
    uv_timer_t refresh_timer;  /* next map read (soon after a change, periodic otherwise) */
    uv_timer_t park_timer;     /* parked requests' retries and deadlines */
    int open_handles;
    struct gw_rreq *parked;
    struct rc_hmap chans;
    struct rc_hash_key chan_key;
    struct gw_rchan *chan_list;
    struct gw_script **scripts; /* borrowed */
    size_t nscripts;
    char **patterns;            /* every node */
    size_t npatterns;
    char *channel_pattern;      /* single mode only */
    struct gw_node_hooks node_hooks; /* data set per node (gw_redis.c's hooks) */
    /* after a map was applied, and before a node is retired (gw_redis.c:
     * channels move, parked requests retry or let go of the node) */
    void (*after_map)(struct gw_redis *r);
    void (*before_retire)(struct gw_redis *r, struct gw_rnode *n);
    struct { char host[GW_HOST_MAX]; int port; } *seeds;
    size_t nseeds;
    struct gw_redis_stats stats;
    unsigned long gone_reconnects, gone_failures, gone_resolutions; /* of retired nodes */
};

/* ---- gw_redis_nodes.c ---- */
/* Starts a node for host:port (seed: from the list) with the scripts and
 * patterns; NULL when out of memory. */
struct gw_rnode *gw_redis_nodes_add(struct gw_redis *r, const char *host, int port, int seed);
/* The node for host:port (by configured host or resolved address), or NULL. */
struct gw_rnode *gw_redis_nodes_find(struct gw_redis *r, const char *host, int port);
/* Stops n's node, unlinks and frees n (before_retire runs first). */
void gw_redis_nodes_retire(struct gw_rnode *n);
/* Recomputes "covered" and calls on_up/on_down on a change. */
void gw_redis_nodes_check_covered(struct gw_redis *r);
/* Reads the slot map soon (delay_ms), unless one is in flight. */
void gw_redis_nodes_refresh_soon(struct gw_redis *r, uint64_t delay_ms);
/* Any node that is up, or NULL. */
struct gw_rnode *gw_redis_nodes_any_up(struct gw_redis *r);
/* Retires every node (stop). */
void gw_redis_nodes_stop_all(struct gw_redis *r);

/* ---- gw_redis_chan.c ---- */
void gw_redis_chan_init(struct gw_redis *r);
int gw_redis_chan_add(struct gw_redis *r, const char *channel);
void gw_redis_chan_remove(struct gw_redis *r, const char *channel);
/* Places every channel on its slot's node (after a map change or a node up). */
void gw_redis_chan_place_all(struct gw_redis *r);
/* A node went down: its channels are nowhere now. */
void gw_redis_chan_node_down(struct gw_redis *r, struct gw_rnode *n);
/* The node confirmed or ended a subscription. */
void gw_redis_chan_on_shard(struct gw_redis *r, struct gw_rnode *n, const char *channel, int subscribed);
/* 1 when a shard message from n on channel is to be delivered. */
int gw_redis_chan_accepts(struct gw_redis *r, struct gw_rnode *n, const char *channel);
void gw_redis_chan_free_all(struct gw_redis *r);

/* ---- gw_redis_route.c ---- */
/* wr: on each node's write connection instead of its command connection. */
int gw_redis_route_send(struct gw_redis *r, struct gw_script *s, int wr, const char *key, size_t keylen, int nkeys,
                  int argc, const char *const *argv, const size_t *argvlen, gw_redis_reply_cb *cb, void *privdata);
/* A script call followed by WAIT (gw_redis_eval_wait), on the write connection. */
int gw_redis_route_send_wait(struct gw_redis *r, struct gw_script *s, int nkeys, int argc, const char *const *argv,
                       const size_t *argvlen, int nreplicas, int64_t timeout_ms, gw_redis_wait_cb *cb,
                       void *privdata);
/* Retries parked requests whose node is up now; fails those past their deadline. */
void gw_redis_route_retry_parked(struct gw_redis *r);
/* Parked requests stop pointing at n (it is being retired). */
void gw_redis_route_forget_node(struct gw_redis *r, struct gw_rnode *n);
/* Fails every parked request (stop). */
void gw_redis_route_fail_parked(struct gw_redis *r);

/* ---- gw_redis_wait.c ---- */

/* q's write answered reply (not an error) and q asks for replicas: q joins
 * its connection's WAIT batch (rc_ackbatch.h) and its callback runs with
 * that batch's WAIT answer (-1: the connection was lost or changed first). */
void gw_redis_wait_add(struct gw_rreq *q, redisReply *reply);

#endif
