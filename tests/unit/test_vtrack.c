/* test_vtrack.c - rc_vtrack says a window read from Redis is unchanged by an
 * event only when it is: a move far from a page or an around view keeps
 * it; its own member's move, a join or leave, a gap or a tracker that
 * forgot read again; an event the read already reflects is old.
 *
 * The property test plays random moves, joins and leaves on a small board
 * and checks every RC_VTRACK_SAME against the windows before and after
 * (rows, total, shared places and the row after), from a fixed seed
 * (RC_TEST_SEED=<n>). Another plays the same events to a tracker that is
 * told only those whose rank span meets its rc_vtrack_ranks (the rest
 * skipped, as the fan-out's index of read views does) and checks that it
 * judges as the tracker told every event.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rc_test_rng.h"

#include "rc_vtrack.h"

static void a_move_far_below_an_around_view_keeps_it(void **state)
{
    (void)state;
    struct rc_vtrack t;
    rc_vtrack_around(&t, 10, 5, 2, 0); /* ranks 3..7 */
    assert_int_equal(rc_vtrack_event(&t, 11, 0, 1, 900, 1, 850), RC_VTRACK_SAME);
    assert_int_equal(rc_vtrack_event(&t, 12, 0, 1, 8, 1, 20), RC_VTRACK_SAME);
    assert_int_equal(t.seq, 12);
    assert_int_equal(t.pos, 5);
    /* a move from below into the window reaches it */
    assert_int_equal(rc_vtrack_event(&t, 13, 0, 1, 40, 1, 7), RC_VTRACK_CHANGED);
    assert_int_equal(t.ok, 0);
    assert_int_equal(rc_vtrack_event(&t, 14, 0, 1, 900, 1, 899), RC_VTRACK_CHANGED); /* forgot till a read */
}

static void its_own_member_moving_changes_an_around_view(void **state)
{
    (void)state;
    struct rc_vtrack t;
    rc_vtrack_around(&t, 1, 50, 1, 0);
    assert_int_equal(rc_vtrack_event(&t, 2, 1, 1, 50, 1, 50), RC_VTRACK_CHANGED); /* same rank, new score */
}

static void a_move_passing_over_an_around_view_reaches_it(void **state)
{
    (void)state;
    struct rc_vtrack t;
    rc_vtrack_around(&t, 1, 50, 1, 0);
    assert_int_equal(rc_vtrack_event(&t, 2, 0, 1, 100, 1, 3), RC_VTRACK_CHANGED);
}

static void an_absent_members_empty_window_stays_empty(void **state)
{
    (void)state;
    struct rc_vtrack t;
    rc_vtrack_around(&t, 1, 0, 5, 0);
    assert_int_equal(rc_vtrack_event(&t, 2, 0, 1, 1, 1, 7), RC_VTRACK_SAME);
    assert_int_equal(rc_vtrack_event(&t, 3, 1, 0, 0, 1, 4), RC_VTRACK_CHANGED); /* it joined */
}

static void joins_leaves_and_gaps_read_again(void **state)
{
    (void)state;
    struct rc_vtrack t;
    rc_vtrack_page(&t, 5, 1000, 10, 0); /* ranks 1001..1010 */
    assert_int_equal(rc_vtrack_event(&t, 6, 0, 0, 0, 1, 5000), RC_VTRACK_CHANGED); /* total */
    rc_vtrack_page(&t, 5, 1000, 10, 0);
    assert_int_equal(rc_vtrack_event(&t, 6, 0, 1, 5000, 0, 0), RC_VTRACK_CHANGED);
    rc_vtrack_page(&t, 5, 1000, 10, 0);
    assert_int_equal(rc_vtrack_event(&t, 7, 0, 1, 5000, 1, 4000), RC_VTRACK_CHANGED); /* 6 missed */
    rc_vtrack_page(&t, 5, 1000, 10, 0);
    assert_int_equal(rc_vtrack_event(&t, 5, 0, 1, 1005, 1, 1), RC_VTRACK_OLD);
    assert_int_equal(rc_vtrack_event(&t, 6, 0, 1, 20, 1, 1), RC_VTRACK_SAME);   /* above it */
    assert_int_equal(rc_vtrack_event(&t, 7, 0, 1, 1011, 1, 1011), RC_VTRACK_SAME); /* just after it */
    assert_int_equal(rc_vtrack_event(&t, 8, 0, 1, 1011, 1, 1010), RC_VTRACK_CHANGED);
}

