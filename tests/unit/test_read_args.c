/* test_read_args.c - lua/read.lua's call is built as the script's header
 * says, and its replies decode back; every malformed shape is refused. No
 * Redis involved (tests/e2e and test_archive_job run the script itself). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "rc_err.h"
#include "rc_read_args.h"

#define S(x) {0, 0, x}
#define I(x) {1, x, NULL}
#define F0 I(0), I(0), I(0), I(0) /* the freeze: not frozen, version 0 */

static void build_range(void **state)
{
    (void)state;
    struct rc_read_args a;
    struct rc_read_req q = {.kind = RC_READ_RANGE, .first = 10, .count = 5};
    assert_int_equal(rc_read_args_build("daily", "2025-11-22", RC_ORDER_DESC, &q, &a), 0);
    assert_string_equal(a.keys[0], "rc:{daily|2025-11-22}:z");
    assert_string_equal(a.keys[1], "rc:{daily|2025-11-22}:seq");
    assert_string_equal(a.keys[2], "rc:{daily|2025-11-22}:log");
    assert_string_equal(a.keys[3], "rc:{daily|2025-11-22}:epoch");
    assert_string_equal(a.keys[4], "rc:{daily|2025-11-22}:frz");
    assert_string_equal(a.keys[5], "rc:{daily|2025-11-22}:fz");
    assert_int_equal(a.nargv, 5);
    assert_string_equal(a.argv[0], "range");
    assert_string_equal(a.argv[1], "desc");
    assert_string_equal(a.argv[2], "0"); /* the audience's board */
    assert_string_equal(a.argv[3], "10");
    assert_string_equal(a.argv[4], "14");
    q.live = 1;
    assert_int_equal(rc_read_args_build("daily", "2025-11-22", RC_ORDER_DESC, &q, &a), 0);
    assert_string_equal(a.argv[2], "1"); /* the live board */
}

static void build_range_whole_board(void **state)
{
    (void)state;
    struct rc_read_args a;
    struct rc_read_req q = {.kind = RC_READ_RANGE, .first = 0, .count = 0};
    assert_int_equal(rc_read_args_build("b", "", RC_ORDER_ASC, &q, &a), 0);
    assert_string_equal(a.argv[1], "asc");
    assert_string_equal(a.argv[4], "-1");
}

static void build_around_rank_log(void **state)
{
    (void)state;
    struct rc_read_args a;
    struct rc_read_req q = {.kind = RC_READ_AROUND, .member = "alice", .radius = 3};
    assert_int_equal(rc_read_args_build("b", "", RC_ORDER_DESC, &q, &a), 0);
    assert_int_equal(a.nargv, 5);
    assert_string_equal(a.argv[0], "around");
    assert_ptr_equal(a.argv[3], q.member); /* borrowed */
    assert_string_equal(a.argv[4], "3");
    q = (struct rc_read_req){.kind = RC_READ_RANK, .member = "bob"};
    assert_int_equal(rc_read_args_build("b", "", RC_ORDER_DESC, &q, &a), 0);
    assert_int_equal(a.nargv, 4);
    assert_string_equal(a.argv[0], "rank");
    assert_string_equal(a.argv[3], "bob");
    q = (struct rc_read_req){.kind = RC_READ_LOG};
    assert_int_equal(rc_read_args_build("b", "", RC_ORDER_DESC, &q, &a), 0);
    assert_int_equal(a.nargv, 3);
    assert_string_equal(a.argv[0], "log");
    assert_string_equal(a.keys[0], "rc:{b|}:z");
    /* bounded: at most count changes after seq first (a feed's replay) */
    q = (struct rc_read_req){.kind = RC_READ_LOG, .first = 41, .count = 256};
    assert_int_equal(rc_read_args_build("b", "", RC_ORDER_DESC, &q, &a), 0);
    assert_int_equal(a.nargv, 5);
    assert_string_equal(a.argv[3], "41");
    assert_string_equal(a.argv[4], "256");
    q.first = -1;
    assert_int_equal(rc_read_args_build("b", "", RC_ORDER_DESC, &q, &a), RC_E_BAD_REQUEST);
}

