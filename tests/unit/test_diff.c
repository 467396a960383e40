/* test_diff.c - rc_diff_window_diff finds a delta that PROTOCOL.md's rule ("Applying
 * a delta to a window") turns into exactly the new window, no bigger than the
 * members that changed; rc_diff_window_apply is that rule and refuses what the rule
 * does not allow.
 *
 * The random tests run from a fixed seed printed at start; RC_TEST_SEED=<n>
 * replays another one. A literal, slow transcription of the rule
 * (rule_apply) is the reference that both the diff and rc_diff_window_apply are
 * checked against.
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

#include "rc_diff.h"
#include "rc_err.h"

#define DEFAULT_SEED 20260301u
#define NONE SIZE_MAX

/* ------------------------------------------------------------------------- */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------- */

static uint64_t test_seed(void)
{
    const char *env = getenv("RC_TEST_SEED");
    return env && *env ? strtoull(env, NULL, 0) : DEFAULT_SEED;
}

/* PROTOCOL.md's rule, transcribed step by step with no cleverness: the
 * reference. Returns 0, or -1 where the rule cannot be followed (a position
 * past the list, a rank before the window) or the result does not fit in cap.
 * Rows are inserted in ascending rank whatever order they come in; the caller
 * gives distinct ranks. list is only written on success. */
static int rule_apply(struct rc_wrow *list, size_t *n, size_t cap, size_t window_len, long first_rank,
                      const struct rc_wrow *rows, const long *ranks, size_t nrows,
                      const char *const *removed, size_t nremoved)
{
    struct rc_wrow *tmp = malloc((*n + nrows + 1) * sizeof *tmp);
    size_t *idx = malloc((nrows + 1) * sizeof *idx);
    size_t len = 0;
    int rc = -1;

    assert_non_null(tmp);
    assert_non_null(idx);
    if (*n > cap)
        goto out;

    /* 1. remove every member named in removed and every member named in rows */
    for (size_t i = 0; i < *n; i++) {
        int named = 0;
        for (size_t k = 0; k < nremoved && !named; k++)
            named = strcmp(list[i].member, removed[k]) == 0;
        for (size_t k = 0; k < nrows && !named; k++)
            named = strcmp(list[i].member, rows[k].member) == 0;
        if (!named)
            tmp[len++] = list[i];
    }

    /* 2. insert each row, in ascending rank, at position rank - first_rank */
    for (size_t k = 0; k < nrows; k++) {
        size_t j = k;
        while (j > 0 && ranks[idx[j - 1]] > ranks[k]) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = k;
    }
    for (size_t k = 0; k < nrows; k++) {
        long pos = ranks[idx[k]] - first_rank;
        if (pos < 0 || (size_t)pos > len)
            goto out;
        memmove(&tmp[pos + 1], &tmp[pos], (len - (size_t)pos) * sizeof *tmp);
        tmp[pos] = rows[idx[k]];
        len++;
    }

    /* 3. cut the list to the window's length */
    if (len > window_len)
        len = window_len;
    if (len > cap)
        goto out;
    memcpy(list, tmp, len * sizeof *tmp);
    *n = len;
    rc = 0;
out:
    free(tmp);
    free(idx);
    return rc;
}

static void assert_window_equal(const struct rc_wrow *got, size_t ngot, const struct rc_wrow *want,
                                size_t nwant)
{
    assert_int_equal(ngot, nwant);
    for (size_t i = 0; i < nwant; i++) {
        assert_string_equal(got[i].member, want[i].member);
        assert_true(got[i].key == want[i].key);
    }
}

/* Diffs old against new_, checks the delta's shape, applies it with both
 * rc_diff_window_apply and the reference rule (rows shuffled when r is given), and
 * asserts both rebuild new_ exactly. Fills *d; the caller frees it. */
static void diff_and_rebuild(const struct rc_wrow *old, size_t nold, const struct rc_wrow *new_,
                             size_t nnew, size_t window_len, long first_rank, struct rng *r,
                             struct rc_diff *d)
{
    size_t cap = (nold > nnew ? nold : nnew) + 1;
    struct rc_wrow *win = malloc(cap * sizeof *win);
    struct rc_wrow *ref = malloc(cap * sizeof *ref);
    struct rc_wrow *rows = malloc(cap * sizeof *rows);
    long *ranks = malloc(cap * sizeof *ranks);
    const char **removed = malloc(cap * sizeof *removed);
    size_t nwin = nold, nref = nold;

