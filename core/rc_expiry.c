/* rc_expiry.c - key lifetimes of periodic boards (see rc_expiry.h). */
#include "rc_expiry.h"

int rc_expiry_period_ttl_ms(const struct rc_board *b, const struct rc_period *p, int64_t now_ms, int64_t *ttl_ms,
                     struct rc_error *err)
{
    *ttl_ms = 0;
    if (b->period.kind == RC_PERIOD_NONE)
        return 0;
    struct rc_period q = *p;
    for (unsigned i = 0; i < b->keep; i++)
        if (rc_period_next(&b->period, &q, &q) != 0)
            return rc_err_set(err, RC_E_OUT_OF_RANGE, "period past the supported calendar");
    *ttl_ms = q.end_ms - now_ms > 0 ? q.end_ms - now_ms : 1;
    return 0;
}

int rc_expiry_archive_walk(const struct rc_board *b, int64_t now_ms, int64_t grace_ms, int has_next, struct rc_period *next)
{
    struct rc_period cur, oldest;
    if (rc_period_at(&b->period, now_ms - grace_ms, &cur) != 0)
        return RC_E_OUT_OF_RANGE;
    oldest = cur;
    for (unsigned i = 0; i < b->keep; i++)
        if (rc_period_prev(&b->period, &oldest, &oldest) != 0)
            return RC_E_OUT_OF_RANGE;
    if (!has_next || next->start_ms < oldest.start_ms || next->start_ms > cur.start_ms)
        *next = oldest;
    return next->start_ms < cur.start_ms;
}

int rc_expiry_period_kept(const struct rc_board *b, const struct rc_period *p, int64_t now_ms)
{
    struct rc_period q = *p;
    for (unsigned i = 0; i < b->keep; i++)
        if (rc_period_next(&b->period, &q, &q) != 0)
            return 1; /* past the calendar: never expires before it */
    return q.end_ms > now_ms;
}
