/* rc_ksmatch.c - keyspace "zadd"s counted against change events
 * (rc_ksmatch.h). */
#include "rc_ksmatch.h"

void rc_ksmatch_zadd(struct rc_ksmatch *k)
{
    k->pending++;
}

void rc_ksmatch_event(struct rc_ksmatch *k)
{
    if (k->pending > 0 && --k->pending == 0)
        k->cleared = 1;
}

void rc_ksmatch_clear(struct rc_ksmatch *k)
{
    k->pending = 0;
    k->cleared = 1;
}

int rc_ksmatch_pending(const struct rc_ksmatch *k)
{
    return k->pending > 0;
}

enum rc_ksmatch_verdict rc_ksmatch_tick(struct rc_ksmatch *k)
{
    if (k->pending <= 0) {
        k->waited = 0;
        k->cleared = 0;
        return RC_KSMATCH_NONE;
    }
    if (k->waited && !k->cleared) {
        k->pending = 0;
        k->waited = 0;
        k->cleared = 0;
        return RC_KSMATCH_OUTSIDE;
    }
    k->waited = 1;
    k->cleared = 0;
    return RC_KSMATCH_WAIT;
}