    assert_non_null(win);
    assert_non_null(ref);
    assert_non_null(rows);
    assert_non_null(ranks);
    assert_non_null(removed);

    assert_int_equal(rc_diff_window_diff(old, nold, new_, nnew, d), 0);
    assert_true(d->nrows <= nnew);
    assert_true(d->nremoved <= nold);
    for (size_t k = 0; k < d->nrows; k++) {
        assert_true(d->rows[k] < nnew);
        assert_true(k == 0 || d->rows[k - 1] < d->rows[k]);
    }
    for (size_t k = 0; k < d->nremoved; k++) {
        assert_true(d->removed[k] < nold);
        assert_true(k == 0 || d->removed[k - 1] < d->removed[k]);
    }

    for (size_t k = 0; k < d->nrows; k++) {
        rows[k] = new_[d->rows[k]];
        ranks[k] = first_rank + (long)d->rows[k];
    }
    for (size_t k = 0; r && d->nrows > 1 && k < d->nrows; k++) {
        size_t j = k + below(r, d->nrows - k);
        struct rc_wrow tr = rows[k];
        long tk = ranks[k];
        rows[k] = rows[j];
        ranks[k] = ranks[j];
        rows[j] = tr;
        ranks[j] = tk;
    }
    for (size_t k = 0; k < d->nremoved; k++)
        removed[k] = old[d->removed[k]].member;

    if (nold > 0) {
        memcpy(win, old, nold * sizeof *old);
        memcpy(ref, old, nold * sizeof *old);
    }
    assert_int_equal(rc_diff_window_apply(win, &nwin, cap, window_len, first_rank, rows, ranks, d->nrows,
                                     removed, d->nremoved),
                     0);
    assert_window_equal(win, nwin, new_, nnew);
    assert_int_equal(rule_apply(ref, &nref, cap, window_len, first_rank, rows, ranks, d->nrows,
                                removed, d->nremoved),
                     0);
    assert_window_equal(ref, nref, new_, nnew);

    free(win);
    free(ref);
    free(rows);
    free(ranks);
    free(removed);
}

/* A top 10, u0 (100) down to u9 (91). */
static const struct rc_wrow top10[10] = {
    {"u0", 100}, {"u1", 99}, {"u2", 98}, {"u3", 97}, {"u4", 96},
    {"u5", 95},  {"u6", 94}, {"u7", 93}, {"u8", 92}, {"u9", 91},
};

/* ------------------------------------------------------------------------- */
/* Diff: unit cases                                                          */
/* ------------------------------------------------------------------------- */

static void unchanged_window_gives_empty_delta(void **state)
{
    struct rc_diff d;
    (void)state;

    diff_and_rebuild(top10, 10, top10, 10, 10, 1, NULL, &d);
    assert_int_equal(d.nrows, 0);
    assert_int_equal(d.nremoved, 0);
    assert_null(d.rows);
    assert_null(d.removed);
    rc_diff_free(&d);
}

static void member_moving_up_inside_top10_is_one_row(void **state)
{
    /* u6 climbs from rank 7 to rank 3. */
    const struct rc_wrow new_[10] = {
        {"u0", 100}, {"u1", 99}, {"u6", 98.5}, {"u2", 98}, {"u3", 97},
        {"u4", 96},  {"u5", 95}, {"u7", 93},   {"u8", 92}, {"u9", 91},
    };
    struct rc_diff d;
    (void)state;

    diff_and_rebuild(top10, 10, new_, 10, 10, 1, NULL, &d);
    assert_int_equal(d.nrows, 1);
    assert_int_equal(d.rows[0], 2);
    assert_int_equal(d.nremoved, 0);
    rc_diff_free(&d);
}

