/* test_moment.c - core/rc_moment: standings at a past seq rebuilt from the
 * present and the changes after it, checked against a brute-force replay
 * (random boards and changes, many seeds), with slices cut by the margin
 * the script uses. No Redis (tests/e2e/history.test.js runs the script). */
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
#include "rc_shard.h"

#define NM 40       /* member names m00 .. m39 */
#define MAXCH 60

static char names[NM][8];
static uint64_t rng_state;

static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((rng_state >> 33) % n);
}

/* a board state: composite per member, or absent */
struct state {
    int on[NM];
    double c[NM];
};

static int g_desc;
static int cmp_rows(const void *a, const void *b)
{
    const struct rc_moment_row *x = a, *y = b;
    if (rc_shard_before(g_desc, x->c, 0, x->member, y->c, 0, y->member))
        return -1;
    return rc_shard_before(g_desc, y->c, 0, y->member, x->c, 0, x->member) ? 1 : 0;
}

static size_t sorted(const struct state *s, int desc, struct rc_moment_row *out)
{
    size_t n = 0;
    for (int i = 0; i < NM; i++)
        if (s->on[i])
            out[n++] = (struct rc_moment_row){names[i], s->c[i]};
    g_desc = desc;
    qsort(out, n, sizeof *out, cmp_rows);
    return n;
}

/* A random state at S, random changes after it (some members several
 * times, some removed, some new), and the present they lead to. Few
 * distinct composites, so equal composites order by name. */
static size_t scenario(struct state *at_s, struct state *now, struct rc_moment_change *ch)
{
    memset(at_s, 0, sizeof *at_s);
    for (int i = 0; i < NM; i++)
        if (rnd(4)) {
            at_s->on[i] = 1;
            at_s->c[i] = rnd(12);
        }
    *now = *at_s;
    size_t n = rnd(MAXCH);
    for (size_t k = 0; k < n; k++) {
        int m = (int)rnd(8) * 5 % NM; /* a few members take most changes */
        if (rnd(3) == 0)
            m = (int)rnd(NM);
        ch[k].member = names[m];
        ch[k].has_old = now->on[m];
        ch[k].old_c = now->c[m];
        if (now->on[m] && rnd(6) == 0) {
            ch[k].has_new = 0;
            ch[k].c = 0;
            now->on[m] = 0;
        } else {
            ch[k].has_new = 1;
            ch[k].c = rnd(12);
            now->on[m] = 1;
            now->c[m] = ch[k].c;
        }
    }
    return n;
}

static int64_t touched(const struct rc_moment_change *ch, size_t n)
{
    int seen[NM] = {0};
    int64_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int m = atoi(ch[i].member + 1);
        if (!seen[m]++)
            k++;
    }
    return k;
}

static void slice_of(const struct rc_moment_row *present, size_t np, int64_t lo, int64_t hi, struct rc_moment_in *in)
{
    if (lo < 0)
        lo = 0;
    if (hi > (int64_t)np - 1)
        hi = (int64_t)np - 1;
    in->lo = lo;
    in->slice = present + lo;
    in->nslice = hi >= lo ? (size_t)(hi - lo + 1) : 0;
    if (lo >= (int64_t)np) {
        in->lo = (int64_t)np;
        in->nslice = 0;
    }
}

