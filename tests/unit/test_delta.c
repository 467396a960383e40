/* test_delta.c - core/rc_delta: the rows a window view sends. Property:
 * for random boards, windows (top N or a page) and runs of change events,
 * the delta applied by PROTOCOL.md's rule (drop removed and resent members,
 * insert rows by rank, cut to the window) gives the new window, row for row
 * (profile, place and tied included), and every prev_rank is the member's
 * rank as PROTOCOL.md defines it (where the view held it; for a member from
 * outside, its rank just before its first change, or before the events when
 * it did not change itself), from replaying them on a reference board. A few named cases pin what the property leaves implicit. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_delta.h"
#include "rc_err.h"
#include "rc_test_rng.h"

#define K 28        /* members that may play */
#define NPROF 4     /* profile versions per member */
#define MAXEV 14

/* A reference board: who is on it, with what score and profile. Ranks are
 * positions: score descending, then name ascending. */
struct board {
    char names[K][8];
    int on[K];
    int64_t score[K];
    int prof[K]; /* -1: none */
};

static struct rc_profile profiles[K][NPROF];

static int before(const struct board *b, int x, int y)
{
    if (b->score[x] != b->score[y])
        return b->score[x] > b->score[y];
    return strcmp(b->names[x], b->names[y]) < 0;
}

/* b's members in rank order into order[], their count returned. */
static int ranked(const struct board *b, int *order)
{
    int n = 0;
    for (int m = 0; m < K; m++) {
        if (!b->on[m])
            continue;
        int at = n++;
        while (at > 0 && before(b, m, order[at - 1])) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = m;
    }
    return n;
}

static int64_t rank_of(const struct board *b, int who)
{
    int order[K], n = ranked(b, order);
    for (int i = 0; i < n; i++)
        if (order[i] == who)
            return i + 1;
    return 0;
}

/* The window of ranks first_rank..first_rank+len-1 of b, with shared places
 * (competition rank over equal scores) when places is set. */
static void cut(const struct board *b, int64_t first_rank, size_t len, int places, struct rc_row *rows,
                struct rc_delta_window *w)
{
    int order[K], n = ranked(b, order);
    w->rows = rows;
    w->first_rank = first_rank;
    w->total = n;
    w->n = 0;
    for (int64_t r = first_rank; r < first_rank + (int64_t)len && r <= n; r++) {
        int m = order[r - 1];
        struct rc_row *row = &rows[w->n++];
        memset(row, 0, sizeof *row);
        row->member = (char *)b->names[m];
        row->c = (double)b->score[m];
        row->score = row->c;
        row->profile = b->prof[m] >= 0 ? &profiles[m][b->prof[m]] : NULL;
        if (places) {
            int64_t above = 0;
            int tied = 0;
            for (int k = 0; k < n; k++) {
                above += b->score[order[k]] > b->score[m];
                tied |= order[k] != m && b->score[order[k]] == b->score[m];
            }
            row->place = above + 1;
            row->tied = tied;
        }
    }
}

struct moves_src {
    const struct rc_move *moves;
    size_t n;
    int fail;   /* the ring does not hold them */
    int asked;
};

/* As the fan-out's ring: copies the moves into the scratch's room. */
static int give_moves(void *ctx, struct rc_delta_scratch *s, const struct rc_move **out, size_t *n)
{
    struct moves_src *src = ctx;
    src->asked++;
    if (src->fail)
        return -1;
    struct rc_move *room = src->n ? rc_delta_moves_room(s, src->n) : NULL;
    if (src->n && !room)
        return -1;
    if (src->n)
        memcpy(room, src->moves, src->n * sizeof *room);
    *out = room;
    *n = src->n;
    return 0;
}

/* PROTOCOL.md's rule, written from its text and nothing else: the viewers'
 * list (row pointers) after the delta. */