static void member_moving_down_inside_top10_is_one_row(void **state)
{
    /* u1 falls from rank 2 to rank 9. */
    const struct rc_wrow new_[10] = {
        {"u0", 100}, {"u2", 98}, {"u3", 97}, {"u4", 96},   {"u5", 95},
        {"u6", 94},  {"u7", 93}, {"u8", 92}, {"u1", 91.5}, {"u9", 91},
    };
    struct rc_diff d;
    (void)state;

    diff_and_rebuild(top10, 10, new_, 10, 10, 1, NULL, &d);
    assert_int_equal(d.nrows, 1);
    assert_int_equal(d.rows[0], 8);
    assert_int_equal(d.nremoved, 0);
    rc_diff_free(&d);
}

static void score_change_in_place_is_one_row(void **state)
{
    struct rc_wrow new_[10];
    struct rc_diff d;
    (void)state;

    memcpy(new_, top10, sizeof new_);
    new_[4].key = 96.5;
    diff_and_rebuild(top10, 10, new_, 10, 10, 1, NULL, &d);
    assert_int_equal(d.nrows, 1);
    assert_int_equal(d.rows[0], 4);
    assert_int_equal(d.nremoved, 0);
    rc_diff_free(&d);
}

static void newcomer_at_rank1_of_full_top10_is_one_row(void **state)
{
    struct rc_wrow new_[10];
    struct rc_diff d;
    (void)state;

    new_[0] = (struct rc_wrow){"x", 200};
    memcpy(&new_[1], top10, 9 * sizeof *new_);
    diff_and_rebuild(top10, 10, new_, 10, 10, 1, NULL, &d);
    assert_int_equal(d.nrows, 1);
    assert_int_equal(d.rows[0], 0);
    assert_true(d.nremoved <= 1);
    if (d.nremoved == 1)
        assert_int_equal(d.removed[0], 9); /* u9, pushed off */
    rc_diff_free(&d);
}

static void member_leaving_top10_is_removed_and_next_moves_in(void **state)
{
    /* u3 leaves the board; u10 (90), rank 11 before, moves up to rank 10. */
    struct rc_wrow new_[10];
    struct rc_diff d;
    (void)state;

    memcpy(new_, top10, 3 * sizeof *new_);
    memcpy(&new_[3], &top10[4], 6 * sizeof *new_);
    new_[9] = (struct rc_wrow){"u10", 90};
    diff_and_rebuild(top10, 10, new_, 10, 10, 1, NULL, &d);
    assert_int_equal(d.nrows, 1);
    assert_int_equal(d.rows[0], 9);
    assert_int_equal(d.nremoved, 1);
    assert_int_equal(d.removed[0], 3);
    rc_diff_free(&d);
}

static void member_leaving_short_board_is_only_removed(void **state)
{
    /* The board has only these 10 members and a top 20 view: u3 leaves and
     * nothing moves in, so the list must shrink (nothing would cut u3). */
    struct rc_wrow new_[9];
    struct rc_diff d;
    (void)state;

    memcpy(new_, top10, 3 * sizeof *new_);
    memcpy(&new_[3], &top10[4], 6 * sizeof *new_);
    diff_and_rebuild(top10, 10, new_, 9, 20, 1, NULL, &d);
    assert_int_equal(d.nrows, 0);
    assert_int_equal(d.nremoved, 1);
    assert_int_equal(d.removed[0], 3);
    rc_diff_free(&d);
}

static void page_shifted_by_change_above_is_one_row_one_removed(void **state)
{
    /* Board p1..p30 (p1 highest); the page is ranks 11..20. */
    char names[31][16];
    struct rc_wrow board[31], old[10], new_[10];
    struct rc_diff d;
    (void)state;

    for (int i = 1; i <= 30; i++) {
        snprintf(names[i], sizeof names[i], "p%d", i);
        board[i] = (struct rc_wrow){names[i], 1000.0 - i};
    }
    memcpy(old, &board[11], sizeof old);

    /* p3 leaves the board: everyone below moves up one. */
    memcpy(new_, &board[12], sizeof new_);
    diff_and_rebuild(old, 10, new_, 10, 10, 11, NULL, &d);
    assert_int_equal(d.nrows, 1);
    assert_int_equal(d.rows[0], 9); /* p21 enters at rank 20 */
    assert_int_equal(d.nremoved, 1);
    assert_int_equal(d.removed[0], 0); /* p11 rose to rank 10 */
    rc_diff_free(&d);

    /* p25 jumps to the top: everyone from p1 to p24 moves down one. */
    memcpy(new_, &board[10], sizeof new_);
    diff_and_rebuild(old, 10, new_, 10, 10, 11, NULL, &d);
    assert_int_equal(d.nrows, 1);
    assert_int_equal(d.rows[0], 0); /* p10 falls to rank 11 */
    assert_int_equal(d.nremoved, 1);
    assert_int_equal(d.removed[0], 9); /* p20 falls to rank 21 */
    rc_diff_free(&d);
}

