/* test_mirror.c - rc_mirror keeps a board's top rows in Redis' exact order
 * (ZRANGE ... REV on desc boards) through change events, knows when it cannot
 * and asks for a reload, and only serves windows it covers exactly.
 *
 * The unit cases each prove one rule on a small board. The property test runs
 * thousands of random boards and event streams against a reference board
 * (every member, kept sorted by Redis' rule written independently: memcmp of
 * the member bytes, shorter first) and checks the mirror after every event.
 * It runs from a fixed seed printed at start; RC_TEST_SEED=<n> replays
 * another one.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rc_test_rng.h"

#include "rc_err.h"
#include "rc_mirror.h"

#define DEFAULT_SEED 20260311u
#define SPEC_MAX 64

/* ------------------------------------------------------------------------- */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------- */

static uint64_t test_seed(void)
{
    const char *env = getenv("RC_TEST_SEED");
    return env && *env ? strtoull(env, NULL, 0) : DEFAULT_SEED;
}

/* Parses "name:score name:score ..." into rows whose members point into
 * names (SPEC_MAX rows of up to 31 bytes). Returns the row count. */
static size_t parse_rows(const char *spec, struct rc_mirror_row *rows, char (*names)[32])
{
    size_t n = 0;
    int used;

    while (n < SPEC_MAX && sscanf(spec, " %31[^: ]:%lf%n", names[n], &rows[n].c, &used) == 2) {
        rows[n].member = names[n];
        spec += used;
        n++;
    }
    return n;
}

/* rc_mirror_load of the rows in spec. */
static int load_spec(struct rc_mirror *m, int64_t seq, int64_t total, const char *spec)
{
    struct rc_mirror_row rows[SPEC_MAX];
    char names[SPEC_MAX][32];
    size_t n = parse_rows(spec, rows, names);

    return rc_mirror_load(m, seq, total, rows, n);
}

/* Asserts the mirror holds exactly the rows of spec ("name:score ..."), in
 * that order. */
static void expect_rows(const struct rc_mirror *m, const char *spec)
{
    struct rc_mirror_row rows[SPEC_MAX];
    char names[SPEC_MAX][32];
    size_t n = parse_rows(spec, rows, names);

    assert_int_equal(m->len, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(m->rows[i].member, rows[i].member);
        assert_true(m->rows[i].c == rows[i].c);
    }
}

/* Applies an event that must be accepted; returns the changed rank. */
static size_t apply_ok(struct rc_mirror *m, int64_t seq, const char *member, int has_new, double c,
                       int was_present)
{
    size_t changed = 12345;

    assert_int_equal(rc_mirror_apply(m, seq, member, has_new, c, was_present, &changed), RC_MIRROR_APPLIED);
    assert_int_equal(m->seq, seq);
    return changed;
}

/* A desc board's top five, e (50) .. a (10), of `total` members: set_want(5)
 * keeps 21 rows, so the margin never cuts it. */
static void top5(struct rc_mirror *m, int64_t total)
{
    rc_mirror_init(m, RC_ORDER_DESC);
    rc_mirror_set_want(m, 5);
    assert_int_equal(load_spec(m, 10, total, "e:50 d:40 c:30 b:20 a:10"), 0);
    assert_false(rc_mirror_needs_reload(m));
}

/* ------------------------------------------------------------------------- */
/* Order                                                                     */
/* ------------------------------------------------------------------------- */

/* Redis' member order is byte-wise: "B" (0x42) < "a" < "ab" < "b" < "\xc3\xa9"
 * (redis-server 7.0.15: ZRANGE t 0 -1 REV gives c, \xc3\xa9, b, ab, a, B). */
static void insert_members(struct rc_mirror *m)
{
    static const char *const names[] = {"a", "b", "c", "B", "ab", "\xc3\xa9"};

    rc_mirror_set_want(m, 10);
    assert_int_equal(rc_mirror_load(m, 1, 0, NULL, 0), 0);
    for (size_t i = 0; i < 6; i++)
        apply_ok(m, (int64_t)i + 2, names[i], 1, names[i][0] == 'c' ? 7 : 5, 0);
    assert_int_equal(m->total, 6);
}

static void desc_board_orders_equal_composites_by_member_descending(void **state)
{
    struct rc_mirror m;

    (void)state;
    rc_mirror_init(&m, RC_ORDER_DESC);
    insert_members(&m);
    expect_rows(&m, "c:7 \xc3\xa9:5 b:5 ab:5 a:5 B:5");
    rc_mirror_free(&m);
}

static void asc_board_orders_equal_composites_by_member_ascending(void **state)
{
    struct rc_mirror m;

    (void)state;
    rc_mirror_init(&m, RC_ORDER_ASC);
    insert_members(&m);
    expect_rows(&m, "B:5 a:5 ab:5 b:5 \xc3\xa9:5 c:7");
    rc_mirror_free(&m);
}