static void build_refuses(void **state)
{
    (void)state;
    struct rc_read_args a;
    struct rc_read_req bad[] = {
        {.kind = RC_READ_RANGE, .first = -1, .count = 5},
        {.kind = RC_READ_RANGE, .first = 0, .count = -1},
        {.kind = RC_READ_RANGE, .first = INT64_MAX, .count = 2},
        {.kind = RC_READ_AROUND, .member = NULL, .radius = 1},
        {.kind = RC_READ_AROUND, .member = "", .radius = 1},
        {.kind = RC_READ_AROUND, .member = "a", .radius = -1},
        {.kind = RC_READ_RANK, .member = NULL},
        {.kind = (enum rc_read_kind)9},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(rc_read_args_build("b", "", RC_ORDER_DESC, &bad[i], &a), RC_E_BAD_REQUEST);
    char huge[RC_KEY_MAX + 8];
    memset(huge, 'x', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    struct rc_read_req q = {.kind = RC_READ_LOG};
    assert_int_equal(rc_read_args_build(huge, "", RC_ORDER_DESC, &q, &a), RC_E_INTERNAL);
}

static void parse_rows(void **state)
{
    (void)state;
    struct rc_reply_item r[] = {I(7), I(42), I(3), S("e1"), F0, S("alice"), S("1500"), S("bob"), S("-2.5"), S("carol"), S("inf")};
    struct rc_read_head h;
    struct rc_read_row rows[3];
    size_t n = 99;
    assert_int_equal(rc_read_args_rows_max(14), 3);
    assert_int_equal(rc_read_args_rows_parse(r, 14, &h, rows, 3, &n), 0);
    assert_string_equal(h.epoch, "e1");
    assert_int_equal(h.seq, 7);
    assert_int_equal(h.total, 42);
    assert_int_equal(h.first_rank, 3);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].member, "alice");
    assert_true(rows[0].c == 1500.0);
    assert_true(rows[1].c == -2.5);
    assert_true(rows[2].c > 1e308);
    /* an empty window: only the head */
    assert_int_equal(rc_read_args_rows_parse(r, 8, &h, rows, 0, &n), 0);
    assert_int_equal(n, 0);
}

static void parse_absent_member(void **state)
{
    (void)state;
    /* rank of an absent member: { seq, total, 0, epoch, member, "" } */
    struct rc_reply_item r[] = {I(7), I(42), I(0), S(""), F0, S("zed"), S("")};
    struct rc_read_head h;
    struct rc_read_row rows[2];
    size_t n = 99;
    assert_int_equal(rc_read_args_rows_parse(r, 10, &h, rows, 2, &n), 0);
    assert_int_equal(h.first_rank, 0);
    assert_string_equal(h.epoch, ""); /* no history holds */
    assert_int_equal(n, 0);
}

static void parse_log_head(void **state)
{
    (void)state;
    struct rc_reply_item r[] = {I(9), I(2), I(0), S("0123456789abcdef"), F0, S("{\"seq\":9}")};
    struct rc_read_head h;
    assert_int_equal(rc_read_args_head_parse(r, 9, &h), 0);
    assert_string_equal(h.epoch, "0123456789abcdef");
    assert_int_equal(h.seq, 9);
    assert_int_equal(h.total, 2);
}

static void parse_frozen_head(void **state)
{
    (void)state;
    struct rc_reply_item r[] = {I(12), I(5), I(0), S("e1"), I(1), I(10), I(12), I(4)};
    struct rc_read_head h;
    assert_int_equal(rc_read_args_head_parse(r, 8, &h), 0);
    assert_int_equal(h.freeze.frozen, 1);
    assert_int_equal(h.freeze.seq, 10);
    assert_int_equal(h.freeze.shown, 12);
    assert_int_equal(h.freeze.version, 4);
    r[6] = (struct rc_reply_item)I(9); /* shown before the freeze's seq */
    assert_int_equal(rc_read_args_head_parse(r, 8, &h), RC_E_INTERNAL);
}

