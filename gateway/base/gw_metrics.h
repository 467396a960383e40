/* gw_metrics.h - the gateway's counters, rendered as Prometheus text for
 * /metrics. Plain integers bumped on the loop thread: no locking needed.
 * Only uint64_t fields, so a worker group can publish and sum them as an
 * array of words (base/gw_group.h). */
#ifndef GW_METRICS_H
#define GW_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "rc_err.h"
#include "rc_proto.h"

#define GW_METRICS_RTT_BUCKETS 12
#define GW_METRICS_CODES 11 /* indexed by -code, RC_OK .. RC_E_NOT_FOUND */
/* views_visited[]: what looked at views (docs/gateway.md, "What a view costs") */
#define GW_METRICS_VISIT_SUBSCRIBE 0   /* a subscribe, at its own view */
#define GW_METRICS_VISIT_UNSUBSCRIBE 1 /* an unsubscribe or a closed viewer, at its own view */
#define GW_METRICS_VISIT_TICK 2        /* the tick (and the refresh after a reload or profile fetch) */
#define GW_METRICS_VISIT_EVENT 3       /* a change event, at the read views (around, deep pages) it reached */
#define GW_METRICS_VISITS 4

struct gw_metrics {
    uint64_t connections;                 /* WebSocket connections open now */
    uint64_t connections_total;
    uint64_t sockets;                     /* accepted sockets open now, of any kind */
    uint64_t sockets_refused;             /* closed at accept or answered 503: over max_conns(_per_ip) */
    uint64_t handshakes_refused;          /* closed at accept: the address over ip_handshake_rate */
    uint64_t sockets_timed_out;           /* closed for late headers or a late body */
    uint64_t reads_limited;               /* reads answered rate_limited (read buckets, max_pending) */
    uint64_t replay_reads_waited;         /* replay reads put off: their connection's or address's read
                                             bucket was out of tokens (fanout/gw_replay.c) */
    uint64_t replay_redis_reads;          /* Redis reads made for replays (fanout/gw_replay_share.c) */
    uint64_t replay_reads_shared;         /* replay reads answered by another replay's (same file) */
    uint64_t replay_resets;               /* replays ended by live "reset": the board went back (fanout/gw_replay.c) */
    uint64_t frames[3];                   /* continuation, ping, pong frames read (enum rc_wsframe_kind) */
    uint64_t frames_refused[3];           /* of those, over the read buckets (serve/gw_ws_frames.c) */
    uint64_t ws_closes_frames;            /* WebSocket connections closed 1008: frames over budget */
    uint64_t ws_closes_message;           /* closed 1008: a message unfinished after message_timeout */
    uint64_t ws_closes_too_large;         /* closed 1009: a message over max_frame */
    uint64_t subscriptions[6];            /* open now, by enum rc_view_kind (members, team last) */
    uint64_t writes[4];                   /* accepted writes by op: incr set best submit */
    uint64_t duplicates;                  /* writes answered duplicate */
    uint64_t writes_queued;               /* writes to queued boards acked as queued */
    uint64_t queue_full;                  /* writes to queued boards refused: queue full */
    uint64_t queue_applied;               /* queued entries this gateway applied (script answered ok) */
    uint64_t queue_dropped;               /* queued entries the script refused at apply (out_of_range,
                                             blocked since, bad entry): acknowledged, not applied */
    uint64_t queue_claimed;               /* entries claimed from another consumer (claim_after) */
    uint64_t errors[GW_METRICS_CODES];    /* error replies by code */
    uint64_t deltas_sent;                 /* delta/event messages queued to viewers */
    uint64_t snapshots_sent;
    uint64_t views_visited[GW_METRICS_VISITS]; /* views looked at, even only to check them, by GW_METRICS_VISIT_* */
    uint64_t feed_gaps;                   /* feed viewers an event reached past a lost seq: filled from the log */
    uint64_t view_reads[3];               /* Redis reads of views the mirror does not serve: [0] around, [1] pages,
                                             [2] member lists */
    uint64_t first_deferred;              /* subscribes whose first answer waited for a later loop turn */
    uint64_t list_builds_deferred;        /* member lists' builds that waited for a later loop turn */
    uint64_t view_reads_spared;           /* change events that left such a view's rows as read (no read) */
    uint64_t around_cuts;                 /* around views cut from the mirror instead of read */
    uint64_t bytes_sent;                  /* WebSocket payload bytes written */
    uint64_t frame_writes;                /* writes of WebSocket frames: one frame, or several gathered */
    uint64_t frames_gathered;             /* frames that went out gathered, several in one write */
    uint64_t queue_drops;                 /* slow readers whose queue overflowed */
    uint64_t deflate_conns;               /* connections that negotiated permessage-deflate (total) */
    uint64_t deflate_sends;               /* messages written to connections with permessage-deflate */
    uint64_t deflate_compressed;          /* of those, written compressed */
    uint64_t deflate_runs;                /* compressions made (one per message, shared by its receivers) */
    uint64_t deflate_saved;               /* payload bytes compression saved */
    uint64_t redis_reconnects;
    uint64_t keyspace_events;
    uint64_t webhooks_sent;               /* webhook deliveries answered 2xx */
    uint64_t webhook_failures;            /* webhook attempts that failed (no response, or not 2xx) */
    uint64_t webhooks_gave_up;            /* deliveries that ran out of retries */
    uint64_t webhooks_in_flight;          /* webhook POSTs in flight now */
    uint64_t rtt_le[GW_METRICS_RTT_BUCKETS]; /* script round trips <= bound (cumulative at render) */
    uint64_t rtt_count;
    uint64_t rtt_sum_us;                  /* microseconds */
    uint64_t read_rows_in_flight;         /* rows of board reads sent to Redis, not answered (store/gw_read_gate.h) */
    uint64_t read_rows_in_flight_max;     /* the most there ever were */
    uint64_t reads_waiting;               /* board reads waiting for room under read_rows_in_flight now */
    uint64_t reads_waited;                /* board reads that had to wait (total) */
    uint64_t read_rows_limited;           /* subscribes answered rate_limited by conn_read_rows / ip_read_rows */
    uint64_t history_undo_refused;        /* moment reads refused out_of_range past history_undo_max */
    uint64_t history_chain_reads;         /* moments served by a chain of bounded calls (store/gw_read_at_chain.c) */
    uint64_t history_checkpoints;         /* history checkpoints this gateway made (jobs/gw_ckpt.c) */
    uint64_t history_checkpoints_dropped; /* checkpoints it dropped: another epoch, a trimmed log */
};