static void empty_old_window_sends_every_row(void **state)
{
    struct rc_diff d;
    (void)state;

    diff_and_rebuild(NULL, 0, top10, 10, 10, 1, NULL, &d);
    assert_int_equal(d.nrows, 10);
    for (size_t k = 0; k < 10; k++)
        assert_int_equal(d.rows[k], k);
    assert_int_equal(d.nremoved, 0);
    rc_diff_free(&d);
}

static void empty_new_window_removes_every_member(void **state)
{
    struct rc_diff d;
    (void)state;

    diff_and_rebuild(top10, 10, NULL, 0, 10, 1, NULL, &d);
    assert_int_equal(d.nrows, 0);
    assert_int_equal(d.nremoved, 10);
    for (size_t k = 0; k < 10; k++)
        assert_int_equal(d.removed[k], k);
    rc_diff_free(&d);
}

static void both_windows_empty_gives_empty_delta(void **state)
{
    struct rc_diff d;
    size_t n = 0;
    (void)state;

    assert_int_equal(rc_diff_window_diff(NULL, 0, NULL, 0, &d), 0);
    assert_int_equal(d.nrows, 0);
    assert_int_equal(d.nremoved, 0);
    rc_diff_free(&d);
    rc_diff_free(&d); /* twice is harmless */
    rc_diff_free(NULL);
    assert_int_equal(rc_diff_window_apply(NULL, &n, 0, 10, 1, NULL, NULL, 0, NULL, 0), 0);
    assert_int_equal(n, 0);
}

static void diff_refuses_duplicate_members(void **state)
{
    const struct rc_wrow dup[3] = {{"a", 3}, {"b", 2}, {"a", 1}};
    struct rc_diff d;
    (void)state;

    assert_int_equal(rc_diff_window_diff(top10, 10, dup, 3, &d), RC_E_INTERNAL);
    assert_int_equal(d.nrows + d.nremoved, 0);
    assert_null(d.rows);
    assert_int_equal(rc_diff_window_diff(dup, 3, dup + 1, 2, &d), RC_E_INTERNAL);
    assert_int_equal(d.nrows + d.nremoved, 0);
    assert_int_equal(rc_diff_window_diff(top10, 10, top10, 10, NULL), RC_E_INTERNAL);
}

/* ------------------------------------------------------------------------- */
/* Apply: unit cases                                                         */
/* ------------------------------------------------------------------------- */

static void apply_rejects_row_past_list_length(void **state)
{
    struct rc_wrow win[8] = {{"a", 3}, {"b", 2}, {"c", 1}};
    const struct rc_wrow row = {"d", 0};
    const char *const gone[] = {"b"};
    long rank = 5; /* position 4 of a 3-row list */
    size_t n = 3;
    (void)state;

    assert_int_equal(rc_diff_window_apply(win, &n, 8, 8, 1, &row, &rank, 1, NULL, 0), RC_E_BAD_REQUEST);
    /* After removing b the list holds 2: position 3 is past it too. */
    rank = 4;
    assert_int_equal(rc_diff_window_apply(win, &n, 8, 8, 1, &row, &rank, 1, gone, 1), RC_E_BAD_REQUEST);
    assert_int_equal(n, 3);
}

static void apply_rejects_rank_before_window(void **state)
{
    struct rc_wrow win[8] = {{"a", 3}, {"b", 2}, {"c", 1}};
    const struct rc_wrow row = {"d", 9};
    long rank = 10; /* page starts at rank 11 */
    size_t n = 3;
    (void)state;

    assert_int_equal(rc_diff_window_apply(win, &n, 8, 8, 11, &row, &rank, 1, NULL, 0), RC_E_BAD_REQUEST);
    rank = 0;
    assert_int_equal(rc_diff_window_apply(win, &n, 8, 8, 1, &row, &rank, 1, NULL, 0), RC_E_BAD_REQUEST);
    rank = 1;
    assert_int_equal(rc_diff_window_apply(win, &n, 8, 8, 0, &row, &rank, 1, NULL, 0), RC_E_BAD_REQUEST);
    assert_int_equal(n, 3);
}

