/* rc_moment.c - standings at a past seq, rebuilt by undoing the present
 * (see rc_moment.h). */
#include "rc_moment.h"

#include <stdlib.h>
#include <string.h>

#include "rc_err.h"
#include "rc_shard.h"

/* A member the changes after S touched: where it stood at S (a) and now (p). */
struct touched {
    const char *member;
    int has_a, has_p;
    double a, p;
};

struct rebuild {
    int desc;
    struct touched *t;      /* by member name */
    size_t nt;
    struct rc_moment_row *at_s; /* touched members on the board at S, in board order */
    size_t na;
    int64_t total_s;
};

static int g_desc; /* qsort has no context argument; the rebuild is one call deep */

static int before(int desc, const struct rc_moment_row *x, const struct rc_moment_row *y)
{
    return rc_shard_before(desc, x->c, 0, x->member, y->c, 0, y->member);
}

static int cmp_row(const void *a, const void *b)
{
    const struct rc_moment_row *x = a, *y = b;
    if (before(g_desc, x, y))
        return -1;
    return before(g_desc, y, x) ? 1 : 0;
}

static int cmp_touched(const void *a, const void *b)
{
    return strcmp(((const struct touched *)a)->member, ((const struct touched *)b)->member);
}

static int cmp_index(const void *a, const void *b)
{
    /* changes by member, then by position: the first and last of a member are its ends */
    const struct rc_moment_change *const *x = a, *const *y = b;
    int c = strcmp((*x)->member, (*y)->member);
    if (c)
        return c;
    return *x < *y ? -1 : *x > *y;
}

static const struct touched *find(const struct rebuild *r, const char *member)
{
    struct touched key = {.member = member};
    return r->nt ? bsearch(&key, r->t, r->nt, sizeof *r->t, cmp_touched) : NULL;
}

static void rebuild_free(struct rebuild *r)
{
    free(r->t);
    free(r->at_s);
}

/* Collapses the changes into one entry per member and sorts the members at
 * S. total: the present member count. */
static int rebuild_init(struct rebuild *r, int desc, const struct rc_moment_change *ch, size_t n, int64_t total)
{
    memset(r, 0, sizeof *r);
    r->desc = desc;
    const struct rc_moment_change **idx = malloc((n ? n : 1) * sizeof *idx);
    r->t = malloc((n ? n : 1) * sizeof *r->t);
    r->at_s = malloc((n ? n : 1) * sizeof *r->at_s);
    if (!idx || !r->t || !r->at_s) {
        free(idx);
        rebuild_free(r);
        return RC_E_INTERNAL;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = &ch[i];
    qsort(idx, n, sizeof *idx, cmp_index);
    int64_t np = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && strcmp(idx[j + 1]->member, idx[i]->member) == 0)
            j++;
        struct touched *t = &r->t[r->nt++];
        t->member = idx[i]->member;
        t->has_a = idx[i]->has_old;
        t->a = idx[i]->old_c;
        t->has_p = idx[j]->has_new;
        t->p = idx[j]->c;
        np += t->has_p;
        if (t->has_a)
            r->at_s[r->na++] = (struct rc_moment_row){t->member, t->a};
        i = j + 1;
    }
    free(idx);
    g_desc = desc;
    qsort(r->at_s, r->na, sizeof *r->at_s, cmp_row);
    r->total_s = total - np + (int64_t)r->na;
    return 0;
}

