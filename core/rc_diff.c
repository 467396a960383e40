/* rc_diff.c - the smallest window delta, and the client's rule that applies it.
 *
 * PROTOCOL.md ("Applying a delta to a window") fixes what a client does with a
 * delta: drop every member named in `removed` or in `rows`, insert the rows in
 * ascending rank at position rank - first_rank, cut the list to the window's
 * length. Whatever is named nowhere survives in its old relative order, so the
 * members a delta may leave out are some members present in both windows, with
 * an unchanged key, whose relative order is the same in both: at best a longest
 * common subsequence of the two windows. Members are unique, so that LCS is a
 * longest increasing subsequence of new positions read in old order, found by
 * patience sorting in O(n log n).
 *
 * Why the delta is exact: after step 1 the list holds the kept members in new
 * order. Inserting every other new member in ascending index j at position j
 * keeps "the first j entries equal new[0..j)" true, so the list ends equal to
 * new, of length nnew <= window length, and step 3 cuts nothing.
 *
 * Every member of old that is absent from new goes to `removed`, even one that
 * step 3 would cut anyway: the diff is not told the window length, and when the
 * board is shorter than the window nothing is cut, so leaving one out is never
 * provably safe here.
 *
 * Pure: no I/O, no clock, no global state. Member strings are always borrowed.
 */
#include "rc_diff.h"

#include "rc_err.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX

/* malloc for n items of size bytes, or NULL on overflow or failure. Never asks
 * for 0 bytes, so that NULL always means failure. The caller owns the block. */
static void *alloc_array(size_t n, size_t size)
{
    if (n == 0)
        n = 1;
    if (n > SIZE_MAX / size)
        return NULL;
    return malloc(n * size);
}

/* ------------------------------------------------------------------------- */
/* Diff                                                                      */
/* ------------------------------------------------------------------------- */

static const char *member_at(const struct rc_diff_side *w, size_t i)
{
    return *(const char *const *)((const char *)w->rows + i * w->stride + w->member_at);
}

static double key_at(const struct rc_diff_side *w, size_t i)
{
    double k;
    memcpy(&k, (const char *)w->rows + i * w->stride + w->key_at, sizeof k);
    return k;
}

/* A new row by name: new_'s rows sorted by member, to find an old member's
 * new index by binary search. */
struct by_name {
    const char *member;
    size_t j;
};

static int cmp_by_name(const void *a, const void *b)
{
    return strcmp(((const struct by_name *)a)->member, ((const struct by_name *)b)->member);
}

/* Index into new_ of the row named member, or NONE. */
static size_t find_member(const struct by_name *names, size_t n, const char *member)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(names[mid].member, member);
        if (c == 0)
            return names[mid].j;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NONE;
}

/* Marks in keep[] the new positions of a longest run of old members that are
 * matched (match[i] != NONE, same key) and appear in the same order in new.
 * tails[k] is the old index ending the best increasing run of length k + 1
 * seen so far (smallest new position wins); prev[] links each old index to the
 * one before it in its run. All arrays are the caller's scratch. */
