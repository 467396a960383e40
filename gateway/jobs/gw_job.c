/* gw_job.c - the skeleton of a background job: timer, commands in flight,
 * warn-once (gw_job.h). */
#include "jobs/gw_job.h"

#include "base/gw_log.h"

void gw_job_init(struct gw_job *j, struct gw_release *rel, const char *kind, const char *board)
{
    j->rel = rel;
    j->busy = 0;
    j->warned = 0;
    j->kind = kind;
    j->board = board;
}

void gw_job_start(struct gw_job *j, uv_loop_t *loop, uv_timer_cb cb, void *data, uint64_t timeout_ms,
                  uint64_t repeat_ms)
{
    uv_timer_init(loop, &j->timer);
    j->timer.data = data;
    uv_timer_start(&j->timer, cb, timeout_ms, repeat_ms);
    gw_release_hold(j->rel);
}

void gw_job_close(struct gw_job *j)
{
    uv_timer_stop(&j->timer);
    gw_release_close(j->rel, (uv_handle_t *)&j->timer);
}

void gw_job_sent(struct gw_job *j)
{
    j->busy++;
    gw_release_hold(j->rel);
}

int gw_job_answered(struct gw_job *j)
{
    int stopping = j->rel->stopping;
    j->busy--;
    gw_release_drop(j->rel); /* stopping: may free the owner, and j with it */
    return stopping ? -1 : 0;
}

int gw_job_idle(const struct gw_job *j)
{
    return !j->rel->stopping && j->busy == 0;
}

void gw_job_warn_once(struct gw_job *j, const char *what, const redisReply *r)
{
    if (j->warned)
        return;
    j->warned = 1;
    gw_log_warn("%s: board %s: %s failed: %.150s", j->kind, j->board, what,
                r && r->type == REDIS_REPLY_ERROR ? r->str : r ? "unexpected reply" : "no answer");
}

void gw_job_warn_err(struct gw_job *j, const char *what, const char *err)
{
    if (j->warned)
        return;
    j->warned = 1;
    gw_log_warn("%s: board %s: %s failed: %.150s", j->kind, j->board, what, err ? err : "unexpected reply");
}

void gw_job_ok(struct gw_job *j)
{
    j->warned = 0;
}
