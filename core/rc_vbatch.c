/* rc_vbatch.c - a run of change events judged once for every member list
 * standing at its start (the rule is in rc_vbatch.h). */
#include "rc_vbatch.h"

#include <stdlib.h>
#include <string.h>

#include "rc_shard.h"

/* One key of the run: an event's old (which 0) or new (which 1) one. */
struct key {
    double c;
    const char *m;
    uint32_t ev;
    uint16_t which;
    uint16_t desc; /* the board's order (qsort passes no argument) */
};

/* An event by its member's name. */
struct byname {
    const char *m;
    uint32_t i;
};

struct pw {
    int64_t place;
    int w;
};

struct scratch {
    struct key *key;   /* [2n] */
    uint32_t *gid;     /* [2n] by event * 2 + which: its key's group (equal keys: one group) */
    int64_t *bit;      /* [2n + 1] Fenwick tree of counts by group */
    int64_t *p;        /* [2n] by event * 2 + which: its key's place at the start */
    struct pw *pw;     /* [2n] */
    struct byname *byname; /* [n] events by member, then seq */
    int64_t *place, *before;     /* [2n], [2n + 1] */
    struct rc_vbatch_mover *mov; /* [n] */
    const char **joins;          /* [n] */
    int32_t *movat;              /* [2n] */
    uint32_t *bucket;            /* [BUCKETS(2n)] */
};

#define BUCKETS(npl) (4 * (npl) + 16) /* most: a few places a bucket at most, about one */

void rc_vbatch_init(struct rc_vbatch *b)
{
    memset(b, 0, sizeof *b);
}

static void scratch_free(struct scratch *s)
{
    if (!s)
        return;
    free(s->key);
    free(s->gid);
    free(s->bit);
    free(s->p);
    free(s->pw);
    free(s->byname);
    free(s->place);
    free(s->before);
    free(s->mov);
    free(s->joins);
    free(s->movat);
    free(s->bucket);
    free(s);
}

void rc_vbatch_free(struct rc_vbatch *b)
{
    scratch_free(b->scratch);
    rc_vbatch_init(b);
}

static int grow(struct rc_vbatch *b, size_t n)
{
    if (b->scratch && n <= b->cap)
        return 0;
    size_t cap = n < 64 ? 64 : n * 2;
    struct scratch *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->key = malloc(2 * cap * sizeof *s->key);
    s->gid = malloc(2 * cap * sizeof *s->gid);
    s->bit = malloc((2 * cap + 1) * sizeof *s->bit);
    s->p = malloc(2 * cap * sizeof *s->p);
    s->pw = malloc(2 * cap * sizeof *s->pw);
    s->byname = malloc(cap * sizeof *s->byname);
    s->place = malloc(2 * cap * sizeof *s->place);
    s->before = malloc((2 * cap + 1) * sizeof *s->before);
    s->mov = malloc(cap * sizeof *s->mov);
    s->joins = malloc(cap * sizeof *s->joins);
    s->movat = malloc(2 * cap * sizeof *s->movat);
    s->bucket = malloc(BUCKETS(2 * cap) * sizeof *s->bucket);
    if (!s->movat || !s->bucket || !s->key || !s->gid || !s->bit || !s->p || !s->pw || !s->byname || !s->place || !s->before || !s->mov ||
        !s->joins) {
        scratch_free(s);
        return -1;
    }
    scratch_free(b->scratch);
    b->scratch = s;
    b->cap = cap;
    return 0;
}

static int key_cmp(const void *x, const void *y)
{
    const struct key *a = x, *z = y;
    if (rc_shard_before(a->desc, a->c, 0, a->m, z->c, 0, z->m))
        return -1;
    return a->c == z->c && strcmp(a->m, z->m) == 0 ? 0 : 1; /* (equal, else after) */
}

static int name_cmp(const void *x, const void *y)
{
    const struct byname *a = x, *z = y;
    int c = strcmp(a->m, z->m);
    return c ? c : (a->i > z->i) - (a->i < z->i);
}

static int pw_cmp(const void *x, const void *y)
{
    const struct pw *a = x, *z = y;
    return (a->place > z->place) - (a->place < z->place);
}

static int mov_cmp(const void *x, const void *y)
{
    const struct rc_vbatch_mover *a = x, *z = y;
    return (a->place > z->place) - (a->place < z->place);
}

/* Fenwick tree over groups 0..g-1: add d at group i; the sum over groups [0, i). */
static void bit_add(int64_t *bit, size_t g, uint32_t i, int64_t d)
{
    for (size_t k = (size_t)i + 1; k <= g; k += k & (~k + 1))
        bit[k] += d;
}