static void ranges_match_a_replay(void **state)
{
    (void)state;
    struct state at_s, now;
    struct rc_moment_change ch[MAXCH];
    struct rc_moment_row want[NM], present[NM];
    for (unsigned seed = 1; seed <= 3000; seed++) {
        rng_state = seed;
        int desc = (int)rnd(2);
        size_t n = scenario(&at_s, &now, ch);
        size_t nw = sorted(&at_s, desc, want), np = sorted(&now, desc, present);
        int64_t first = rnd(NM), count = 1 + rnd(12), m = rc_moment_margin(touched(ch, n));
        struct rc_moment_in in = {.desc = desc, .total = (int64_t)np, .changes = ch, .nchanges = n};
        slice_of(present, np, first - m, first + count - 1 + m, &in);
        struct rc_moment_out out;
        assert_int_equal(rc_moment_range(&in, first, count, &out), 0);
        assert_int_equal(out.total, (int64_t)nw);
        size_t expect = first >= (int64_t)nw ? 0 : (size_t)((int64_t)nw - first < count ? (int64_t)nw - first : count);
        assert_int_equal(out.n, expect);
        if (expect)
            assert_int_equal(out.first_rank, first + 1);
        for (size_t i = 0; i < out.n; i++) {
            assert_string_equal(out.rows[i].member, want[first + (int64_t)i].member);
            assert_true(out.rows[i].c == want[first + (int64_t)i].c);
        }
        rc_moment_out_free(&out);
    }
}

/* the count of present rows before (c, member): what the script's ZCOUNT gives */
static int64_t ahead_of(const struct rc_moment_row *present, size_t np, int desc, const char *member, double c)
{
    int64_t k = 0;
    for (size_t i = 0; i < np; i++)
        k += rc_shard_before(desc, present[i].c, 0, present[i].member, c, 0, member);
    return k;
}

static void arounds_and_ranks_match_a_replay(void **state)
{
    (void)state;
    struct state at_s, now;
    struct rc_moment_change ch[MAXCH];
    struct rc_moment_row want[NM], present[NM];
    for (unsigned seed = 1; seed <= 3000; seed++) {
        rng_state = seed * 7919u;
        int desc = (int)rnd(2);
        size_t n = scenario(&at_s, &now, ch);
        size_t nw = sorted(&at_s, desc, want), np = sorted(&now, desc, present);
        int who = (int)rnd(NM);
        int64_t radius = rnd(5), m = rc_moment_margin(touched(ch, n));
        struct rc_moment_in in = {.desc = desc, .total = (int64_t)np, .changes = ch, .nchanges = n};
        int64_t pos = at_s.on[who] ? ahead_of(present, np, desc, names[who], at_s.c[who]) : 0;
        /* the script widens by the margin again: the anchor itself moves by up to K */
        slice_of(present, np, pos - radius - 2 * m, pos + radius + 2 * m, &in);
        struct rc_moment_out out;
        assert_int_equal(rc_moment_around(&in, names[who], radius, &out), 0);
        assert_int_equal(out.total, (int64_t)nw);
        if (!at_s.on[who]) {
            assert_int_equal(out.n, 0);
            assert_int_equal(out.first_rank, 0);
            continue;
        }
        int64_t r = 0;
        while (strcmp(want[r].member, names[who]) != 0)
            r++;
        int64_t from = r - radius < 0 ? 0 : r - radius, to = r + radius >= (int64_t)nw ? (int64_t)nw - 1 : r + radius;
        assert_int_equal(out.first_rank, from + 1);
        assert_int_equal(out.n, (size_t)(to - from + 1));
        for (size_t i = 0; i < out.n; i++)
            assert_string_equal(out.rows[i].member, want[from + (int64_t)i].member);
        rc_moment_out_free(&out);
        assert_int_equal(rc_moment_rank(desc, names[who], at_s.c[who], ahead_of(present, np, desc, names[who], at_s.c[who]),
                                        ch, n),
                         r + 1);
    }
}

/* Every member's rank at S at once (rc_moment_ranks, a roster at a moment)
 * equals rc_moment_rank's one by one, and the replay's. */
