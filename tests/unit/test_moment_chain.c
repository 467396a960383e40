/* test_moment_chain.c - core/rc_moment_chain: a moment rebuilt in bounded
 * calls (the changes between a checkpoint and it in chunks, then the
 * checkpoint's slice or counts) equals the board at that moment, whether
 * the checkpoint is before it (redo) or after it (undo), for ranges,
 * around views, member lists and points; the calls' words; a history
 * that moved on is GONE. The script's side ("changes", "base" in
 * lua/read.lua) is played here by a brute force over the same states. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_err.h"
#include "rc_moment.h"
#include "rc_moment_chain.h"
#include "rc_shard.h"

#define M 24    /* members */
#define N 160   /* changes */

static char names[M][8];

/* a board state: composite or absent, per member */
struct state {
    int has[M];
    double c[M];
};

struct log1 {
    int m;
    int has_new, has_old;
    double c, old_c;
};

static struct state st[N + 1];
static struct log1 lg[N + 1]; /* lg[s]: change s (1-based) */
static char txt[4 * N + 64][32];
static size_t ntxt;

static uint32_t rnd_x;
static uint32_t rnd(uint32_t n)
{
    rnd_x = rnd_x * 1664525u + 1013904223u;
    return (rnd_x >> 8) % n;
}

static void play(uint32_t seed)
{
    rnd_x = seed;
    memset(&st[0], 0, sizeof st[0]);
    for (int s = 1; s <= N; s++) {
        st[s] = st[s - 1];
        int m = (int)rnd(M);
        struct log1 *l = &lg[s];
        l->m = m;
        l->has_old = st[s].has[m];
        l->old_c = st[s].c[m];
        l->has_new = rnd(7) != 0;
        l->c = (double)rnd(12) * 4; /* (few values: ties) */
        st[s].has[m] = l->has_new;
        st[s].c[m] = l->has_new ? l->c : 0;
    }
}

static int g_desc;
static int cmp_members(const void *a, const void *b, const struct state *x)
{
    int i = *(const int *)a, j = *(const int *)b;
    if (rc_shard_before(g_desc, x->c[i], 0, names[i], x->c[j], 0, names[j]))
        return -1;
    return rc_shard_before(g_desc, x->c[j], 0, names[j], x->c[i], 0, names[i]) ? 1 : 0;
}
static const struct state *g_state;
static int cmp_g(const void *a, const void *b) { return cmp_members(a, b, g_state); }

/* the members on the board in state x, in Redis's order */
static size_t ordered(const struct state *x, int *out)
{
    size_t n = 0;
    for (int i = 0; i < M; i++)
        if (x->has[i])
            out[n++] = i;
    g_state = x;
    qsort(out, n, sizeof *out, cmp_g);
    return n;
}

static size_t ahead_of(const struct state *x, double c, const char *m)
{
    size_t n = 0;
    for (int i = 0; i < M; i++)
        if (x->has[i] && rc_shard_before(g_desc, x->c[i], 0, names[i], c, 0, m))
            n++;
    return n;
}

/* ZCOUNT on the side ahead of bound b ("(c", "c", "-"), by composite alone */
static int64_t bound_count(const struct state *x, const char *b)
{
    if (strcmp(b, "-") == 0)
        return 0;
    int strict = b[0] == '(';
    double c = atof(b + strict);
    int64_t n = 0;
    for (int i = 0; i < M; i++) {
        if (!x->has[i])
            continue;
        double d = x->c[i];
        n += g_desc ? (strict ? d > c : d >= c) : (strict ? d < c : d <= c);
    }
    return n;
}

static const char *t(const char *fmt, double v)
{
    snprintf(txt[ntxt], sizeof txt[ntxt], fmt, v);
    return txt[ntxt++];
}

static size_t head(struct rc_reply_item *it, int64_t total)
{
    struct rc_reply_item h[] = {{1, 200, NULL}, {1, total, NULL}, {1, 0, NULL}, {0, 0, "e1"},
                                {1, 0, NULL},   {1, 0, NULL},     {1, 0, NULL}, {1, 0, NULL}};
    memcpy(it, h, sizeof h);
    return 8;
}