static size_t apply_rule(const struct rc_row **list, size_t n, size_t window_len, const struct rc_delta_window *old,
                         const struct rc_delta_window *nw, const struct rc_delta *d)
{
    const struct rc_row *tmp[2 * K];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int named = 0;
        for (size_t k = 0; k < d->nremoved; k++)
            named |= strcmp(old->rows[d->removed[k]].member, list[i]->member) == 0;
        for (size_t k = 0; k < d->nrows; k++)
            named |= strcmp(nw->rows[d->rows[k]].member, list[i]->member) == 0;
        if (!named)
            tmp[m++] = list[i];
    }
    for (size_t k = 0; k < d->nrows; k++) { /* rows come in ascending rank */
        int64_t rank = nw->first_rank + (int64_t)d->rows[k];
        size_t pos = (size_t)(rank - nw->first_rank);
        assert_true(pos <= m);
        memmove(&tmp[pos + 1], &tmp[pos], (m - pos) * sizeof tmp[0]);
        tmp[pos] = &nw->rows[d->rows[k]];
        m++;
    }
    if (m > window_len)
        m = window_len;
    memcpy(list, tmp, m * sizeof *list);
    return m;
}

static void assert_same_row(const struct rc_row *got, const struct rc_row *want)
{
    assert_string_equal(got->member, want->member);
    assert_true(got->c == want->c);
    assert_ptr_equal(got->profile, want->profile);
    assert_int_equal(got->place, want->place);
    assert_int_equal(got->tied, want->tied);
}

/* One change on b, as the write script reports it. */
static struct rc_move change(struct rng *r, struct board *b, int m, int allow_reset)
{
    if (allow_reset && below(r, 40) == 0) {
        for (int k = 0; k < K; k++)
            b->on[k] = 0;
        return (struct rc_move){"", 0, 0};
    }
    int64_t old_rank = rank_of(b, m);
    if (b->on[m] && below(r, 5) == 0) {
        b->on[m] = 0;
        return (struct rc_move){b->names[m], old_rank, 0};
    }
    b->on[m] = 1;
    b->score[m] = (int64_t)below(r, 12); /* small: ties are common */
    return (struct rc_move){b->names[m], old_rank, rank_of(b, m)};
}

static void random_board(struct rng *r, struct board *b)
{
    memset(b, 0, sizeof *b);
    for (int m = 0; m < K; m++) {
        snprintf(b->names[m], sizeof b->names[m], "m%02d", m);
        b->on[m] = below(r, 3) != 0;
        b->score[m] = (int64_t)below(r, 12);
        b->prof[m] = below(r, 3) ? (int)below(r, NPROF) : -1;
    }
}

static void init_profiles(void)
{
    for (int m = 0; m < K; m++)
        for (int p = 0; p < NPROF; p++)
            profiles[m][p].hash = (uint64_t)(m * NPROF + p + 1);
}