static void ranks_at_once_match_one_by_one_and_the_replay(void **state)
{
    (void)state;
    struct state at_s, now;
    struct rc_moment_change ch[MAXCH];
    struct rc_moment_row want[NM], present[NM], rows[NM];
    int64_t ahead[NM], ranks[NM];
    for (unsigned seed = 1; seed <= 2000; seed++) {
        rng_state = seed * 104729u;
        int desc = (int)rnd(2);
        size_t n = scenario(&at_s, &now, ch);
        size_t nw = sorted(&at_s, desc, want), np = sorted(&now, desc, present);
        size_t k = 0;
        for (int m = 0; m < NM; m++) {
            if (!at_s.on[m])
                continue;
            rows[k] = (struct rc_moment_row){names[m], at_s.c[m]};
            ahead[k++] = ahead_of(present, np, desc, names[m], at_s.c[m]);
        }
        assert_int_equal(rc_moment_ranks(desc, rows, ahead, k, ch, n, ranks), 0);
        for (size_t i = 0; i < k; i++) {
            int64_t r = 0;
            while ((size_t)r < nw && strcmp(want[r].member, rows[i].member) != 0)
                r++;
            assert_int_equal(ranks[i], r + 1);
            assert_int_equal(ranks[i], rc_moment_rank(desc, rows[i].member, rows[i].c, ahead[i], ch, n));
        }
    }
}

/* A checkpoint C between the target S and the present (docs/history.md,
 * "Checkpoints"): changes ch[0..k) lie in (S, C], ch[k..n) after C. The
 * checkpoint is made as lua/ckpt.lua makes it: a copy of the present (what a
 * scan sees when every change after C came before it) corrected by the
 * first old composite of each member a change after C touched. A rebuild
 * from the checkpoint's slice with the changes in (S, C] only (the margin
 * of the members those touched) equals the board at S; the changes after C
 * are not the read's to undo. */
static void a_checkpoint_between_target_and_present(void **state)
{
    (void)state;
    struct state at_s, now, at_c;
    struct rc_moment_change ch[MAXCH];
    struct rc_moment_row want[NM], ck[NM];
    unsigned split_inside = 0;
    for (unsigned seed = 1; seed <= 3000; seed++) {
        rng_state = seed * 104729u;
        int desc = (int)rnd(2);
        size_t n = scenario(&at_s, &now, ch);
        size_t k = n ? rnd((unsigned)n + 1) : 0;
        split_inside += k > 0 && k < n;
        /* the checkpoint: the present, then each member touched after C back
         * to the old composite of its first change after C */
        at_c = now;
        int seen[NM] = {0};
        for (size_t i = k; i < n; i++) {
            int m = atoi(ch[i].member + 1);
            if (seen[m]++)
                continue;
            at_c.on[m] = ch[i].has_old;
            at_c.c[m] = ch[i].old_c;
        }
        /* ... which is the board after the first k changes */
        struct state replay = at_s;
        for (size_t i = 0; i < k; i++) {
            int m = atoi(ch[i].member + 1);
            replay.on[m] = ch[i].has_new;
            replay.c[m] = ch[i].c;
        }
        for (int m = 0; m < NM; m++) {
            assert_int_equal(at_c.on[m], replay.on[m]);
            if (at_c.on[m])
                assert_true(at_c.c[m] == replay.c[m]);
        }
        size_t nw = sorted(&at_s, desc, want), nc = sorted(&at_c, desc, ck);
        int64_t first = rnd(NM), count = 1 + rnd(12), mg = rc_moment_margin(touched(ch, k));
        struct rc_moment_in in = {.desc = desc, .total = (int64_t)nc, .changes = ch, .nchanges = k};
        slice_of(ck, nc, first - mg, first + count - 1 + mg, &in);
        struct rc_moment_out out;
        assert_int_equal(rc_moment_range(&in, first, count, &out), 0);
        assert_int_equal(out.total, (int64_t)nw);
        size_t expect = first >= (int64_t)nw ? 0 : (size_t)((int64_t)nw - first < count ? (int64_t)nw - first : count);
        assert_int_equal(out.n, expect);
        for (size_t i = 0; i < out.n; i++) {
            assert_string_equal(out.rows[i].member, want[first + (int64_t)i].member);
            assert_true(out.rows[i].c == want[first + (int64_t)i].c);
        }
        rc_moment_out_free(&out);
    }
    assert_true(split_inside > 1000); /* most seeds have changes on both sides */
}