static void apply_accepts_row_at_list_length_as_append(void **state)
{
    struct rc_wrow win[8] = {{"a", 3}, {"b", 2}, {"c", 1}};
    const struct rc_wrow rows[2] = {{"d", 0.5}, {"e", 0.25}};
    const struct rc_wrow want[5] = {{"a", 3}, {"b", 2}, {"c", 1}, {"d", 0.5}, {"e", 0.25}};
    const long ranks[2] = {14, 15}; /* page from rank 11: positions 3 and 4 */
    size_t n = 3;
    (void)state;

    assert_int_equal(rc_diff_window_apply(win, &n, 8, 8, 11, rows, ranks, 2, NULL, 0), 0);
    assert_window_equal(win, n, want, 5);
}

static void apply_rejects_cap_too_small(void **state)
{
    struct rc_wrow win[4] = {{"a", 3}, {"b", 2}, {"c", 1}};
    const struct rc_wrow row = {"d", 0};
    const struct rc_wrow want[3] = {{"a", 3}, {"b", 2}, {"c", 1}};
    long rank = 4;
    size_t n = 3;
    (void)state;

    assert_int_equal(rc_diff_window_apply(win, &n, 3, 8, 1, &row, &rank, 1, NULL, 0), RC_E_BAD_REQUEST);
    assert_window_equal(win, n, want, 3);
    /* A list already bigger than its array is refused too. */
    n = 4;
    assert_int_equal(rc_diff_window_apply(win, &n, 3, 8, 1, NULL, NULL, 0, NULL, 0), RC_E_BAD_REQUEST);
    n = 3;
    /* The same row, cut by a 3-row window, needs no room. */
    assert_int_equal(rc_diff_window_apply(win, &n, 3, 3, 1, &row, &rank, 1, NULL, 0), 0);
    assert_window_equal(win, n, want, 3);
    /* Exactly enough room is enough. */
    assert_int_equal(rc_diff_window_apply(win, &n, 4, 8, 1, &row, &rank, 1, NULL, 0), 0);
    assert_int_equal(n, 4);
    assert_string_equal(win[3].member, "d");
}

static void apply_rejects_two_rows_for_one_member_or_rank(void **state)
{
    struct rc_wrow win[8] = {{"a", 3}, {"b", 2}, {"c", 1}};
    const struct rc_wrow same_member[2] = {{"x", 5}, {"x", 4}};
    const struct rc_wrow two[2] = {{"x", 5}, {"y", 5}};
    const long distinct[2] = {1, 2}, same_rank[2] = {2, 2};
    const struct rc_wrow want[3] = {{"a", 3}, {"b", 2}, {"c", 1}};
    size_t n = 3;
    (void)state;

    assert_int_equal(rc_diff_window_apply(win, &n, 8, 8, 1, same_member, distinct, 2, NULL, 0),
                     RC_E_BAD_REQUEST);
    assert_int_equal(rc_diff_window_apply(win, &n, 8, 8, 1, two, same_rank, 2, NULL, 0), RC_E_BAD_REQUEST);
    assert_window_equal(win, n, want, 3);
}

static void apply_inserts_rows_in_rank_order_whatever_their_order(void **state)
{
    struct rc_wrow win[8] = {{"a", 3}, {"b", 2}, {"c", 1}};
    const struct rc_wrow rows[3] = {{"c", 9}, {"x", 2.5}, {"y", 0.5}};
    const long ranks[3] = {1, 3, 5};
    const struct rc_wrow rev_rows[3] = {{"y", 0.5}, {"x", 2.5}, {"c", 9}};
    const long rev_ranks[3] = {5, 3, 1};
    const struct rc_wrow want[5] = {{"c", 9}, {"a", 3}, {"x", 2.5}, {"b", 2}, {"y", 0.5}};
    struct rc_wrow win2[8];
    size_t n = 3, n2 = 3;
    (void)state;

    memcpy(win2, win, sizeof win2);
    assert_int_equal(rc_diff_window_apply(win, &n, 8, 8, 1, rows, ranks, 3, NULL, 0), 0);
    assert_window_equal(win, n, want, 5);
    assert_int_equal(rc_diff_window_apply(win2, &n2, 8, 8, 1, rev_rows, rev_ranks, 3, NULL, 0), 0);
    assert_window_equal(win2, n2, want, 5);
}

