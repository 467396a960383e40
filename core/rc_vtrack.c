/* rc_vtrack.c - whether a change event can have changed a window read from
 * Redis (the reasoning is in rc_vtrack.h). */
#include "rc_vtrack.h"

#include <string.h>

void rc_vtrack_page(struct rc_vtrack *t, int64_t seq, int64_t offset, int64_t limit, int places)
{
    memset(t, 0, sizeof *t);
    t->ok = seq >= 0 && offset >= 0 && limit > 0;
    t->seq = seq;
    t->places = places;
    t->first = offset + 1;
    t->last = offset + limit;
}

void rc_vtrack_around(struct rc_vtrack *t, int64_t seq, int64_t pos, int64_t radius, int places)
{
    memset(t, 0, sizeof *t);
    t->ok = seq >= 0 && pos >= 0 && radius >= 0;
    t->seq = seq;
    t->around = 1;
    t->places = places;
    t->pos = pos;
    t->radius = radius;
}

void rc_vtrack_forget(struct rc_vtrack *t)
{
    t->ok = 0;
}

/* The ranks whose rows the window shows (and those its places depend on). */
static void window_ranks(const struct rc_vtrack *t, int64_t *lo, int64_t *hi)
{
    if (t->around) {
        /* lua/read.lua: ranks pos - R .. pos + R, clipped at rank 1 */
        *lo = t->pos - t->radius < 1 ? 1 : t->pos - t->radius;
        *hi = t->pos + t->radius;
    } else {
        *lo = t->first;
        *hi = t->last;
    }
    if (t->places) {
        *lo = 1;
        *hi += 1;
    }
}

int rc_vtrack_ranks(const struct rc_vtrack *t, int64_t *lo, int64_t *hi)
{
    if (!t->ok || (t->around && t->pos == 0))
        return 0;
    window_ranks(t, lo, hi);
    return 1;
}

void rc_vtrack_skip(struct rc_vtrack *t, int64_t seq)
{
    if (t->ok && seq > t->seq)
        t->seq = seq; /* (an around view's centre stays: no event passed it) */
}

static int changed(struct rc_vtrack *t)
{
    t->ok = 0;
    return RC_VTRACK_CHANGED;
}

int rc_vtrack_event(struct rc_vtrack *t, int64_t seq, int is_self, int has_old, int64_t old_rank, int has_new,
                    int64_t rank)
{
    if (t->ok && seq <= t->seq)
        return RC_VTRACK_OLD;
    if (!t->ok || seq != t->seq + 1 || !has_old || !has_new || old_rank < 1 || rank < 1)
        return changed(t); /* a gap, a join or leave (total), or not told where */
    if (t->around && is_self)
        return changed(t); /* its own member moved: the window is centred elsewhere */
    if (t->around && t->pos == 0) {
        t->seq = seq; /* empty while its member is not on the board; another's move keeps it so */
        return RC_VTRACK_SAME;
    }
    int64_t a = old_rank < rank ? old_rank : rank, b = old_rank < rank ? rank : old_rank;
    int64_t lo, hi;
    window_ranks(t, &lo, &hi);
    if (b >= lo && a <= hi)
        return changed(t);
    t->seq = seq; /* (an around view's centre lies outside [a, b]: it did not move) */
    return RC_VTRACK_SAME;
}