/* A moment S after a checkpoint C' (lua/read.lua redoes when C' is nearer
 * than the next checkpoint): the changes in (C', S], newest first with old
 * and new swapped, undone from C', give the board at S. */
static void a_redo_from_a_checkpoint_before_the_target(void **state)
{
    (void)state;
    struct state at_c, now;
    struct rc_moment_change ch[MAXCH], rev[MAXCH];
    struct rc_moment_row want[NM], ck[NM];
    for (unsigned seed = 1; seed <= 3000; seed++) {
        rng_state = seed * 7333u;
        int desc = (int)rnd(2);
        size_t n = scenario(&at_c, &now, ch); /* at_c: the checkpoint; now: the board at S */
        for (size_t i = 0; i < n; i++) {
            const struct rc_moment_change *x = &ch[n - 1 - i];
            rev[i] = (struct rc_moment_change){x->member, x->has_old, x->old_c, x->has_new, x->c};
        }
        size_t nw = sorted(&now, desc, want), nc = sorted(&at_c, desc, ck);
        int64_t first = rnd(NM), count = 1 + rnd(12), mg = rc_moment_margin(touched(rev, n));
        struct rc_moment_in in = {.desc = desc, .total = (int64_t)nc, .changes = rev, .nchanges = n};
        slice_of(ck, nc, first - mg, first + count - 1 + mg, &in);
        struct rc_moment_out out;
        assert_int_equal(rc_moment_range(&in, first, count, &out), 0);
        assert_int_equal(out.total, (int64_t)nw);
        size_t expect = first >= (int64_t)nw ? 0 : (size_t)((int64_t)nw - first < count ? (int64_t)nw - first : count);
        assert_int_equal(out.n, expect);
        for (size_t i = 0; i < out.n; i++) {
            assert_string_equal(out.rows[i].member, want[first + (int64_t)i].member);
            assert_true(out.rows[i].c == want[first + (int64_t)i].c);
        }
        rc_moment_out_free(&out);
    }
}

static void a_slice_too_short_cannot_tell(void **state)
{
    (void)state;
    /* now: a 5, b 4, c 3, d 2; at S b was 9 (first) */
    struct rc_moment_row present[] = {{"a", 5}, {"b", 4}, {"c", 3}, {"d", 2}};
    struct rc_moment_change ch[] = {{"b", 1, 4, 1, 9}};
    struct rc_moment_in in = {.desc = 1, .slice = present + 2, .nslice = 2, .lo = 2, .total = 4,
                              .changes = ch, .nchanges = 1};
    struct rc_moment_out out;
    assert_int_equal(rc_moment_range(&in, 0, 1, &out), RC_E_INTERNAL);
    in.slice = present;
    in.nslice = 4;
    in.lo = 0;
    assert_int_equal(rc_moment_range(&in, 0, 2, &out), 0);
    assert_int_equal(out.n, 2);
    assert_string_equal(out.rows[0].member, "b");
    assert_string_equal(out.rows[1].member, "a");
    rc_moment_out_free(&out);
}

/* rc_moment_total: the member count at S from the present count and the
 * changes alone (a member list at a moment has no slice) */
static void totals_match_a_replay(void **state)
{
    (void)state;
    struct state at_s, now;
    struct rc_moment_change ch[MAXCH];
    for (unsigned seed = 1; seed <= 2000; seed++) {
        rng_state = seed;
        size_t n = scenario(&at_s, &now, ch);
        int64_t ns = 0, np = 0, total = -1;
        for (int i = 0; i < NM; i++) {
            ns += at_s.on[i];
            np += now.on[i];
        }
        struct rc_moment_in in = {.desc = 1, .total = np, .changes = ch, .nchanges = n};
        assert_int_equal(rc_moment_total(&in, &total), 0);
        assert_int_equal(total, ns);
    }
}

