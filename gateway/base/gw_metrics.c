/* gw_metrics.c - counters and the Prometheus text rendering. */
#include "base/gw_metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upper bounds of the round-trip histogram, in seconds. */
static const double rtt_bounds[GW_METRICS_RTT_BUCKETS] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                           0.01,   0.025,   0.05,   0.1,   0.25,   1.0};

void gw_metrics_keep_counters(struct gw_metrics *m)
{
    m->connections = 0;
    m->sockets = 0;
    memset(m->subscriptions, 0, sizeof m->subscriptions);
    m->webhooks_in_flight = 0;
}

void gw_metrics_rtt(struct gw_metrics *m, int64_t us)
{
    double s = (double)us / 1e6;
    for (int i = 0; i < GW_METRICS_RTT_BUCKETS; i++) {
        if (s <= rtt_bounds[i]) {
            m->rtt_le[i]++;
            break;
        }
    }
    m->rtt_count++;
    m->rtt_sum_us += us > 0 ? (uint64_t)us : 0;
}

void gw_metrics_error(struct gw_metrics *m, int code)
{
    int i = -code;
    if (i > 0 && i < GW_METRICS_CODES)
        m->errors[i]++;
}

struct out {
    char *buf;
    size_t len, cap;
    int failed;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = o->failed ? 0 : vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
        va_end(ap);
        if (o->failed || n < 0)
            return;
        if ((size_t)n < o->cap - o->len) {
            o->len += (size_t)n;
            return;
        }
        char *bigger = realloc(o->buf, o->cap * 2 + (size_t)n);
        if (!bigger) {
            o->failed = 1;
            return;
        }
        o->buf = bigger;
        o->cap = o->cap * 2 + (size_t)n;
    }
}

static void counter(struct out *o, const char *name, const char *help, uint64_t v)
{
    put(o, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name, (unsigned long long)v);
}

static void gauge(struct out *o, const char *name, const char *help, uint64_t v)
{
    put(o, "# HELP %s %s\n# TYPE %s gauge\n%s %llu\n", name, help, name, name, (unsigned long long)v);
}

/* A label value as the text format wants it: backslash, quote and newline
 * escaped (a node's host comes from the cluster's answers). */
static void put_label(struct out *o, const char *v)
{
    for (const char *p = v; *p; p++) {
        if (*p == '\\')
            put(o, "\\\\");
        else if (*p == '"')
            put(o, "\\\"");
        else if (*p == '\n')
            put(o, "\\n");
        else
            put(o, "%c", *p);
    }
}

/* One series per node: name{node="host:port"} value. */
static void per_node(struct out *o, const struct gw_metrics_redis *rs, const char *name, const char *type,
                     const char *help, uint64_t (*value)(const struct gw_metrics_node *))
{
    put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    for (size_t i = 0; i < rs->nnodes; i++) {
        put(o, "%s{node=\"", name);
        put_label(o, rs->node[i].name ? rs->node[i].name : "");
        put(o, "\"} %llu\n", (unsigned long long)value(&rs->node[i]));
    }
}

static uint64_t node_up(const struct gw_metrics_node *n)
{
    return n->up ? 1 : 0;
}

static uint64_t node_slots(const struct gw_metrics_node *n)
{
    return n->slots > 0 ? (uint64_t)n->slots : 0;
}

static uint64_t node_reconnects(const struct gw_metrics_node *n)
{
    return n->reconnects;
}

static uint64_t node_failures(const struct gw_metrics_node *n)
{
    return n->failures;
}

static void redis_series(struct out *o, const struct gw_metrics_redis *rs)
{
    counter(o, "rankcast_redis_failures_total", "Redis connection attempts that failed and sessions dropped, all nodes",
            rs->failures);
    counter(o, "rankcast_redis_moved_total", "Redis Cluster MOVED redirects followed", rs->moved);
    counter(o, "rankcast_redis_ask_total", "Redis Cluster ASK redirects followed", rs->ask);
    counter(o, "rankcast_redis_tryagain_total", "Redis Cluster TRYAGAIN answers retried", rs->tryagain);
    counter(o, "rankcast_redis_clusterdown_total", "Redis Cluster CLUSTERDOWN/MASTERDOWN answers (unavailable)",
            rs->clusterdown);
    counter(o, "rankcast_redis_slot_map_refreshes_total", "Redis Cluster slot maps read (CLUSTER SLOTS answered)",
            rs->refreshes);
    gauge(o, "rankcast_redis_nodes", "Redis servers the gateway holds connections to now", rs->nodes);
    per_node(o, rs, "rankcast_redis_node_up", "gauge", "1 when the node is up (both connections, scripts loaded)",
             node_up);
    per_node(o, rs, "rankcast_redis_node_slots", "gauge", "Slots the node serves in the slot map", node_slots);
    per_node(o, rs, "rankcast_redis_node_reconnects_total", "counter", "Successful connects to the node after the first",
             node_reconnects);
    per_node(o, rs, "rankcast_redis_node_failures_total", "counter",
             "Failed connection attempts to the node and dropped sessions", node_failures);
}