/* The property, over many seeds. */
static void test_delta_applied_by_the_rule_gives_the_new_window_and_prev_rank_replays_the_events(void **state)
{
    (void)state;
    struct rc_delta_scratch s = {0};
    size_t unknown = 0, sent_from_outside = 0, deltas = 0;
    init_profiles();
    for (uint64_t seed = 1; seed <= 6000; seed++) {
        struct rng r = {seed};
        struct board b0, b1;
        struct rc_row orows[K], nrows[K];
        struct rc_delta_window ow, nw;
        struct rc_move moves[MAXEV];
        random_board(&r, &b0);
        int page = below(&r, 2);
        int64_t first_rank = page ? 1 + (int64_t)below(&r, 8) : 1;
        size_t len = 1 + below(&r, 12);
        int places = below(&r, 2);
        int resets = below(&r, 4) == 0;
        cut(&b0, first_rank, len, places, orows, &ow);
        b1 = b0;
        size_t nev = below(&r, MAXEV + 1);
        /* the replay: each member's rank just before its first own change
         * (PROTOCOL.md: where a member from outside the view stood) */
        int64_t before_first[K];
        int moved[K] = {0};
        for (size_t e = 0; e < nev; e++) {
            int m = (int)below(&r, K);
            int64_t was = rank_of(&b1, m);
            moves[e] = change(&r, &b1, m, resets);
            if (moves[e].member[0] != '\0' && !moved[m]) {
                moved[m] = 1;
                before_first[m] = was;
            }
        }
        /* profiles change without events */
        for (int m = 0; m < K; m++)
            if (below(&r, 10) == 0)
                b1.prof[m] = (int)below(&r, NPROF);
        cut(&b1, first_rank, len, places, nrows, &nw);

        struct moves_src src = {moves, nev, below(&r, 8) == 0, 0};
        struct rc_delta d;
        int rc = rc_delta_make(&ow, &nw, give_moves, &src, &s, &d);
        int has_reset = 0;
        for (size_t e = 0; e < nev; e++)
            has_reset |= moves[e].member[0] == '\0';
        if (rc == RC_DELTA_UNKNOWN) {
            /* only when the moves were asked for and could not tell */
            assert_int_equal(src.asked, 1);
            assert_true(src.fail || has_reset);
            unknown++;
            continue;
        }
        assert_int_equal(rc, 0);
        assert_true(src.asked <= 1);
        deltas++;

        /* the rule gives the new window */
        const struct rc_row *list[2 * K];
        for (size_t i = 0; i < ow.n; i++)
            list[i] = &ow.rows[i];
        size_t n = apply_rule(list, ow.n, len, &ow, &nw, &d);
        assert_int_equal(n, nw.n);
        for (size_t i = 0; i < n; i++)
            assert_same_row(list[i], &nw.rows[i]);

        /* prev_rank (0: not on the board) */
        for (size_t k = 0; k < d.nrows; k++) {
            const char *who = nw.rows[d.rows[k]].member;
            int m = atoi(who + 1);
            int in_old = 0;
            for (size_t i = 0; i < ow.n; i++)
                in_old |= strcmp(ow.rows[i].member, who) == 0;
            /* held by the view: where it held it; else before its first
             * change, or where the others' changes shifted it from */
            assert_int_equal(d.prev_rank[k], in_old || !moved[m] ? rank_of(&b0, m) : before_first[m]);
            if (k > 0)
                assert_true(d.rows[k] > d.rows[k - 1]);
            sent_from_outside += !in_old;
            /* the moves are asked for only when a row came from outside */
            if (!in_old)
                assert_int_equal(src.asked, 1);
        }
        if (src.asked)
            assert_false(src.fail);
        /* removed: exactly the old members not in new */
        size_t gone = 0;
        for (size_t i = 0; i < ow.n; i++) {
            int in_new = 0;
            for (size_t j = 0; j < nw.n; j++)
                in_new |= strcmp(ow.rows[i].member, nw.rows[j].member) == 0;
            gone += !in_new;
        }
        assert_int_equal(d.nremoved, gone);
        assert_int_equal(d.nothing, d.nrows == 0 && d.nremoved == 0 && ow.total == nw.total);
        if (rc_delta_windows_equal(&ow, &nw))
            assert_true(d.nothing);
    }
    /* the run exercised every branch */
    assert_true(unknown > 50);
    assert_true(sent_from_outside > 500);
    assert_true(deltas > 4000);
    rc_delta_scratch_free(&s);
}

/* The scratch is kept: once grown, a delta of the same size allocates
 * nothing (checked by its block staying where it was). */
static void test_a_kept_scratch_is_reused_from_one_delta_to_the_next(void **state)
{
    (void)state;
    struct rc_delta_scratch s = {0};
    struct board b;
    struct rc_row a[K], c[K];
    struct rc_delta_window wa, wc;
    struct rng r = {7};
    struct rc_delta d;
    init_profiles();
    random_board(&r, &b);
    cut(&b, 1, 10, 1, a, &wa);
    b.score[3] += 5;
    b.on[3] = 1;
    cut(&b, 1, 10, 1, c, &wc);
    struct rc_move mv = {b.names[3], 0, rank_of(&b, 3)};
    struct moves_src src = {&mv, 1, 0, 0};
    assert_int_equal(rc_delta_make(&wa, &wc, give_moves, &src, &s, &d), 0);
    void *diff = s.diff.buf, *buf = s.buf;
    for (int k = 0; k < 10; k++)
        assert_int_equal(rc_delta_make(k % 2 ? &wc : &wa, k % 2 ? &wa : &wc, give_moves, &src, &s, &d), 0);
    assert_ptr_equal(s.diff.buf, diff);
    assert_ptr_equal(s.buf, buf);
    rc_delta_scratch_free(&s);
    assert_null(s.buf);
}

/* A profile changed, nothing else: the row is resent at its own rank with
 * its own rank as prev_rank, and the moves are never asked for. */