/* read.lua's "changes" for the call a */
static size_t play_changes(const struct rc_moment_chain_args *a, struct rc_reply_item *it)
{
    int64_t after = atoll(a->argv[3]), upto = atoll(a->argv[4]);
    size_t n = head(it, 0);
    it[n++] = (struct rc_reply_item){0, 0, "ok"};
    it[n++] = (struct rc_reply_item){1, upto - after, NULL};
    for (int64_t s = after + 1; s <= upto; s++) {
        const struct log1 *l = &lg[s];
        it[n++] = (struct rc_reply_item){1, s, NULL};
        it[n++] = (struct rc_reply_item){0, 0, names[l->m]};
        it[n++] = (struct rc_reply_item){0, 0, l->has_new ? t("%.17g", l->c) : ""};
        it[n++] = (struct rc_reply_item){0, 0, l->has_old ? t("%.17g", l->old_c) : ""};
    }
    return n;
}

static int member_index(const char *m)
{
    for (int i = 0; i < M; i++)
        if (strcmp(names[i], m) == 0)
            return i;
    return -1;
}

/* read.lua's "base" for the call a, on checkpoint state ck */
static size_t play_base(const struct rc_moment_chain_args *a, const struct state *ck, struct rc_reply_item *it)
{
    int ord[M];
    size_t total = ordered(ck, ord);
    size_t n = head(it, (int64_t)total);
    it[n++] = (struct rc_reply_item){0, 0, "ok"};
    int64_t lo = 0, hi = -1;
    if (strcmp(a->argv[5], "range") == 0) {
        lo = atoll(a->argv[6]);
        hi = atoll(a->argv[7]);
    } else if (strcmp(a->argv[5], "around") == 0) {
        const char *m = a->argv[6], *g = a->argv[7];
        int64_t reach = atoll(a->argv[8]);
        int i = member_index(m), has = 1;
        double c = 0;
        if (strcmp(g, "?") == 0) {
            has = ck->has[i];
            c = ck->c[i];
        } else if (!g[0]) {
            has = 0;
        } else {
            c = atof(g);
        }
        if (has) {
            int64_t p = (int64_t)ahead_of(ck, c, m), eq = 0;
            for (int j = 0; j < M; j++)
                eq += ck->has[j] && ck->c[j] == c;
            lo = p - reach < 0 ? 0 : p - reach;
            hi = p + eq + reach;
        }
    } else if (strcmp(a->argv[5], "counts") == 0 || strcmp(a->argv[5], "near") == 0) {
        char bs[256];
        snprintf(bs, sizeof bs, "%s", a->argv[6]);
        char *sp, *b = strtok_r(bs, " ", &sp);
        for (; b; b = strtok_r(NULL, " ", &sp)) {
            int64_t k = bound_count(ck, b);
            it[n++] = (struct rc_reply_item){1, k, NULL};
            if (strcmp(a->argv[5], "near") == 0) {
                int64_t reach = atoll(a->argv[7]);
                lo = k - reach < 0 ? 0 : k - reach;
                hi = k + reach;
                break;
            }
        }
        if (strcmp(a->argv[5], "counts") == 0)
            return n;
    } else {
        /* probes */
        char names_[4096], comps[4096];
        snprintf(names_, sizeof names_, "%s", a->argv[6]);
        snprintf(comps, sizeof comps, "%s", a->argv[7]);
        char *s1, *s2, *m = strtok_r(names_, " ", &s1), *g = strtok_r(comps, " ", &s2);
        for (; m; m = strtok_r(NULL, " ", &s1), g = strtok_r(NULL, " ", &s2)) {
            assert_non_null(g);
            int i = member_index(m), has = 1;
            double c = 0;
            if (strcmp(g, "?") == 0) {
                has = ck->has[i];
                c = ck->c[i];
            } else if (strcmp(g, "-") == 0) {
                has = 0;
            } else {
                c = atof(g);
            }
            it[n++] = (struct rc_reply_item){0, 0, has ? t("%.17g", c) : ""};
            it[n++] = (struct rc_reply_item){1, has ? (int64_t)ahead_of(ck, c, names[i]) : 0, NULL};
        }
        return n;
    }
    it[n++] = (struct rc_reply_item){1, lo, NULL};
    for (int64_t k = lo; k <= hi && k < (int64_t)total; k++) {
        it[n++] = (struct rc_reply_item){0, 0, names[ord[k]]};
        it[n++] = (struct rc_reply_item){0, 0, t("%.17g", ck->c[ord[k]])};
    }
    return n;
}

