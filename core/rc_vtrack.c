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

#define NEAR_BANDS 256 /* bits of rc_vtrack.near */

static unsigned band_of(const struct rc_vtrack *t, int64_t r)
{
    int64_t k = r <= 1 ? 0 : (r - 1) / t->band;
    return k >= NEAR_BANDS - 1 ? NEAR_BANDS - 1 : (unsigned)k;
}

static void near_set(struct rc_vtrack *t, int64_t r)
{
    unsigned k = band_of(t, r);
    t->near[k / 64] |= (uint64_t)1 << (k % 64);
}

/* The bits exactly where the entries are. */
static void near_exact(struct rc_vtrack *t)
{
    t->near_stale = 0;
    memset(t->near, 0, sizeof t->near);
    for (size_t i = 0; i < t->nent; i++)
        near_set(t, t->ent[i].rank);
}

/* 0 when no entry can be at ranks [lo, hi]. */
static int near_any(const struct rc_vtrack *t, int64_t lo, int64_t hi)
{
    unsigned a = band_of(t, lo), z = band_of(t, hi);
    for (unsigned w = a / 64; w <= z / 64; w++) {
        uint64_t m = t->near[w];
        if (w == a / 64)
            m &= ~(uint64_t)0 << (a % 64);
        if (w == z / 64 && z % 64 != 63)
            m &= ((uint64_t)1 << (z % 64 + 1)) - 1;
        if (m)
            return 1;
    }
    return 0;
}

void rc_vtrack_members(struct rc_vtrack *t, int64_t seq, int64_t total, struct rc_vtrack_entry *ent, size_t n,
                       int places)
{
    memset(t, 0, sizeof *t);
    t->ok = seq >= 0 && total >= 0 && (n == 0 || ent != NULL);
    t->seq = seq;
    t->total = total;
    t->members = 1;
    t->places = places;
    t->ent = ent;
    t->nent = n;
    t->band = total / NEAR_BANDS + 1; /* (the board as read; ranks past the bands fall in the last) */
    if (t->ok)
        near_exact(t);
}

void rc_vtrack_members_moved(struct rc_vtrack *t, int64_t seq, int64_t total, size_t n)
{
    t->seq = seq;
    t->total = total;
    t->nent = n;
    t->near_stale = 1; /* (made exact when an event is judged alone: runs do not look at them) */
}

void rc_vtrack_members_cut(struct rc_vtrack *t)
{
    t->cut = 1;
}

/* The first entry with rank >= r. A list's members are spread over the
 * board, so its entries' ranks are about evenly spaced: a guess between the
 * ends is most often right or next to it (issue 26: every list of a busy
 * board looks up every event); a few steps from it, else a binary search. */