static void queue_series(struct out *o, const struct gw_metrics_redis *rs)
{
    if (!rs->nqueues)
        return;
    put(o, "# HELP rankcast_queue_length Unapplied entries of a queued board's write queue\n"
           "# TYPE rankcast_queue_length gauge\n");
    for (size_t i = 0; i < rs->nqueues; i++)
        if (rs->queue[i].known)
            put(o, "rankcast_queue_length{board=\"%s\"} %llu\n", rs->queue[i].board,
                (unsigned long long)rs->queue[i].length);
    put(o, "# HELP rankcast_queue_oldest_age_seconds Age of the oldest unapplied entry (0: none)\n"
           "# TYPE rankcast_queue_oldest_age_seconds gauge\n");
    for (size_t i = 0; i < rs->nqueues; i++)
        if (rs->queue[i].known)
            put(o, "rankcast_queue_oldest_age_seconds{board=\"%s\"} %.3f\n", rs->queue[i].board,
                rs->queue[i].oldest_age_s);
    put(o, "# HELP rankcast_queue_lag_max_seconds queue_lag_max: /healthz fails past it\n"
           "# TYPE rankcast_queue_lag_max_seconds gauge\n");
    for (size_t i = 0; i < rs->nqueues; i++)
        put(o, "rankcast_queue_lag_max_seconds{board=\"%s\"} %.3f\n", rs->queue[i].board, rs->queue[i].lag_max_s);
    put(o, "# HELP rankcast_queue_consumer 1 when this gateway applies the board's queue now\n"
           "# TYPE rankcast_queue_consumer gauge\n");
    for (size_t i = 0; i < rs->nqueues; i++)
        put(o, "rankcast_queue_consumer{board=\"%s\"} %d\n", rs->queue[i].board, rs->queue[i].owner ? 1 : 0);
}

/* ---- a worker group's per-worker series ---------------------------------- */

static uint64_t w_up(const struct gw_metrics_worker *w)
{
    return w->pid > 0;
}

static uint64_t w_restarts(const struct gw_metrics_worker *w)
{
    return w->restarts;
}

static uint64_t w_redis_up(const struct gw_metrics_worker *w)
{
    return w->pid > 0 && w->redis_up;
}

static uint64_t w_connections(const struct gw_metrics_worker *w)
{
    return w->m->connections;
}

static uint64_t w_connections_total(const struct gw_metrics_worker *w)
{
    return w->m->connections_total;
}

static uint64_t w_sockets(const struct gw_metrics_worker *w)
{
    return w->m->sockets;
}

static uint64_t w_subscriptions(const struct gw_metrics_worker *w)
{
    uint64_t n = 0;
    for (int i = 0; i < 6; i++)
        n += w->m->subscriptions[i];
    return n;
}

static uint64_t w_writes(const struct gw_metrics_worker *w)
{
    uint64_t n = 0;
    for (int i = 0; i < 4; i++)
        n += w->m->writes[i];
    return n;
}

static uint64_t w_deltas(const struct gw_metrics_worker *w)
{
    return w->m->deltas_sent;
}

static uint64_t w_snapshots(const struct gw_metrics_worker *w)
{
    return w->m->snapshots_sent;
}

static uint64_t w_bytes(const struct gw_metrics_worker *w)
{
    return w->m->bytes_sent;
}

static uint64_t w_drops(const struct gw_metrics_worker *w)
{
    return w->m->queue_drops;
}

/* One labelled family: HELP and TYPE, then name{label="names[i]"} vals[i]
 * for each of the n values, in order. Borrows names and vals. */
static void labelled(struct out *o, const char *name, const char *type, const char *help, const char *label,
                     const char *const *names, const uint64_t *vals, int n)
{
    put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    for (int i = 0; i < n; i++)
        put(o, "%s{%s=\"%s\"} %llu\n", name, label, names[i], (unsigned long long)vals[i]);
}