/* The chain from checkpoint base to moment s, chunks of `most`, for v:
 * the moment's reply (free it). */
static void chain(int64_t s, int64_t base, int64_t most, const struct rc_moment_chain_view *v,
                  struct rc_moment_chain *ch, struct rc_moment_reply *r)
{
    static struct rc_reply_item it[8 + 2 + 4 * N + 4 * M + 16];
    struct rc_moment_reply deep = {.status = RC_MOMENT_DEEP, .has_chain = 1, .chain_seq = s, .chain_base = base,
                                   .chain_has_at = s > 0, .chain_at = 1000 + s};
    strcpy(deep.head.epoch, "e1");
    deep.head.seq = 200;
    assert_int_equal(rc_moment_chain_init(ch, &deep), 0);
    struct rc_moment_chain_args a;
    int calls = 0;
    while (!rc_moment_chain_done(ch)) {
        ntxt = 0;
        assert_int_equal(rc_moment_chain_changes_args(ch, "b", "", g_desc ? RC_ORDER_DESC : RC_ORDER_ASC, most, &a), 0);
        assert_string_equal(a.argv[0], "changes");
        assert_true(atoll(a.argv[4]) - atoll(a.argv[3]) <= most); /* each call within the bound */
        size_t n = play_changes(&a, it);
        struct rc_moment_reply gone;
        assert_int_equal(rc_moment_chain_changes_take(ch, it, n, &gone), 0);
        rc_moment_chain_args_free(&a);
        assert_true(++calls <= N);
    }
    int64_t span = s > base ? s - base : base - s;
    assert_int_equal(calls, (span + most - 1) / most);
    ntxt = 0;
    assert_int_equal(rc_moment_chain_base_args(ch, "b", "", g_desc ? RC_ORDER_DESC : RC_ORDER_ASC, v, &a), 0);
    size_t n = play_base(&a, &st[base], it);
    assert_int_equal(rc_moment_chain_base_take(ch, it, n, v, r), 0);
    rc_moment_chain_args_free(&a);
    assert_int_equal(r->status, RC_MOMENT_OK);
    assert_int_equal(r->targets[0].seq, s);
}

