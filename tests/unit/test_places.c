/* test_places.c - core/rc_places: competition places (1, 2, 2, 4) and "tied"
 * of windows, from the two outside facts (members above, the next row) and
 * from the mirror, checked against places counted over the whole board. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_places.h"

#define MAXN 64

/* The truth: 1 + members with a strictly better key, over the whole board
 * (c[] in rank order: better keys first), and whether another shares it. */
static void truth(double unit, const double *c, size_t n, int64_t *place, unsigned char *tied)
{
    for (size_t i = 0; i < n; i++) {
        double k = rc_places_key(unit, c[i]);
        int64_t better = 0, same = 0;
        for (size_t j = 0; j < n; j++) {
            double kj = rc_places_key(unit, c[j]);
            if (kj == k)
                same++;
            else if (j < i)
                better++;
        }
        place[i] = better + 1;
        tied[i] = same > 1;
    }
}

/* Cuts window [off, off+len) of board c[0..n) and fills it by the outside facts. */
static void fill_window(double unit, const double *c, size_t n, size_t off, size_t len, int64_t *place,
                        unsigned char *tied)
{
    int64_t above = 0;
    for (size_t j = 0; j < off; j++)
        if (rc_places_key(unit, c[j]) != rc_places_key(unit, c[off]))
            above++;
    int next = off + len < n && rc_places_key(unit, c[off + len]) == rc_places_key(unit, c[off + len - 1]);
    rc_places_fill(unit, c + off, len, (int64_t)off + 1, above, next, place, tied);
}

static void check_every_window(double unit, const double *c, size_t n)
{
    int64_t tp[MAXN], wp[MAXN];
    unsigned char tt[MAXN], wt[MAXN];
    truth(unit, c, n, tp, tt);
    for (size_t off = 0; off < n; off++)
        for (size_t len = 1; off + len <= n; len++) {
            fill_window(unit, c, n, off, len, wp, wt);
            for (size_t i = 0; i < len; i++) {
                assert_int_equal(wp[i], tp[off + i]);
                assert_int_equal(wt[i], tt[off + i]);
            }
        }
}

static void ties_give_competition_places_1_2_2_4(void **state)
{
    (void)state;
    double c[] = {40, 30, 30, 20};
    int64_t p[4];
    unsigned char t[4];
    rc_places_fill(1, c, 4, 1, 0, 0, p, t);
    assert_int_equal(p[0], 1);
    assert_int_equal(p[1], 2);
    assert_int_equal(p[2], 2);
    assert_int_equal(p[3], 4);
    assert_int_equal(t[0], 0);
    assert_int_equal(t[1], 1);
    assert_int_equal(t[2], 1);
    assert_int_equal(t[3], 0);
}

static void a_page_starting_inside_a_tie_shows_the_ties_first_place(void **state)
{
    (void)state;
    /* ranks 3..5 of 50, 40, 40, 40, 10: the page starts at the third 40 */
    double c[] = {40, 40, 10};
    int64_t p[3];
    unsigned char t[3];
    rc_places_fill(1, c, 3, 3, 1, 0, p, t);
    assert_int_equal(p[0], 2);
    assert_int_equal(t[0], 1);
    assert_int_equal(p[1], 2);
    assert_int_equal(p[2], 5);
    assert_int_equal(t[2], 0);
}

static void a_single_row_tied_with_the_next_one_past_the_window_is_tied(void **state)
{
    (void)state;
    double c[] = {50, 40};
    int64_t p[2];
    unsigned char t[2];
    rc_places_fill(1, c, 2, 1, 0, 1, p, t);
    assert_int_equal(p[1], 2);
    assert_int_equal(t[1], 1);
    assert_int_equal(t[0], 0);
}

static void tie_break_slots_are_ignored(void **state)
{
    (void)state;
    /* T = 4: points 3 with slots 9 and 2, points 2 slot 15 */
    double unit = 16;
    double c[] = {3 * 16 + 9, 3 * 16 + 2, 2 * 16 + 15};
    check_every_window(unit, c, 3);
    int64_t p[3];
    unsigned char t[3];
    rc_places_fill(unit, c, 3, 1, 0, 0, p, t);
    assert_int_equal(p[1], 1);
    assert_int_equal(t[1], 1);
    assert_int_equal(p[2], 3);
}

static void negative_points_floor_to_their_own_key(void **state)
{
    (void)state;
    /* points -1 (slots 15 and 0) and -2 (slot 15): -1*16+15 = -1, -16, -17 */
    double unit = 16;
    assert_true(rc_places_key(unit, -1) == -1);
    assert_true(rc_places_key(unit, -16) == -1);
    assert_true(rc_places_key(unit, -17) == -2);
    /* rank order desc */
    double d[] = {15, 0, -1, -16, -17};
    check_every_window(unit, d, 5);
    int64_t p[5];
    unsigned char t[5];
    truth(unit, d, 5, p, t);
    assert_int_equal(p[0], 1); /* points 0, slots 15 and 0 */
    assert_int_equal(p[1], 1);
    assert_int_equal(p[2], 3);
    assert_int_equal(p[3], 3);
    assert_int_equal(p[4], 5);
}

static void asc_boards_rank_lower_keys_first(void **state)
{
    (void)state;
    /* asc: rank order is ascending composite; places the same way */
    double unit = 4;
    double c[] = {1 * 4 + 3, 2 * 4 + 0, 2 * 4 + 1, 2 * 4 + 3, 5 * 4};
    check_every_window(unit, c, 5);
}