/* name{worker="N"} value, one line per worker. */
static void per_worker(struct out *o, const struct gw_metrics_worker *w, size_t nw, const char *name, const char *type,
                       const char *help, uint64_t (*value)(const struct gw_metrics_worker *))
{
    put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    for (size_t i = 0; i < nw; i++)
        put(o, "%s{worker=\"%u\"} %llu\n", name, w[i].index, (unsigned long long)value(&w[i]));
}

static void worker_series(struct out *o, const struct gw_metrics_worker *w, size_t nw)
{
    gauge(o, "rankcast_workers", "Worker processes in the group ([server] workers)", (uint64_t)nw);
    put(o, "# HELP rankcast_worker_up 1 while the worker runs (pid: its process id), 0 while it is restarted\n"
           "# TYPE rankcast_worker_up gauge\n");
    for (size_t i = 0; i < nw; i++)
        put(o, "rankcast_worker_up{worker=\"%u\",pid=\"%ld\"} %llu\n", w[i].index, w[i].pid,
            (unsigned long long)w_up(&w[i]));
    per_worker(o, w, nw, "rankcast_worker_restarts_total", "counter", "Times the supervisor started the worker again",
               w_restarts);
    per_worker(o, w, nw, "rankcast_worker_redis_up", "gauge", "1 when the worker's Redis connections are up",
               w_redis_up);
    per_worker(o, w, nw, "rankcast_worker_connections", "gauge", "WebSocket connections the worker holds now",
               w_connections);
    per_worker(o, w, nw, "rankcast_worker_connections_total", "counter", "WebSocket connections the worker accepted",
               w_connections_total);
    per_worker(o, w, nw, "rankcast_worker_sockets", "gauge", "Accepted sockets of any kind the worker holds now",
               w_sockets);
    per_worker(o, w, nw, "rankcast_worker_subscriptions", "gauge", "Subscriptions open on the worker now, all kinds",
               w_subscriptions);
    per_worker(o, w, nw, "rankcast_worker_writes_total", "counter", "Writes the worker accepted, all ops", w_writes);
    per_worker(o, w, nw, "rankcast_worker_deltas_sent_total", "counter", "Delta and event messages the worker queued",
               w_deltas);
    per_worker(o, w, nw, "rankcast_worker_snapshots_sent_total", "counter", "Snapshots the worker queued", w_snapshots);
    per_worker(o, w, nw, "rankcast_worker_bytes_sent_total", "counter", "WebSocket payload bytes the worker wrote",
               w_bytes);
    per_worker(o, w, nw, "rankcast_worker_queue_drops_total", "counter", "Slow readers the worker resynced", w_drops);
}

/* Frames outside requests and the closes they cause (docs/security.md,
 * "Frames"); kinds in the order of enum rc_wsframe_kind. */
static void frame_series(struct out *o, const struct gw_metrics *m)
{
    static const char *const kinds[3] = {"continuation", "ping", "pong"};
    static const char *const reasons[3] = {"frame_budget", "message_timeout", "too_large"};
    const uint64_t closes[3] = {m->ws_closes_frames, m->ws_closes_message, m->ws_closes_too_large};
    labelled(o, "rankcast_frames_total", "counter", "WebSocket continuation, ping and pong frames read, by kind",
             "kind", kinds, m->frames, 3);
    labelled(o, "rankcast_frames_refused_total", "counter", "Of those, frames over the read budgets, by kind", "kind",
             kinds, m->frames_refused, 3);
    labelled(o, "rankcast_ws_closes_total", "counter", "WebSocket connections closed for a budget (1008, or 1009 for too_large), by reason",
             "reason", reasons, closes, 3);
}