static void a_chained_moment_equals_the_board_then(void **state)
{
    (void)state;
    for (int i = 0; i < M; i++)
        snprintf(names[i], sizeof names[i], "m%02d", i);
    for (uint32_t seed = 1; seed <= 400; seed++) {
        play(seed);
        g_desc = (int)(seed % 2);
        int64_t s = (int64_t)rnd(N + 1), base;
        do
            base = (int64_t)rnd(N + 1);
        while (base == s);
        int64_t most = 1 + (int64_t)rnd(40);
        int ord[M];
        size_t nat = ordered(&st[s], ord);
        struct rc_moment_chain ch;
        struct rc_moment_reply r;
        /* a range */
        struct rc_moment_chain_view v = {.view = RC_MOMENT_RANGE, .first = (int64_t)rnd(8), .count = 1 + (int64_t)rnd(10)};
        chain(s, base, most, &v, &ch, &r);
        struct rc_moment_in in = {.desc = g_desc, .slice = r.rows, .nslice = r.nrows, .lo = r.lo, .total = r.head.total,
                                  .changes = r.changes + rc_moment_args_after(&r, s), .nchanges = r.nchanges};
        struct rc_moment_out out;
        assert_int_equal(rc_moment_range(&in, v.first, v.count, &out), 0);
        assert_int_equal(out.total, (int64_t)nat);
        size_t want = nat > (size_t)v.first ? nat - (size_t)v.first : 0;
        if (want > (size_t)v.count)
            want = (size_t)v.count;
        assert_int_equal(out.n, want);
        for (size_t k = 0; k < out.n; k++) {
            assert_string_equal(out.rows[k].member, names[ord[v.first + (int64_t)k]]);
            assert_true(out.rows[k].c == st[s].c[ord[v.first + (int64_t)k]]);
        }
        rc_moment_out_free(&out);
        rc_moment_args_reply_free(&r);
        rc_moment_chain_free(&ch);
        /* an around view of any member (off the board at s: no rows) */
        int who = (int)rnd(M);
        v = (struct rc_moment_chain_view){.view = RC_MOMENT_AROUND, .member = names[who], .radius = 1 + (int64_t)rnd(3)};
        chain(s, base, most, &v, &ch, &r);
        in = (struct rc_moment_in){.desc = g_desc, .slice = r.rows, .nslice = r.nrows, .lo = r.lo,
                                   .total = r.head.total, .changes = r.changes, .nchanges = r.nchanges};
        assert_int_equal(rc_moment_around(&in, names[who], v.radius, &out), 0);
        if (!st[s].has[who]) {
            assert_int_equal(out.n, 0);
        } else {
            size_t at = 0;
            while (ord[at] != who)
                at++;
            size_t from = at > (size_t)v.radius ? at - (size_t)v.radius : 0;
            size_t to = at + (size_t)v.radius + 1 < nat ? at + (size_t)v.radius + 1 : nat;
            assert_int_equal(out.n, to - from);
            assert_int_equal(out.first_rank, (int64_t)from + 1);
            for (size_t k = 0; k < out.n; k++)
                assert_string_equal(out.rows[k].member, names[ord[from + k]]);
        }
        rc_moment_out_free(&out);
        rc_moment_args_reply_free(&r);
        rc_moment_chain_free(&ch);
        /* a member list: each listed member's composite and rank at s */
        char list[M * 8];
        size_t len = 0;
        int listed[4];
        for (int k = 0; k < 4; k++) {
            listed[k] = (int)((who + 5 * k) % M);
            len += (size_t)sprintf(list + len, "%s", names[listed[k]]) + 1;
        }
        v = (struct rc_moment_chain_view){.view = RC_MOMENT_LIST, .members = list, .nmembers = 4};
        chain(s, base, most, &v, &ch, &r);
        assert_int_equal(r.nlisted, 4);
        for (int k = 0; k < 4; k++) {
            const struct rc_moment_target *l = &r.listed[k];
            int i = listed[k];
            assert_int_equal(l->has_c, st[s].has[i]);
            if (!l->has_c)
                continue;
            assert_true(l->c == st[s].c[i]);
            int64_t rank = rc_moment_rank(g_desc, names[i], l->c, l->ahead, r.changes, r.nchanges);
            size_t at = 0;
            while (ord[at] != i)
                at++;
            assert_int_equal(rank, (int64_t)at + 1);
        }
        rc_moment_args_reply_free(&r);
        rc_moment_chain_free(&ch);
        /* points: one member's, at three times that all show s */
        v = (struct rc_moment_chain_view){.view = RC_MOMENT_POINTS, .member = names[who], .ntargets = 3};
        chain(s, base, most, &v, &ch, &r);
        assert_int_equal(r.ntargets, 3);
        for (int k = 0; k < 3; k++) {
            assert_int_equal(r.targets[k].seq, s);
            assert_int_equal(r.targets[k].has_c, st[s].has[who]);
        }
        rc_moment_args_reply_free(&r);
        rc_moment_chain_free(&ch);
        /* counts (a sharded board's other shards): the members ahead of
         * each bound at s, by composite alone */
        struct rc_moment_bound bounds[3];
        for (int k = 0; k < 3; k++)
            bounds[k] = (struct rc_moment_bound){.has = k < 2, .c = (double)rnd(12) * 4, .inclusive = (int)rnd(2)};
        v = (struct rc_moment_chain_view){.view = RC_MOMENT_COUNTS, .bounds = bounds, .nbounds = 3};
        chain(s, base, most, &v, &ch, &r);
        assert_int_equal(r.ntargets, 3);
        for (int k = 0; k < 3; k++) {
            char b[40];
            if (bounds[k].has)
                snprintf(b, sizeof b, "%s%.17g", bounds[k].inclusive ? "" : "(", bounds[k].c);
            else
                snprintf(b, sizeof b, "-");
            assert_int_equal(r.targets[k].seq, s);
            int64_t got = bounds[k].has ? rc_moment_ahead(g_desc, bounds[k].c, bounds[k].inclusive, r.targets[k].ahead,
                                                          r.changes, r.nchanges)
                                        : r.targets[k].ahead;
            assert_int_equal(got, bound_count(&st[s], b));
        }
        rc_moment_args_reply_free(&r);
        rc_moment_chain_free(&ch);
        /* near: the rows at s nearest to a bound */
        v = (struct rc_moment_chain_view){.view = RC_MOMENT_NEAR, .bounds = bounds, .nbounds = 1, .radius = 2};
        chain(s, base, most, &v, &ch, &r);
        in = (struct rc_moment_in){.desc = g_desc, .slice = r.rows, .nslice = r.nrows, .lo = r.lo,
                                   .total = r.head.total, .changes = r.changes, .nchanges = r.nchanges};
        int64_t ahead;
        assert_int_equal(rc_moment_near(&in, bounds[0].c, bounds[0].inclusive, r.targets[0].ahead, 2, &out, &ahead), 0);
        {
            char b[40];
            snprintf(b, sizeof b, "%s%.17g", bounds[0].inclusive ? "" : "(", bounds[0].c);
            int64_t want_ahead = bound_count(&st[s], b);
            assert_int_equal(ahead, want_ahead);
            int64_t from = want_ahead > 2 ? want_ahead - 2 : 0;
            int64_t to = want_ahead + 3 < (int64_t)nat ? want_ahead + 3 : (int64_t)nat;
            assert_int_equal(out.n, (size_t)(to - from));
            for (size_t k = 0; k < out.n; k++)
                assert_string_equal(out.rows[k].member, names[ord[from + (int64_t)k]]);
        }
        rc_moment_out_free(&out);
        rc_moment_args_reply_free(&r);
        rc_moment_chain_free(&ch);
    }
}