static void desc_board_orders_negative_and_large_composites(void **state)
{
    struct rc_mirror m;

    (void)state;
    rc_mirror_init(&m, RC_ORDER_DESC);
    assert_int_equal(load_spec(&m, 1, 3, "x:9007199254740991 y:0 z:-9007199254740991"), 0);
    apply_ok(&m, 2, "w", 1, 9007199254740990.0, 0);
    apply_ok(&m, 3, "v", 1, -1, 0);
    expect_rows(&m, "x:9007199254740991 w:9007199254740990 y:0 v:-1 z:-9007199254740991");
    rc_mirror_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Load                                                                      */
/* ------------------------------------------------------------------------- */

static void load_rejects_rows_out_of_board_order(void **state)
{
    static const char *const bad_desc[] = {
        "b:5 c:7",         /* lower composite first */
        "a:5 b:5",         /* equal composites, member ascending */
        "c:7 a:5 a:5",     /* the same row twice */
    };
    struct rc_mirror m;

    (void)state;
    rc_mirror_init(&m, RC_ORDER_DESC);
    for (size_t i = 0; i < sizeof bad_desc / sizeof bad_desc[0]; i++) {
        assert_int_equal(load_spec(&m, 1, 10, "c:7 b:5 a:5"), 0);
        assert_int_equal(load_spec(&m, 2, 10, bad_desc[i]), RC_E_INTERNAL);
        assert_int_equal(m.len, 0);
        assert_false(m.exact);
        assert_true(rc_mirror_needs_reload(&m));
    }
    rc_mirror_free(&m);

    rc_mirror_init(&m, RC_ORDER_ASC);
    assert_int_equal(load_spec(&m, 1, 3, "a:5 b:5 c:7"), 0);
    assert_int_equal(load_spec(&m, 1, 3, "b:5 a:5 c:7"), RC_E_INTERNAL);
    assert_false(m.exact);
    rc_mirror_free(&m);
}

static void load_rejects_total_smaller_than_rows(void **state)
{
    struct rc_mirror m;

    (void)state;
    rc_mirror_init(&m, RC_ORDER_DESC);
    assert_int_equal(load_spec(&m, 1, 2, "c:7 b:5 a:5"), RC_E_INTERNAL);
    assert_false(m.exact);
    assert_int_equal(load_spec(&m, 1, 3, "c:7 b:5 a:5"), 0);
    assert_true(m.exact);
    rc_mirror_free(&m);
}

static void load_keeps_at_most_keep_rows_and_all_before_set_want(void **state)
{
    struct rc_mirror_row rows[30];
    char names[30][8];
    struct rc_mirror m;

    (void)state;
    for (size_t i = 0; i < 30; i++) {
        snprintf(names[i], sizeof names[i], "m%02zu", i);
        rows[i].member = names[i];
        rows[i].c = 100.0 - (double)i;
    }
    rc_mirror_init(&m, RC_ORDER_DESC);
    assert_int_equal(rc_mirror_load(&m, 7, 40, rows, 30), 0);
    assert_int_equal(m.len, 30);
    assert_int_equal(rc_mirror_set_want(&m, 4), 0); /* keep 20: trimmed */
    assert_int_equal(m.len, 20);
    assert_int_equal(rc_mirror_load(&m, 8, 40, rows, 30), 0);
    assert_int_equal(m.len, 20);
    assert_int_equal(m.seq, 8);
    assert_int_equal(m.total, 40);
    assert_string_equal(m.rows[19].member, "m19");
    assert_true(rows[0].member == names[0]); /* copied, not taken */
    assert_true(m.rows[0].member != names[0]);
    rc_mirror_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Want and margin                                                           */
/* ------------------------------------------------------------------------- */

static void set_want_keeps_want_plus_margin_of_16_or_a_quarter(void **state)
{
    struct rc_mirror m;

    (void)state;
    rc_mirror_init(&m, RC_ORDER_DESC);
    assert_true(rc_mirror_set_want(&m, 0)); /* never loaded: reload */
    assert_int_equal(m.keep, 16);
    rc_mirror_set_want(&m, 40);
    assert_int_equal(m.keep, 56);
    rc_mirror_set_want(&m, 64);
    assert_int_equal(m.keep, 80);
    rc_mirror_set_want(&m, 100);
    assert_int_equal(m.keep, 125);
    rc_mirror_set_want(&m, 1000);
    assert_int_equal(m.keep, 1250);
    assert_int_equal(m.want, 1000);
    rc_mirror_free(&m);
}

static void set_want_asks_reload_when_views_need_more_rows_than_held(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 100);
    assert_false(rc_mirror_set_want(&m, 5));
    assert_true(rc_mirror_set_want(&m, 6));
    assert_true(rc_mirror_needs_reload(&m));
    assert_false(rc_mirror_set_want(&m, 3));
    rc_mirror_free(&m);

    top5(&m, 5); /* whole board: no more rows exist */
    assert_false(rc_mirror_set_want(&m, 50));
    rc_mirror_free(&m);
}

static void needs_reload_when_mirror_shrinks_below_want_while_board_has_more(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    rc_mirror_set_want(&m, 4);
    apply_ok(&m, 11, "e", 1, 1, 1); /* falls past the tail: rows d c b a */
    assert_false(rc_mirror_needs_reload(&m));
    apply_ok(&m, 12, "d", 1, 2, 1); /* rows c b a: 3 < 4, 5 outside */
    assert_int_equal(m.len, 3);
    assert_true(m.exact);
    assert_true(rc_mirror_needs_reload(&m));
    rc_mirror_free(&m);
}

static void no_reload_when_short_mirror_holds_whole_board(void **state)
{
    struct rc_mirror m;

    (void)state;
    rc_mirror_init(&m, RC_ORDER_DESC);
    rc_mirror_set_want(&m, 10);
    assert_int_equal(load_spec(&m, 1, 3, "c:3 b:2 a:1"), 0);
    assert_false(rc_mirror_needs_reload(&m));
    apply_ok(&m, 2, "b", 0, 0, 1);
    assert_false(rc_mirror_needs_reload(&m));
    expect_rows(&m, "c:3 a:1");
    rc_mirror_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Events                                                                    */
/* ------------------------------------------------------------------------- */

static void new_member_inside_mirror_shifts_rows_below(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    assert_int_equal(apply_ok(&m, 11, "x", 1, 35, 0), 3);
    expect_rows(&m, "e:50 d:40 x:35 c:30 b:20 a:10");
    assert_int_equal(m.total, 9);
    assert_int_equal(rc_mirror_rank_of(&m, "x"), 3);
    rc_mirror_free(&m);
}

static void member_moving_up_within_mirror_changes_from_its_new_rank(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    assert_int_equal(apply_ok(&m, 11, "a", 1, 45, 1), 2);
    expect_rows(&m, "e:50 a:45 d:40 c:30 b:20");
    assert_int_equal(m.total, 8);
    rc_mirror_free(&m);
}

static void member_moving_down_within_mirror_changes_from_its_old_rank(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    assert_int_equal(apply_ok(&m, 11, "e", 1, 25, 1), 1);
    expect_rows(&m, "d:40 c:30 e:25 b:20 a:10");
    rc_mirror_free(&m);
}

static void score_change_in_place_reports_its_rank(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    assert_int_equal(apply_ok(&m, 11, "c", 1, 31, 1), 3);
    expect_rows(&m, "e:50 d:40 c:31 b:20 a:10");
    rc_mirror_free(&m);
}

static void rewrite_of_same_score_reports_no_change(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    assert_int_equal(apply_ok(&m, 11, "c", 1, 30, 1), 0);
    expect_rows(&m, "e:50 d:40 c:30 b:20 a:10");
    rc_mirror_free(&m);
}

static void member_moving_down_past_tail_leaves_mirror_while_board_has_more(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    assert_int_equal(apply_ok(&m, 11, "d", 1, 5, 1), 2);
    expect_rows(&m, "e:50 c:30 b:20 a:10");
    assert_int_equal(rc_mirror_rank_of(&m, "d"), 0);
    assert_int_equal(m.total, 8);
    assert_true(m.exact);
    rc_mirror_free(&m);
}

static void member_moving_down_past_tail_of_whole_board_stays_last(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 5);
    assert_int_equal(apply_ok(&m, 11, "d", 1, 5, 1), 2);
    expect_rows(&m, "e:50 c:30 b:20 a:10 d:5");
    rc_mirror_free(&m);
}

static void removing_held_member_drops_its_row(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    assert_int_equal(apply_ok(&m, 11, "c", 0, 0, 1), 3);
    expect_rows(&m, "e:50 d:40 b:20 a:10");
    assert_int_equal(m.total, 7);
    rc_mirror_free(&m);
}

static void removing_outside_member_changes_only_total(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    assert_int_equal(apply_ok(&m, 11, "zz", 0, 0, 1), 0);
    expect_rows(&m, "e:50 d:40 c:30 b:20 a:10");
    assert_int_equal(m.total, 7);
    rc_mirror_free(&m);
}

static void removing_absent_member_changes_nothing(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    assert_int_equal(apply_ok(&m, 11, "zz", 0, 0, 0), 0);
    assert_int_equal(m.total, 8);
    rc_mirror_free(&m);
}

static void member_below_tail_entering_from_outside_is_inserted(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    assert_int_equal(apply_ok(&m, 11, "zz", 1, 25, 1), 4);
    expect_rows(&m, "e:50 d:40 c:30 zz:25 b:20 a:10");
    assert_int_equal(m.total, 8);
    rc_mirror_free(&m);
}

static void member_tied_with_tail_enters_only_when_it_sorts_before_it(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    /* desc: equal composites rank by member descending, "b" before "a" */
    assert_int_equal(apply_ok(&m, 11, "b0", 1, 10, 1), 5); /* "b0" > "a": before a */
    expect_rows(&m, "e:50 d:40 c:30 b:20 b0:10 a:10");
    assert_int_equal(apply_ok(&m, 12, "0", 1, 10, 1), 0); /* "0" < "a": after a, maybe after others */
    expect_rows(&m, "e:50 d:40 c:30 b:20 b0:10 a:10");
    rc_mirror_free(&m);
}

static void outside_member_staying_below_tail_is_not_held(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    assert_int_equal(apply_ok(&m, 11, "zz", 1, 5, 1), 0);
    assert_int_equal(apply_ok(&m, 12, "new", 1, 1, 0), 0);
    expect_rows(&m, "e:50 d:40 c:30 b:20 a:10");
    assert_int_equal(m.total, 9);
    assert_int_equal(rc_mirror_rank_of(&m, "new"), 0);
    rc_mirror_free(&m);
}

static void last_outside_member_moving_below_tail_is_appended(void **state)
{
    const struct rc_mirror_row *rows;
    struct rc_mirror m;
    size_t n;

    (void)state;
    top5(&m, 6); /* zz, the sixth member, is outside */
    assert_int_equal(apply_ok(&m, 11, "zz", 1, 3, 1), 6);
    expect_rows(&m, "e:50 d:40 c:30 b:20 a:10 zz:3");
    assert_int_equal(m.total, 6);
    assert_int_equal(rc_mirror_window(&m, 0, 100, &rows, &n), 0);
    assert_int_equal(n, 6);
    rc_mirror_free(&m);
}

static void new_member_below_tail_of_whole_board_is_appended(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 5);
    assert_int_equal(apply_ok(&m, 11, "zz", 1, 1, 0), 6);
    expect_rows(&m, "e:50 d:40 c:30 b:20 a:10 zz:1");
    assert_int_equal(m.total, 6);
    rc_mirror_free(&m);
}