char *gw_metrics_render(const struct gw_metrics *m, int redis_up, int scripts_loaded,
                        const struct gw_metrics_redis *rs, const struct gw_metrics_worker *w, size_t nw,
                        size_t *len)
{
    static const char *const views[6] = {"top", "page", "around", "feed", "members", "team"};
    static const char *const visit_on[GW_METRICS_VISITS] = {"subscribe", "unsubscribe", "tick", "event"};
    static const char *const ops[4] = {"incr", "set", "best", "submit"};
    static const char *const view_read[3] = {"around", "page", "members"};
    const char *codes[GW_METRICS_CODES];
    for (int i = 1; i < GW_METRICS_CODES - 1; i++)
        codes[i] = rc_err_code_name(-i);
    struct out o = {malloc(4096), 0, 4096, 0};
    if (!o.buf)
        return NULL;
    gauge(&o, "rankcast_redis_up", "1 when both Redis connections are up", (uint64_t)redis_up);
    gauge(&o, "rankcast_scripts_loaded", "1 when the Lua scripts are loaded", (uint64_t)scripts_loaded);
    gauge(&o, "rankcast_connections", "WebSocket connections open now", m->connections);
    counter(&o, "rankcast_connections_total", "WebSocket connections accepted", m->connections_total);
    gauge(&o, "rankcast_sockets", "accepted sockets open now, of any kind", m->sockets);
    counter(&o, "rankcast_sockets_refused_total", "sockets refused over max_conns or max_conns_per_ip",
            m->sockets_refused);
    counter(&o, "rankcast_handshakes_refused_total",
            "sockets closed at accept, before any read or TLS handshake: their address over ip_handshake_rate",
            m->handshakes_refused);
    counter(&o, "rankcast_sockets_timed_out_total", "sockets closed for late request headers or body",
            m->sockets_timed_out);
    counter(&o, "rankcast_reads_limited_total", "reads answered rate_limited (read rates, max_pending)",
            m->reads_limited);
    counter(&o, "rankcast_replay_reads_waited_total",
            "replay reads put off to a later tick: the connection's or address's read bucket was out of tokens",
            m->replay_reads_waited);
    counter(&o, "rankcast_replay_redis_reads_total",
            "Redis reads made for replays: moment reads and feed log pages (one per read, however many replays share it)",
            m->replay_redis_reads);
    counter(&o, "rankcast_replay_reads_shared_total",
            "replay reads answered by a read made for another replay of the same view (no Redis read of their own)",
            m->replay_reads_shared);
    counter(&o, "rankcast_replay_resets_total",
            "replays ended by a live marked reset: the board went back below a moment they showed (changes lost)",
            m->replay_resets);
    frame_series(&o, m);
    gauge(&o, "rankcast_read_rows_in_flight", "rows of board reads sent to Redis and not answered (read_rows_in_flight)",
          m->read_rows_in_flight);
    gauge(&o, "rankcast_read_rows_in_flight_max", "the most rows of board reads ever in flight at once",
          m->read_rows_in_flight_max);
    gauge(&o, "rankcast_reads_waiting", "board reads waiting for room under read_rows_in_flight", m->reads_waiting);
    counter(&o, "rankcast_reads_waited_total", "board reads that waited for room under read_rows_in_flight",
            m->reads_waited);
    counter(&o, "rankcast_read_rows_limited_total",
            "subscribes answered rate_limited: their connection's or address's rows in flight (conn_read_rows, "
            "ip_read_rows)",
            m->read_rows_limited);
    counter(&o, "rankcast_history_undo_refused_total",
            "reads at a past moment refused out_of_range: more changes back than history_undo_max",
            m->history_undo_refused);
    counter(&o, "rankcast_history_chain_reads_total",
            "reads at a past moment farther than history_undo_max from every base, served in several bounded "
            "calls from the nearer checkpoint",
            m->history_chain_reads);
    counter(&o, "rankcast_history_checkpoints_total",
            "history checkpoints this gateway made (copies of a history = full board's set at a seq)",
            m->history_checkpoints);
    counter(&o, "rankcast_history_checkpoints_dropped_total",
            "history checkpoints this gateway dropped: of another epoch (a reset), older than a trimmed log",
            m->history_checkpoints_dropped);
    labelled(&o, "rankcast_subscriptions", "gauge", "Subscriptions open now, by view kind", "view", views,
             m->subscriptions, 6);
    labelled(&o, "rankcast_writes_total", "counter", "Accepted writes, by op", "op", ops, m->writes, 4);
    counter(&o, "rankcast_duplicate_writes_total", "Writes answered duplicate (req seen)", m->duplicates);
    labelled(&o, "rankcast_errors_total", "counter", "Error replies, by code", "code", codes + 1, m->errors + 1,
             GW_METRICS_CODES - 2);
    counter(&o, "rankcast_deltas_sent_total", "Delta and event messages queued to viewers", m->deltas_sent);
    counter(&o, "rankcast_snapshots_sent_total", "Snapshots queued to viewers", m->snapshots_sent);
    labelled(&o, "rankcast_views_visited_total", "counter", "Views looked at (even only to check them), by what looked",
             "on", visit_on, m->views_visited, GW_METRICS_VISITS);
    counter(&o, "rankcast_feed_gaps_total", "Feed viewers an event reached past a lost seq (filled from the log)",
            m->feed_gaps);
    labelled(&o, "rankcast_view_reads_total", "counter",
             "Redis reads of window views the mirror does not serve (around views, deep pages), by view", "view",
             view_read, m->view_reads, 3);
    counter(&o, "rankcast_view_reads_spared_total",
            "Change events that left an around view or deep page as read (it did not read again)",
            m->view_reads_spared);
    counter(&o, "rankcast_around_cuts_total", "Around views cut from the board's mirror instead of read from Redis",
            m->around_cuts);
    counter(&o, "rankcast_first_answers_deferred_total",
            "Subscribes answered in a later loop turn (a turn answers a bounded number of rows)",
            m->first_deferred);
    counter(&o, "rankcast_list_builds_deferred_total",
            "Member lists' windows built in a later loop turn (a turn builds list_builds_per_turn)",
            m->list_builds_deferred);
    counter(&o, "rankcast_bytes_sent_total", "WebSocket payload bytes written", m->bytes_sent);
    counter(&o, "rankcast_frame_writes_total",
            "Writes of WebSocket frames to sockets (one frame, or several gathered into one)", m->frame_writes);
    counter(&o, "rankcast_frames_gathered_total", "WebSocket frames written gathered, several in one write",
            m->frames_gathered);
    counter(&o, "rankcast_deflate_connections_total", "WebSocket connections that negotiated permessage-deflate",
            m->deflate_conns);
    counter(&o, "rankcast_deflate_messages_total", "Messages written to connections with permessage-deflate",
            m->deflate_sends);
    counter(&o, "rankcast_deflate_compressed_total", "Of those, written compressed", m->deflate_compressed);
    counter(&o, "rankcast_deflate_runs_total", "Compressions made (one per message, shared by its receivers)",
            m->deflate_runs);
    counter(&o, "rankcast_deflate_saved_bytes_total", "WebSocket payload bytes compression saved", m->deflate_saved);
    counter(&o, "rankcast_queue_drops_total", "Slow readers whose queue overflowed (resynced)", m->queue_drops);
    counter(&o, "rankcast_redis_reconnects_total", "Redis reconnects after an outage", m->redis_reconnects);
    counter(&o, "rankcast_keyspace_events_total", "Keyspace notifications received", m->keyspace_events);
    counter(&o, "rankcast_webhooks_sent_total", "Period-close webhooks delivered (2xx)", m->webhooks_sent);
    counter(&o, "rankcast_webhook_failures_total", "Webhook attempts that failed (no response, or not 2xx)",
            m->webhook_failures);
    counter(&o, "rankcast_webhooks_gave_up_total", "Webhook deliveries that ran out of retries", m->webhooks_gave_up);
    gauge(&o, "rankcast_webhooks_in_flight", "Webhook POSTs in flight now", m->webhooks_in_flight);
    counter(&o, "rankcast_queued_writes_total", "Writes to queued boards acked as queued", m->writes_queued);
    counter(&o, "rankcast_queue_full_total", "Writes to queued boards refused: the queue was full", m->queue_full);
    counter(&o, "rankcast_queue_applied_total", "Queued entries this gateway applied", m->queue_applied);
    counter(&o, "rankcast_queue_dropped_total", "Queued entries refused by the write script when applied",
            m->queue_dropped);
    counter(&o, "rankcast_queue_claimed_total", "Queued entries claimed from a consumer idle for claim_after",
            m->queue_claimed);
    if (rs) {
        redis_series(&o, rs);
        queue_series(&o, rs);
    }
    put(&o, "# HELP rankcast_script_rtt_seconds Write script round-trip time\n"
            "# TYPE rankcast_script_rtt_seconds histogram\n");
    uint64_t cum = 0;
    for (int i = 0; i < GW_METRICS_RTT_BUCKETS; i++) {
        cum += m->rtt_le[i];
        put(&o, "rankcast_script_rtt_seconds_bucket{le=\"%g\"} %llu\n", rtt_bounds[i], (unsigned long long)cum);
    }
    put(&o, "rankcast_script_rtt_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)m->rtt_count);
    put(&o, "rankcast_script_rtt_seconds_sum %.6f\n", (double)m->rtt_sum_us / 1e6);
    put(&o, "rankcast_script_rtt_seconds_count %llu\n", (unsigned long long)m->rtt_count);
    if (w && nw)
        worker_series(&o, w, nw);
    if (o.failed) {
        free(o.buf);
        return NULL;
    }
    *len = o.len;
    return o.buf;
}
