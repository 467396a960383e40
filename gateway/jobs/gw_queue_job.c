/* gw_queue_job.c - one queue consumer job (see gw_queue_int.h, and
 * gw_queue.c's banner for the design): sending a command, measuring the
 * queue, the consumer lock's callbacks. */
#include "jobs/gw_queue_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uv.h>
#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "redis/gw_lock.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "redis/gw_write.h"
#include "rc_err.h"
#include "rc_lua.h"
#include "rc_queue.h"
#include "rc_write_args.h"

/* ---- sending ---------------------------------------------------------------- */

int gw_queue_job_send_cmd(struct job *j, int argc, const char *const *argv, gw_redis_reply_cb *cb)
{
    struct gw_redis *redis = j->q->app->redis;
    if (!redis || gw_redis_command(redis, j->stream, strlen(j->stream), argc, argv, NULL, cb, j) != 0)
        return -1;
    gw_job_sent(&j->base);
    return 0;
}

/* Wall-clock ms: stream ids carry Redis's wall clock (the app clock may be
 * shifted by tests, so it is not used for ages). */
int64_t gw_queue_job_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- measuring the queue ------------------------------------------------------ */

static void on_len(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0)
        return;
    if (r && r->type == REDIS_REPLY_INTEGER)
        j->stats.length = r->integer;
}

static void on_oldest(redisReply *r, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0)
        return;
    j->stats_busy = 0;
    if (!r || r->type != REDIS_REPLY_ARRAY)
        return;
    int64_t ms;
    j->stats.known = 1;
    j->stats.oldest_age_ms = 0;
    if (r->elements > 0 && r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements > 0 &&
        r->element[0]->element[0]->type == REDIS_REPLY_STRING &&
        rc_queue_id_ms(r->element[0]->element[0]->str, &ms) == 0) {
        int64_t age = gw_queue_job_wall_ms() - ms;
        j->stats.oldest_age_ms = age > 0 ? age : 0;
    }
}

void gw_queue_job_send_stats(struct job *j)
{
    const char *xlen[] = {"XLEN", j->stream};
    const char *xrange[] = {"XRANGE", j->stream, "-", "+", "COUNT", "1"};
    if (gw_queue_job_send_cmd(j, 2, xlen, on_len) == 0 && gw_queue_job_send_cmd(j, 6, xrange, on_oldest) == 0)
        j->stats_busy = 1;
}

/* ---- the lock ---------------------------------------------------------------------- */

void gw_queue_job_lost_lock(struct job *j, const char *why)
{
    if (!j->owns)
        return;
    j->owns = 0;
    j->stats.owner = 0;
    j->clean = 0;
    gw_log_info("queue: board %s: this gateway no longer applies its queue (%s)", j->board->name, why);
}

void gw_queue_job_on_acquired(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    if (gw_job_answered(&j->base) != 0)
        return;
    j->locking = 0;
    if (rc == 1) {
        j->owns = j->stats.owner = 1;
        j->clean = 0; /* a dead consumer's entries may be pending */
        j->renewed_at = uv_now(j->q->app->loop);
        gw_log_info("queue: board %s: this gateway now applies its queue (consumer %s)", j->board->name,
                    j->q->token);
    } else if (rc == RC_E_INTERNAL && !j->base.warned) {
        j->base.warned = 1;
        gw_log_warn("queue: board %s: taking the consumer lock failed: %.150s", j->board->name, err ? err : "?");
    }
}

void gw_queue_job_on_renewed(int rc, const char *err, void *privdata)
{
    struct job *j = privdata;
    (void)err;
    if (gw_job_answered(&j->base) != 0)
        return;
    j->renewing = 0;
    if (rc == 0)
        gw_queue_job_lost_lock(j, "its lock expired");
}

void gw_queue_job_on_released(int rc, const char *err, void *privdata)
{
    (void)rc;
    (void)err;
    struct job *j = privdata;
    gw_job_answered(&j->base);
}
