/* gw_queue.h - the consumers of write_mode = queued boards (docs/queued.md,
 * DESIGN.md "Scale-out"): every gateway runs one job per queued board; the
 * one holding the board's consumer lock applies the stream's entries in
 * order through lua/write.lua, in pipelined batches, and acknowledges them
 * once applied; entries left pending by a dead gateway are claimed after
 * claim_after. Every job also measures its queue for /metrics and /healthz. */
#ifndef GW_QUEUE_H
#define GW_QUEUE_H

#include <stddef.h>
#include <stdint.h>

struct gw_app;

/* Starts the jobs for every queued board. Call after gw_redis_start (it
 * registers its scripts there). Returns 0 (app->queue stays NULL when no
 * board is queued) or -1. */
int gw_queue_start(struct gw_app *app);

/* Stops the jobs: timers closed, the locks this gateway holds released
 * (sent and flushed: call it before gw_redis_stop). Memory is freed once the
 * timers are closed and every command sent was answered. Safe with
 * app->queue NULL. */
void gw_queue_stop(struct gw_app *app);

/* One queued board's queue as last measured (every QUEUE_STATS_MS). */
struct gw_queue_stats {
    const char *board;          /* borrowed from the configuration */
    int known;                  /* 0 until the first measurement answered */
    int64_t length;             /* unapplied entries (XLEN) */
    int64_t oldest_age_ms;      /* age of the oldest unapplied entry, 0 when none */
    int64_t lag_max_ms;         /* queue_lag_max */
    int owner;                  /* 1 when this gateway applies the board's entries now */
};

/* The i-th queued board's stats (i from 0). Returns 0, or -1 past the last. */
int gw_queue_stats(const struct gw_app *app, size_t i, struct gw_queue_stats *out);

#endif