/* How many of the sorted rows v[0..n) come before x. */
static size_t count_before(int desc, const struct rc_moment_row *v, size_t n, const struct rc_moment_row *x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (before(desc, &v[mid], x))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The run of standings at S the slice can tell: *run (malloc'ed) from rank
 * *run_first. */
static int region(const struct rebuild *r, const struct rc_moment_in *in, struct rc_moment_row **run, size_t *nrun,
                  int64_t *run_first)
{
    size_t nu = 0;
    struct rc_moment_row *u = malloc((in->nslice + 1) * sizeof *u);
    struct rc_moment_row *out = malloc((in->nslice + r->na + 1) * sizeof *out);
    if (!u || !out) {
        free(u);
        free(out);
        return RC_E_INTERNAL;
    }
    for (size_t i = 0; i < in->nslice; i++)
        if (!find(r, in->slice[i].member))
            u[nu++] = in->slice[i];
    /* untouched members before the slice: the present ranks before it less
     * the touched members that stand there now */
    int64_t p_ahead = 0;
    for (size_t i = 0; i < r->nt; i++) {
        const struct touched *t = &r->t[i];
        if (!t->has_p)
            continue;
        struct rc_moment_row tr = {t->member, t->p};
        if (in->nslice == 0 || before(r->desc, &tr, &in->slice[0]))
            p_ahead++;
    }
    int64_t u_before = in->nslice ? in->lo - p_ahead : in->total - p_ahead;
    int starts = in->lo == 0, ends = in->lo + (int64_t)in->nslice >= in->total;
    size_t a0, a1; /* the members at S inside the run: at_s[a0 .. a1) */
    if (nu == 0) {
        a0 = 0;
        a1 = starts && ends ? r->na : 0;
    } else {
        a0 = starts ? 0 : count_before(r->desc, r->at_s, r->na, &u[0]);
        a1 = ends ? r->na : count_before(r->desc, r->at_s, r->na, &u[nu - 1]);
    }
    size_t n = 0, i = 0, k = a0;
    while (i < nu || k < a1) {
        if (k < a1 && (i == nu || before(r->desc, &r->at_s[k], &u[i])))
            out[n++] = r->at_s[k++];
        else
            out[n++] = u[i++];
    }
    /* the run's first row: an untouched row ranks after every untouched row
     * before the slice and every member at S before it */
    if (nu && (a0 == a1 || before(r->desc, &u[0], &r->at_s[a0])))
        *run_first = 1 + u_before + (int64_t)count_before(r->desc, r->at_s, r->na, &u[0]);
    else
        *run_first = 1 + (nu ? u_before : 0) + (int64_t)a0;
    free(u);
    *run = out;
    *nrun = n;
    return 0;
}

/* Cuts ranks [from, to] (1-based, inclusive) out of the run into out. */
static int cut(const struct rebuild *r, struct rc_moment_row *run, size_t nrun, int64_t run_first, int64_t from,
               int64_t to, struct rc_moment_out *out)
{
    out->total = r->total_s;
    if (to > r->total_s)
        to = r->total_s;
    if (from < 1)
        from = 1;
    out->first_rank = from;
    if (to < from) {
        free(run);
        out->rows = NULL;
        out->n = 0;
        return 0;
    }
    if (from < run_first || to > run_first + (int64_t)nrun - 1) {
        free(run);
        return RC_E_INTERNAL; /* the slice does not reach: cannot tell */
    }
    size_t n = (size_t)(to - from + 1);
    memmove(run, run + (from - run_first), n * sizeof *run);
    out->rows = run;
    out->n = n;
    return 0;
}

int rc_moment_range(const struct rc_moment_in *in, int64_t first, int64_t count, struct rc_moment_out *out)
{
    struct rebuild r;
    struct rc_moment_row *run = NULL;
    size_t nrun = 0;
    int64_t run_first = 1;
    memset(out, 0, sizeof *out);
    int rc = rebuild_init(&r, in->desc, in->changes, in->nchanges, in->total);
    if (!rc && (rc = region(&r, in, &run, &nrun, &run_first)) == 0)
        rc = cut(&r, run, nrun, run_first, first + 1, first + count, out);
    rebuild_free(&r);
    return rc;
}

int rc_moment_around(const struct rc_moment_in *in, const char *member, int64_t radius, struct rc_moment_out *out)
{
    struct rebuild r;
    struct rc_moment_row *run = NULL;
    size_t nrun = 0;
    int64_t run_first = 1;
    memset(out, 0, sizeof *out);
    int rc = rebuild_init(&r, in->desc, in->changes, in->nchanges, in->total);
    if (!rc && (rc = region(&r, in, &run, &nrun, &run_first)) == 0) {
        size_t at = nrun;
        for (size_t i = 0; i < nrun; i++)
            if (strcmp(run[i].member, member) == 0) {
                at = i;
                break;
            }
        if (at == nrun) { /* not on the board at S */
            free(run);
            out->total = r.total_s;
        } else {
            int64_t rank = run_first + (int64_t)at;
            rc = cut(&r, run, nrun, run_first, rank - radius, rank + radius, out);
        }
    }
    rebuild_free(&r);
    return rc;
}

void rc_moment_out_free(struct rc_moment_out *out)
{
    free(out->rows);
    out->rows = NULL;
    out->n = 0;
}

int64_t rc_moment_margin(int64_t k)
{
    return 2 * k + 2;
}

int64_t rc_moment_rank(int desc, const char *member, double c, int64_t ahead,
                       const struct rc_moment_change *changes, size_t nchanges)
{
    struct rebuild r;
    if (rebuild_init(&r, desc, changes, nchanges, 0) != 0)
        return 0;
    struct rc_moment_row me = {member, c};
    int64_t rank = 1 + ahead;
    for (size_t i = 0; i < r.nt; i++) {
        const struct touched *t = &r.t[i];
        struct rc_moment_row now = {t->member, t->p}, then = {t->member, t->a};
        if (t->has_p && before(desc, &now, &me))
            rank--; /* counted in ahead, but stood elsewhere at S (the member itself too) */
        if (t->has_a && strcmp(t->member, member) != 0 && before(desc, &then, &me))
            rank++;
    }
    rebuild_free(&r);
    return rank;
}

int rc_moment_total(const struct rc_moment_in *in, int64_t *total)
{
    struct rebuild r;
    if (rebuild_init(&r, in->desc, in->changes, in->nchanges, in->total))
        return RC_E_INTERNAL;
    *total = r.total_s;
    rebuild_free(&r);
    return 0;
}

static int ahead_of(int desc, double c, double bound, int inclusive)
{
    if (c == bound)
        return inclusive;
    return desc ? c > bound : c < bound;
}

int64_t rc_moment_ahead(int desc, double bound, int inclusive, int64_t now_ahead,
                        const struct rc_moment_change *changes, size_t nchanges)
{
    /* O(changes), no allocation: history asks it once a point */
    int64_t n = now_ahead;
    for (size_t i = 0; i < nchanges; i++) {
        const struct rc_moment_change *ch = &changes[i];
        n -= ch->has_new && ahead_of(desc, ch->c, bound, inclusive);
        n += ch->has_old && ahead_of(desc, ch->old_c, bound, inclusive);
    }
    return n;
}

int rc_moment_near(const struct rc_moment_in *in, double bound, int inclusive, int64_t now_ahead, int64_t radius,
                   struct rc_moment_out *out, int64_t *ahead)
{
    *ahead = rc_moment_ahead(in->desc, bound, inclusive, now_ahead, in->changes, in->nchanges);
    int64_t first = *ahead > radius ? *ahead - radius : 0;
    return rc_moment_range(in, first, *ahead - first + radius + 1, out);
}

int rc_moment_ranks(int desc, const struct rc_moment_row *rows, const int64_t *ahead, size_t n,
                    const struct rc_moment_change *changes, size_t nchanges, int64_t *ranks)
{
    struct rebuild r;
    if (rebuild_init(&r, desc, changes, nchanges, 0) != 0)
        return RC_E_INTERNAL;
    /* the touched members where they stand now (counted in ahead); r.at_s
     * holds them where they stood at S */
    struct rc_moment_row *now = malloc((r.nt ? r.nt : 1) * sizeof *now);
    if (!now) {
        rebuild_free(&r);
        return RC_E_INTERNAL;
    }
    size_t nn = 0;
    for (size_t i = 0; i < r.nt; i++)
        if (r.t[i].has_p)
            now[nn++] = (struct rc_moment_row){r.t[i].member, r.t[i].p};
    g_desc = desc;
    qsort(now, nn, sizeof *now, cmp_row);
    /* (a member's own row at S is its composite then: never before itself) */
    for (size_t i = 0; i < n; i++)
        ranks[i] = 1 + ahead[i] - (int64_t)count_before(desc, now, nn, &rows[i]) +
                   (int64_t)count_before(desc, r.at_s, r.na, &rows[i]);
    free(now);
    rebuild_free(&r);
    return 0;
}
