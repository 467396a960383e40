/* bench_metrics.h - the gateway's own counters, read by rankcast-bench from
 * GET /metrics (Prometheus text) at the start and the end of a case. */
#ifndef BENCH_METRICS_H
#define BENCH_METRICS_H

#include <stdint.h>

#define BENCH_RTT_MAX 24

struct bench_metrics {
    uint64_t bytes_sent;          /* rankcast_bytes_sent_total: WebSocket payload bytes written */
    uint64_t deltas_sent;         /* rankcast_deltas_sent_total */
    uint64_t deflate_messages;    /* rankcast_deflate_messages_total */
    uint64_t deflate_compressed;  /* rankcast_deflate_compressed_total */
    uint64_t deflate_runs;        /* rankcast_deflate_runs_total */
    uint64_t deflate_conns;       /* rankcast_deflate_connections_total */
    /* rankcast_script_rtt_seconds: the gateway's own time from a write
     * request to its script's reply (the ack is written right then), a
     * cumulative histogram; +Inf last */
    unsigned rtt_n;
    double rtt_le[BENCH_RTT_MAX];   /* bucket bounds, seconds (+Inf: INFINITY) */
    uint64_t rtt_cum[BENCH_RTT_MAX];
};

/* One blocking GET http://host:port/metrics (loopback: well under a
 * millisecond), parsed into out. key: a key with the admin scope, sent as
 * a Bearer token (/metrics needs it unless [server] metrics_public = on);
 * NULL or "": none. 0, or -1 when it could not be read. */
int bench_metrics_read(const char *host, int port, const char *key, struct bench_metrics *out);

#endif