static void test_a_changed_profile_resends_the_row_in_place(void **state)
{
    (void)state;
    struct rc_profile p1 = {.hash = 1}, p2 = {.hash = 2};
    struct rc_row o[2] = {{.member = "a", .c = 5, .profile = &p1}, {.member = "b", .c = 4}};
    struct rc_row n[2] = {{.member = "a", .c = 5, .profile = &p2}, {.member = "b", .c = 4}};
    struct rc_delta_window ow = {o, 2, 3, 9}, nw = {n, 2, 3, 9};
    struct rc_delta_scratch s = {0};
    struct rc_delta d;
    assert_int_equal(rc_delta_make(&ow, &nw, NULL, NULL, &s, &d), 0);
    assert_int_equal(d.nrows, 1);
    assert_int_equal(d.rows[0], 0);
    assert_int_equal(d.prev_rank[0], 3);
    assert_int_equal(d.nremoved, 0);
    assert_false(d.nothing);
    assert_false(rc_delta_windows_equal(&ow, &nw));
    rc_delta_scratch_free(&s);
}

/* Only the total moved (a member joined below the window): nothing to
 * send but the total, so not "nothing". */
static void test_a_changed_total_alone_is_still_news(void **state)
{
    (void)state;
    struct rc_row o[1] = {{.member = "a", .c = 5}};
    struct rc_delta_window ow = {o, 1, 1, 3}, nw = {o, 1, 1, 4};
    struct rc_delta_scratch s = {0};
    struct rc_delta d;
    assert_int_equal(rc_delta_make(&ow, &nw, NULL, NULL, &s, &d), 0);
    assert_int_equal(d.nrows + d.nremoved, 0);
    assert_false(d.nothing);
    nw.total = 3;
    assert_int_equal(rc_delta_make(&ow, &nw, NULL, NULL, &s, &d), 0);
    assert_true(d.nothing);
    rc_delta_scratch_free(&s);
}

/* A window naming a member twice breaks the contract: an error, not a
 * delta. */
static void test_a_member_twice_in_a_window_is_refused(void **state)
{
    (void)state;
    struct rc_row o[2] = {{.member = "a", .c = 5}, {.member = "a", .c = 4}};
    struct rc_delta_window ow = {o, 2, 1, 2}, nw = {o, 1, 1, 2};
    struct rc_delta_scratch s = {0};
    struct rc_delta d;
    assert_int_equal(rc_delta_make(&nw, &ow, NULL, NULL, &s, &d), RC_E_INTERNAL);
    rc_delta_scratch_free(&s);
}

/* A member list's window: from the read's rows (ids 0..nid-1, member
 * names[id]) a random subset, at increasing random ranks in random order of
 * ids, with composites, profiles and places from small sets (so rows of
 * one id often keep or change them). */
static size_t list_window(struct rng *r, char (*names)[8], size_t nid, const struct rc_profile *pr,
                          struct rc_row *rows, size_t *ids)
{
    size_t perm[40], n = 0;
    for (size_t k = 0; k < nid; k++)
        perm[k] = k;
    for (size_t k = nid; k > 1; k--) {
        size_t j = below(r, k), t = perm[k - 1];
        perm[k - 1] = perm[j];
        perm[j] = t;
    }
    int64_t rank = 0;
    for (size_t k = 0; k < nid; k++) {
        if (below(r, 10) < 4)
            continue;
        rank += 1 + (int64_t)below(r, 3);
        size_t p = below(r, 4);
        rows[n] = (struct rc_row){.member = names[perm[k]], .c = (double)below(r, 3), .rank = rank,
                                  .profile = p < 3 ? (struct rc_profile *)&pr[p] : NULL,
                                  .place = (int64_t)below(r, 2)};
        ids[n++] = perm[k];
    }
    return n;
}

/* Issue 26: a member list's windows built from one read match their rows
 * by the read's row (id) instead of by name; the delta must be exactly the
 * one the match by name gives: the same rows, prev_ranks, removed and
 * "nothing", for random windows of random reads. */