static void apply_cuts_to_window_length_and_ignores_unknown_removed(void **state)
{
    struct rc_wrow win[8] = {{"a", 3}, {"b", 2}, {"c", 1}};
    const struct rc_wrow row = {"x", 4};
    const long rank = 1;
    const char *const gone[] = {"nobody"};
    const struct rc_wrow want[3] = {{"x", 4}, {"a", 3}, {"b", 2}};
    size_t n = 3;
    (void)state;

    assert_int_equal(rc_diff_window_apply(win, &n, 8, 3, 1, &row, &rank, 1, gone, 1), 0);
    assert_window_equal(win, n, want, 3);
}

/* Random small windows and random, often invalid, deltas: rc_diff_window_apply
 * accepts exactly what the literal rule can follow, builds the same list, and
 * leaves the window untouched when it refuses. */
static void apply_matches_literal_rule_on_random_deltas(void **state)
{
    static const char *const pool[20] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
                                         "k", "l", "m", "n", "o", "p", "q", "r", "s", "t"};
    struct rng r = {test_seed() ^ 0xa5a5a5a5u};
    size_t accepted = 0, refused = 0;
    (void)state;

    for (int c = 0; c < 20000; c++) {
        const char *names[20];
        struct rc_wrow win[40], ref[40], before[40], rows[8];
        long ranks[8], cand[18];
        const char *removed[6];
        size_t n = below(&r, 13), nrows = below(&r, 8), nremoved = below(&r, 6);
        size_t window_len = below(&r, 16), cap, nwin, nref, ncand, wide;
        long first_rank = 1 + (long)below(&r, 30);
        int rc, ref_rc;

        cap = below(&r, 10) == 0 ? below(&r, n + 1) : n + below(&r, 17);
        memcpy(names, pool, sizeof names);
        for (size_t k = 0; k < 20; k++) {
            size_t j = k + below(&r, 20 - k);
            const char *t = names[k];
            names[k] = names[j];
            names[j] = t;
        }
        for (size_t k = 0; k < n; k++)
            win[k] = (struct rc_wrow){names[k], (double)(100 - k)};
        /* Ranks: half the time anywhere near the window (often invalid),
         * half the time inside the list-to-be (mostly valid). */
        wide = below(&r, 2);
        ncand = wide ? 18 : n + nrows + 1 < 18 ? n + nrows + 1 : 18;
        for (size_t k = 0; k < ncand; k++)
            cand[k] = first_rank - (long)wide + (long)k;
        for (size_t k = 0; k < nrows; k++) {
            size_t j = k + below(&r, ncand - k);
            long t = cand[k];
            cand[k] = cand[j];
            cand[j] = t;
            ranks[k] = cand[k];
            /* Row members: some already in the list, some new. */
            rows[k] = (struct rc_wrow){names[(below(&r, 2) ? 0 : 10) + k], (double)(1000 + k)};
        }
        for (size_t k = 0; k < nremoved; k++)
            removed[k] = pool[below(&r, 20)];

        memcpy(ref, win, sizeof ref);
        memcpy(before, win, sizeof before);
        nwin = nref = n;
        rc = rc_diff_window_apply(win, &nwin, cap, window_len, first_rank, rows, ranks, nrows, removed,
                             nremoved);
        ref_rc = rule_apply(ref, &nref, cap, window_len, first_rank, rows, ranks, nrows, removed,
                            nremoved);
        if (ref_rc == 0) {
            assert_int_equal(rc, 0);
            assert_window_equal(win, nwin, ref, nref);
            accepted++;
        } else {
            assert_int_equal(rc, RC_E_BAD_REQUEST);
            assert_window_equal(win, nwin, before, n);
            refused++;
        }
    }
    print_message("apply fuzz: %zu accepted, %zu refused\n", accepted, refused);
    assert_true(accepted > 2000);
    assert_true(refused > 2000);
}

