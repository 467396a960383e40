/* rc_delta.c - the rows a window view sends (rc_delta.h). */
#include "rc_delta.h"

#include <stdlib.h>
#include <string.h>

#include "rc_err.h"

#define NONE SIZE_MAX

static uint64_t profile_hash(const struct rc_row *r)
{
    return r->profile ? r->profile->hash : 0;
}

/* Two rows of one member that the diff keeps (same stored score): does the
 * viewers' copy still show the same? The profile, a shared place or tied
 * can change while the score does not, and so can a member's team. */
static int extras_same(const struct rc_row *a, const struct rc_row *b)
{
    return profile_hash(a) == profile_hash(b) && a->place == b->place && a->tied == b->tied &&
           (a->team == b->team || (a->team && b->team && strcmp(a->team, b->team) == 0));
}

void rc_delta_scratch_free(struct rc_delta_scratch *s)
{
    if (!s)
        return;
    rc_diff_scratch_free(&s->diff);
    free(s->buf);
    free(s->moves);
    free(s->ids);
    memset(s, 0, sizeof *s);
}

/* Grows *buf to at least want bytes (contents dropped); 0 or -1. */
static int grow(void **buf, size_t *cap, size_t want)
{
    if (want <= *cap)
        return 0;
    size_t c = *cap ? *cap : 256;
    while (c < want)
        c = c > SIZE_MAX / 2 ? want : c * 2;
    void *p = malloc(c);
    if (!p)
        return -1;
    free(*buf);
    *buf = p;
    *cap = c;
    return 0;
}

struct rc_move *rc_delta_moves_room(struct rc_delta_scratch *s, size_t n)
{
    if (n == 0 || n > SIZE_MAX / sizeof *s->moves)
        return NULL;
    size_t cap = s->moves_cap * sizeof *s->moves;
    void *buf = s->moves;
    if (grow(&buf, &cap, n * sizeof *s->moves) != 0)
        return NULL;
    s->moves = buf;
    s->moves_cap = cap / sizeof *s->moves;
    return s->moves;
}

static struct rc_diff_side side(const struct rc_delta_window *w)
{
    return (struct rc_diff_side){w->rows, w->n, sizeof *w->rows, offsetof(struct rc_row, member),
                                 offsetof(struct rc_row, c)};
}

int rc_delta_make(const struct rc_delta_window *old, const struct rc_delta_window *new_, rc_delta_moves_fn *moves,
                  void *ctx, struct rc_delta_scratch *s, struct rc_delta *out)
{
    struct rc_diff_side so = side(old), sn = side(new_);
    struct rc_diff_view d;
    const struct rc_move *mv = NULL;
    size_t nmv = 0;
    int have_moves = 0;

    if (rc_diff_run(&so, &sn, &s->diff, &d) != RC_OK)
        return RC_E_INTERNAL;
    /* rows (size_t) then prev_rank (int64_t) then a byte map of new */
    size_t nn = new_->n;
    if (nn > SIZE_MAX / 32 || grow(&s->buf, &s->cap, nn * (sizeof(size_t) + sizeof(int64_t)) + nn + 1) != 0)
        return RC_E_INTERNAL;
    size_t *rows = s->buf;
    int64_t *prev = (int64_t *)(rows + nn);
    unsigned char *send = (unsigned char *)(prev + nn);
    size_t nrows = 0;

    memset(send, 0, nn);
    for (size_t k = 0; k < d.nrows; k++)
        send[d.rows[k]] = 1;
    for (size_t j = 0; j < nn; j++) {
        size_t i = d.from[j];
        if (!send[j] && i != NONE && !extras_same(&old->rows[i], &new_->rows[j]))
            send[j] = 1;
        if (!send[j])
            continue;
        if (i != NONE) {
            prev[nrows] = old->first_rank + (int64_t)i; /* as the viewers hold it */
        } else {
            if (!have_moves) {
                if (!moves || moves(ctx, s, &mv, &nmv) != 0)
                    return RC_DELTA_UNKNOWN;
                have_moves = 1;
            }
            prev[nrows] = rc_prevrank(mv, nmv, new_->rows[j].member, new_->first_rank + (int64_t)j);
            if (prev[nrows] < 0)
                return RC_DELTA_UNKNOWN;
        }
        rows[nrows++] = j;
    }
    *out = (struct rc_delta){
        .rows = rows,
        .prev_rank = prev,
        .nrows = nrows,
        .removed = d.removed,
        .nremoved = d.nremoved,
        .nothing = nrows == 0 && d.nremoved == 0 && old->total == new_->total,
    };
    return 0;
}

