/* rc_ksteam.c - a team membership's keyspace notifications counted
 * against its team messages (rc_ksteam.h). */
#include "rc_ksteam.h"

void rc_ksteam_heard(struct rc_ksteam *k, int del)
{
    if (del)
        k->dels++;
    else
        k->heard++;
}

void rc_ksteam_explained(struct rc_ksteam *k, int64_t writes)
{
    k->explained += writes;
}

int rc_ksteam_pending(const struct rc_ksteam *k)
{
    return k->heard || k->explained || k->dels;
}

void rc_ksteam_clear(struct rc_ksteam *k)
{
    *k = (struct rc_ksteam){0};
}

enum rc_ksteam_verdict rc_ksteam_tick(struct rc_ksteam *k, int64_t now_us, int64_t wait_us)
{
    if (k->heard <= k->explained && !k->dels) {
        rc_ksteam_clear(k); /* (more explained: 'h' not in notify-keyspace-events) */
        return RC_KSTEAM_NONE;
    }
    if (!k->since) {
        k->since = now_us ? now_us : 1;
        k->mark = k->heard;
        return RC_KSTEAM_WAIT;
    }
    if (now_us - k->since < wait_us)
        return RC_KSTEAM_WAIT;
    if (!k->dels && k->explained >= k->mark) {
        /* what was heard by the mark is explained (its messages came late):
         * mark what is unexplained now */
        k->since = now_us ? now_us : 1;
        k->mark = k->heard;
        return RC_KSTEAM_WAIT;
    }
    rc_ksteam_clear(k);
    return RC_KSTEAM_OUTSIDE;
}