static void keep_longest_run(const struct rc_diff_side *old, const struct rc_diff_side *new_, const size_t *match,
                             size_t *tails, size_t *prev, unsigned char *keep)
{
    size_t len = 0;

    for (size_t i = 0; i < old->n; i++) {
        size_t lo = 0, hi = len;

        if (match[i] == NONE || key_at(old, i) != key_at(new_, match[i]))
            continue;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (match[tails[mid]] < match[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        prev[i] = lo > 0 ? tails[lo - 1] : NONE;
        tails[lo] = i;
        if (lo == len)
            len++;
    }
    for (size_t i = len > 0 ? tails[len - 1] : NONE; i != NONE; i = prev[i])
        keep[match[i]] = 1;
}

/* Room for nbytes in s (its old content dropped), or NULL. */
static void *scratch_room(struct rc_diff_scratch *s, size_t nbytes)
{
    if (nbytes > s->cap) {
        size_t cap = s->cap ? s->cap : 1024;
        while (cap < nbytes)
            cap = cap > SIZE_MAX / 2 ? nbytes : cap * 2;
        void *buf = malloc(cap);
        if (!buf)
            return NULL;
        free(s->buf);
        s->buf = buf;
        s->cap = cap;
    }
    return s->buf;
}

void rc_diff_scratch_free(struct rc_diff_scratch *s)
{
    if (!s)
        return;
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}

/* The delta that takes old to new_ (see the banner), its arrays carved from
 * one scratch block: size_t arrays first (match, tails, prev of old; from,
 * rows of new; removed), then the name index, then the two byte maps. */
int rc_diff_run(const struct rc_diff_side *old, const struct rc_diff_side *new_, struct rc_diff_scratch *s,
                struct rc_diff_view *out)
{
    if (!out)
        return RC_E_INTERNAL;
    memset(out, 0, sizeof *out);
    if (!old || !new_ || !s || (old->n > 0 && !old->rows) || (new_->n > 0 && !new_->rows))
        return RC_E_INTERNAL;
    size_t no = old->n, nn = new_->n;
    if (no > SIZE_MAX / 64 || nn > SIZE_MAX / 64)
        return RC_E_INTERNAL;
    size_t bytes = (4 * no + 2 * nn) * sizeof(size_t) + nn * sizeof(struct by_name) + 2 * nn;
    unsigned char *buf = scratch_room(s, bytes ? bytes : 1);
    if (!buf)
        return RC_E_INTERNAL;
    size_t *match = (size_t *)buf, *tails = match + no, *prev = tails + no, *removed = prev + no;
    size_t *from = removed + no, *rows = from + nn;
    struct by_name *names = (struct by_name *)(rows + nn);
    unsigned char *keep = (unsigned char *)(names + nn), *claimed = keep + nn;
    size_t nrows = 0, nremoved = 0;

    memset(keep, 0, 2 * nn);
    for (size_t j = 0; j < nn; j++) {
        if (!(names[j].member = member_at(new_, j)))
            return RC_E_INTERNAL;
        names[j].j = j;
        from[j] = NONE;
    }
    if (nn > 1)
        qsort(names, nn, sizeof *names, cmp_by_name);
    for (size_t j = 1; j < nn; j++)
        if (strcmp(names[j - 1].member, names[j].member) == 0)
            return RC_E_INTERNAL;
    for (size_t i = 0; i < no; i++) {
        const char *m = member_at(old, i);
        if (!m)
            return RC_E_INTERNAL;
        match[i] = find_member(names, nn, m);
        if (match[i] == NONE) {
            removed[nremoved++] = i;
            continue;
        }
        if (claimed[match[i]])
            return RC_E_INTERNAL; /* old names this member twice */
        claimed[match[i]] = 1;
        from[match[i]] = i;
    }
    keep_longest_run(old, new_, match, tails, prev, keep);
    for (size_t j = 0; j < nn; j++)
        if (!keep[j])
            rows[nrows++] = j;
    *out = (struct rc_diff_view){rows, nrows, removed, nremoved, from};
    return RC_OK;
}

/* Fills *out with the delta that takes old to new_: rc_diff_run in a scratch
 * of its own, the result copied out. Borrows both windows for the call
 * only; out->rows and out->removed are owned by the caller and released
 * with rc_diff_free (they are NULL when empty). On error *out is left
 * empty. A NULL member or a member named twice in one window breaks the
 * caller's contract and is RC_E_INTERNAL, like an allocation failure. */
int rc_diff_window_diff(const struct rc_wrow *old, size_t nold, const struct rc_wrow *new_, size_t nnew,
                   struct rc_diff *out)
{
    struct rc_diff_side o = {old, nold, sizeof *old, offsetof(struct rc_wrow, member), offsetof(struct rc_wrow, key)};
    struct rc_diff_side n = {new_, nnew, sizeof *new_, offsetof(struct rc_wrow, member),
                             offsetof(struct rc_wrow, key)};
    struct rc_diff_scratch s = {0};
    struct rc_diff_view v;
    int rc = RC_E_INTERNAL;

    if (!out)
        return RC_E_INTERNAL;
    memset(out, 0, sizeof *out);
    if (rc_diff_run(&o, &n, &s, &v) != RC_OK)
        goto cleanup;
    if (v.nrows > 0 && !(out->rows = alloc_array(v.nrows, sizeof *out->rows)))
        goto cleanup;
    if (v.nremoved > 0 && !(out->removed = alloc_array(v.nremoved, sizeof *out->removed)))
        goto cleanup;
    if (v.nrows)
        memcpy(out->rows, v.rows, v.nrows * sizeof *v.rows);
    if (v.nremoved)
        memcpy(out->removed, v.removed, v.nremoved * sizeof *v.removed);
    out->nrows = v.nrows;
    out->nremoved = v.nremoved;
    rc = RC_OK;

cleanup:
    if (rc != RC_OK)
        rc_diff_free(out);
    rc_diff_scratch_free(&s);
    return rc;
}

/* Frees what rc_diff_window_diff allocated and leaves *d empty; safe to call twice
 * and on NULL. */
void rc_diff_free(struct rc_diff *d)
{
    if (!d)
        return;
    free(d->rows);
    free(d->removed);
    d->rows = NULL;
    d->removed = NULL;
    d->nrows = 0;
    d->nremoved = 0;
}

/* ------------------------------------------------------------------------- */
/* Apply                                                                     */
/* ------------------------------------------------------------------------- */

/* A name the delta mentions: from removed (row == NONE) or from rows[row]. */
struct name_ref {
    const char *name;
    size_t row;
};

/* A row in insertion order, with the list position the rule gives it. */
struct rank_ref {
    long rank;
    size_t row;
    size_t pos;
};

/* By name, then rows before removed entries, so that two rows naming the same
 * member end up adjacent. */
static int cmp_name_ref(const void *a, const void *b)
{
    const struct name_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c != 0)
        return c;
    return (x->row > y->row) - (x->row < y->row);
}

static int cmp_rank_ref(const void *a, const void *b)
{
    const struct rank_ref *x = a, *y = b;

    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

static int is_named(const struct name_ref *names, size_t n, const char *member)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(names[mid].name, member);
        if (c == 0)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* PROTOCOL.md's rule, checked in full before win is touched, so a bad delta
 * leaves the window as it was. Beyond what the header lists, a delta that
 * names one member in two rows, or gives two rows the same rank, is
 * RC_E_BAD_REQUEST (the rule's result would depend on the order they come in);
 * a removed name the list does not hold is ignored. rows may come in any order.
 *
 * Since rows go in by ascending position, a later insertion never moves an
 * earlier row, so each row ends at its own position and the survivors fill the
 * gaps in order: the three steps become one compaction and one merge from the
 * back, O(n + k log k), with no element moved twice. The window takes the
 * member pointers of rows (borrowed from the caller, as the header says). */
int rc_diff_window_apply(struct rc_wrow *win, size_t *n, size_t cap, size_t window_len, long first_rank,
                    const struct rc_wrow *rows, const long *rows_rank, size_t nrows,
                    const char *const *removed, size_t nremoved)
{
    struct name_ref *names = NULL;
    struct rank_ref *order = NULL;
    unsigned char *drop = NULL;
    size_t nnames, survivors = 0, final_len, nplaced, si, q, k;
    int rc = RC_E_BAD_REQUEST;

    if (!n || (*n > 0 && !win) || *n > cap || first_rank < 1)
        return RC_E_BAD_REQUEST;
    if ((nrows > 0 && (!rows || !rows_rank)) || (nremoved > 0 && !removed))
        return RC_E_BAD_REQUEST;
    if (nrows > SIZE_MAX - nremoved)
        return RC_E_BAD_REQUEST;
    for (size_t i = 0; i < *n; i++)
        if (!win[i].member)
            return RC_E_BAD_REQUEST;
    for (size_t i = 0; i < nrows; i++)
        if (!rows[i].member || rows_rank[i] < first_rank)
            return RC_E_BAD_REQUEST;
    for (size_t i = 0; i < nremoved; i++)
        if (!removed[i])
            return RC_E_BAD_REQUEST;

    nnames = nremoved + nrows;
    names = alloc_array(nnames, sizeof *names);
    order = alloc_array(nrows, sizeof *order);
    drop = alloc_array(*n, 1);
    if (!names || !order || !drop) {
        rc = RC_E_INTERNAL;
        goto cleanup;
    }

    /* Step 1, dry run: which list members go, and how many stay. */
    for (size_t i = 0; i < nremoved; i++)
        names[i] = (struct name_ref){removed[i], NONE};
    for (size_t i = 0; i < nrows; i++)
        names[nremoved + i] = (struct name_ref){rows[i].member, i};
    if (nnames > 1)
        qsort(names, nnames, sizeof *names, cmp_name_ref);
    for (size_t i = 1; i < nnames; i++)
        if (names[i].row != NONE && names[i - 1].row != NONE &&
            strcmp(names[i].name, names[i - 1].name) == 0)
            goto cleanup;
    for (size_t i = 0; i < *n; i++) {
        drop[i] = (unsigned char)is_named(names, nnames, win[i].member);
        survivors += !drop[i];
    }

    /* Step 2, dry run: each row's position must be at most the list's length
     * when its turn comes (survivors plus the rows inserted before it). */
    for (size_t i = 0; i < nrows; i++)
        order[i] = (struct rank_ref){rows_rank[i], i, 0};
    if (nrows > 1)
        qsort(order, nrows, sizeof *order, cmp_rank_ref);
    for (k = 0; k < nrows; k++) {
        unsigned long pos = (unsigned long)(order[k].rank - first_rank);
        if (k > 0 && order[k].rank == order[k - 1].rank)
            goto cleanup;
        if (pos > survivors + k)
            goto cleanup;
        order[k].pos = (size_t)pos;
    }

    /* Step 3, dry run: the final length must fit in the caller's array. */
    final_len = survivors + nrows;
    if (final_len > window_len)
        final_len = window_len;
    if (final_len > cap)
        goto cleanup;

    /* Valid: now mutate. Compact the survivors to the front... */
    si = 0;
    for (size_t i = 0; i < *n; i++)
        if (!drop[i])
            win[si++] = win[i];

    /* ...then merge rows and survivors from the back, dropping whatever falls
     * past final_len. Positions are strictly ascending and the first nplaced
     * rows land inside the window, so final_len - nplaced survivors are used. */
    for (nplaced = 0; nplaced < nrows && order[nplaced].pos < final_len; nplaced++)
        ;
    si = final_len - nplaced;
    k = nplaced;
    for (q = final_len; q > 0;) {
        q--;
        if (k > 0 && order[k - 1].pos == q)
            win[q] = rows[order[--k].row];
        else
            win[q] = win[--si];
    }
    *n = final_len;
    rc = RC_OK;

cleanup:
    free(names);
    free(order);
    free(drop);
    return rc;
}
