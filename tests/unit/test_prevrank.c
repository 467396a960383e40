/* test_prevrank.c - core/rc_prevrank: a member's rank before a run of
 * changes, from the changes alone, checked against a reference board. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_prevrank.h"

#define MAXM 24

/* A reference board: names in rank order. */
struct board {
    char names[MAXM][8];
    int order[MAXM]; /* indexes into names, position = rank - 1 */
    int n;
};

static int64_t rank_of(const struct board *b, int who)
{
    for (int i = 0; i < b->n; i++)
        if (b->order[i] == who)
            return i + 1;
    return 0;
}

static void take_out(struct board *b, int who)
{
    int64_t r = rank_of(b, who);
    if (!r)
        return;
    memmove(&b->order[r - 1], &b->order[r], (size_t)(b->n - r) * sizeof b->order[0]);
    b->n--;
}

static void put_at(struct board *b, int who, int64_t rank)
{
    memmove(&b->order[rank], &b->order[rank - 1], (size_t)(b->n - rank + 1) * sizeof b->order[0]);
    b->order[rank - 1] = who;
    b->n++;
}

static unsigned long long rng = 88172645463325252ULL;
static unsigned next_rand(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static void example_from_the_protocol(void **state)
{
    (void)state;
    /* user:57 jumps from 57 to 1: its own move says where it came from */
    const struct rc_move moves[] = {{"user:57", 57, 1}};
    assert_int_equal(rc_prevrank(moves, 1, "user:57", 1), 57);
    /* the former leader was pushed to 2 by it */
    assert_int_equal(rc_prevrank(moves, 1, "user:1", 2), 1);
    /* one below 57 did not shift */
    assert_int_equal(rc_prevrank(moves, 1, "user:58", 58), 58);
    /* a new member: not on the board before */
    const struct rc_move fresh[] = {{"new", 0, 3}};
    assert_int_equal(rc_prevrank(fresh, 1, "new", 3), 0);
    /* removed above it: it moved up */
    const struct rc_move gone[] = {{"cheat", 1, 0}};
    assert_int_equal(rc_prevrank(gone, 1, "user:2", 1), 2);
    /* a reset before its first move: not known */
    const struct rc_move reset[] = {{"", 0, 0}, {"a", 0, 1}};
    assert_int_equal(rc_prevrank(reset, 2, "a", 1), -1);
    /* its own move before the reset still tells */
    const struct rc_move before[] = {{"a", 4, 2}, {"", 0, 0}, {"a", 0, 1}};
    assert_int_equal(rc_prevrank(before, 3, "a", 1), 4);
}

/* Random runs of writes (a member moves to any rank, entering or not) and
 * removals on a reference board; for every member on the board at the end,
 * rc_prevrank from the moves equals what PROTOCOL.md asks: for a member
 * that moved, its rank just before its first move; for one that did not,
 * its rank at the start. */
static void property_matches_a_reference_board(void **state)
{
    (void)state;
    for (int trial = 0; trial < 3000; trial++) {
        struct board b = {.n = 0};
        for (int i = 0; i < MAXM; i++)
            snprintf(b.names[i], sizeof b.names[i], "m%d", i);
        int start_n = (int)next_rand(MAXM / 2);
        for (int i = 0; i < start_n; i++)
            put_at(&b, i, next_rand((unsigned)b.n + 1) + 1);
        int64_t before[MAXM];
        int moved[MAXM] = {0};
        for (int i = 0; i < MAXM; i++)
            before[i] = rank_of(&b, i);

        struct rc_move moves[40];
        size_t nmoves = 1 + next_rand(39);
        for (size_t k = 0; k < nmoves; k++) {
            int who = (int)next_rand(MAXM);
            int64_t old = rank_of(&b, who);
            if (!moved[who]) {
                moved[who] = 1;
                before[who] = old; /* just before its first move */
            }
            if (old && next_rand(6) == 0) {
                take_out(&b, who);
                moves[k] = (struct rc_move){b.names[who], old, 0};
                continue;
            }
            take_out(&b, who);
            int64_t to = next_rand((unsigned)b.n + 1) + 1;
            put_at(&b, who, to);
            moves[k] = (struct rc_move){b.names[who], old, to};
        }
        for (int i = 0; i < MAXM; i++) {
            int64_t now = rank_of(&b, i);
            if (!now)
                continue;
            int64_t got = rc_prevrank(moves, nmoves, b.names[i], now);
            if (got != before[i])
                fail_msg("trial %d: %s now %lld, was %lld, computed %lld", trial, b.names[i], (long long)now,
                         (long long)before[i], (long long)got);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(example_from_the_protocol),
        cmocka_unit_test(property_matches_a_reference_board),
    };
    return cmocka_run_group_tests_name("prevrank", tests, NULL, NULL);
}