/* The member-list rule (rc_delta.h, rc_delta_make_members) once rows are
 * matched: from[j] is the old index of new row j (NONE: it was not in old),
 * removed[0..nremoved) old's rows not in new_ (borrowed into *out). Both
 * matches, by name and by id, end here: one rule. */
static int members_rule(const struct rc_delta_window *old, const struct rc_delta_window *new_, const size_t *from,
                        const size_t *removed, size_t nremoved, struct rc_delta_scratch *s, struct rc_delta *out)
{
    size_t nn = new_->n;
    if (nn > SIZE_MAX / 32 || grow(&s->buf, &s->cap, nn * (sizeof(size_t) + sizeof(int64_t)) + 1) != 0)
        return RC_E_INTERNAL;
    size_t *rows = s->buf;
    int64_t *prev = (int64_t *)(rows + nn);
    size_t nrows = 0;
    for (size_t j = 0; j < nn; j++) {
        size_t i = from[j];
        const struct rc_row *y = &new_->rows[j];
        if (i != NONE) {
            const struct rc_row *x = &old->rows[i];
            if (x->rank == y->rank && x->c == y->c && extras_same(x, y))
                continue;
            prev[nrows] = x->rank;
        } else {
            prev[nrows] = 0;
        }
        rows[nrows++] = j;
    }
    *out = (struct rc_delta){
        .rows = rows,
        .prev_rank = prev,
        .nrows = nrows,
        .removed = removed,
        .nremoved = nremoved,
        .nothing = nrows == 0 && nremoved == 0 && old->total == new_->total,
    };
    return 0;
}

int rc_delta_make_members(const struct rc_delta_window *old, const struct rc_delta_window *new_,
                          struct rc_delta_scratch *s, struct rc_delta *out)
{
    struct rc_diff_side so = side(old), sn = side(new_);
    struct rc_diff_view d;
    if (rc_diff_run(&so, &sn, &s->diff, &d) != RC_OK) /* (used for its matching: from[], removed) */
        return RC_E_INTERNAL;
    return members_rule(old, new_, d.from, d.removed, d.nremoved, s, out);
}

#define TAKEN (SIZE_MAX - 1) /* by_id: the id's row is matched (or new) already */

int rc_delta_make_members_by_id(const struct rc_delta_window *old, const size_t *old_id,
                                const struct rc_delta_window *new_, const size_t *new_id, size_t nid,
                                struct rc_delta_scratch *s, struct rc_delta *out)
{
    size_t no = old->n, nn = new_->n;
    /* at[nid]: old's row of each id; then from[nn], removed[no] */
    if (nid > SIZE_MAX / 32 || no > SIZE_MAX / 32 || nn > SIZE_MAX / 32 ||
        grow(&s->ids, &s->ids_cap, (nid + nn + no) * sizeof(size_t) + 1) != 0)
        return RC_E_INTERNAL;
    size_t *at = s->ids, *from = at + nid, *removed = from + nn, nremoved = 0;
    for (size_t k = 0; k < nid; k++)
        at[k] = NONE;
    for (size_t i = 0; i < no; i++) {
        if (old_id[i] >= nid || at[old_id[i]] != NONE)
            return RC_E_INTERNAL;
        at[old_id[i]] = i;
    }
    for (size_t j = 0; j < nn; j++) {
        size_t id = new_id[j];
        if (id >= nid || at[id] == TAKEN)
            return RC_E_INTERNAL;
        from[j] = at[id];
        at[id] = TAKEN;
    }
    for (size_t i = 0; i < no; i++)
        if (at[old_id[i]] != TAKEN)
            removed[nremoved++] = i;
    return members_rule(old, new_, from, removed, nremoved, s, out);
}

int rc_delta_windows_equal(const struct rc_delta_window *a, const struct rc_delta_window *b)
{
    if (a->n != b->n || a->first_rank != b->first_rank || a->total != b->total)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        const struct rc_row *x = &a->rows[i], *y = &b->rows[i];
        if (x->c != y->c || x->rank != y->rank || strcmp(x->member, y->member) != 0 || !extras_same(x, y))
            return 0;
    }
    return 1;
}
