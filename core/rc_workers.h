/* rc_workers.h - how many worker processes serve the port ([server] workers,
 * --workers, RANKCAST_WORKERS), what the supervisor does when one ends, and
 * how long it waits before starting it again. Pure: no clock reads, no
 * environment reads; the caller passes the strings and the times. */
#ifndef RC_WORKERS_H
#define RC_WORKERS_H

#include <stdint.h>

#include "rc_err.h"

/* Bounds of `workers`. 1 is today's single process (no supervisor). 64:
 * past the core count nothing is gained, each worker holds its own Redis
 * connections (two per node) and one slot of the shared metrics region, and
 * /metrics prints a few lines per worker; 64 covers the largest machines. */
#define RC_WORKERS_MIN 1
#define RC_WORKERS_MAX 64

/* Parses a worker count: decimal digits only (no sign, no spaces), within
 * RC_WORKERS_MIN..RC_WORKERS_MAX. `what` names the source for the message
 * ("--workers", "RANKCAST_WORKERS"). Returns 0 with *out set, or
 * RC_E_BAD_REQUEST with err set (out untouched). */
int rc_workers_parse(const char *what, const char *text, unsigned *out, struct rc_error *err);

/* flag > environment > file, as every other overridable key: a given flag
 * wins (an empty one is refused), then a non-empty env, then file_value
 * (already checked by the config parser). Returns 0 or RC_E_BAD_REQUEST (err set). */
int rc_workers_resolve(const char *flag, const char *env, unsigned file_value, unsigned *out, struct rc_error *err);

/* A worker that could not start (bad configuration, port not available,
 * state directory not writable) exits with this code (sysexits' EX_CONFIG);
 * starting it again would fail the same way. */
#define RC_WORKER_EXIT_START 78

/* What the supervisor does when a worker ends. */
enum rc_workers_end {
    RC_WORKER_RESTART, /* it died or exited on its own: start it again after rc_workers_restart_delay */
    RC_WORKER_FAIL,    /* it could not start: stop the group, exit non-zero */
    RC_WORKER_DONE     /* the group is stopping: it is done */
};

/* stopping: the supervisor asked the workers to stop. exited: the worker
 * called exit (code valid); otherwise a signal ended it. */
enum rc_workers_end rc_workers_end(int stopping, int exited, int code);

/* Restart backoff: RC_RESTART_FIRST_MS, doubled for each further crash in a
 * row, at most RC_RESTART_MAX_MS; a worker that ran RC_RESTART_STABLE_MS or
 * longer before it ended starts the series over. */
#define RC_RESTART_FIRST_MS 100
#define RC_RESTART_MAX_MS 10000
#define RC_RESTART_STABLE_MS 30000

struct rc_restart {
    unsigned streak; /* ends in a row, each within RC_RESTART_STABLE_MS of its start */
};

/* The worker started at started_ms ended at now_ms (any one clock, ms):
 * returns the wait before starting it again, and counts the end. */
int64_t rc_workers_restart_delay(struct rc_restart *r, int64_t started_ms, int64_t now_ms);

#endif