_Static_assert(sizeof(struct gw_metrics) % sizeof(uint64_t) == 0, "struct gw_metrics is uint64_t words");
#define GW_METRICS_WORDS (sizeof(struct gw_metrics) / sizeof(uint64_t))

/* One worker of a group (workers > 1), for its labelled lines: what its
 * slot of the shared region held at the render (base/gw_group.h). */
struct gw_metrics_worker {
    unsigned index;                       /* 0..workers-1: the label worker="N" */
    long pid;                             /* 0: no worker in the slot now (being restarted) */
    int redis_up;
    uint64_t restarts;                    /* times the supervisor started this slot again */
    const struct gw_metrics *m;           /* borrowed for the render */
};

/* One Redis server, as /metrics shows it. Gathered by the caller (serve/,
 * from redis/gw_redis.h) for one render: base/ never asks redis/ itself. */
struct gw_metrics_node {
    const char *name;                     /* "host:port" ("[v6]:port"), borrowed for the render */
    int up;
    int slots;                            /* slots it serves (single mode: all) */
    uint64_t reconnects, failures;
};

/* One queued board's queue (write_mode = queued), gathered by the caller
 * from jobs/gw_queue.h like gw_metrics_node. */
struct gw_metrics_queue {
    const char *board;                    /* borrowed for the render */
    int known;                            /* 0: not measured yet (left out) */
    uint64_t length;                      /* unapplied entries */
    double oldest_age_s;                  /* age of the oldest unapplied entry (0: none) */
    double lag_max_s;                     /* queue_lag_max */
    int owner;                            /* this gateway applies it now */
};

/* The Redis side of one render (counters summed over every node, retired
 * ones included), gathered like gw_metrics_node. */
struct gw_metrics_redis {
    uint64_t failures;                    /* failed attempts and drops */
    uint64_t moved, ask, tryagain, clusterdown; /* cluster answers followed or given up on */
    uint64_t refreshes;                   /* slot map reads answered */
    uint64_t nodes;                       /* nodes held now */
    const struct gw_metrics_node *node;   /* borrowed for the render; nnodes of them */
    size_t nnodes;
    const struct gw_metrics_queue *queue; /* borrowed for the render; nqueues of them */
    size_t nqueues;
};

/* Zeroes the gauges of m (connections, sockets, subscriptions, webhooks in
 * flight), leaving the counters: what a dead worker leaves to the group's
 * totals (base/gw_group.h). */
void gw_metrics_keep_counters(struct gw_metrics *m);

/* Records one script round trip of `us` microseconds. */
void gw_metrics_rtt(struct gw_metrics *m, int64_t us);

/* Counts an error reply of `code`. */
void gw_metrics_error(struct gw_metrics *m, int code);

/* Renders the Prometheus text exposition into a malloc'd string (caller
 * frees), with redis_up and scripts_loaded gauges and the Redis series from
 * the caller (rs borrowed; NULL leaves the Redis counters and per-node
 * series out). With a group (w: nw workers, borrowed; NULL and 0 for one
 * process), m is the group's sum and per-worker series follow
 * (docs/gateway.md, "Workers"). NULL when out of memory. */
char *gw_metrics_render(const struct gw_metrics *m, int redis_up, int scripts_loaded,
                        const struct gw_metrics_redis *rs, const struct gw_metrics_worker *w, size_t nw,
                        size_t *len);

#endif
