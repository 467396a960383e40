/* gw_queue_int.h - the queue consumers' own state, shared by the files of
 * jobs/gw_queue* and by nobody else (the public face is gw_queue.h; the
 * design is in gw_queue.c's banner).
 *
 * Files, bottom to top (each calls only those before it):
 *   gw_queue_job.c  one job: sending a command, measuring the queue, the
 *                   consumer lock's callbacks (the timer, commands in
 *                   flight and warn-once: jobs/gw_job)
 *   gw_queue.c      the owner's steps (pending, claim, read, apply, ack),
 *                   the tick, start and stop
 */
#ifndef GW_QUEUE_INT_H
#define GW_QUEUE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>
#include <hiredis/hiredis.h>

#include "base/gw_release.h"
#include "jobs/gw_job.h"
#include "jobs/gw_queue.h"
#include "redis/gw_lock.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_conf.h"
#include "rc_keys.h"
#include "rc_queue.h"

struct gw_app;

#define QUEUE_TICK_MS 10     /* how often an owner looks for entries */
#define QUEUE_STATS_MS 250   /* how often every gateway measures each queue */
#define QUEUE_BATCH 256      /* entries per batch (pipelined): small enough to finish well within claim_after */
#define NUM_MAX 32
#define QUEUE_PENDING_CHECK_MS 500 /* an owner looks at the group's pending entries at least this often */

struct slot {
    struct job *j;
    char id[RC_QUEUE_ID_MAX];
    int answered;           /* 1: the script answered (ack it); 0: no answer (leave pending) */
};

struct job {
    struct gw_queue *q;
    const struct rc_board *board;   /* borrowed from app->conf */
    struct gw_job base;             /* timer, commands in flight, warn-once (jobs/gw_job.h) */
    int owns;                       /* we hold the consumer lock, as far as we know */
    int working;                    /* the owner's step is in flight: XPENDING, a read, a batch, its ack */
    int locking;                    /* a lock acquire is in flight */
    int clean;                      /* every entry we read since the last XPENDING was acknowledged: the
                                       next step may skip XPENDING (at most QUEUE_PENDING_CHECK_MS) */
    size_t nanswered;               /* entries of the batch the script answered */
    uint64_t renewed_at;            /* uv_now when the lock was last taken or its renewal sent */
    int renewing;                   /* a renewal is in flight: no new step until it is answered */
    uint64_t checked_at;            /* uv_now of the last XPENDING sent */
    uint64_t stats_at;              /* uv_now of the last measurement sent */
    int stats_busy;
    struct gw_queue_stats stats;
    char stream[RC_KEY_MAX], lock[RC_KEY_MAX];
    struct slot *batch;             /* QUEUE_BATCH slots */
    size_t nbatch, nwaiting;        /* slots in the batch; writes not answered yet */
};

struct gw_queue {
    struct gw_app *app;             /* borrowed */
    struct gw_release rel;          /* held by every job's timer and every command in flight */
    struct gw_script ack;
    struct gw_lock_scripts lock;
    char token[GW_LOCK_TOKEN_MAX];  /* names this gateway: lock owner and consumer name */
    struct job *jobs;
    size_t njobs;
};

/* ---- gw_queue_job.c ------------------------------------------------------ */

/* Sends argv, routed by the board's stream key. Returns 0 or -1. */
int gw_queue_job_send_cmd(struct job *j, int argc, const char *const *argv, gw_redis_reply_cb *cb);
/* Wall-clock ms (stream ids carry Redis's wall clock). */
int64_t gw_queue_job_wall_ms(void);
/* XLEN and the oldest entry, for /metrics and /healthz. */
void gw_queue_job_send_stats(struct job *j);
void gw_queue_job_lost_lock(struct job *j, const char *why);
void gw_queue_job_on_acquired(int rc, const char *err, void *privdata);
void gw_queue_job_on_renewed(int rc, const char *err, void *privdata);
void gw_queue_job_on_released(int rc, const char *err, void *privdata);

#endif