/* Each reply below is one item away from a good one. */
static void parse_refuses_every_bad_shape(void **state)
{
    (void)state;
    struct rc_reply_item good[] = {I(7), I(42), I(1), S("e1"), F0, S("alice"), S("1500")};
    struct rc_read_head h;
    struct rc_read_row rows[4];
    size_t n;
    assert_int_equal(rc_read_args_rows_parse(good, 10, &h, rows, 4, &n), 0);

    struct {
        size_t at;
        struct rc_reply_item item;
    } swaps[] = {
        {0, S("7")},     /* seq as a string */
        {1, S("42")},    /* total as a string */
        {2, S("1")},     /* first_rank as a string */
        {0, I(-1)},      /* negative seq */
        {1, I(-3)},      /* negative total */
        {2, I(-1)},      /* negative rank */
        {3, I(1)},       /* epoch as an integer */
        {3, S(NULL)},    /* epoch of another type */
        {3, S("a-b")},   /* epoch with a character an id never has */
        {3, S("0123456789abcdef0123456789abcdef0")}, /* epoch longer than RC_EPOCH_MAX */
        {4, I(2)},       /* frozen neither 0 nor 1 */
        {4, S("0")},     /* frozen as a string */
        {5, I(3)},       /* a freeze seq while not frozen */
        {6, I(-1)},      /* negative shown */
        {7, S("1")},     /* the freeze version as a string */
        {8, I(5)},       /* member as an integer */
        {8, S("")},      /* empty member */
        {8, S(NULL)},    /* member of another type (nil, status...) */
        {9, I(1500)},    /* composite as an integer */
        {9, S("")},      /* empty composite */
        {9, S("15x")},   /* trailing junk */
        {9, S("abc")},   /* not a number */
        {9, S("nan")},   /* NaN */
        {9, S(" 1")},    /* not Redis's form either, but strtod takes it: see below */
    };
    for (size_t i = 0; i + 1 < sizeof swaps / sizeof *swaps; i++) {
        struct rc_reply_item r[10];
        memcpy(r, good, sizeof r);
        r[swaps[i].at] = swaps[i].item;
        assert_int_equal(rc_read_args_rows_parse(r, 10, &h, rows, 4, &n), RC_E_INTERNAL);
        assert_int_equal(n, 0);
    }
    /* leading blanks are what strtod skips; Redis never sends them, and the
     * value is still the whole number text: accepted */
    struct rc_reply_item lead[10];
    memcpy(lead, good, sizeof lead);
    lead[9] = swaps[sizeof swaps / sizeof *swaps - 1].item;
    assert_int_equal(rc_read_args_rows_parse(lead, 10, &h, rows, 4, &n), 0);

    /* short arrays and odd tails */
    for (size_t len = 0; len < 8; len++)
        assert_int_equal(rc_read_args_rows_parse(good, len, &h, rows, 4, &n), RC_E_INTERNAL);
    assert_int_equal(rc_read_args_rows_parse(good, 9, &h, rows, 4, &n), RC_E_INTERNAL);
    assert_int_equal(rc_read_args_rows_parse(NULL, 0, &h, rows, 4, &n), RC_E_INTERNAL);
    assert_int_equal(rc_read_args_head_parse(good, 7, &h), RC_E_INTERNAL);
    /* more rows than the caller made room for */
    assert_int_equal(rc_read_args_rows_parse(good, 10, &h, rows, 0, &n), RC_E_INTERNAL);
}