static void the_ranks_a_window_depends_on_are_the_ones_events_are_judged_by(void **state)
{
    (void)state;
    struct rc_vtrack t;
    int64_t lo = 0, hi = 0;
    rc_vtrack_page(&t, 5, 1000, 10, 0);
    assert_int_equal(rc_vtrack_ranks(&t, &lo, &hi), 1);
    assert_int_equal(lo, 1001);
    assert_int_equal(hi, 1010);
    rc_vtrack_page(&t, 5, 1000, 10, 1); /* shared places: from rank 1, one row past */
    assert_int_equal(rc_vtrack_ranks(&t, &lo, &hi), 1);
    assert_int_equal(lo, 1);
    assert_int_equal(hi, 1011);
    rc_vtrack_around(&t, 5, 3, 5, 0); /* clipped at rank 1 */
    assert_int_equal(rc_vtrack_ranks(&t, &lo, &hi), 1);
    assert_int_equal(lo, 1);
    assert_int_equal(hi, 8);
    rc_vtrack_around(&t, 5, 0, 5, 0); /* absent: no move that keeps total reaches it */
    assert_int_equal(rc_vtrack_ranks(&t, &lo, &hi), 0);
    rc_vtrack_page(&t, 5, 0, 10, 0);
    rc_vtrack_forget(&t);
    assert_int_equal(rc_vtrack_ranks(&t, &lo, &hi), 0);
}

static void skipping_events_an_index_judged_moves_the_tracker_on(void **state)
{
    (void)state;
    struct rc_vtrack t;
    rc_vtrack_page(&t, 5, 1000, 10, 0);
    rc_vtrack_skip(&t, 9); /* events 6..9 missed ranks 1001..1010 */
    assert_int_equal(t.seq, 9);
    rc_vtrack_skip(&t, 7); /* (never backwards) */
    assert_int_equal(t.seq, 9);
    assert_int_equal(rc_vtrack_event(&t, 10, 0, 1, 20, 1, 1), RC_VTRACK_SAME); /* no gap */
    assert_int_equal(rc_vtrack_event(&t, 10, 0, 1, 1005, 1, 1), RC_VTRACK_OLD);
    assert_int_equal(rc_vtrack_event(&t, 11, 0, 1, 1011, 1, 1010), RC_VTRACK_CHANGED);
    rc_vtrack_skip(&t, 20); /* forgot: stays forgotten */
    assert_int_equal(t.ok, 0);
    assert_int_equal(rc_vtrack_event(&t, 21, 0, 1, 20, 1, 1), RC_VTRACK_CHANGED);
}

static void shared_places_count_from_rank_one_and_one_row_past(void **state)
{
    (void)state;
    struct rc_vtrack t;
    rc_vtrack_page(&t, 1, 1000, 10, 1);
    assert_int_equal(rc_vtrack_event(&t, 2, 0, 1, 20, 1, 1), RC_VTRACK_CHANGED);
    rc_vtrack_page(&t, 1, 1000, 10, 1);
    assert_int_equal(rc_vtrack_event(&t, 2, 0, 1, 1011, 1, 1011), RC_VTRACK_CHANGED);
    rc_vtrack_page(&t, 1, 1000, 10, 1);
    assert_int_equal(rc_vtrack_event(&t, 2, 0, 1, 1012, 1, 1012), RC_VTRACK_SAME);
}

/* ---- property: every SAME is true --------------------------------------- */

#define N 40 /* member ids 0..N-1 */

struct board {
    int on[N];
    int score[N];
};