static void all_equal_boards_share_place_1(void **state)
{
    (void)state;
    double c[10];
    for (int i = 0; i < 10; i++)
        c[i] = 7;
    check_every_window(1, c, 10);
    int64_t p[3];
    unsigned char t[3];
    fill_window(1, c, 10, 7, 3, p, t);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(p[i], 1);
        assert_int_equal(t[i], 1);
    }
}

static void multi_field_ties_need_every_field_equal(void **state)
{
    (void)state;
    /* two fields of 4 bits each, no tie-break: unit 1, key = the composite */
    double c[] = {3 * 16 + 5, 3 * 16 + 5, 3 * 16 + 4, 2 * 16 + 15};
    check_every_window(1, c, 4);
    int64_t p[4];
    unsigned char t[4];
    truth(1, c, 4, p, t);
    assert_int_equal(p[2], 3);
    assert_int_equal(t[2], 0);
}

static void decaying_boards_tie_on_equal_scores(void **state)
{
    (void)state;
    double c[] = {2.5, 2.25, 2.25, 2.0, 1.75};
    check_every_window(0, c, 5);
    int64_t p[5];
    unsigned char t[5];
    truth(0, c, 5, p, t);
    assert_int_equal(p[2], 2);
    assert_int_equal(p[3], 4);
}

static void random_boards_agree_with_the_truth(void **state)
{
    (void)state;
    srand(1234);
    for (int round = 0; round < 200; round++) {
        size_t n = 1 + (size_t)(rand() % 20);
        double unit = round % 2 ? 8 : 1;
        double c[MAXN];
        for (size_t i = 0; i < n; i++)
            c[i] = (double)(rand() % 6 - 3) * unit + (unit > 1 ? rand() % 8 : 0);
        /* rank order: desc by composite */
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                if (c[j] > c[i]) {
                    double x = c[i];
                    c[i] = c[j];
                    c[j] = x;
                }
        check_every_window(unit, c, n);
    }
}

/* ---- the mirror ---------------------------------------------------------- */

static void load(struct rc_mirror *m, const double *c, size_t n, size_t held, int64_t total)
{
    struct rc_mirror_row rows[MAXN];
    char names[MAXN][8];
    for (size_t i = 0; i < held && i < n; i++) {
        snprintf(names[i], sizeof names[i], "m%02zu", 99 - i);
        rows[i] = (struct rc_mirror_row){names[i], c[i]};
    }
    rc_mirror_init(m, RC_ORDER_DESC);
    assert_int_equal(rc_mirror_load(m, 1, total, rows, held < n ? held : n), 0);
}

static void the_mirror_finds_places_by_walking_back_inside_a_tie(void **state)
{
    (void)state;
    double c[] = {50, 40, 40, 40, 40, 30, 30, 20};
    struct rc_mirror m;
    load(&m, c, 8, 8, 8);
    int64_t tp[8], p[8];
    unsigned char tt[8], t[8];
    truth(1, c, 8, tp, tt);
    for (size_t off = 0; off < 8; off++)
        for (size_t len = 1; off + len <= 8; len++) {
            assert_int_equal(rc_places_mirror(&m, 1, off, len, p, t), 0);
            for (size_t i = 0; i < len; i++) {
                assert_int_equal(p[i], tp[off + i]);
                assert_int_equal(t[i], tt[off + i]);
            }
        }
    rc_mirror_free(&m);
}

static void the_mirror_needs_the_row_after_the_window(void **state)
{
    (void)state;
    double c[] = {50, 40, 40, 30};
    struct rc_mirror m;
    int64_t p[4];
    unsigned char t[4];
    load(&m, c, 4, 3, 10); /* holds 3 of 10 members */
    assert_int_equal(rc_places_mirror(&m, 1, 0, 3, p, t), RC_E_UNAVAILABLE);
    assert_int_equal(rc_places_mirror(&m, 1, 0, 2, p, t), 0);
    assert_int_equal(p[1], 2);
    assert_int_equal(t[1], 1);
    rc_mirror_free(&m);
    load(&m, c, 4, 3, 3); /* the whole board: nothing after the last row */
    assert_int_equal(rc_places_mirror(&m, 1, 0, 3, p, t), 0);
    assert_int_equal(p[2], 2);
    rc_mirror_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ties_give_competition_places_1_2_2_4),
        cmocka_unit_test(a_page_starting_inside_a_tie_shows_the_ties_first_place),
        cmocka_unit_test(a_single_row_tied_with_the_next_one_past_the_window_is_tied),
        cmocka_unit_test(tie_break_slots_are_ignored),
        cmocka_unit_test(negative_points_floor_to_their_own_key),
        cmocka_unit_test(asc_boards_rank_lower_keys_first),
        cmocka_unit_test(all_equal_boards_share_place_1),
        cmocka_unit_test(multi_field_ties_need_every_field_equal),
        cmocka_unit_test(decaying_boards_tie_on_equal_scores),
        cmocka_unit_test(random_boards_agree_with_the_truth),
        cmocka_unit_test(the_mirror_finds_places_by_walking_back_inside_a_tie),
        cmocka_unit_test(the_mirror_needs_the_row_after_the_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
