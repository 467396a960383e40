/* gw_job.h - the skeleton of a background job on a timer (jobs/gw_decay*,
 * jobs/gw_queue*): its timer, closed at stop and freed only after its close
 * callback; the count of its commands in flight, so a reply that comes back
 * after stop touches nothing; and warn-once logging.
 *
 * The owner (struct gw_decay, struct gw_queue) embeds a struct gw_release
 * (base/gw_release.h) that every job's timer and every command in flight
 * holds; it frees itself in the release's free callback, once it stopped,
 * every timer is closed and every command was answered (gw_redis_stop answers
 * the pending ones with NULL), whichever comes last. */
#ifndef GW_JOB_H
#define GW_JOB_H

#include <stdint.h>

#include <uv.h>
#include <hiredis/hiredis.h>

#include "base/gw_release.h"

struct gw_job {
    struct gw_release *rel;  /* the owner's: held by the timer and each command in flight */
    uv_timer_t timer;        /* timer.data: what gw_job_start was given */
    unsigned busy;           /* this job's commands not answered yet */
    int warned;              /* an error was logged; quiet until gw_job_ok */
    const char *kind;        /* "decay", "queue": the log lines' prefix */
    const char *board;       /* the board's name in the log lines (borrowed; read at each line) */
};

/* j for the owner's rel; kind and board are borrowed for j's lifetime. */
void gw_job_init(struct gw_job *j, struct gw_release *rel, const char *kind, const char *board);

/* Starts j's timer on loop (cb gets timer.data = data), which holds rel
 * until gw_job_close's close callback. */
void gw_job_start(struct gw_job *j, uv_loop_t *loop, uv_timer_cb cb, void *data, uint64_t timeout_ms,
                  uint64_t repeat_ms);

/* Stops and closes j's timer (started by gw_job_start). */
void gw_job_close(struct gw_job *j);

/* A command of j went out: its reply callback must call gw_job_answered. */
void gw_job_sent(struct gw_job *j);

/* Every reply callback starts here: the command is answered. Returns 0 when
 * the caller may go on, or -1 when the owner is stopping (it may be freed by
 * then: touch nothing). */
int gw_job_answered(struct gw_job *j);

/* 1 when j may start a step: the owner is not stopping and nothing j sent
 * is unanswered. */
int gw_job_idle(const struct gw_job *j);

/* Logs "KIND: board B: WHAT failed: WHY" once (WHY: r's error text,
 * "unexpected reply", or "no answer" for NULL), until gw_job_ok. */
void gw_job_warn_once(struct gw_job *j, const char *what, const redisReply *r);
/* The same with an error text (NULL: "unexpected reply"). */
void gw_job_warn_err(struct gw_job *j, const char *what, const char *err);
/* A success: the next failure is logged again. */
void gw_job_ok(struct gw_job *j);

#endif
