/* gw_lifecycle.c - one job: turn the first SIGINT/SIGTERM into an orderly
 * stop. Signals are closed at once (a second signal is ignored), clients get
 * SHUTDOWN grace to drain, then main's finish hook stops the modules in the
 * order STYLE.md's "Known traps" describes. */
#include "gw_lifecycle.h"

#include <string.h>

#include "rc_err.h"

static void on_grace_over(uv_timer_t *t)
{
    struct gw_lifecycle *lc = t->data;
    uv_close((uv_handle_t *)t, NULL);
    lc->hooks.finish_stop(lc->hooks.data);
}

static void close_signals(struct gw_lifecycle *lc)
{
    if (!uv_is_closing((uv_handle_t *)&lc->sigint))
        uv_close((uv_handle_t *)&lc->sigint, NULL);
    if (!uv_is_closing((uv_handle_t *)&lc->sigterm))
        uv_close((uv_handle_t *)&lc->sigterm, NULL);
}

void gw_lifecycle_stop(struct gw_lifecycle *lc, int signum)
{
    if (lc->stopping)
        return;
    lc->stopping = 1;
    close_signals(lc);
    lc->hooks.begin_stop(lc->hooks.data, signum);
    /* The grace timer lives in `lc`: nothing to allocate, so a stop cannot
     * fail for want of memory (it used to call on_grace_over(NULL)). */
    uv_timer_init(lc->loop, &lc->grace);
    lc->grace.data = lc;
    uv_timer_start(&lc->grace, on_grace_over, lc->grace_ms, 0);
}

static void on_signal(uv_signal_t *s, int signum)
{
    gw_lifecycle_stop(s->data, signum);
}

int gw_lifecycle_start(struct gw_lifecycle *lc, uv_loop_t *loop, uint64_t grace_ms,
                       const struct gw_lifecycle_hooks *hooks)
{
    memset(lc, 0, sizeof *lc);
    lc->loop = loop;
    lc->grace_ms = grace_ms;
    lc->hooks = *hooks;
    if (uv_signal_init(loop, &lc->sigint) != 0 || uv_signal_init(loop, &lc->sigterm) != 0)
        return RC_E_INTERNAL;
    lc->sigint.data = lc->sigterm.data = lc;
    if (uv_signal_start(&lc->sigint, on_signal, SIGINT) != 0 ||
        uv_signal_start(&lc->sigterm, on_signal, SIGTERM) != 0)
        return RC_E_INTERNAL;
    return 0;
}

void gw_lifecycle_close(struct gw_lifecycle *lc)
{
    lc->stopping = 1;
    close_signals(lc);
}