static void build_with_places_adds_the_tie_unit(void **state)
{
    (void)state;
    struct rc_read_args a;
    struct rc_read_req q = {.kind = RC_READ_RANGE, .first = 0, .count = 3, .places = 1, .tie_unit = 134217728};
    assert_int_equal(rc_read_args_build("demo", "", RC_ORDER_DESC, &q, &a), 0);
    assert_int_equal(a.nargv, 6);
    assert_string_equal(a.argv[5], "134217728");
    struct rc_read_req r = {.kind = RC_READ_AROUND, .member = "al", .radius = 2, .places = 1, .tie_unit = 0};
    assert_int_equal(rc_read_args_build("demo", "", RC_ORDER_ASC, &r, &a), 0);
    assert_int_equal(a.nargv, 6);
    assert_string_equal(a.argv[5], "0");
    struct rc_read_req bad = {.kind = RC_READ_RANGE, .count = 3, .places = 1, .tie_unit = -1};
    assert_int_equal(rc_read_args_build("demo", "", RC_ORDER_ASC, &bad, &a), RC_E_BAD_REQUEST);
}

static void parse_places_head(void **state)
{
    (void)state;
    struct rc_reply_item r[] = {I(7), I(42), I(3), S("e1"), F0, I(1), I(1), S("alice"), S("1500"), S("bob"), S("1500")};
    struct rc_read_head h;
    struct rc_read_places pl;
    struct rc_read_row rows[4];
    size_t n;
    assert_int_equal(rc_read_args_rows_parse_places(r, 14, &h, &pl, rows, 4, &n), 0);
    assert_int_equal(pl.above, 1);
    assert_int_equal(pl.next_tied, 1);
    assert_int_equal(n, 2);
    assert_string_equal(rows[1].member, "bob");
    /* above must be fewer than the first row's rank; next_tied 0 or 1 */
    struct rc_reply_item over[] = {I(7), I(42), I(3), S("e1"), F0, I(3), I(0), S("alice"), S("1500")};
    assert_int_equal(rc_read_args_rows_parse_places(over, 12, &h, &pl, rows, 4, &n), RC_E_INTERNAL);
    struct rc_reply_item two[] = {I(7), I(42), I(3), S("e1"), F0, I(0), I(2), S("alice"), S("1500")};
    assert_int_equal(rc_read_args_rows_parse_places(two, 12, &h, &pl, rows, 4, &n), RC_E_INTERNAL);
    struct rc_reply_item none[] = {I(7), I(42), I(3), S("e1"), F0, S("alice"), S("1500")};
    assert_int_equal(rc_read_args_rows_parse_places(none, 10, &h, &pl, rows, 4, &n), RC_E_INTERNAL);
}

static void build_counts_pairs_each_bound_with_its_flag(void **state)
{
    (void)state;
    struct rc_read_args a;
    const double bounds[] = {1500, 9007199254740992.0, NAN};
    const int incl[] = {1, 0, 1};
    struct rc_read_req q = {.kind = RC_READ_COUNTS, .bounds = bounds, .inclusives = incl, .nbounds = 3};
    assert_int_equal(rc_read_args_build("g#3", "", RC_ORDER_ASC, &q, &a), 0);
    assert_string_equal(a.keys[0], "rc:{g#3|}:z");
    assert_int_equal(a.nargv, 9);
    assert_string_equal(a.argv[0], "counts");
    assert_string_equal(a.argv[1], "asc");
    assert_string_equal(a.argv[3], "1500");
    assert_string_equal(a.argv[4], "1");
    assert_string_equal(a.argv[5], "9007199254740992"); /* exact, not 9.007e+15 */
    assert_string_equal(a.argv[6], "0");
    assert_string_equal(a.argv[7], ""); /* NaN: counts 0 */
    /* no flags: all strict */
    q.inclusives = NULL;
    assert_int_equal(rc_read_args_build("g#3", "", RC_ORDER_ASC, &q, &a), 0);
    assert_string_equal(a.argv[4], "0");
}

static void build_counts_without_pairs_reads_the_head(void **state)
{
    (void)state;
    struct rc_read_args a;
    struct rc_read_req q = {.kind = RC_READ_COUNTS};
    assert_int_equal(rc_read_args_build("g#0", "", RC_ORDER_DESC, &q, &a), 0);
    assert_int_equal(a.nargv, 3);
    assert_string_equal(a.argv[0], "counts");
}