/* ------------------------------------------------------------------------- */
/* Property: random boards, random write bursts                              */
/* ------------------------------------------------------------------------- */

#define BOARD_MAX 300
#define BURST_MAX 20
#define SLOTS (BOARD_MAX + BURST_MAX)
#define CASES 10000

struct member {
    char name[32];
    long score;
    int present;
};

struct board {
    struct member m[SLOTS];
    size_t nslots;
};

/* ZRANGE REV order: score descending, then member name descending. */
static int cmp_board_rank(const void *a, const void *b)
{
    const struct member *x = *(const struct member *const *)a;
    const struct member *y = *(const struct member *const *)b;

    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return -strcmp(x->name, y->name);
}

/* The true window, ranks first_rank .. first_rank + len - 1, by sorting the
 * whole board. Rows borrow the board's names; slot[k] is row k's member. */
static size_t board_window(const struct board *b, long first_rank, size_t len, struct rc_wrow *out,
                           size_t *slot)
{
    const struct member *sorted[SLOTS];
    size_t n = 0, count = 0;

    for (size_t i = 0; i < b->nslots; i++)
        if (b->m[i].present)
            sorted[n++] = &b->m[i];
    qsort(sorted, n, sizeof *sorted, cmp_board_rank);
    for (size_t k = (size_t)(first_rank - 1); k < n && count < len; k++, count++) {
        out[count] = (struct rc_wrow){sorted[k]->name, (double)sorted[k]->score};
        slot[count] = (size_t)(sorted[k] - b->m);
    }
    return count;
}

static size_t add_member(struct board *b, long score)
{
    size_t s = b->nslots++;

    snprintf(b->m[s].name, sizeof b->m[s].name, "user:%zu", s);
    b->m[s].score = score;
    b->m[s].present = 1;
    return s;
}

/* A present member: from the window half the time, so that writes land where
 * the viewer is looking; NONE on an empty board. */
static size_t pick_member(struct rng *r, const struct board *b, const size_t *win_slot, size_t nwin)
{
    size_t live[SLOTS], n = 0;

    if (nwin > 0 && below(r, 2)) {
        size_t s = win_slot[below(r, nwin)];
        if (b->m[s].present)
            return s;
    }
    for (size_t i = 0; i < b->nslots; i++)
        if (b->m[i].present)
            live[n++] = i;
    return n > 0 ? live[below(r, n)] : NONE;
}

enum write_op { OP_INCR, OP_SET, OP_ADD, OP_REMOVE };