static size_t first_at(const struct rc_vtrack *t, int64_t r)
{
    size_t n = t->nent;
    if (n == 0 || t->ent[0].rank >= r)
        return 0;
    if (t->ent[n - 1].rank < r)
        return n;
    /* ent[0].rank < r <= ent[n - 1].rank: the answer is in [1, n - 1] */
    int64_t a = t->ent[0].rank, z = t->ent[n - 1].rank;
    size_t g = (size_t)((double)(r - a) / (double)(z - a) * (double)(n - 1));
    g = g < 1 ? 1 : g > n - 1 ? n - 1 : g;
    for (int step = 0; step < 3; step++) {
        if (t->ent[g].rank < r) {
            if (t->ent[g + 1].rank >= r) /* (g < n - 1: ent[n - 1].rank >= r) */
                return g + 1;
            g++;
        } else {
            if (t->ent[g - 1].rank < r) /* (g >= 1: ent[0].rank < r) */
                return g;
            g--;
        }
    }
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->ent[mid].rank < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Adds d to the ranks of the entries in [a, b]; 1 when there were any. */
static int shift(struct rc_vtrack *t, int64_t a, int64_t b, int d)
{
    int any = 0;
    for (size_t i = first_at(t, a); i < t->nent && t->ent[i].rank <= b; i++) {
        t->ent[i].rank += d;
        any = 1;
    }
    return any;
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
    if (t->members) {
        /* a move shifts only the listed ranks inside its span, so one that
         * misses [first entry, last entry] changes no entry; with shared
         * places from rank 1 to one past the last (rc_vtrack_members_event) */
        if (!t->nent)
            return 0; /* none on the board: only a join can change it, and joins are not moves */
        *lo = t->places ? 1 : t->ent[0].rank;
        *hi = t->ent[t->nent - 1].rank + (t->places ? 1 : 0);
        return 1;
    }
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
        return changed(t); /* its own member moved: the window is centred elsewhere, or a listed row changed */
    if (t->around && t->pos == 0) {
        t->seq = seq; /* empty while its member is not on the board; another's move keeps it so */
        return RC_VTRACK_SAME;
    }
    int64_t a = old_rank < rank ? old_rank : rank, b = old_rank < rank ? rank : old_rank;
    if (t->members)
        return changed(t); /* (rc_vtrack_members_event) */
    int64_t lo, hi;
    window_ranks(t, &lo, &hi);
    if (b >= lo && a <= hi)
        return changed(t);
    t->seq = seq; /* (an around view's centre lies outside [a, b]: it did not move) */
    return RC_VTRACK_SAME;
}

/* rc_vtrack_members_event's most common case, a move on a list neither cut
 * nor with places, in one search (issue 26: every list of a busy board
 * judges every event): the entries the move passes and the member's own
 * entry (at old_rank, next to them) are adjacent, found from one first_at. */
static int members_move(struct rc_vtrack *t, int64_t seq, int64_t old_rank, int64_t rank, double c)
{
    struct rc_vtrack_entry *ent = t->ent;
    size_t n = t->nent, i, j;
    int any = 0;
    if (t->near_stale)
        near_exact(t);
    if (!near_any(t, rank < old_rank ? rank : old_rank, rank < old_rank ? old_rank : rank)) {
        t->seq = seq; /* (no entry in its span: it passes none, and is none) */
        return RC_VTRACK_SAME;
    }
    if (rank <= old_rank) {
        /* up (or in place): [rank, old_rank - 1] shift down one place, then its own */
        for (i = j = first_at(t, rank); j < n && ent[j].rank < old_rank; j++)
            near_set(t, ++ent[j].rank);
        any = j > i;
        if (j < n && ent[j].rank == old_rank) {
            struct rc_vtrack_entry e = ent[j];
            memmove(&ent[i + 1], &ent[i], (j - i) * sizeof e);
            ent[i] = (struct rc_vtrack_entry){rank, c, e.row};
            any = 1;
        }
    } else {
        /* down: its own at old_rank, then (old_rank, rank] shift up one place */
        i = first_at(t, old_rank);
        int self = i < n && ent[i].rank == old_rank;
        for (j = i + (self ? 1 : 0); j < n && ent[j].rank <= rank; j++)
            near_set(t, --ent[j].rank);
        any = j > i + (self ? 1 : 0);
        if (self) {
            struct rc_vtrack_entry e = ent[i];
            memmove(&ent[i], &ent[i + 1], (j - i - 1) * sizeof e);
            ent[j - 1] = (struct rc_vtrack_entry){rank, c, e.row};
            any = 1;
        }
    }
    if (any) {
        near_set(t, rank);
        /* (bits only ever added as entries move: made exact again when
         * they are well more than the entries, so misses stay cheap) */
        unsigned bits = 0;
        for (int w = 0; w < NEAR_BANDS / 64; w++)
            bits += (unsigned)__builtin_popcountll(t->near[w]);
        if (bits > n + 16)
            near_exact(t);
    }
    t->seq = seq;
    return any ? RC_VTRACK_MOVED : RC_VTRACK_SAME;
}

int rc_vtrack_members_event(struct rc_vtrack *t, int64_t seq, int listed, int has_old, int64_t old_rank,
                            int has_new, int64_t rank, double c)
{
    if (t->ok && seq <= t->seq)
        return RC_VTRACK_OLD;
    if (!t->ok || !t->members || seq != t->seq + 1 || (!has_old && !has_new) || (has_old && old_rank < 1) ||
        (has_new && rank < 1))
        return changed(t);
    if (has_old && has_new && !t->cut && !t->places)
        return members_move(t, seq, old_rank, rank, c);
    /* the entry of the member itself: a listed member on the board has its old rank */
    size_t self = has_old ? first_at(t, old_rank) : t->nent;
    if (self < t->nent && t->ent[self].rank != old_rank)
        self = t->nent;
    if (!has_old && listed)
        return changed(t); /* a listed member arrives: its row needs a read (profile) */
    int64_t deepest = t->nent ? t->ent[t->nent - 1].rank : 0;
    /* cut at its best (a big team's roster): listed members below the
     * deepest entry are not known; one passing it enters the entries, and
     * an entry falling to it or leaving may let one of them in */
    if (t->cut && listed && self == t->nent && has_new && rank <= deepest)
        return changed(t);
    if (t->cut && self < t->nent && (!has_new || rank >= deepest))
        return changed(t);
    if (t->places && t->nent && (self < t->nent || (has_old ? old_rank : rank) <= deepest + 1 ||
                      (has_new && rank <= deepest + 1)))
        return changed(t); /* places depend on the points above and the row after */
    int any = 0;
    if (has_old && has_new) {
        if (self < t->nent) {
            /* a listed member moves: take its entry out, shift, put it back */
            struct rc_vtrack_entry e = t->ent[self];
            memmove(&t->ent[self], &t->ent[self + 1], (t->nent - self - 1) * sizeof e);
            t->nent--;
            if (rank < old_rank)
                shift(t, rank, old_rank - 1, +1);
            else if (rank > old_rank)
                shift(t, old_rank + 1, rank, -1);
            e.rank = rank;
            e.c = c;
            size_t at = first_at(t, rank);
            memmove(&t->ent[at + 1], &t->ent[at], (t->nent - at) * sizeof e);
            t->ent[at] = e;
            t->nent++;
            any = 1;
        } else if (rank < old_rank) {
            any = shift(t, rank, old_rank - 1, +1);
        } else if (rank > old_rank) {
            any = shift(t, old_rank + 1, rank, -1);
        }
    } else if (has_new) {
        /* an unlisted member joins at rank: everyone from there down moves one down */
        any = shift(t, rank, INT64_MAX - 1, +1);
        t->total++;
        any = 1; /* (total changed: viewers are told) */
    } else {
        if (self < t->nent) {
            memmove(&t->ent[self], &t->ent[self + 1], (t->nent - self - 1) * sizeof t->ent[0]);
            t->nent--;
        }
        shift(t, old_rank + 1, INT64_MAX - 1, -1);
        t->total--;
        any = 1;
    }
    t->seq = seq;
    if (any)
        near_exact(t); /* (a join, a leave, a cut or placed list's move: entries moved or went) */
    return any ? RC_VTRACK_MOVED : RC_VTRACK_SAME;
}