static void test_a_member_list_matched_by_id_sends_what_the_match_by_name_sends(void **state)
{
    (void)state;
    static char names[40][8];
    const struct rc_profile pr[3] = {{.hash = 1}, {.hash = 2}, {.hash = 3}};
    struct rc_delta_scratch by_name = {0}, by_id = {0};
    struct rng r = {26};
    size_t rows_sent = 0, removed = 0, nothing = 0;
    for (size_t k = 0; k < 40; k++)
        snprintf(names[k], sizeof names[k], "m%zu", (k * 7) % 40); /* (names not in id order) */
    for (int round = 0; round < 4000; round++) {
        size_t nid = 1 + below(&r, 40);
        struct rc_row o[40], n[40];
        size_t oid[40], nid_[40];
        size_t no = list_window(&r, names, nid, pr, o, oid);
        size_t nn = list_window(&r, names, nid, pr, n, nid_);
        if (round % 3 == 0) { /* the same rows, few changes: the common tick */
            nn = no;
            memcpy(n, o, no * sizeof *o);
            memcpy(nid_, oid, no * sizeof *oid);
            if (nn && below(&r, 2))
                n[below(&r, nn)].c += 1;
        }
        struct rc_delta_window ow = {o, no, 1, (int64_t)nid}, nw = {n, nn, 1, (int64_t)nid - (int64_t)below(&r, 2)};
        struct rc_delta a, b;
        assert_int_equal(rc_delta_make_members(&ow, &nw, &by_name, &a), 0);
        assert_int_equal(rc_delta_make_members_by_id(&ow, oid, &nw, nid_, nid, &by_id, &b), 0);
        assert_int_equal(b.nrows, a.nrows);
        assert_int_equal(b.nremoved, a.nremoved);
        assert_int_equal(b.nothing, a.nothing);
        for (size_t k = 0; k < a.nrows; k++) {
            assert_int_equal(b.rows[k], a.rows[k]);
            assert_int_equal(b.prev_rank[k], a.prev_rank[k]);
        }
        for (size_t k = 0; k < a.nremoved; k++)
            assert_int_equal(b.removed[k], a.removed[k]);
        rows_sent += a.nrows;
        removed += a.nremoved;
        nothing += a.nothing ? 1 : 0;
    }
    assert_true(rows_sent > 10000); /* (every case was met, many times) */
    assert_true(removed > 5000);
    assert_true(nothing > 100);
    rc_delta_scratch_free(&by_name);
    rc_delta_scratch_free(&by_id);
}

/* Ids are the caller's contract: one past the read, or twice in a window,
 * is an error, not a delta. */
static void test_a_member_list_id_past_the_read_or_twice_is_refused(void **state)
{
    (void)state;
    struct rc_row o[2] = {{.member = "a", .c = 5, .rank = 1}, {.member = "b", .c = 4, .rank = 2}};
    struct rc_delta_window w = {o, 2, 1, 2};
    size_t ok[2] = {0, 1}, past[2] = {0, 2}, twice[2] = {1, 1};
    struct rc_delta_scratch s = {0};
    struct rc_delta d;
    assert_int_equal(rc_delta_make_members_by_id(&w, ok, &w, ok, 2, &s, &d), 0);
    assert_true(d.nothing);
    assert_int_equal(rc_delta_make_members_by_id(&w, ok, &w, past, 2, &s, &d), RC_E_INTERNAL);
    assert_int_equal(rc_delta_make_members_by_id(&w, past, &w, ok, 2, &s, &d), RC_E_INTERNAL);
    assert_int_equal(rc_delta_make_members_by_id(&w, ok, &w, twice, 2, &s, &d), RC_E_INTERNAL);
    assert_int_equal(rc_delta_make_members_by_id(&w, twice, &w, ok, 2, &s, &d), RC_E_INTERNAL);
    rc_delta_scratch_free(&s);
    assert_null(s.ids);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delta_applied_by_the_rule_gives_the_new_window_and_prev_rank_replays_the_events),
        cmocka_unit_test(test_a_kept_scratch_is_reused_from_one_delta_to_the_next),
        cmocka_unit_test(test_a_changed_profile_resends_the_row_in_place),
        cmocka_unit_test(test_a_changed_total_alone_is_still_news),
        cmocka_unit_test(test_a_member_twice_in_a_window_is_refused),
        cmocka_unit_test(test_a_member_list_matched_by_id_sends_what_the_match_by_name_sends),
        cmocka_unit_test(test_a_member_list_id_past_the_read_or_twice_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