static int64_t bit_before(const int64_t *bit, uint32_t i)
{
    int64_t s = 0;
    for (size_t k = i; k > 0; k -= k & (~k + 1))
        s += bit[k];
    return s;
}

static int fail(struct rc_vbatch *b)
{
    b->ok = 0;
    return -1;
}

int rc_vbatch_make(struct rc_vbatch *b, int desc, int64_t seq0, const struct rc_vbatch_ev *ev, size_t n)
{
    b->ok = 0;
    b->seq0 = seq0;
    b->seq1 = seq0 + (int64_t)n;
    b->dtotal = 0;
    b->npl = b->nmov = b->njoins = 0;
    if (n > UINT32_MAX / 2 || grow(b, n) != 0)
        return fail(b);
    struct scratch *s = b->scratch;
    size_t nk = 0;
    for (size_t i = 0; i < n; i++) {
        const struct rc_vbatch_ev *e = &ev[i];
        if (!e->member || !e->member[0] || (!e->has_old && !e->has_new) || (e->has_old && e->old_rank < 1) ||
            (e->has_new && e->rank < 1))
            return fail(b);
        if (e->has_old)
            s->key[nk++] = (struct key){e->old_c, e->member, (uint32_t)i, 0, (uint16_t)(desc != 0)};
        if (e->has_new)
            s->key[nk++] = (struct key){e->c, e->member, (uint32_t)i, 1, (uint16_t)(desc != 0)};
    }
    /* the run's keys in the board's order, equal ones one group */
    qsort(s->key, nk, sizeof *s->key, key_cmp);
    size_t g = 0;
    for (size_t k = 0; k < nk; k++) {
        if (k > 0 && key_cmp(&s->key[k - 1], &s->key[k]) != 0)
            g++;
        s->gid[s->key[k].ev * 2 + s->key[k].which] = (uint32_t)g;
    }
    g += nk ? 1 : 0;
    memset(s->bit, 0, (g + 1) * sizeof *s->bit);
    /* each key's place at the start: its rank at its event, less the
     * shift by the run's events up to there (the old key before its own
     * event, the new one after it) */
    size_t npw = 0;
    for (size_t i = 0; i < n; i++) {
        const struct rc_vbatch_ev *e = &ev[i];
        uint32_t go = s->gid[i * 2], gn = s->gid[i * 2 + 1];
        if (e->has_old) {
            int64_t p = e->old_rank - 1 - bit_before(s->bit, go);
            if (p < 0)
                return fail(b); /* (ranks that no board can have: not this way) */
            s->p[i * 2] = p;
            s->pw[npw++] = (struct pw){p, -1};
            bit_add(s->bit, g, go, -1);
        }
        if (e->has_new) {
            bit_add(s->bit, g, gn, +1);
            int64_t p = e->rank - 1 - bit_before(s->bit, gn);
            if (p < 0)
                return fail(b);
            s->p[i * 2 + 1] = p;
            s->pw[npw++] = (struct pw){p, +1};
        }
        b->dtotal += (e->has_new ? 1 : 0) - (e->has_old ? 1 : 0);
    }
    /* the places, each with the shift of a key past it */
    qsort(s->pw, npw, sizeof *s->pw, pw_cmp);
    int64_t sum = 0;
    s->before[0] = 0;
    for (size_t k = 0; k < npw; k++) {
        if (b->npl == 0 || s->place[b->npl - 1] != s->pw[k].place) {
            s->place[b->npl] = s->pw[k].place;
            s->before[b->npl] = sum;
            b->npl++;
        }
        sum += s->pw[k].w;
        s->before[b->npl] = sum;
    }
    /* the movers: each member's first event says where it stood, its last
     * where it ends (then shifted by the events after it) */
    for (size_t i = 0; i < n; i++)
        s->byname[i] = (struct byname){ev[i].member, (uint32_t)i};
    qsort(s->byname, n, sizeof *s->byname, name_cmp);
    for (size_t k = 0; k < n;) {
        size_t z = k;
        while (z + 1 < n && strcmp(s->byname[z + 1].m, s->byname[k].m) == 0)
            z++;
        uint32_t first = s->byname[k].i, last = s->byname[z].i;
        int joined = 0;
        for (size_t j = k; j <= z; j++)
            joined |= !ev[s->byname[j].i].has_old;
        if (joined)
            s->joins[b->njoins++] = ev[first].member;
        if (ev[first].has_old) {
            struct rc_vbatch_mover m = {s->p[first * 2], 0, 0};
            if (ev[last].has_new) {
                m.rank = s->p[last * 2 + 1] + bit_before(s->bit, s->gid[last * 2 + 1]) + 1;
                m.c = ev[last].c;
                if (m.rank < 1)
                    return fail(b);
            }
            s->mov[b->nmov++] = m;
        }
        k = z + 1;
    }
    qsort(s->mov, b->nmov, sizeof *s->mov, mov_cmp);
    for (size_t k = 1; k < b->nmov; k++)
        if (s->mov[k].place == s->mov[k - 1].place)
            return fail(b); /* (two members at one rank at the start: ranks that contradict) */
    /* which place each mover stood at, and the buckets of places */
    for (size_t t = 0, k = 0; t < b->npl; t++) {
        while (k < b->nmov && s->mov[k].place < s->place[t])
            k++;
        s->movat[t] = k < b->nmov && s->mov[k].place == s->place[t] ? (int32_t)k : -1;
    }
    int64_t maxp = b->npl ? s->place[b->npl - 1] : 0;
    unsigned sh = 0;
    while (sh < 62 && (uint64_t)(maxp >> sh) + 2 > BUCKETS(b->npl))
        sh++;
    b->bshift = sh;
    b->nbucket = (size_t)(maxp >> sh) + 2;
    for (size_t k = 0, t = 0; k < b->nbucket; k++) {
        while (t < b->npl && s->place[t] < (int64_t)((uint64_t)k << sh))
            t++;
        s->bucket[k] = (uint32_t)t;
    }
    b->movat = s->movat;
    b->bucket = s->bucket;
    b->place = s->place;
    b->before = s->before;
    b->mov = s->mov;
    b->joins = s->joins;
    b->ok = 1;
    return 0;
}