/* by composite alone, as ZCOUNT with "(c" or "c" counts */
static int64_t count_ahead(const struct state *s, int desc, double bound, int inclusive)
{
    int64_t k = 0;
    for (int i = 0; i < NM; i++)
        if (s->on[i])
            k += s->c[i] == bound ? inclusive : desc ? s->c[i] > bound : s->c[i] < bound;
    return k;
}

static void counts_ahead_of_a_bound_match_a_replay(void **state)
{
    (void)state;
    struct state at_s, now;
    struct rc_moment_change ch[MAXCH];
    for (unsigned seed = 1; seed <= 3000; seed++) {
        rng_state = seed;
        int desc = (int)rnd(2), inclusive = (int)rnd(2);
        size_t n = scenario(&at_s, &now, ch);
        double bound = rnd(3) ? rnd(13) : rnd(13) + 0.5;
        int64_t got = rc_moment_ahead(desc, bound, inclusive, count_ahead(&now, desc, bound, inclusive), ch, n);
        assert_int_equal(got, count_ahead(&at_s, desc, bound, inclusive));
    }
}

/* What a sharded board's other shard answers at S: the rows nearest a
 * bound, from the slice read.lua's "near" cuts. */
static void the_rows_near_a_bound_match_a_replay(void **state)
{
    (void)state;
    struct state at_s, now;
    struct rc_moment_change ch[MAXCH];
    struct rc_moment_row want[NM], present[NM];
    for (unsigned seed = 1; seed <= 3000; seed++) {
        rng_state = seed;
        int desc = (int)rnd(2), inclusive = (int)rnd(2);
        size_t n = scenario(&at_s, &now, ch);
        size_t nw = sorted(&at_s, desc, want), np = sorted(&now, desc, present);
        double bound = rnd(3) ? rnd(13) : rnd(13) + 0.5;
        int64_t radius = rnd(6), k = touched(ch, n), m = rc_moment_margin(k);
        int64_t p = count_ahead(&now, desc, bound, inclusive), ahead = -1;
        struct rc_moment_in in = {.desc = desc, .total = (int64_t)np, .changes = ch, .nchanges = n};
        slice_of(present, np, p - k - radius - m, p + k + radius + m, &in);
        struct rc_moment_out out;
        assert_int_equal(rc_moment_near(&in, bound, inclusive, p, radius, &out, &ahead), 0);
        int64_t a = count_ahead(&at_s, desc, bound, inclusive);
        assert_int_equal(ahead, a);
        int64_t from = a > radius ? a - radius : 0, to = a + radius + 1 < (int64_t)nw ? a + radius + 1 : (int64_t)nw;
        assert_int_equal(out.n, (size_t)(to - from));
        for (size_t i = 0; i < out.n; i++) {
            assert_string_equal(out.rows[i].member, want[from + (int64_t)i].member);
            assert_true(out.rows[i].c == want[from + (int64_t)i].c);
        }
        rc_moment_out_free(&out);
    }
}

int main(void)
{
    for (int i = 0; i < NM; i++)
        snprintf(names[i], sizeof names[i], "m%02d", i);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranges_match_a_replay),
        cmocka_unit_test(arounds_and_ranks_match_a_replay),
        cmocka_unit_test(a_slice_too_short_cannot_tell),
        cmocka_unit_test(ranks_at_once_match_one_by_one_and_the_replay),
        cmocka_unit_test(a_checkpoint_between_target_and_present),
        cmocka_unit_test(a_redo_from_a_checkpoint_before_the_target),
        cmocka_unit_test(totals_match_a_replay),
        cmocka_unit_test(counts_ahead_of_a_bound_match_a_replay),
        cmocka_unit_test(the_rows_near_a_bound_match_a_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