static void a_history_that_moved_on_is_gone(void **state)
{
    (void)state;
    struct rc_moment_reply deep = {.status = RC_MOMENT_DEEP, .has_chain = 1, .chain_seq = 50, .chain_base = 10};
    strcpy(deep.head.epoch, "e1");
    struct rc_moment_chain ch;
    assert_int_equal(rc_moment_chain_init(&ch, &deep), 0);
    struct rc_moment_chain_args a;
    assert_int_equal(rc_moment_chain_changes_args(&ch, "players", "", RC_ORDER_DESC, 30, &a), 0);
    const char *want[] = {"changes", "desc", "1", "10", "40", "e1", "10"};
    assert_int_equal(a.nargv, 7);
    for (unsigned i = 0; i < 7; i++)
        assert_string_equal(a.argv[i], want[i]);
    assert_string_equal(a.keys[2], "rc:{players|}:log");
    rc_moment_chain_args_free(&a);
    assert_int_equal(rc_moment_chain_changes_args(&ch, "players", "", RC_ORDER_DESC, 0, &a), RC_E_BAD_REQUEST);
    struct rc_reply_item it[16];
    size_t n = head(it, 0);
    it[n++] = (struct rc_reply_item){0, 0, "gone"};
    it[n++] = (struct rc_reply_item){1, 77, NULL};
    it[n++] = (struct rc_reply_item){0, 0, "1763769600123"};
    struct rc_moment_reply gone;
    assert_int_equal(rc_moment_chain_changes_take(&ch, it, n, &gone), 1);
    assert_int_equal(gone.status, RC_MOMENT_GONE);
    assert_int_equal(gone.oldest, 77);
    assert_int_equal(gone.oldest_at, 1763769600123);
    /* changes other than the ones asked (the log moved under the calls) */
    n = head(it, 0);
    it[n++] = (struct rc_reply_item){0, 0, "ok"};
    it[n++] = (struct rc_reply_item){1, 1, NULL};
    it[n++] = (struct rc_reply_item){1, 12, NULL};
    it[n++] = (struct rc_reply_item){0, 0, "ann"};
    it[n++] = (struct rc_reply_item){0, 0, "5"};
    it[n++] = (struct rc_reply_item){0, 0, ""};
    assert_int_equal(rc_moment_chain_changes_take(&ch, it, n, &gone), RC_E_INTERNAL);
    rc_moment_chain_free(&ch);
    /* a deep reply without a checkpoint starts no chain */
    deep.has_chain = 0;
    assert_int_equal(rc_moment_chain_init(&ch, &deep), RC_E_INTERNAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_chained_moment_equals_the_board_then),
        cmocka_unit_test(a_history_that_moved_on_is_gone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
