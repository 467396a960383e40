/* rc_vtrack_shard.c - a sharded board's member list followed from its
 * shards' change events by composite (the reasoning is in
 * rc_vtrack_shard.h). */
#include "rc_vtrack_shard.h"

#include <math.h>
#include <string.h>

void rc_vtrack_shard_members(struct rc_vtrack *t, struct rc_vtrack_shard *s, int desc, unsigned nshards,
                             const int64_t *listed_seq, const int64_t *counted_seq, int64_t total,
                             struct rc_vtrack_entry *ent, size_t n, const char *const *names, const unsigned *home,
                             int64_t *asof, int places)
{
    int64_t sum = 0;
    int ok = nshards >= 1 && nshards <= RC_SHARDS_MAX && listed_seq && counted_seq && !places &&
             (n == 0 || (names && home && asof));
    memset(s, 0, sizeof *s);
    s->nshards = ok ? nshards : 0;
    s->desc = desc;
    s->names = names;
    s->home = home;
    s->asof = asof;
    for (unsigned j = 0; j < s->nshards; j++) {
        int64_t l = listed_seq[j] < 0 ? counted_seq[j] : listed_seq[j];
        if (counted_seq[j] < 0 || l > counted_seq[j])
            ok = 0;
        s->cur[j] = l;
        s->counted[j] = counted_seq[j];
        sum += counted_seq[j];
    }
    for (size_t i = 0; ok && i < n; i++) {
        size_t row = ent[i].row;
        if (home[row] >= nshards) {
            ok = 0;
            break;
        }
        for (unsigned j = 0; j < nshards; j++)
            asof[row * nshards + j] = j == home[row] ? s->cur[j] : s->counted[j];
    }
    rc_vtrack_members(t, sum, total, ent, n, places);
    if (!ok)
        rc_vtrack_forget(t);
}

/* Whether member m (composite c, of shard sm) is ahead of entry e. */
static int ahead(const struct rc_vtrack_shard *s, const struct rc_vtrack_entry *e, double c, unsigned sm,
                 const char *m)
{
    return rc_shard_before(s->desc, c, sm, m, e->c, s->home[e->row], s->names[e->row]);
}

/* Entries back in rank order after some moved. */
static void sort_by_rank(struct rc_vtrack *t)
{
    for (size_t i = 1; i < t->nent; i++) {
        struct rc_vtrack_entry e = t->ent[i];
        size_t k = i;
        while (k > 0 && t->ent[k - 1].rank > e.rank) {
            t->ent[k] = t->ent[k - 1];
            k--;
        }
        t->ent[k] = e;
    }
}

static int changed(struct rc_vtrack *t)
{
    rc_vtrack_forget(t);
    return RC_VTRACK_CHANGED;
}

/* The entry of member m, or nent. */
static size_t entry_of(const struct rc_vtrack *t, const struct rc_vtrack_shard *s, const char *m)
{
    for (size_t i = 0; i < t->nent; i++)
        if (strcmp(s->names[t->ent[i].row], m) == 0)
            return i;
    return t->nent;
}

