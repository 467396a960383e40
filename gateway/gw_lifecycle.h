/* gw_lifecycle.h - the process's stop sequence: SIGINT/SIGTERM, the grace
 * period that lets clients drain, then the hook that stops every module.
 * main owns the modules; this file only owns the signals and the timing, so
 * it can be tested on a real uv loop without lws, Redis or the gateway. */
#ifndef GW_LIFECYCLE_H
#define GW_LIFECYCLE_H

#include <stdint.h>

#include <uv.h>

/* Upward calls into main's wiring, set once at start. */
struct gw_lifecycle_hooks {
    void *data;
    /* First signal: stop accepting work, ask clients to close. */
    void (*begin_stop)(void *data, int signum);
    /* Grace over: stop jobs, Redis and the server (STYLE.md "Known traps"). */
    void (*finish_stop)(void *data);
};

struct gw_lifecycle {
    uv_loop_t *loop;
    uv_signal_t sigint, sigterm;
    uv_timer_t grace;               /* started by the first stop; closed when it fires */
    uint64_t grace_ms;
    struct gw_lifecycle_hooks hooks;
    int stopping;
};

/* Starts watching SIGINT and SIGTERM on `loop`. `lc` is caller-owned and must
 * outlive the loop's last run. Returns 0 or a negative RC_E_* code. */
int gw_lifecycle_start(struct gw_lifecycle *lc, uv_loop_t *loop, uint64_t grace_ms,
                       const struct gw_lifecycle_hooks *hooks);

/* Begins the stop sequence as a signal would (idempotent). */
void gw_lifecycle_stop(struct gw_lifecycle *lc, int signum);

/* Closes the signal handles without stopping (a start that failed later). */
void gw_lifecycle_close(struct gw_lifecycle *lc);

#endif