/* before(x, y): x ranks ahead of y (points desc, then id desc) */
static int before(const struct board *b, int x, int y)
{
    return b->score[x] != b->score[y] ? b->score[x] > b->score[y] : x > y;
}

/* rank (1-based) of x, 0 when absent */
static int64_t rank_of(const struct board *b, int x)
{
    if (!b->on[x])
        return 0;
    int64_t r = 1;
    for (int y = 0; y < N; y++)
        if (b->on[y] && y != x && before(b, y, x))
            r++;
    return r;
}

static int total(const struct board *b)
{
    int n = 0;
    for (int y = 0; y < N; y++)
        n += b->on[y];
    return n;
}

/* member at rank r (1-based), -1 past the end */
static int at_rank(const struct board *b, int64_t r)
{
    for (int y = 0; y < N; y++)
        if (b->on[y] && rank_of(b, y) == r)
            return y;
    return -1;
}

/* What a viewer of ranks [lo, hi] sees: members, points, shared places, the
 * row after (for ties), and total; written into sig. */
static void signature(const struct board *b, int64_t lo, int64_t hi, int places, char *sig, size_t cap)
{
    size_t n = (size_t)snprintf(sig, cap, "t%d|", total(b));
    for (int64_t r = lo; r <= hi + (places ? 1 : 0) && n < cap; r++) {
        int x = at_rank(b, r);
        if (x < 0)
            break;
        int place = 1;
        for (int y = 0; y < N; y++)
            if (b->on[y] && b->score[y] > b->score[x])
                place++;
        n += (size_t)snprintf(sig + n, cap - n, "%d:%d:%d,", x, b->score[x], places ? place : 0);
    }
}

static void window_sig(const struct board *b, int around, int m, int64_t off, int64_t lim, int64_t rad, int places,
                       char *sig, size_t cap)
{
    if (!around) {
        signature(b, off + 1, off + lim, places, sig, cap);
        return;
    }
    int64_t p = rank_of(b, m);
    if (!p) {
        snprintf(sig, cap, "t%d|absent", total(b));
        return;
    }
    signature(b, p - rad < 1 ? 1 : p - rad, p + rad, places, sig, cap);
}

static void random_events_never_call_a_changed_window_same(void **state)
{
    (void)state;
    const char *env = getenv("RC_TEST_SEED");
    struct rng g = {env ? strtoull(env, NULL, 10) : 23};
    unsigned same = 0, changed_seen = 0;
    for (int round = 0; round < 200; round++) {
        struct board b = {{0}, {0}};
        for (int y = 0; y < N; y++) {
            b.on[y] = below(&g, 4) != 0;
            b.score[y] = (int)below(&g, 30);
        }
        int around = (int)below(&g, 2), m = (int)below(&g, N), places = below(&g, 3) == 0;
        int64_t off = (int64_t)below(&g, 30), lim = 1 + (int64_t)below(&g, 6), rad = (int64_t)below(&g, 4);
        struct rc_vtrack t;
        int64_t seq = 1;
        char was[2048], now[2048];
        for (int step = 0; step < 200; step++) {
            if (!t.ok || step == 0) { /* a read */
                if (around)
                    rc_vtrack_around(&t, seq, rank_of(&b, m), rad, places);
                else
                    rc_vtrack_page(&t, seq, off, lim, places);
            }
            window_sig(&b, around, m, off, lim, rad, places, was, sizeof was);
            int x = (int)below(&g, N);
            int64_t old = rank_of(&b, x);
            int k = (int)below(&g, 10);
            if (k == 0)
                b.on[x] = !b.on[x];
            else if (b.on[x])
                b.score[x] += (int)below(&g, 7) - 3;
            else
                continue; /* nothing happened: no event */
            int64_t nw = rank_of(&b, x);
            seq++;
            int r = rc_vtrack_event(&t, seq, around && x == m, old > 0, old, nw > 0, nw);
            window_sig(&b, around, m, off, lim, rad, places, now, sizeof now);
            if (r == RC_VTRACK_SAME) {
                same++;
                if (strcmp(was, now) != 0)
                    fail_msg("seed %s round %d step %d: SAME but %s -> %s", env ? env : "23", round, step, was, now);
            } else {
                assert_int_equal(r, RC_VTRACK_CHANGED);
                changed_seen += strcmp(was, now) != 0;
            }
        }
    }
    assert_true(same > 1000);       /* the rule does skip work */
    assert_true(changed_seen > 100); /* and the board does move under the windows */
}