static void first_member_of_empty_board_is_held(void **state)
{
    struct rc_mirror m;

    (void)state;
    rc_mirror_init(&m, RC_ORDER_ASC);
    rc_mirror_set_want(&m, 3);
    assert_int_equal(rc_mirror_load(&m, 0, 0, NULL, 0), 0);
    assert_int_equal(apply_ok(&m, 1, "a", 1, 9, 0), 1);
    expect_rows(&m, "a:9");
    rc_mirror_free(&m);
}

static void insert_into_full_mirror_drops_tail_row(void **state)
{
    struct rc_mirror_row rows[16];
    char names[16][8];
    struct rc_mirror m;

    (void)state;
    for (size_t i = 0; i < 16; i++) {
        snprintf(names[i], sizeof names[i], "m%02zu", i);
        rows[i].member = names[i];
        rows[i].c = 100.0 - (double)i;
    }
    rc_mirror_init(&m, RC_ORDER_DESC);
    rc_mirror_set_want(&m, 0); /* keep 16 */
    assert_int_equal(rc_mirror_load(&m, 1, 20, rows, 16), 0);
    assert_int_equal(apply_ok(&m, 2, "x", 1, 99.5, 0), 2);
    assert_int_equal(m.len, 16);
    assert_string_equal(m.rows[15].member, "m14");
    assert_int_equal(rc_mirror_rank_of(&m, "m15"), 0);
    assert_int_equal(m.total, 21);
    rc_mirror_free(&m);

    /* the whole board, exactly keep rows: a newcomer past the tail stays out */
    rc_mirror_init(&m, RC_ORDER_DESC);
    rc_mirror_set_want(&m, 0);
    assert_int_equal(rc_mirror_load(&m, 1, 16, rows, 16), 0);
    assert_int_equal(apply_ok(&m, 2, "y", 1, 1, 0), 0);
    assert_int_equal(m.len, 16);
    assert_int_equal(m.total, 17);
    assert_int_equal(rc_mirror_rank_of(&m, "y"), 0);
    rc_mirror_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Sequence                                                                  */
/* ------------------------------------------------------------------------- */

static void event_skipping_a_seq_is_a_gap(void **state)
{
    const struct rc_mirror_row *rows;
    struct rc_mirror m;
    size_t n, changed = 7;

    (void)state;
    top5(&m, 8);
    assert_int_equal(rc_mirror_apply(&m, 12, "x", 1, 35, 0, &changed), RC_MIRROR_GAP);
    assert_int_equal(changed, 0);
    assert_false(m.exact);
    assert_true(rc_mirror_needs_reload(&m));
    assert_int_equal(rc_mirror_window(&m, 0, 1, &rows, &n), RC_E_UNAVAILABLE);
    /* the next in line does not repair it: only a load does */
    assert_int_equal(rc_mirror_apply(&m, 11, "x", 1, 35, 0, NULL), RC_MIRROR_GAP);
    assert_int_equal(load_spec(&m, 12, 9, "e:50 d:40 x:35 c:30 b:20 a:10"), 0);
    assert_int_equal(apply_ok(&m, 13, "x", 0, 0, 1), 3);
    rc_mirror_free(&m);
}

static void event_already_reflected_is_old_and_ignored(void **state)
{
    struct rc_mirror m;
    size_t changed = 7;

    (void)state;
    top5(&m, 8);
    assert_int_equal(rc_mirror_apply(&m, 10, "a", 1, 99, 1, &changed), RC_MIRROR_OLD);
    assert_int_equal(changed, 0);
    assert_int_equal(rc_mirror_apply(&m, 3, "x", 1, 99, 0, NULL), RC_MIRROR_OLD);
    expect_rows(&m, "e:50 d:40 c:30 b:20 a:10");
    assert_int_equal(m.seq, 10);
    assert_int_equal(m.total, 8);
    assert_true(m.exact);
    assert_int_equal(apply_ok(&m, 11, "a", 1, 99, 1), 1);
    rc_mirror_free(&m);
}

static void event_before_first_load_is_a_gap(void **state)
{
    struct rc_mirror m;

    (void)state;
    rc_mirror_init(&m, RC_ORDER_DESC);
    assert_int_equal(rc_mirror_apply(&m, 1, "a", 1, 1, 0, NULL), RC_MIRROR_GAP);
    assert_int_equal(m.len, 0);
    rc_mirror_free(&m);
}

static void event_contradicting_mirror_is_a_gap(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    /* c is held, so it was on the board */
    assert_int_equal(rc_mirror_apply(&m, 11, "c", 1, 1, 0, NULL), RC_MIRROR_GAP);
    assert_false(m.exact);
    rc_mirror_free(&m);

    top5(&m, 5);
    /* the mirror holds the whole board, and zz is not in it */
    assert_int_equal(rc_mirror_apply(&m, 11, "zz", 0, 0, 1, NULL), RC_MIRROR_GAP);
    assert_false(m.exact);
    rc_mirror_free(&m);
}

static void null_member_or_nan_score_is_internal_error(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    assert_int_equal(rc_mirror_apply(&m, 11, NULL, 1, 1, 0, NULL), RC_E_INTERNAL);
    assert_false(m.exact);
    rc_mirror_free(&m);

    top5(&m, 8);
    assert_int_equal(rc_mirror_apply(&m, 11, "x", 1, NAN, 0, NULL), RC_E_INTERNAL);
    assert_false(m.exact);
    rc_mirror_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Windows and ranks                                                         */
/* ------------------------------------------------------------------------- */

static void window_within_rows_is_served_from_mirror(void **state)
{
    const struct rc_mirror_row *rows;
    struct rc_mirror m;
    size_t n;

    (void)state;
    top5(&m, 100);
    assert_int_equal(rc_mirror_window(&m, 0, 5, &rows, &n), 0);
    assert_int_equal(n, 5);
    assert_true(rows == m.rows);
    assert_int_equal(rc_mirror_window(&m, 2, 2, &rows, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(rows[0].member, "c");
    assert_string_equal(rows[1].member, "b");
    assert_int_equal(rc_mirror_window(&m, 5, 0, &rows, &n), 0);
    assert_int_equal(n, 0);
    rc_mirror_free(&m);
}

static void window_past_rows_is_unavailable_while_board_has_more(void **state)
{
    const struct rc_mirror_row *rows;
    struct rc_mirror m;
    size_t n;

    (void)state;
    top5(&m, 6);
    assert_int_equal(rc_mirror_window(&m, 0, 6, &rows, &n), RC_E_UNAVAILABLE);
    assert_int_equal(rc_mirror_window(&m, 4, 2, &rows, &n), RC_E_UNAVAILABLE);
    assert_int_equal(rc_mirror_window(&m, 10, 10, &rows, &n), RC_E_UNAVAILABLE);
    assert_int_equal(rc_mirror_window(&m, 1, SIZE_MAX, &rows, &n), RC_E_UNAVAILABLE);
    rc_mirror_free(&m);
}

static void window_past_end_of_whole_board_is_short_or_empty(void **state)
{
    const struct rc_mirror_row *rows;
    struct rc_mirror m;
    size_t n;

    (void)state;
    top5(&m, 5);
    assert_int_equal(rc_mirror_window(&m, 3, 10, &rows, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(rows[0].member, "b");
    assert_int_equal(rc_mirror_window(&m, 5, 10, &rows, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(rc_mirror_window(&m, 50, 10, &rows, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(rc_mirror_window(&m, 2, SIZE_MAX, &rows, &n), 0);
    assert_int_equal(n, 3);
    rc_mirror_free(&m);

    rc_mirror_init(&m, RC_ORDER_DESC);
    assert_int_equal(rc_mirror_load(&m, 1, 0, NULL, 0), 0);
    assert_int_equal(rc_mirror_window(&m, 0, 10, &rows, &n), 0);
    assert_int_equal(n, 0);
    rc_mirror_free(&m);
}

static void window_of_mirror_never_loaded_is_unavailable(void **state)
{
    const struct rc_mirror_row *rows;
    struct rc_mirror m;
    size_t n;

    (void)state;
    rc_mirror_init(&m, RC_ORDER_DESC);
    assert_int_equal(rc_mirror_window(&m, 0, 10, &rows, &n), RC_E_UNAVAILABLE);
    assert_int_equal(n, 0);
    rc_mirror_free(&m);
}

static void rank_of_is_one_based_and_zero_when_not_held(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    assert_int_equal(rc_mirror_rank_of(&m, "e"), 1);
    assert_int_equal(rc_mirror_rank_of(&m, "a"), 5);
    assert_int_equal(rc_mirror_rank_of(&m, "zz"), 0);
    assert_int_equal(rc_mirror_rank_of(&m, NULL), 0);
    rc_mirror_free(&m);
}

static void free_leaves_an_empty_mirror_that_can_be_reused(void **state)
{
    struct rc_mirror m;

    (void)state;
    top5(&m, 8);
    rc_mirror_free(&m);
    assert_null(m.rows);
    assert_int_equal(m.len, 0);
    assert_false(m.exact);
    assert_int_equal(m.order, RC_ORDER_DESC);
    assert_int_equal(load_spec(&m, 1, 1, "a:1"), 0);
    rc_mirror_free(&m);
    rc_mirror_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Property: random boards and event streams against a reference board       */
/* ------------------------------------------------------------------------- */

#define POOL 600       /* member names a board draws from */
#define MAX_START 400  /* board size at load: 0..MAX_START */
#define BOARDS 2000
#define MAX_EVENTS 160 /* per board: 1..MAX_EVENTS */

/* The true board: every present member, sorted by Redis' rule. names[] is
 * filled once and shared by every board run. */
struct ref_board {
    char names[POOL][16];
    enum rc_order order;
    int present[POOL];
    double c[POOL];
    int sorted[POOL]; /* ids of present members, rank order */
    size_t n;
};

/* Names with shared prefixes ("1", "10"), both cases and bytes >= 0x80, so
 * ties exercise the byte order. */
static void make_names(struct ref_board *b)
{
    static const char *const prefix[] = {"", "a", "B", "\xc3\xa9"};

    for (int i = 0; i < POOL; i++)
        snprintf(b->names[i], sizeof b->names[i], "%s%x", prefix[i % 4], (unsigned)(i / 4));
}

/* Redis' order written from its definition: score, then memcmp of the member
 * bytes with the shorter first on a common prefix; desc is ZRANGE REV, the
 * exact reverse. */
static int ref_cmp(const struct ref_board *b, int x, int y)
{
    const char *mx = b->names[x], *my = b->names[y];
    size_t lx = strlen(mx), ly = strlen(my);
    int asc;

    if (b->c[x] != b->c[y]) {
        asc = b->c[x] < b->c[y] ? -1 : 1;
    } else {
        int s = memcmp(mx, my, lx < ly ? lx : ly);
        asc = s != 0 ? (s < 0 ? -1 : 1) : (lx < ly ? -1 : lx > ly ? 1 : 0);
    }
    return b->order == RC_ORDER_DESC ? -asc : asc;
}

static void ref_insert(struct ref_board *b, int id, double c)
{
    size_t i = b->n;

    b->present[id] = 1;
    b->c[id] = c;
    while (i > 0 && ref_cmp(b, id, b->sorted[i - 1]) < 0) {
        b->sorted[i] = b->sorted[i - 1];
        i--;
    }
    b->sorted[i] = id;
    b->n++;
}

static void ref_remove(struct ref_board *b, int id)
{
    size_t i = 0;

    while (b->sorted[i] != id)
        i++;
    memmove(&b->sorted[i], &b->sorted[i + 1], (b->n - i - 1) * sizeof b->sorted[0]);
    b->present[id] = 0;
    b->n--;
}

/* Reloads the mirror from the reference as the gateway would from Redis:
 * the top `keep` rows (sometimes more: load must cut them). */
static void ref_load(struct rc_mirror *m, struct ref_board *b, int64_t seq, struct rng *r)
{
    static struct rc_mirror_row rows[POOL];
    size_t n = b->n;

    if (m->keep < n && below(r, 4) != 0)
        n = m->keep;
    for (size_t i = 0; i < n; i++) {
        rows[i].member = b->names[b->sorted[i]];
        rows[i].c = b->c[b->sorted[i]];
    }
    assert_int_equal(rc_mirror_load(m, seq, (int64_t)b->n, rows, n), 0);
    assert_int_equal(m->len, n < m->keep ? n : m->keep);
}

/* After an event the mirror does not ask to reload: its rows are the true
 * top len rows, it holds what the views want, and every window it serves is
 * the true window while every window it refuses really reaches past it. */
static void check_against_ref(const struct rc_mirror *m, const struct ref_board *b, struct rng *r)
{
    const struct rc_mirror_row *rows;
    size_t n;

    assert_true(m->exact);
    assert_int_equal(m->total, (int64_t)b->n);
    assert_true(m->len <= m->keep && m->len <= b->n);
    assert_true(m->len >= (m->want < b->n ? m->want : b->n));
    for (size_t i = 0; i < m->len; i++) {
        assert_string_equal(m->rows[i].member, b->names[b->sorted[i]]);
        assert_true(m->rows[i].c == b->c[b->sorted[i]]);
    }
    assert_int_equal(rc_mirror_window(m, 0, m->want, &rows, &n), 0);
    assert_int_equal(n, m->want < b->n ? m->want : b->n);

    for (int k = 0; k < 4; k++) {
        size_t offset = below(r, m->len + 30), count = 1 + below(r, 70);
        int covered = offset + count <= m->len || b->n <= m->len;
        size_t expect = offset < b->n ? (offset + count < b->n ? offset + count : b->n) - offset : 0;
        int rc = rc_mirror_window(m, offset, count, &rows, &n);

        assert_int_equal(rc, covered ? 0 : RC_E_UNAVAILABLE);
        if (!covered)
            continue;
        assert_int_equal(n, expect);
        for (size_t i = 0; i < n; i++)
            assert_string_equal(rows[i].member, b->names[b->sorted[offset + i]]);
    }
}

struct snap {
    char member[16];
    double c;
};

/* 1-based rank of the first row that differs between the snapshot and the
 * mirror (a missing row differs), 0 when none does. */
static size_t first_difference(const struct snap *s, size_t ns, const struct rc_mirror *m)
{
    size_t i;

    for (i = 0; i < ns && i < m->len; i++) {
        if (strcmp(s[i].member, m->rows[i].member) != 0 || s[i].c != m->rows[i].c)
            return i + 1;
    }
    return ns == m->len ? 0 : i + 1;
}

/* A member to touch: one near the top, where the mirror is, half the time or
 * always (near_only). */
static int pick_present(const struct ref_board *b, const struct rc_mirror *m, int near_only, struct rng *r)
{
    size_t near = m->keep * 2 < b->n ? m->keep * 2 : b->n;

    return b->sorted[near_only || below(r, 2) ? below(r, near) : below(r, b->n)];
}

/* Counts per stream kind: [0] balanced streams, [1] sinking ones. */
struct tally {
    size_t events[2], reloads[2];
    size_t dups, entered, left, moved_inside, outside_only;
};

/* One random board and event stream, checked after every event. A quarter
 * of the streams are "sinking": every move worsens the rank of a member near
 * the top, so the mirror's tail drains and the reload path runs too. */
static void run_board(struct rng *r, struct ref_board *b, struct tally *t)
{
    static struct snap before[POOL];
    struct rc_mirror m;
    int64_t seq = (int64_t)below(r, 1000);
    size_t events = 1 + below(r, MAX_EVENTS);
    size_t start = below(r, MAX_START + 1);
    int spread = below(r, 2) ? 21 : 200; /* few distinct scores: many ties */
    int sinking = below(r, 4) == 0;

    memset(b->present, 0, sizeof b->present);
    b->n = 0;
    b->order = below(r, 2) ? RC_ORDER_DESC : RC_ORDER_ASC;
    while (b->n < start) {
        int id = (int)below(r, POOL);
        if (!b->present[id])
            ref_insert(b, id, (double)below(r, (size_t)spread) - 5);
    }
    rc_mirror_init(&m, b->order);
    assert_true(rc_mirror_set_want(&m, 1 + below(r, 60)));
    ref_load(&m, b, seq, r);
    check_against_ref(&m, b, r);

    for (size_t e = 0; e < events; e++) {
        size_t kind = below(r, 100), nbefore = m.len, changed, held_before;
        int id, has_new = 1, was_present;
        double c = 0;

        if (kind < 20 && b->n < POOL) { /* a new member */
            do
                id = (int)below(r, POOL);
            while (b->present[id]);
            c = (double)below(r, (size_t)spread) - 5;
        } else if (kind < 35 && b->n > 0) { /* a removal */
            id = pick_present(b, &m, sinking, r);
            has_new = 0;
        } else if (b->n > 0) { /* a move, up or down */
            id = pick_present(b, &m, sinking, r);
            if (sinking)
                c = b->c[id] + (double)(1 + below(r, 10)) * (b->order == RC_ORDER_DESC ? -1 : 1);
            else if (below(r, 8))
                c = b->c[id] + (double)below(r, 11) - 5;
            else
                c = (double)below(r, (size_t)spread) - 5;
            if (c == b->c[id])
                continue; /* a no-op write publishes nothing */
        } else {
            continue;
        }

        for (size_t i = 0; i < m.len; i++) {
            snprintf(before[i].member, sizeof before[i].member, "%s", m.rows[i].member);
            before[i].c = m.rows[i].c;
        }
        held_before = rc_mirror_rank_of(&m, b->names[id]);
        was_present = b->present[id];
        if (was_present)
            ref_remove(b, id);
        if (has_new)
            ref_insert(b, id, c);
        seq++;
        t->events[sinking]++;

        changed = 99999;
        assert_int_equal(rc_mirror_apply(&m, seq, b->names[id], has_new, c, was_present, &changed),
                         RC_MIRROR_APPLIED);
        assert_int_equal(changed, first_difference(before, nbefore, &m));
        if (held_before && rc_mirror_rank_of(&m, b->names[id]))
            t->moved_inside++;
        else if (held_before)
            t->left++;
        else if (rc_mirror_rank_of(&m, b->names[id]))
            t->entered++;
        else
            t->outside_only++;

        if (below(r, 30) == 0) { /* the same event again, e.g. after a resubscribe */
            size_t len = m.len;
            t->dups++;
            assert_int_equal(rc_mirror_apply(&m, seq, b->names[id], has_new, c, was_present, &changed),
                             RC_MIRROR_OLD);
            assert_int_equal(changed, 0);
            assert_int_equal(m.len, len);
        }

        if (rc_mirror_needs_reload(&m)) {
            t->reloads[sinking]++;
            ref_load(&m, b, seq, r);
            assert_false(rc_mirror_needs_reload(&m));
        }
        check_against_ref(&m, b, r);
    }
    rc_mirror_free(&m);
}

static void random_event_streams_keep_mirror_equal_to_true_board(void **state)
{
    static struct ref_board board;
    struct rng r = {test_seed()};
    struct tally t = {0};
    double ratio;

    (void)state;
    make_names(&board);
    for (int i = 0; i < BOARDS; i++)
        run_board(&r, &board, &t);

    ratio = (double)t.reloads[0] / (double)t.events[0];
    print_message("property: %d boards; balanced streams: %zu events, %zu reloads (%.3f%%); "
                  "sinking streams: %zu events, %zu reloads (%.2f%%)\n",
                  BOARDS, t.events[0], t.reloads[0], 100.0 * ratio, t.events[1], t.reloads[1],
                  100.0 * (double)t.reloads[1] / (double)t.events[1]);
    print_message("property: %zu duplicates; %zu moved inside, %zu entered, %zu left, %zu outside only\n",
                  t.dups, t.moved_inside, t.entered, t.left, t.outside_only);
    assert_true(ratio < 0.20);
    assert_true(t.reloads[1] >= 20);
    assert_true(t.moved_inside > 1000 && t.entered > 1000 && t.left > 1000 && t.outside_only > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(desc_board_orders_equal_composites_by_member_descending),
        cmocka_unit_test(asc_board_orders_equal_composites_by_member_ascending),
        cmocka_unit_test(desc_board_orders_negative_and_large_composites),
        cmocka_unit_test(load_rejects_rows_out_of_board_order),
        cmocka_unit_test(load_rejects_total_smaller_than_rows),
        cmocka_unit_test(load_keeps_at_most_keep_rows_and_all_before_set_want),
        cmocka_unit_test(set_want_keeps_want_plus_margin_of_16_or_a_quarter),
        cmocka_unit_test(set_want_asks_reload_when_views_need_more_rows_than_held),
        cmocka_unit_test(needs_reload_when_mirror_shrinks_below_want_while_board_has_more),
        cmocka_unit_test(no_reload_when_short_mirror_holds_whole_board),
        cmocka_unit_test(new_member_inside_mirror_shifts_rows_below),
        cmocka_unit_test(member_moving_up_within_mirror_changes_from_its_new_rank),
        cmocka_unit_test(member_moving_down_within_mirror_changes_from_its_old_rank),
        cmocka_unit_test(score_change_in_place_reports_its_rank),
        cmocka_unit_test(rewrite_of_same_score_reports_no_change),
        cmocka_unit_test(member_moving_down_past_tail_leaves_mirror_while_board_has_more),
        cmocka_unit_test(member_moving_down_past_tail_of_whole_board_stays_last),
        cmocka_unit_test(removing_held_member_drops_its_row),
        cmocka_unit_test(removing_outside_member_changes_only_total),
        cmocka_unit_test(removing_absent_member_changes_nothing),
        cmocka_unit_test(member_below_tail_entering_from_outside_is_inserted),
        cmocka_unit_test(member_tied_with_tail_enters_only_when_it_sorts_before_it),
        cmocka_unit_test(outside_member_staying_below_tail_is_not_held),
        cmocka_unit_test(last_outside_member_moving_below_tail_is_appended),
        cmocka_unit_test(new_member_below_tail_of_whole_board_is_appended),
        cmocka_unit_test(first_member_of_empty_board_is_held),
        cmocka_unit_test(insert_into_full_mirror_drops_tail_row),
        cmocka_unit_test(event_skipping_a_seq_is_a_gap),
        cmocka_unit_test(event_already_reflected_is_old_and_ignored),
        cmocka_unit_test(event_before_first_load_is_a_gap),
        cmocka_unit_test(event_contradicting_mirror_is_a_gap),
        cmocka_unit_test(null_member_or_nan_score_is_internal_error),
        cmocka_unit_test(window_within_rows_is_served_from_mirror),
        cmocka_unit_test(window_past_rows_is_unavailable_while_board_has_more),
        cmocka_unit_test(window_past_end_of_whole_board_is_short_or_empty),
        cmocka_unit_test(window_of_mirror_never_loaded_is_unavailable),
        cmocka_unit_test(rank_of_is_one_based_and_zero_when_not_held),
        cmocka_unit_test(free_leaves_an_empty_mirror_that_can_be_reused),
        cmocka_unit_test(random_event_streams_keep_mirror_equal_to_true_board),
    };

    print_message("test_mirror seed: %llu (RC_TEST_SEED=<n> to change)\n", (unsigned long long)test_seed());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