static void build_counts_refuses_too_many_pairs_and_infinite_bounds(void **state)
{
    (void)state;
    struct rc_read_args a;
    double many[RC_READ_COUNTS_MAX + 1] = {0};
    struct rc_read_req q = {.kind = RC_READ_COUNTS, .bounds = many, .nbounds = RC_READ_COUNTS_MAX};
    assert_int_equal(rc_read_args_build("g", "", RC_ORDER_DESC, &q, &a), 0);
    assert_int_equal(a.nargv, RC_READ_ARGV_MAX);
    q.nbounds++;
    assert_int_equal(rc_read_args_build("g", "", RC_ORDER_DESC, &q, &a), RC_E_BAD_REQUEST);
    q = (struct rc_read_req){.kind = RC_READ_COUNTS, .bounds = NULL, .nbounds = 1};
    assert_int_equal(rc_read_args_build("g", "", RC_ORDER_DESC, &q, &a), RC_E_BAD_REQUEST);
    const double inf[] = {INFINITY};
    q = (struct rc_read_req){.kind = RC_READ_COUNTS, .bounds = inf, .nbounds = 1};
    assert_int_equal(rc_read_args_build("g", "", RC_ORDER_DESC, &q, &a), RC_E_BAD_REQUEST);
}

static void build_near_passes_bound_flag_and_radius(void **state)
{
    (void)state;
    struct rc_read_args a;
    struct rc_read_req q = {.kind = RC_READ_NEAR, .bound = 268435456001.0, .inclusive = 1, .radius = 5};
    assert_int_equal(rc_read_args_build("g#1", "", RC_ORDER_DESC, &q, &a), 0);
    assert_int_equal(a.nargv, 6);
    assert_string_equal(a.argv[0], "near");
    assert_string_equal(a.argv[3], "268435456001");
    assert_string_equal(a.argv[4], "1");
    assert_string_equal(a.argv[5], "5");
    q.inclusive = 0;
    q.radius = 0;
    assert_int_equal(rc_read_args_build("g#1", "", RC_ORDER_DESC, &q, &a), 0);
    assert_string_equal(a.argv[4], "0");
    assert_string_equal(a.argv[5], "0");
    struct rc_read_req bad[] = {
        {.kind = RC_READ_NEAR, .bound = 1, .radius = -1},
        {.kind = RC_READ_NEAR, .bound = NAN, .radius = 1},
        {.kind = RC_READ_NEAR, .bound = -INFINITY, .radius = 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(rc_read_args_build("g", "", RC_ORDER_DESC, &bad[i], &a), RC_E_BAD_REQUEST);
}

static void parse_counts_one_integer_per_pair(void **state)
{
    (void)state;
    struct rc_reply_item r[] = {I(7), I(42), I(0), S("e1"), F0, I(3), I(0), I(42)};
    struct rc_read_head h;
    int64_t counts[3];
    assert_int_equal(rc_read_args_counts_parse(r, 11, 3, &h, counts), 0);
    assert_int_equal(h.total, 42);
    assert_int_equal(counts[0], 3);
    assert_int_equal(counts[1], 0);
    assert_int_equal(counts[2], 42);
    assert_int_equal(rc_read_args_counts_parse(r, 8, 0, &h, counts), 0); /* just the head */
    /* a count short or extra, past the total, negative, a string, a rank */
    assert_int_equal(rc_read_args_counts_parse(r, 10, 3, &h, counts), RC_E_INTERNAL);
    assert_int_equal(rc_read_args_counts_parse(r, 11, 2, &h, counts), RC_E_INTERNAL);
    struct rc_reply_item bad[][9] = {
        {I(7), I(42), I(0), S("e1"), F0, I(43)},
        {I(7), I(42), I(0), S("e1"), F0, I(-1)},
        {I(7), I(42), I(0), S("e1"), F0, S("3")},
        {I(7), I(42), I(2), S("e1"), F0, I(3)},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(rc_read_args_counts_parse(bad[i], 9, 1, &h, counts), RC_E_INTERNAL);
}

static void parse_near_splits_rows_ahead_and_behind(void **state)
{
    (void)state;
    struct rc_reply_item r[] = {I(7), I(42), I(0), S("e1"), F0, I(5), I(2),
                                S("c"), S("20"), S("b"), S("20"), S("a"), S("10")};
    struct rc_read_head h;
    struct rc_read_near nr;
    struct rc_read_row rows[3];
    size_t n = 99;
    assert_int_equal(rc_read_args_rows_max(16), 4);
    assert_int_equal(rc_read_args_near_parse(r, 16, &h, &nr, rows, 4, &n), 0);
    assert_int_equal(nr.ahead, 5);
    assert_int_equal(nr.na, 2);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].member, "c");
    assert_string_equal(rows[2].member, "a");
    assert_true(rows[2].c == 10.0);
    /* nothing near: just ahead and na 0 */
    struct rc_reply_item empty[] = {I(0), I(0), I(0), S(""), F0, I(0), I(0)};
    assert_int_equal(rc_read_args_near_parse(empty, 10, &h, &nr, rows, 0, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(nr.na, 0);
}

static void parse_near_refuses_counts_that_do_not_add_up(void **state)
{
    (void)state;
    struct rc_read_head h;
    struct rc_read_near nr;
    struct rc_read_row rows[4];
    size_t n;
    struct rc_reply_item bad[][14] = {
        {I(7), I(42), I(0), S("e1"), F0, I(1), I(2), S("c"), S("20"), S("b"), S("20")},  /* na > ahead */
        {I(7), I(42), I(0), S("e1"), F0, I(9), I(3), S("c"), S("20"), S("b"), S("20")},  /* na > rows */
        {I(7), I(42), I(0), S("e1"), F0, I(43), I(0), S("c"), S("20"), S("b"), S("20")}, /* ahead > total */
        {I(7), I(42), I(1), S("e1"), F0, I(5), I(0), S("c"), S("20"), S("b"), S("20")},  /* a rank */
        {I(7), I(42), I(0), S("e1"), F0, I(5), S("0"), S("c"), S("20"), S("b"), S("20")}, /* na a string */
        {I(7), I(42), I(0), S("e1"), F0, I(5), I(0), S("c"), S("x"), S("b"), S("20")},   /* a bad composite */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(rc_read_args_near_parse(bad[i], 14, &h, &nr, rows, 4, &n), RC_E_INTERNAL);
    /* odd tail, no ahead/na */
    assert_int_equal(rc_read_args_near_parse(bad[0], 13, &h, &nr, rows, 4, &n), RC_E_INTERNAL);
    assert_int_equal(rc_read_args_near_parse(bad[0], 8, &h, &nr, rows, 4, &n), RC_E_INTERNAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(build_range),
        cmocka_unit_test(build_range_whole_board),
        cmocka_unit_test(build_around_rank_log),
        cmocka_unit_test(build_refuses),
        cmocka_unit_test(parse_rows),
        cmocka_unit_test(parse_absent_member),
        cmocka_unit_test(parse_log_head),
        cmocka_unit_test(parse_frozen_head),
        cmocka_unit_test(parse_refuses_every_bad_shape),
        cmocka_unit_test(build_with_places_adds_the_tie_unit),
        cmocka_unit_test(parse_places_head),
        cmocka_unit_test(build_counts_pairs_each_bound_with_its_flag),
        cmocka_unit_test(build_counts_without_pairs_reads_the_head),
        cmocka_unit_test(build_counts_refuses_too_many_pairs_and_infinite_bounds),
        cmocka_unit_test(build_near_passes_bound_flag_and_radius),
        cmocka_unit_test(parse_counts_one_integer_per_pair),
        cmocka_unit_test(parse_near_splits_rows_ahead_and_behind),
        cmocka_unit_test(parse_near_refuses_counts_that_do_not_add_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
