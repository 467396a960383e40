/* rc_vtrack_shard.c - a sharded board's member list followed from its
 * shards' change events by composite (the reasoning is in
 * rc_vtrack_shard.h). */
#include "rc_vtrack_shard.h"

#include <string.h>

void rc_vtrack_shard_members(struct rc_vtrack *t, struct rc_vtrack_shard *s, int desc, unsigned nshards,
                             const int64_t *listed_seq, const int64_t *counted_seq, int64_t total,
                             struct rc_vtrack_entry *ent, size_t n, const char *const *names, const unsigned *home,
                             int places)
{
    int64_t sum = 0;
    int ok = nshards >= 1 && nshards <= RC_SHARDS_MAX && listed_seq && counted_seq && !places &&
             (n == 0 || (names && home));
    memset(s, 0, sizeof *s);
    s->nshards = ok ? nshards : 0;
    s->desc = desc;
    s->names = names;
    s->home = home;
    for (unsigned j = 0; j < s->nshards; j++) {
        int64_t l = listed_seq[j] < 0 ? counted_seq[j] : listed_seq[j];
        if (counted_seq[j] < 0 || l > counted_seq[j])
            ok = 0;
        s->cur[j] = l;
        s->counted[j] = counted_seq[j];
        sum += counted_seq[j];
    }
    for (size_t i = 0; ok && i < n; i++)
        if (home[ent[i].row] >= nshards)
            ok = 0;
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

/* Entries back in rank order after some moved (a few, by one each). */
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

int rc_vtrack_shard_event(struct rc_vtrack *t, struct rc_vtrack_shard *s, unsigned shard, int64_t seq, int listed,
                          const char *member, int has_old, double old_c, int has_new, double c)
{
    if (t->ok && shard < s->nshards && seq <= s->cur[shard])
        return RC_VTRACK_OLD;
    if (!t->ok || !t->members || t->places || shard >= s->nshards || seq != s->cur[shard] + 1 || listed ||
        !member || !member[0] || (!has_old && !has_new)) {
        rc_vtrack_forget(t);
        return RC_VTRACK_CHANGED;
    }
    int late = seq > s->counted[shard]; /* the counts and total were read before it */
    int any = 0;
    s->cur[shard] = seq;
    for (size_t i = 0; i < t->nent; i++) {
        struct rc_vtrack_entry *e = &t->ent[i];
        if (!late && s->home[e->row] != shard)
            continue; /* its count on this shard already holds the event */
        int d = (has_new && ahead(s, e, c, shard, member)) - (has_old && ahead(s, e, old_c, shard, member));
        if (d) {
            e->rank += d;
            any = 1;
        }
    }
    if (late) {
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