/* The index's view: events that keep total and whose span misses the
 * window's ranks are skipped, the rest judged; it must judge as a tracker
 * told every event (same result whenever it is told, same seq after). */
static void an_index_by_ranks_judges_as_every_event_would(void **state)
{
    (void)state;
    const char *env = getenv("RC_TEST_SEED");
    struct rng g = {env ? strtoull(env, NULL, 10) : 24};
    unsigned skipped = 0, told = 0;
    for (int round = 0; round < 200; round++) {
        struct board b = {{0}, {0}};
        for (int y = 0; y < N; y++) {
            b.on[y] = below(&g, 4) != 0;
            b.score[y] = (int)below(&g, 30);
        }
        int around = (int)below(&g, 2), m = (int)below(&g, N), places = below(&g, 3) == 0;
        int64_t off = (int64_t)below(&g, 30), lim = 1 + (int64_t)below(&g, 6), rad = (int64_t)below(&g, 4);
        struct rc_vtrack all, ix;
        int64_t seq = 1, skip_to = 0;
        for (int step = 0; step < 200; step++) {
            if (!all.ok || step == 0) { /* a read: both from the same window */
                if (around)
                    rc_vtrack_around(&all, seq, rank_of(&b, m), rad, places);
                else
                    rc_vtrack_page(&all, seq, off, lim, places);
                ix = all;
                skip_to = seq;
            }
            int x = (int)below(&g, N);
            int64_t old = rank_of(&b, x);
            if (below(&g, 10) == 0)
                b.on[x] = !b.on[x];
            else if (b.on[x])
                b.score[x] += (int)below(&g, 7) - 3;
            else
                continue;
            int64_t nw = rank_of(&b, x);
            seq++;
            int self = around && x == m;
            int r = rc_vtrack_event(&all, seq, self, old > 0, old, nw > 0, nw);
            int64_t lo, hi, a = old < nw ? old : nw, z = old < nw ? nw : old;
            int keeps = old > 0 && nw > 0;
            if (keeps && (!rc_vtrack_ranks(&ix, &lo, &hi) || z < lo || a > hi) && ix.ok) {
                skipped++;
                skip_to = seq; /* not reported: the index judged it */
                assert_int_equal(r, RC_VTRACK_SAME);
                continue;
            }
            told++;
            rc_vtrack_skip(&ix, skip_to);
            int ri = rc_vtrack_event(&ix, seq, self, old > 0, old, nw > 0, nw);
            if (ri != r)
                fail_msg("seed %s round %d step %d: %d told, %d judging all", env ? env : "24", round, step, ri, r);
            if (all.ok)
                assert_int_equal(ix.seq, all.seq);
        }
    }
    assert_true(skipped > 1000);
    assert_true(told > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_move_far_below_an_around_view_keeps_it),
        cmocka_unit_test(its_own_member_moving_changes_an_around_view),
        cmocka_unit_test(a_move_passing_over_an_around_view_reaches_it),
        cmocka_unit_test(an_absent_members_empty_window_stays_empty),
        cmocka_unit_test(joins_leaves_and_gaps_read_again),
        cmocka_unit_test(shared_places_count_from_rank_one_and_one_row_past),
        cmocka_unit_test(random_events_never_call_a_changed_window_same),
        cmocka_unit_test(the_ranks_a_window_depends_on_are_the_ones_events_are_judged_by),
        cmocka_unit_test(skipping_events_an_index_judged_moves_the_tracker_on),
        cmocka_unit_test(an_index_by_ranks_judges_as_every_event_would),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