/* The first t with place[t] >= r (npl when none), from r's bucket. */
static size_t first_place(const struct rc_vbatch *b, int64_t r)
{
    uint64_t k = (uint64_t)r >> b->bshift;
    size_t t = b->bucket[k < b->nbucket ? k : b->nbucket - 1];
    while (t < b->npl && b->place[t] < r)
        t++;
    return t;
}

int rc_vbatch_apply(const struct rc_vbatch *b, struct rc_vtrack *t)
{
    if (!b->ok || !t->ok || !t->members || t->cut || t->places || t->seq != b->seq0 ||
        t->nent > RC_VBATCH_ENTRIES_MAX)
        return -1;
    struct rc_vtrack_entry moved[RC_VBATCH_ENTRIES_MAX];
    struct rc_vtrack_entry *ent = t->ent;
    size_t k = 0, nm = 0;
    int any = b->dtotal != 0;
    for (size_t i = 0; i < t->nent; i++) {
        struct rc_vtrack_entry e = ent[i];
        size_t p = first_place(b, e.rank); /* the places before it: p < rank */
        if (p > 0 && b->movat[p - 1] >= 0 && b->place[p - 1] == e.rank - 1) {
            const struct rc_vbatch_mover *m = &b->mov[b->movat[p - 1]]; /* it stood there: it moved */
            if (!m->rank) {
                any = 1; /* it left */
                continue;
            }
            any |= m->rank != e.rank || m->c != e.c;
            moved[nm++] = (struct rc_vtrack_entry){m->rank, m->c, e.row};
            continue;
        }
        int64_t r = e.rank + b->before[p];
        any |= r != e.rank;
        ent[k++] = (struct rc_vtrack_entry){r, e.c, e.row};
    }
    /* the movers back in by rank (few: insertion), merged from the end */
    for (size_t i = 1; i < nm; i++) {
        struct rc_vtrack_entry e = moved[i];
        size_t j = i;
        for (; j > 0 && moved[j - 1].rank > e.rank; j--)
            moved[j] = moved[j - 1];
        moved[j] = e;
    }
    size_t n = k + nm, a = k, z = nm;
    while (z > 0) {
        if (a > 0 && ent[a - 1].rank > moved[z - 1].rank)
            ent[a + z - 1] = ent[a - 1], a--;
        else
            ent[a + z - 1] = moved[z - 1], z--;
    }
    rc_vtrack_members_moved(t, b->seq1, t->total + b->dtotal, n);
    return any ? RC_VTRACK_MOVED : RC_VTRACK_SAME;
}

void rc_vbatch_prefetch(const struct rc_vtrack *t)
{
    if (!t->members || !t->ent)
        return;
    const char *p = (const char *)t->ent, *end = (const char *)(t->ent + t->nent);
    for (; p < end; p += 64) /* (a cache line) */
        __builtin_prefetch(p, 1);
}
