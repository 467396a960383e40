/* rc_conf_msg.c - one job: the config load's error messages ("FILE:LINE:
 * reason") and the forms values are quoted in (durations, sizes, sections).
 * Messages never quote an API key secret (rc_conf_key.c). */
#include "rc_conf_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "rc_err.h"

/* ---------------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------------ */

/* Fails the load: err->msg = "FILE:LINE: reason". Always RC_E_BAD_REQUEST. */
int rc_conf__fail(struct parser *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int rc_conf__fail(struct parser *p, int line, const char *fmt, ...)
{
    char reason[RC_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return rc_err_set(p->err, RC_E_BAD_REQUEST, "%s:%d: %s", p->file, line, reason);
}

/* "90s", "24h", "1500ms": the largest unit that divides ms exactly. */
const char *rc_conf__fmt_dur(int64_t ms, char *buf, size_t cap)
{
    static const struct { int64_t ms; const char *unit; } units[] = {
        {MS_W, "w"}, {MS_D, "d"}, {MS_H, "h"}, {MS_M, "m"}, {MS_S, "s"}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (ms != 0 && ms % units[i].ms == 0) {
            snprintf(buf, cap, "%" PRId64 "%s", ms / units[i].ms, units[i].unit);
            return buf;
        }
    }
    snprintf(buf, cap, "%" PRId64 "ms", ms);
    return buf;
}

/* "64k", "1m", "300": the byte form the config itself accepts. */
const char *rc_conf__fmt_bytes(int64_t n, char *buf, size_t cap)
{
    if (n != 0 && n % MIB == 0)
        snprintf(buf, cap, "%" PRId64 "m", n / MIB);
    else if (n != 0 && n % KIB == 0)
        snprintf(buf, cap, "%" PRId64 "k", n / KIB);
    else
        snprintf(buf, cap, "%" PRId64, n);
    return buf;
}

/* The open section as written in the file: "[server]", "[board demo]". */
const char *rc_conf__sec_label(const struct parser *p, char *buf, size_t cap)
{
    switch (p->sec) {
    case SEC_SERVER: return "[server]";
    case SEC_REDIS: return "[redis]";
    case SEC_LIMITS: return "[limits]";
    case SEC_AUTH: return "[auth]";
    case SEC_WEBHOOK: return "[webhook]";
    case SEC_BOARD:
        snprintf(buf, cap, "[board %s]", p->board->name);
        return buf;
    case SEC_KEY:
        snprintf(buf, cap, "[key %s]", p->key->name);
        return buf;
    default: return "(no section)";
    }
}
