/* rc_workers.c - one job: the worker count and the supervisor's restart
 * policy (rc_workers.h). */
#include "rc_workers.h"

#include <stddef.h>

int rc_workers_parse(const char *what, const char *text, unsigned *out, struct rc_error *err)
{
    unsigned long v = 0;
    const char *p = text ? text : "";
    if (!*p)
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s: empty; give a number of worker processes, %d..%d", what,
                            RC_WORKERS_MIN, RC_WORKERS_MAX);
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || v > RC_WORKERS_MAX)
            break;
        v = v * 10 + (unsigned long)(*p - '0');
    }
    if (*p && (*p < '0' || *p > '9'))
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s: '%.40s' is not a number of worker processes (%d..%d)", what,
                            text, RC_WORKERS_MIN, RC_WORKERS_MAX);
    if (*p || v < RC_WORKERS_MIN || v > RC_WORKERS_MAX)
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s: %.40s worker processes is out of range (%d..%d)", what, text,
                            RC_WORKERS_MIN, RC_WORKERS_MAX);
    *out = (unsigned)v;
    return 0;
}

int rc_workers_resolve(const char *flag, const char *env, unsigned file_value, unsigned *out, struct rc_error *err)
{
    if (flag)
        return rc_workers_parse("--workers", flag, out, err);
    if (env && *env)
        return rc_workers_parse("RANKCAST_WORKERS", env, out, err);
    if (file_value < RC_WORKERS_MIN || file_value > RC_WORKERS_MAX)
        return rc_err_set(err, RC_E_BAD_REQUEST, "[server] workers: %u is out of range (%d..%d)", file_value,
                            RC_WORKERS_MIN, RC_WORKERS_MAX);
    *out = file_value;
    return 0;
}

enum rc_workers_end rc_workers_end(int stopping, int exited, int code)
{
    if (stopping)
        return RC_WORKER_DONE;
    if (exited && code == RC_WORKER_EXIT_START)
        return RC_WORKER_FAIL;
    return RC_WORKER_RESTART;
}

int64_t rc_workers_restart_delay(struct rc_restart *r, int64_t started_ms, int64_t now_ms)
{
    if (now_ms - started_ms >= RC_RESTART_STABLE_MS)
        r->streak = 0;
    int64_t d = RC_RESTART_FIRST_MS;
    for (unsigned i = 0; i < r->streak && d < RC_RESTART_MAX_MS; i++)
        d *= 2;
    if (d > RC_RESTART_MAX_MS)
        d = RC_RESTART_MAX_MS;
    r->streak++;
    return d;
}