static void random_bursts_rebuild_new_window_with_small_delta(void **state)
{
    struct rng r = {test_seed()};
    struct board *b = malloc(sizeof *b);
    size_t single_moves = 0, total_rows = 0, total_removed = 0;
    (void)state;

    assert_non_null(b);
    for (int c = 0; c < CASES; c++) {
        struct rc_wrow old[SLOTS], new_[SLOTS];
        size_t old_slot[SLOTS], new_slot[SLOTS], pos_old[SLOTS], pos_new[SLOTS];
        size_t nboard = below(&r, BOARD_MAX + 1), nold, nnew, window_len, nwrites;
        size_t entered = 0, left = 0, changed = 0, written = NONE;
        long range = (long[]){4, 40, 1000}[below(&r, 3)];
        long first_rank, written_before = 0;
        enum write_op op = OP_INCR;
        struct rc_diff d;

        b->nslots = 0;
        for (size_t i = 0; i < nboard; i++)
            add_member(b, (long)below(&r, (size_t)range));

        if (below(&r, 2)) { /* top N */
            first_rank = 1;
            window_len = 1 + below(&r, nboard + 20);
        } else { /* page: offset O, limit L */
            first_rank = 1 + (long)below(&r, nboard + 10);
            window_len = 1 + below(&r, 100);
        }
        nold = board_window(b, first_rank, window_len, old, old_slot);

        nwrites = below(&r, 5) < 2 ? 1 : 1 + below(&r, BURST_MAX);
        for (size_t w = 0; w < nwrites; w++) {
            size_t s, roll = below(&r, 10);
            op = roll < 4 ? OP_INCR : roll < 6 ? OP_SET : roll < 8 ? OP_ADD : OP_REMOVE;
            s = op == OP_ADD ? NONE : pick_member(&r, b, old_slot, nold);
            if (s == NONE)
                op = OP_ADD;
            if (op == OP_ADD)
                s = add_member(b, (long)below(&r, (size_t)range));
            written = s;
            written_before = b->m[s].score;
            if (op == OP_INCR) {
                long delta = 1 + (long)below(&r, 10);
                b->m[s].score += below(&r, 2) ? delta : -delta;
            } else if (op == OP_SET) {
                b->m[s].score = (long)below(&r, (size_t)range);
            } else if (op == OP_REMOVE) {
                b->m[s].present = 0;
            }
        }
        nnew = board_window(b, first_rank, window_len, new_, new_slot);

        diff_and_rebuild(old, nold, new_, nnew, window_len, first_rank, &r, &d);

        /* Smallness. Entered and re-keyed members must be rows in any valid
         * delta, and everything else keeps its order, so nrows is exactly
         * that; removed holds at most the members that left. */
        for (size_t i = 0; i < b->nslots; i++)
            pos_old[i] = pos_new[i] = NONE;
        for (size_t k = 0; k < nold; k++)
            pos_old[old_slot[k]] = k;
        for (size_t k = 0; k < nnew; k++)
            pos_new[new_slot[k]] = k;
        for (size_t k = 0; k < nnew; k++) {
            size_t s = new_slot[k];
            if (pos_old[s] == NONE)
                entered++;
            else if (old[pos_old[s]].key != new_[k].key)
                changed++;
        }
        for (size_t k = 0; k < nold; k++)
            left += pos_new[old_slot[k]] == NONE;
        assert_int_equal(d.nrows, entered + changed);
        assert_true(d.nremoved <= left);
        assert_true(d.nrows + d.nremoved <= entered + changed + left);

        /* One write moving one member inside the window: one row. */
        if (nwrites == 1 && (op == OP_INCR || op == OP_SET) && pos_old[written] != NONE &&
            pos_new[written] != NONE && b->m[written].score != written_before) {
            assert_int_equal(d.nrows, 1);
            assert_true(d.nremoved <= 1);
            single_moves++;
        }
        total_rows += d.nrows;
        total_removed += d.nremoved;
        rc_diff_free(&d);
    }
    free(b);
    print_message("property: %d cases, %zu single in-window moves, %zu rows, %zu removed\n", CASES,
                  single_moves, total_rows, total_removed);
    assert_true(single_moves >= 200);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unchanged_window_gives_empty_delta),
        cmocka_unit_test(member_moving_up_inside_top10_is_one_row),
        cmocka_unit_test(member_moving_down_inside_top10_is_one_row),
        cmocka_unit_test(score_change_in_place_is_one_row),
        cmocka_unit_test(newcomer_at_rank1_of_full_top10_is_one_row),
        cmocka_unit_test(member_leaving_top10_is_removed_and_next_moves_in),
        cmocka_unit_test(member_leaving_short_board_is_only_removed),
        cmocka_unit_test(page_shifted_by_change_above_is_one_row_one_removed),
        cmocka_unit_test(empty_old_window_sends_every_row),
        cmocka_unit_test(empty_new_window_removes_every_member),
        cmocka_unit_test(both_windows_empty_gives_empty_delta),
        cmocka_unit_test(diff_refuses_duplicate_members),
        cmocka_unit_test(apply_rejects_row_past_list_length),
        cmocka_unit_test(apply_rejects_rank_before_window),
        cmocka_unit_test(apply_accepts_row_at_list_length_as_append),
        cmocka_unit_test(apply_rejects_cap_too_small),
        cmocka_unit_test(apply_rejects_two_rows_for_one_member_or_rank),
        cmocka_unit_test(apply_inserts_rows_in_rank_order_whatever_their_order),
        cmocka_unit_test(apply_cuts_to_window_length_and_ignores_unknown_removed),
        cmocka_unit_test(apply_matches_literal_rule_on_random_deltas),
        cmocka_unit_test(random_bursts_rebuild_new_window_with_small_delta),
    };

    print_message("test_diff seed: %llu (RC_TEST_SEED=<n> to change)\n",
                  (unsigned long long)test_seed());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