int rc_vtrack_shard_event(struct rc_vtrack *t, struct rc_vtrack_shard *s, unsigned shard, int64_t seq, int listed,
                          const char *member, int has_old, double old_c, int has_new, double c, int64_t rank,
                          const int64_t *count_seq)
{
    if (t->ok && shard < s->nshards && seq <= s->cur[shard])
        return RC_VTRACK_OLD;
    if (!t->ok || !t->members || t->places || shard >= s->nshards || seq != s->cur[shard] + 1 || !member ||
        !member[0] || (!has_old && !has_new) || (listed && !has_old))
        return changed(t); /* (a listed member that joins: its row needs a read) */
    unsigned S = s->nshards;
    size_t self = listed ? entry_of(t, s, member) : t->nent;
    if (listed && self == t->nent)
        return changed(t); /* on the board, but not as the tracker knows it */
    if (listed && has_new) {
        if (!count_seq || rank < 1)
            return changed(t);
        for (unsigned j = 0; j < S; j++)
            if (j != shard && count_seq[j] < s->cur[j])
                return changed(t); /* a count older than events already judged */
    }
    s->cur[shard] = seq;
    int any = 0;
    for (size_t i = 0; i < t->nent; i++) {
        struct rc_vtrack_entry *e = &t->ent[i];
        if (i == self || seq <= s->asof[e->row * S + shard])
            continue; /* its own (below), or its rank holds this event already */
        int d = (has_new && ahead(s, e, c, shard, member)) - (has_old && ahead(s, e, old_c, shard, member));
        if (d) {
            e->rank += d;
            any = 1;
        }
    }
    if (self < t->nent) {
        struct rc_vtrack_entry *e = &t->ent[self];
        if (has_new) {
            e->rank = rank;
            e->c = c;
            for (unsigned j = 0; j < S; j++)
                s->asof[e->row * S + j] = j == shard ? seq : count_seq[j];
        } else {
            memmove(e, e + 1, (t->nent - self - 1) * sizeof *e); /* it left the board */
            t->nent--;
        }
        any = 1;
    }
    if (seq > s->counted[shard]) {
        t->seq++;
        if (has_new != has_old) {
            t->total += has_new ? 1 : -1;
            any = 1; /* (total changed: viewers are told) */
        }
    }
    if (!any)
        return RC_VTRACK_SAME;
    sort_by_rank(t);
    return RC_VTRACK_MOVED;
}

void rc_vtrack_shard_seqs(const struct rc_vtrack_shard *s, int64_t *out)
{
    for (unsigned j = 0; j < s->nshards; j++)
        out[j] = s->cur[j] > s->counted[j] ? s->cur[j] : s->counted[j];
}

size_t rc_vtrack_shard_pos(double c)
{
    /* positions mid - top .. mid + top: mid for |c| < 1 (and NaN), mid + 1 +
     * e * 256 + m for c in [2^e, 2^(e+1)) with m its next 8 bits (e capped:
     * larger composites share the last position), mirrored below mid */
    const size_t mid = RC_VINDEX_SPAN / 2, top = (RC_VINDEX_SPAN / 2 - 1) / 256 * 256;
    double a = fabs(c);
    if (!(a >= 1))
        return mid;
    size_t u;
    if (isinf(a)) {
        u = top;
    } else {
        int e;
        double f = frexp(a, &e); /* a = f * 2^e, f in [0.5, 1): e >= 1 */
        size_t m = (size_t)((2 * f - 1) * 256);
        u = (size_t)(e - 1) * 256 + (m > 255 ? 255 : m) + 1;
        if (u > top)
            u = top;
    }
    return c > 0 ? mid + u : mid - u;
}

int rc_vtrack_shard_span(const struct rc_vtrack *t, size_t *lo, size_t *hi)
{
    if (!t->ok || !t->members || t->nent == 0)
        return 0;
    double cmin = t->ent[0].c, cmax = t->ent[0].c;
    for (size_t i = 1; i < t->nent; i++) {
        cmin = t->ent[i].c < cmin ? t->ent[i].c : cmin;
        cmax = t->ent[i].c > cmax ? t->ent[i].c : cmax;
    }
    *lo = rc_vtrack_shard_pos(cmin);
    *hi = rc_vtrack_shard_pos(cmax);
    return 1;
}

void rc_vtrack_shard_skip(struct rc_vtrack *t, struct rc_vtrack_shard *s, const int64_t *seq)
{
    if (!t->ok)
        return;
    int64_t sum = 0;
    for (unsigned j = 0; j < s->nshards; j++) {
        if (seq[j] > s->cur[j])
            s->cur[j] = seq[j];
        sum += s->cur[j] > s->counted[j] ? s->cur[j] : s->counted[j];
    }
    t->seq = sum;
}
