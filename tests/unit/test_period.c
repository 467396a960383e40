/* test_period.c - period ids and boundaries (core/rc_period.c).
 *
 * Expected instants are built with rc_period_days_from_civil, which is itself checked
 * first against hard-coded epoch values and an independent day-by-day walk of
 * the calendar. The property test draws ~100,000 random instants; its seed is
 * printed and can be replaced with RC_TEST_SEED=<n> to reproduce a failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rc_err.h"
#include "rc_period.h"

#define HOUR_MS INT64_C(3600000)
#define DAY_MS INT64_C(86400000)
#define OFF_PLUS_0800 (8 * 3600)
#define OFF_MINUS_0500 (-5 * 3600)
#define OFF_PLUS_0530 (5 * 3600 + 30 * 60)
#define OFF_MAX (14 * 3600)

/* cmocka prints int64 mismatches as unsigned; this shows them signed. */
#define assert_i64(a, b)                                                                     \
    do {                                                                                     \
        int64_t got_ = (a), want_ = (b);                                                     \
        if (got_ != want_)                                                                   \
            fail_msg("%s is %lld, expected %lld", #a, (long long)got_, (long long)want_);   \
    } while (0)

#define assert_period(p, want_id, want_start, want_end)                                      \
    do {                                                                                     \
        assert_string_equal((p).id, (want_id));                                              \
        assert_i64((p).start_ms, (want_start));                                              \
        assert_i64((p).end_ms, (want_end));                                                  \
    } while (0)

/* rc_period_at(spec, t) must succeed with exactly this period. */
#define assert_at(spec, t, want_id, want_start, want_end)                                    \
    do {                                                                                     \
        struct rc_period at_;                                                                \
        assert_int_equal(rc_period_at(&(spec), (t), &at_), 0);                               \
        assert_period(at_, want_id, want_start, want_end);                                   \
    } while (0)

#define assert_at_id(spec, t, want_id)                                                       \
    do {                                                                                     \
        struct rc_period at_;                                                                \
        assert_int_equal(rc_period_at(&(spec), (t), &at_), 0);                               \
        assert_string_equal(at_.id, (want_id));                                              \
    } while (0)

#define assert_at_fails(spec, t, code)                                                       \
    do {                                                                                     \
        struct rc_period at_;                                                                \
        assert_int_equal(rc_period_at(&(spec), (t), &at_), (code));                          \
    } while (0)

#define assert_parses(spec, id, want_start, want_end)                                        \
    do {                                                                                     \
        struct rc_period parsed_;                                                            \
        assert_int_equal(rc_period_parse(&(spec), (id), &parsed_), 0);                       \
        assert_period(parsed_, id, want_start, want_end);                                    \
    } while (0)

#define assert_parse_rejects(spec, id)                                                       \
    do {                                                                                     \
        struct rc_period parsed_;                                                            \
        if (rc_period_parse(&(spec), (id), &parsed_) != RC_E_BAD_REQUEST)                    \
            fail_msg("parse accepted \"%s\" for a %s board", (const char *)(id),            \
                     rc_period_kind_name((spec).kind));                                      \
    } while (0)

/* next(parse(from)) is to_id, and the two periods touch. */
#define assert_next_id(spec, from_id, to_id)                                                 \
    do {                                                                                     \
        struct rc_period from_, to_;                                                         \
        assert_int_equal(rc_period_parse(&(spec), (from_id), &from_), 0);                    \
        assert_int_equal(rc_period_next(&(spec), &from_, &to_), 0);                          \
        assert_string_equal(to_.id, (to_id));                                                \
        assert_i64(to_.start_ms, from_.end_ms);                                              \
    } while (0)

#define assert_prev_id(spec, from_id, to_id)                                                 \
    do {                                                                                     \
        struct rc_period from_, to_;                                                         \
        assert_int_equal(rc_period_parse(&(spec), (from_id), &from_), 0);                    \
        assert_int_equal(rc_period_prev(&(spec), &from_, &to_), 0);                          \
        assert_string_equal(to_.id, (to_id));                                                \
        assert_i64(to_.end_ms, from_.start_ms);                                              \
    } while (0)

/* UTC instant of a civil date and time. */
static int64_t utc(int64_t y, unsigned mo, unsigned d, int64_t h, int64_t mi, int64_t s)
{
    return rc_period_days_from_civil(y, mo, d) * DAY_MS + h * HOUR_MS + mi * 60000 + s * 1000;
}

static struct rc_period_spec cal(enum rc_period_kind kind, int32_t offset_s)
{
    struct rc_period_spec s = {kind, offset_s, 0, 0};
    return s;
}

static struct rc_period_spec custom(int64_t base_ms, int64_t length_ms)
{
    struct rc_period_spec s = {RC_PERIOD_CUSTOM, 0, base_ms, length_ms};
    return s;
}

/* An independent Gregorian calendar for checking: no shared code. */
static int leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned month_days(int64_t y, unsigned m)
{
    static const unsigned len[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : len[m - 1];
}

static void next_day(int64_t *y, unsigned *m, unsigned *d)
{
    if (*d < month_days(*y, *m)) {
        (*d)++;
    } else if (*m < 12) {
        (*m)++;
        *d = 1;
    } else {
        (*y)++;
        *m = 1;
        *d = 1;
    }
}

static int64_t mod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

/* ISO weekday, Monday = 0; 1970-01-01 was a Thursday. */
static int64_t iso_weekday(int64_t z)
{
    return mod(z + 3, 7);
}

/* ---- civil-date helpers ------------------------------------------------ */

static void test_days_from_civil_matches_known_epoch_days(void **state)
{
    (void)state;
    assert_i64(rc_period_days_from_civil(1970, 1, 1), 0);
    assert_i64(rc_period_days_from_civil(1969, 12, 31), -1);
    assert_i64(rc_period_days_from_civil(1900, 1, 1), -25567);
    assert_i64(rc_period_days_from_civil(2000, 3, 1), 11017);
    assert_i64(rc_period_days_from_civil(2024, 2, 29), 1709164800000 / DAY_MS);
    assert_i64(rc_period_days_from_civil(2026, 11, 21), 1795219200000 / DAY_MS);
    assert_i64(rc_period_days_from_civil(1, 1, 1), -719162);
    assert_i64(rc_period_days_from_civil(0, 3, 1), -719468);
    assert_i64(rc_period_days_from_civil(9999, 12, 31), 2932896);
    assert_i64(utc(2026, 11, 21, 16, 0, 0), 1795276800000);
}

/* Walks every day from -2000-01-01 to 10000-01-01 with an independent
 * calendar and checks both directions on each one. */
static void test_civil_conversions_agree_with_a_day_by_day_walk(void **state)
{
    int64_t y = -2000, gy;
    unsigned m = 1, d = 1, gm, gd;
    int64_t z = rc_period_days_from_civil(y, m, d);
    int saw_epoch = 0;

    (void)state;
    for (; y < 10000; z++, next_day(&y, &m, &d)) {
        if (rc_period_days_from_civil(y, m, d) != z)
            fail_msg("days_from_civil(%lld-%u-%u) != %lld", (long long)y, m, d, (long long)z);
        rc_period_civil_from_days(z, &gy, &gm, &gd);
        if (gy != y || gm != m || gd != d)
            fail_msg("civil_from_days(%lld) gave %lld-%u-%u, expected %lld-%u-%u",
                     (long long)z, (long long)gy, gm, gd, (long long)y, m, d);
        if (y == 1970 && m == 1 && d == 1) {
            assert_i64(z, 0);
            saw_epoch = 1;
        }
    }
    assert_true(saw_epoch);
}

static void test_civil_from_days_is_exact_far_from_the_epoch(void **state)
{
    static const int64_t zs[] = {INT64_C(1000000000000), -INT64_C(1000000000000),
                                 INT64_C(1) << 40, -(INT64_C(1) << 40), -719469, -719468};
    (void)state;
    for (size_t i = 0; i < sizeof(zs) / sizeof(zs[0]); i++) {
        int64_t y;
        unsigned m, d;
        rc_period_civil_from_days(zs[i], &y, &m, &d);
        assert_i64(rc_period_days_from_civil(y, m, d), zs[i]);
    }
}

/* No overflow at the ends of int64 (run under -fsanitize=undefined), and
 * consecutive days stay consecutive there. */
static void test_civil_from_days_handles_int64_extremes(void **state)
{
    static const int64_t zs[] = {INT64_MIN, INT64_MAX - 1};
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        int64_t y1, y2;
        unsigned m1, d1, m2, d2;
        rc_period_civil_from_days(zs[i], &y1, &m1, &d1);
        rc_period_civil_from_days(zs[i] + 1, &y2, &m2, &d2);
        assert_true(m1 >= 1 && m1 <= 12 && d1 >= 1 && d1 <= month_days(y1, m1));
        next_day(&y1, &m1, &d1);
        assert_i64(y1, y2);
        assert_int_equal(m1, m2);
        assert_int_equal(d1, d2);
    }
}

/* ---- kinds ------------------------------------------------------------- */

static void test_kind_names_round_trip(void **state)
{
    static const char *names[] = {"none", "hour", "day", "week", "month", "year", "custom"};
    static const enum rc_period_kind kinds[] = {RC_PERIOD_NONE,  RC_PERIOD_HOUR,  RC_PERIOD_DAY,
                                                RC_PERIOD_WEEK,  RC_PERIOD_MONTH, RC_PERIOD_YEAR,
                                                RC_PERIOD_CUSTOM};
    (void)state;
    for (size_t i = 0; i < 7; i++) {
        enum rc_period_kind k = RC_PERIOD_NONE;
        assert_int_equal(rc_period_kind_parse(names[i], &k), 0);
        assert_int_equal(k, kinds[i]);
        assert_string_equal(rc_period_kind_name(kinds[i]), names[i]);
    }
}

static void test_kind_parse_rejects_unknown_names(void **state)
{
    static const char *bad[] = {"", "Day", "DAY", " day", "day ", "weekly", "daily", "hours", "nonee"};
    enum rc_period_kind k = RC_PERIOD_WEEK;
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(rc_period_kind_parse(bad[i], &k), RC_E_BAD_REQUEST);
    assert_int_equal(k, RC_PERIOD_WEEK);
    assert_int_equal(rc_period_kind_parse(NULL, &k), RC_E_BAD_REQUEST);
    assert_int_equal(rc_period_kind_parse("day", NULL), RC_E_BAD_REQUEST);
    assert_non_null(rc_period_kind_name((enum rc_period_kind)42));
}

static void test_max_length_is_the_longest_period_of_each_kind(void **state)
{
    struct rc_period_spec s;
    (void)state;
    s = cal(RC_PERIOD_NONE, 0);
    assert_i64(rc_period_max_length_ms(&s), 0);
    s = cal(RC_PERIOD_HOUR, OFF_PLUS_0530);
    assert_i64(rc_period_max_length_ms(&s), 3600000);
    s = cal(RC_PERIOD_DAY, 0);
    assert_i64(rc_period_max_length_ms(&s), 86400000);
    s = cal(RC_PERIOD_WEEK, 0);
    assert_i64(rc_period_max_length_ms(&s), 7 * DAY_MS);
    s = cal(RC_PERIOD_MONTH, 0);
    assert_i64(rc_period_max_length_ms(&s), 31 * DAY_MS);
    s = cal(RC_PERIOD_YEAR, 0);
    assert_i64(rc_period_max_length_ms(&s), 366 * DAY_MS);
    s = custom(12345, 90 * 60000);
    assert_i64(rc_period_max_length_ms(&s), 90 * 60000);
}

/* ---- day --------------------------------------------------------------- */

static void test_day_utc_id_and_bounds(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_DAY, 0);
    (void)state;
    assert_at(s, utc(2026, 11, 21, 13, 45, 12) + 7, "2026-11-21", 1795219200000,
              1795219200000 + DAY_MS);
    assert_at(s, utc(2026, 11, 21, 0, 0, 0), "2026-11-21", utc(2026, 11, 21, 0, 0, 0),
              utc(2026, 11, 22, 0, 0, 0));
    assert_at(s, utc(2026, 11, 22, 0, 0, 0) - 1, "2026-11-21", utc(2026, 11, 21, 0, 0, 0),
              utc(2026, 11, 22, 0, 0, 0));
}

static void test_day_rolls_over_at_local_midnight_plus_0800(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_DAY, OFF_PLUS_0800);
    int64_t boundary = utc(2026, 11, 21, 16, 0, 0); /* 2026-11-22T00:00+08:00 */
    (void)state;
    assert_at(s, boundary - 1, "2026-11-21", boundary - DAY_MS, boundary);
    assert_at(s, boundary, "2026-11-22", boundary, boundary + DAY_MS);
    assert_at(s, utc(2026, 11, 22, 15, 59, 59) + 999, "2026-11-22", boundary,
              boundary + DAY_MS);
    assert_at(s, utc(2026, 11, 22, 16, 0, 0), "2026-11-23", boundary + DAY_MS,
              boundary + 2 * DAY_MS);
}

static void test_day_rolls_over_at_local_midnight_minus_0500(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_DAY, OFF_MINUS_0500);
    int64_t boundary = utc(2026, 11, 22, 5, 0, 0); /* 2026-11-22T00:00-05:00 */
    (void)state;
    assert_at(s, boundary - 1, "2026-11-21", boundary - DAY_MS, boundary);
    assert_at(s, boundary, "2026-11-22", boundary, boundary + DAY_MS);
    /* Late evening local is already the next UTC day. */
    assert_at_id(s, utc(2026, 11, 22, 3, 0, 0), "2026-11-21");
}

static void test_day_before_1970_uses_floor_division(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_DAY, 0);
    (void)state;
    assert_at(s, -1, "1969-12-31", -DAY_MS, 0);
    assert_at(s, -DAY_MS, "1969-12-31", -DAY_MS, 0);
    assert_at(s, -DAY_MS - 1, "1969-12-30", -2 * DAY_MS, -DAY_MS);
    assert_at(s, 0, "1970-01-01", 0, DAY_MS);
    assert_at(s, utc(1900, 1, 1, 0, 0, 0), "1900-01-01", -2208988800000,
              -2208988800000 + DAY_MS);
}

static void test_day_before_1970_with_negative_offset(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_DAY, OFF_MINUS_0500);
    (void)state;
    /* 1970-01-01T04:59:59.999Z is still 1969-12-31 at -05:00. */
    assert_at(s, 5 * HOUR_MS - 1, "1969-12-31", 5 * HOUR_MS - DAY_MS, 5 * HOUR_MS);
    assert_at(s, -1, "1969-12-31", 5 * HOUR_MS - DAY_MS, 5 * HOUR_MS);
    assert_at(s, 5 * HOUR_MS - DAY_MS - 1, "1969-12-30", 5 * HOUR_MS - 2 * DAY_MS,
              5 * HOUR_MS - DAY_MS);
}

static void test_day_next_crosses_month_ends(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_DAY, OFF_PLUS_0800);
    (void)state;
    assert_next_id(s, "2026-01-31", "2026-02-01");
    assert_next_id(s, "2026-02-28", "2026-03-01");
    assert_next_id(s, "2023-02-28", "2023-03-01");
    assert_next_id(s, "2024-02-28", "2024-02-29");
    assert_next_id(s, "2024-02-29", "2024-03-01");
    assert_next_id(s, "2100-02-28", "2100-03-01");
    assert_next_id(s, "2000-02-28", "2000-02-29");
    assert_next_id(s, "2026-04-30", "2026-05-01");
    assert_next_id(s, "2026-12-31", "2027-01-01");
}

static void test_day_prev_crosses_month_and_year_ends(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_DAY, OFF_MINUS_0500);
    (void)state;
    assert_prev_id(s, "2026-02-01", "2026-01-31");
    assert_prev_id(s, "2024-03-01", "2024-02-29");
    assert_prev_id(s, "2023-03-01", "2023-02-28");
    assert_prev_id(s, "2027-01-01", "2026-12-31");
    assert_prev_id(s, "1970-01-01", "1969-12-31");
}

static void test_leap_day_2024_02_29_is_a_whole_day(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_DAY, 0);
    (void)state;
    assert_at(s, utc(2024, 2, 29, 12, 0, 0), "2024-02-29", 1709164800000,
              1709164800000 + DAY_MS);
    assert_parses(s, "2024-02-29", 1709164800000, 1709164800000 + DAY_MS);
    assert_next_id(s, "2024-02-29", "2024-03-01");
}

/* ---- hour -------------------------------------------------------------- */

static void test_hour_id_and_bounds_utc(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_HOUR, 0);
    (void)state;
    assert_at(s, utc(2026, 11, 21, 13, 59, 59) + 999, "2026-11-21T13", utc(2026, 11, 21, 13, 0, 0),
              utc(2026, 11, 21, 14, 0, 0));
    assert_at(s, utc(2026, 11, 21, 14, 0, 0), "2026-11-21T14", utc(2026, 11, 21, 14, 0, 0),
              utc(2026, 11, 21, 15, 0, 0));
    assert_at(s, -1, "1969-12-31T23", -HOUR_MS, 0);
    assert_at(s, 0, "1970-01-01T00", 0, HOUR_MS);
}

static void test_hour_plus_0530_boundaries_fall_on_half_hours(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_HOUR, OFF_PLUS_0530);
    int64_t boundary = utc(2026, 11, 21, 7, 30, 0); /* 13:00+05:30 */
    (void)state;
    assert_at(s, boundary - 1, "2026-11-21T12", boundary - HOUR_MS, boundary);
    assert_at(s, boundary, "2026-11-21T13", boundary, boundary + HOUR_MS);
    /* Local midnight is 18:30Z the day before. */
    assert_at(s, utc(2026, 11, 20, 18, 30, 0), "2026-11-21T00", utc(2026, 11, 20, 18, 30, 0),
              utc(2026, 11, 20, 19, 30, 0));
    assert_at_id(s, utc(2026, 11, 20, 18, 30, 0) - 1, "2026-11-20T23");
    assert_parses(s, "2026-11-21T13", boundary, boundary + HOUR_MS);
}

static void test_hour_next_crosses_day_month_and_year_ends(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_HOUR, OFF_MINUS_0500);
    (void)state;
    assert_next_id(s, "2026-11-21T23", "2026-11-22T00");
    assert_next_id(s, "2024-02-28T23", "2024-02-29T00");
    assert_next_id(s, "2024-02-29T23", "2024-03-01T00");
    assert_next_id(s, "2026-12-31T23", "2027-01-01T00");
    assert_prev_id(s, "2027-01-01T00", "2026-12-31T23");
    assert_parses(s, "2027-01-01T00", utc(2027, 1, 1, 5, 0, 0), utc(2027, 1, 1, 6, 0, 0));
}

/* ---- week -------------------------------------------------------------- */

static void test_week_2020_12_31_is_2020_W53(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_WEEK, 0);
    (void)state;
    assert_at(s, utc(2020, 12, 31, 12, 0, 0), "2020-W53", 1609113600000,
              1609113600000 + 7 * DAY_MS);
}

static void test_week_2021_01_03_is_2020_W53(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_WEEK, 0);
    (void)state;
    assert_at(s, utc(2021, 1, 3, 23, 59, 59) + 999, "2020-W53", utc(2020, 12, 28, 0, 0, 0),
              utc(2021, 1, 4, 0, 0, 0));
}

static void test_week_2021_01_04_is_2021_W01(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_WEEK, 0);
    (void)state;
    assert_at(s, utc(2021, 1, 4, 0, 0, 0), "2021-W01", utc(2021, 1, 4, 0, 0, 0),
              utc(2021, 1, 11, 0, 0, 0));
}

static void test_week_2024_12_30_is_2025_W01(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_WEEK, 0);
    (void)state;
    assert_at(s, utc(2024, 12, 30, 8, 0, 0), "2025-W01", utc(2024, 12, 30, 0, 0, 0),
              utc(2025, 1, 6, 0, 0, 0));
    assert_at_id(s, utc(2024, 12, 29, 23, 59, 59), "2024-W52");
}

static void test_week_sunday_2026_11_22_is_W47_and_monday_is_W48(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_WEEK, 0);
    (void)state;
    assert_at(s, utc(2026, 11, 22, 23, 59, 59) + 999, "2026-W47", utc(2026, 11, 16, 0, 0, 0),
              utc(2026, 11, 23, 0, 0, 0));
    assert_at(s, utc(2026, 11, 23, 0, 0, 0), "2026-W48", utc(2026, 11, 23, 0, 0, 0),
              utc(2026, 11, 30, 0, 0, 0));
}

static void test_week_starts_at_local_monday_midnight_plus_0800(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_WEEK, OFF_PLUS_0800);
    int64_t boundary = utc(2026, 11, 22, 16, 0, 0); /* Mon 2026-11-23T00:00+08:00 */
    (void)state;
    assert_at(s, boundary - 1, "2026-W47", boundary - 7 * DAY_MS, boundary);
    assert_at(s, boundary, "2026-W48", boundary, boundary + 7 * DAY_MS);
}

static void test_week_starts_at_local_monday_midnight_minus_0500(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_WEEK, OFF_MINUS_0500);
    int64_t boundary = utc(2021, 1, 4, 5, 0, 0); /* Mon 2021-01-04T00:00-05:00 */
    (void)state;
    assert_at(s, boundary - 1, "2020-W53", boundary - 7 * DAY_MS, boundary);
    assert_at(s, boundary, "2021-W01", boundary, boundary + 7 * DAY_MS);
}

static void test_week_next_and_prev_cross_week_year_ends(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_WEEK, OFF_PLUS_0800);
    (void)state;
    assert_next_id(s, "2020-W52", "2020-W53");
    assert_next_id(s, "2020-W53", "2021-W01");
    assert_next_id(s, "2021-W52", "2022-W01");
    assert_next_id(s, "2024-W52", "2025-W01");
    assert_prev_id(s, "2021-W01", "2020-W53");
    assert_prev_id(s, "2025-W01", "2024-W52");
    assert_next_id(s, "2026-W47", "2026-W48");
}

static void test_week_parse_accepts_2020_W53_and_rejects_2021_W53(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_WEEK, 0);
    (void)state;
    assert_parses(s, "2020-W53", utc(2020, 12, 28, 0, 0, 0), utc(2021, 1, 4, 0, 0, 0));
    assert_parse_rejects(s, "2021-W53");
    assert_parses(s, "2026-W53", utc(2026, 12, 28, 0, 0, 0), utc(2027, 1, 4, 0, 0, 0));
    assert_parse_rejects(s, "2025-W53");
    assert_parse_rejects(s, "2026-W54");
    assert_parse_rejects(s, "2026-W00");
}

static void test_week_parse_starts_monday_midnight_local(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_WEEK, OFF_PLUS_0800);
    (void)state;
    assert_parses(s, "2026-W47", utc(2026, 11, 15, 16, 0, 0), utc(2026, 11, 22, 16, 0, 0));
    assert_parses(s, "2025-W01", utc(2024, 12, 29, 16, 0, 0), utc(2025, 1, 5, 16, 0, 0));
    s.utc_offset_s = OFF_MINUS_0500;
    assert_parses(s, "2021-W01", utc(2021, 1, 4, 5, 0, 0), utc(2021, 1, 11, 5, 0, 0));
}

/* Checks the ISO rules themselves on every day of 1900..2200: a new week on
 * each Monday and only then, numbers that go up by one or restart at 1 in the
 * next week-year, Jan 4 always in week 1, Dec 28 always in the last week, and
 * 53-week years exactly when Jan 1 is a Thursday (or a Wednesday in a leap
 * year). */
static void test_week_ids_follow_iso_rules_every_day_1900_to_2200(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_WEEK, 0);
    int64_t y = 1900;
    unsigned m = 1, d = 1;
    int64_t z = rc_period_days_from_civil(1900, 1, 1);
    int prev_wy = 0, prev_w = 0;

    (void)state;
    for (; y <= 2200; z++, next_day(&y, &m, &d)) {
        struct rc_period p;
        int wy, w;
        int64_t wd = iso_weekday(z);

        assert_int_equal(rc_period_at(&s, z * DAY_MS + 12 * HOUR_MS, &p), 0);
        assert_int_equal(strlen(p.id), 8);
        assert_int_equal(sscanf(p.id, "%4d-W%2d", &wy, &w), 2);
        assert_i64(p.start_ms, (z - wd) * DAY_MS);
        assert_i64(p.end_ms, (z - wd + 7) * DAY_MS);
        if (prev_w != 0) {
            if (wd != 0) {
                assert_int_equal(wy, prev_wy);
                assert_int_equal(w, prev_w);
            } else if (w == prev_w + 1) {
                assert_int_equal(wy, prev_wy);
            } else {
                assert_int_equal(w, 1);
                assert_int_equal(wy, prev_wy + 1);
                assert_true(prev_w == 52 || prev_w == 53);
            }
        }
        if (m == 1 && d == 4) {
            assert_int_equal(wy, y);
            assert_int_equal(w, 1);
        }
        if (m == 12 && d == 28) {
            int64_t jan1 = iso_weekday(rc_period_days_from_civil(y, 1, 1));
            int long_year = jan1 == 3 || (leap(y) && jan1 == 2);
            assert_int_equal(wy, y);
            assert_int_equal(w, long_year ? 53 : 52);
        }
        prev_wy = wy;
        prev_w = w;
    }
}

/* ---- month and year ---------------------------------------------------- */

static void test_month_lengths_are_28_29_30_and_31_days(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_MONTH, 0);
    (void)state;
    assert_parses(s, "2023-02", utc(2023, 2, 1, 0, 0, 0), utc(2023, 2, 1, 0, 0, 0) + 28 * DAY_MS);
    assert_parses(s, "2024-02", utc(2024, 2, 1, 0, 0, 0), utc(2024, 2, 1, 0, 0, 0) + 29 * DAY_MS);
    assert_parses(s, "2026-11", utc(2026, 11, 1, 0, 0, 0), utc(2026, 12, 1, 0, 0, 0));
    assert_parses(s, "2026-12", utc(2026, 12, 1, 0, 0, 0), utc(2027, 1, 1, 0, 0, 0));
    assert_i64(utc(2026, 12, 1, 0, 0, 0) - utc(2026, 11, 1, 0, 0, 0), 30 * DAY_MS);
    assert_i64(utc(2027, 1, 1, 0, 0, 0) - utc(2026, 12, 1, 0, 0, 0), 31 * DAY_MS);
}

static void test_month_rolls_over_at_local_midnight_minus_0500(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_MONTH, OFF_MINUS_0500);
    int64_t boundary = utc(2026, 2, 1, 5, 0, 0);
    (void)state;
    assert_at(s, boundary - 1, "2026-01", utc(2026, 1, 1, 5, 0, 0), boundary);
    assert_at(s, boundary, "2026-02", boundary, utc(2026, 3, 1, 5, 0, 0));
}

static void test_month_rolls_over_at_local_midnight_plus_0800(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_MONTH, OFF_PLUS_0800);
    int64_t boundary = utc(2024, 2, 29, 16, 0, 0); /* 2024-03-01T00:00+08:00 */
    (void)state;
    assert_at(s, boundary - 1, "2024-02", utc(2024, 1, 31, 16, 0, 0), boundary);
    assert_at(s, boundary, "2024-03", boundary, utc(2024, 3, 31, 16, 0, 0));
}

static void test_month_next_and_prev_cross_year_ends(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_MONTH, 0);
    (void)state;
    assert_next_id(s, "2026-12", "2027-01");
    assert_next_id(s, "2024-01", "2024-02");
    assert_next_id(s, "2024-02", "2024-03");
    assert_prev_id(s, "2027-01", "2026-12");
    assert_prev_id(s, "2024-03", "2024-02");
}

static void test_year_lengths_follow_leap_rules(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_YEAR, 0);
    (void)state;
    assert_parses(s, "2024", utc(2024, 1, 1, 0, 0, 0), utc(2024, 1, 1, 0, 0, 0) + 366 * DAY_MS);
    assert_parses(s, "2026", utc(2026, 1, 1, 0, 0, 0), utc(2026, 1, 1, 0, 0, 0) + 365 * DAY_MS);
    assert_parses(s, "2000", utc(2000, 1, 1, 0, 0, 0), utc(2000, 1, 1, 0, 0, 0) + 366 * DAY_MS);
    assert_parses(s, "1900", utc(1900, 1, 1, 0, 0, 0), utc(1900, 1, 1, 0, 0, 0) + 365 * DAY_MS);
    assert_next_id(s, "2026", "2027");
    assert_prev_id(s, "2026", "2025");
}

static void test_year_rolls_over_at_local_midnight_plus_0800(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_YEAR, OFF_PLUS_0800);
    int64_t boundary = utc(2026, 12, 31, 16, 0, 0);
    (void)state;
    assert_at(s, boundary - 1, "2026", utc(2025, 12, 31, 16, 0, 0), boundary);
    assert_at(s, boundary, "2027", boundary, utc(2027, 12, 31, 16, 0, 0));
}

static void test_year_rolls_over_at_local_midnight_minus_0500(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_YEAR, OFF_MINUS_0500);
    int64_t boundary = utc(2027, 1, 1, 5, 0, 0);
    (void)state;
    assert_at(s, boundary - 1, "2026", utc(2026, 1, 1, 5, 0, 0), boundary);
    assert_at(s, boundary, "2027", boundary, utc(2028, 1, 1, 5, 0, 0));
}

/* ---- custom ------------------------------------------------------------ */

static void test_custom_index_is_floor_of_elapsed_over_length(void **state)
{
    int64_t base = utc(2026, 1, 1, 0, 0, 0), len = 90 * 60000;
    struct rc_period_spec s = custom(base, len);
    (void)state;
    assert_at(s, base, "0", base, base + len);
    assert_at(s, base + len - 1, "0", base, base + len);
    assert_at(s, base + len, "1", base + len, base + 2 * len);
    assert_at(s, base + 42 * len + 17, "42", base + 42 * len, base + 43 * len);
}

static void test_custom_instants_before_base_get_negative_indexes(void **state)
{
    int64_t base = 1000, len = 300;
    struct rc_period_spec s = custom(base, len);
    (void)state;
    assert_at(s, base - 1, "-1", base - len, base);
    assert_at(s, base - len, "-1", base - len, base);
    assert_at(s, base - len - 1, "-2", base - 2 * len, base - len);
    assert_at(s, 0, "-4", -200, 100);
    assert_at(s, -1, "-4", -200, 100);
    assert_at(s, -201, "-5", -500, -200);
}

static void test_custom_ignores_utc_offset(void **state)
{
    struct rc_period_spec s = custom(0, DAY_MS);
    (void)state;
    s.utc_offset_s = OFF_PLUS_0800;
    assert_at(s, DAY_MS - 1, "0", 0, DAY_MS);
    s.utc_offset_s = 99 * 3600; /* out of range, but custom ignores it */
    assert_at(s, DAY_MS, "1", DAY_MS, 2 * DAY_MS);
}

static void test_custom_parse_prev_and_next(void **state)
{
    struct rc_period_spec s = custom(-5000, 1000);
    (void)state;
    assert_parses(s, "0", -5000, -4000);
    assert_parses(s, "42", 37000, 38000);
    assert_parses(s, "-1", -6000, -5000);
    assert_next_id(s, "-1", "0");
    assert_prev_id(s, "0", "-1");
    assert_next_id(s, "41", "42");
    assert_prev_id(s, "-9", "-10");
}

static void test_custom_parse_rejects_non_canonical_indexes(void **state)
{
    static const char *bad[] = {"",   "-",    "+1",  "01",  "-01", "-0", "00",  " 1",  "1 ",
                                "1x", "1.0",  "1e3", "0x10", "--1", "1-", "abc", "9223372036854775808",
                                "-9223372036854775809", "99999999999999999999"};
    struct rc_period_spec s = custom(0, 1);
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_parse_rejects(s, bad[i]);
    assert_parses(s, "9223372036854775806", INT64_MAX - 1, INT64_MAX);
    assert_parse_rejects(s, "9223372036854775807"); /* its end would overflow */
}

static void test_custom_extreme_indexes_that_fit_int64_are_exact(void **state)
{
    struct rc_period_spec s = custom(INT64_MAX, 1);
    (void)state;
    /* t - base = -2^63 does not fit any wider than int64 allows. */
    assert_at(s, -1, "-9223372036854775808", -1, 0);
    assert_parses(s, "-9223372036854775808", -1, 0);
    assert_at(s, INT64_MAX - 1, "-1", INT64_MAX - 1, INT64_MAX);

    s = custom(INT64_MIN, INT64_MAX);
    assert_at(s, INT64_MIN, "0", INT64_MIN, -1);
    assert_at(s, -2, "0", INT64_MIN, -1);
    assert_at(s, -1, "1", -1, INT64_MAX - 1);
    assert_at(s, 0, "1", -1, INT64_MAX - 1);
    assert_at_fails(s, INT64_MAX - 1, RC_E_OUT_OF_RANGE);

    s = custom(0, 1000);
    assert_at(s, INT64_MIN + 808, "-9223372036854775", INT64_MIN + 808, INT64_MIN + 1808);
    assert_at_fails(s, INT64_MIN + 807, RC_E_OUT_OF_RANGE);
    assert_parses(s, "9223372036854774", INT64_C(9223372036854774000),
                  INT64_C(9223372036854775000));
    assert_parse_rejects(s, "9223372036854775");
}

static void test_custom_index_or_bounds_overflow_is_out_of_range(void **state)
{
    struct rc_period_spec s = custom(0, 1);
    struct rc_period p;
    (void)state;
    assert_at_fails(s, INT64_MAX, RC_E_OUT_OF_RANGE); /* end would be 2^63 */
    assert_int_equal(rc_period_at(&s, INT64_MAX - 1, &p), 0);
    assert_int_equal(rc_period_next(&s, &p, &p), RC_E_OUT_OF_RANGE);
    assert_int_equal(rc_period_at(&s, INT64_MIN, &p), 0);
    assert_string_equal(p.id, "-9223372036854775808");
    assert_int_equal(rc_period_prev(&s, &p, &p), RC_E_OUT_OF_RANGE);

    s = custom(INT64_MIN, 1); /* index of INT64_MAX would be 2^64 - 1 */
    assert_at_fails(s, INT64_MAX, RC_E_OUT_OF_RANGE);
    assert_at_fails(s, 0, RC_E_OUT_OF_RANGE);
    assert_at(s, -1, "9223372036854775807", -1, 0);
}

/* base + index * length must itself fit: a start that would wrap past either
 * end of int64 is no period at all. */
static void test_custom_start_outside_int64_is_rejected(void **state)
{
    struct rc_period_spec s = custom(INT64_MAX - 10, 100);
    (void)state;
    assert_at_fails(s, INT64_MAX - 10, RC_E_OUT_OF_RANGE); /* its end would overflow */
    assert_at(s, INT64_MAX - 11, "-1", INT64_MAX - 110, INT64_MAX - 10);
    assert_parse_rejects(s, "1");
    assert_parse_rejects(s, "2");

    s = custom(INT64_MIN + 10, 100);
    assert_at(s, INT64_MIN + 10, "0", INT64_MIN + 10, INT64_MIN + 110);
    assert_at_fails(s, INT64_MIN + 9, RC_E_OUT_OF_RANGE);
    assert_parse_rejects(s, "-1");
    assert_parse_rejects(s, "-2");
}

/* ---- none -------------------------------------------------------------- */

static void test_none_has_one_period_with_empty_id(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_NONE, 0);
    (void)state;
    assert_at(s, utc(2026, 11, 21, 0, 0, 0), "", 0, INT64_MAX);
    assert_at(s, INT64_MIN, "", 0, INT64_MAX);
    assert_at(s, INT64_MAX, "", 0, INT64_MAX);
    assert_parses(s, "", 0, INT64_MAX);
}

static void test_none_has_no_prev_or_next_and_parses_only_empty(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_NONE, 0);
    struct rc_period p, q;
    (void)state;
    assert_int_equal(rc_period_at(&s, 0, &p), 0);
    assert_int_equal(rc_period_prev(&s, &p, &q), RC_E_BAD_REQUEST);
    assert_int_equal(rc_period_next(&s, &p, &q), RC_E_BAD_REQUEST);
    assert_parse_rejects(s, "0");
    assert_parse_rejects(s, "2026");
    assert_parse_rejects(s, "current");
    assert_int_equal(rc_period_select(&s, "previous", 0, &q), RC_E_BAD_REQUEST);
    assert_int_equal(rc_period_select(&s, "current", 0, &q), 0);
    assert_string_equal(q.id, "");
}

/* ---- parse ------------------------------------------------------------- */

static void test_parse_round_trips_each_kind(void **state)
{
    struct rc_period_spec s;
    (void)state;
    s = cal(RC_PERIOD_HOUR, 0);
    assert_parses(s, "2026-11-21T13", utc(2026, 11, 21, 13, 0, 0), utc(2026, 11, 21, 14, 0, 0));
    s = cal(RC_PERIOD_DAY, 0);
    assert_parses(s, "2026-11-21", utc(2026, 11, 21, 0, 0, 0), utc(2026, 11, 22, 0, 0, 0));
    s = cal(RC_PERIOD_WEEK, 0);
    assert_parses(s, "2026-W47", utc(2026, 11, 16, 0, 0, 0), utc(2026, 11, 23, 0, 0, 0));
    s = cal(RC_PERIOD_MONTH, 0);
    assert_parses(s, "2026-11", utc(2026, 11, 1, 0, 0, 0), utc(2026, 12, 1, 0, 0, 0));
    s = cal(RC_PERIOD_YEAR, 0);
    assert_parses(s, "2026", utc(2026, 1, 1, 0, 0, 0), utc(2027, 1, 1, 0, 0, 0));
    s = custom(0, 1000);
    assert_parses(s, "42", 42000, 43000);
    assert_parses(s, "-1", -1000, 0);
}

static void test_parse_applies_the_offset(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_DAY, OFF_PLUS_0800);
    (void)state;
    assert_parses(s, "2026-11-22", utc(2026, 11, 21, 16, 0, 0), utc(2026, 11, 22, 16, 0, 0));
    s = cal(RC_PERIOD_MONTH, OFF_MINUS_0500);
    assert_parses(s, "2026-11", utc(2026, 11, 1, 5, 0, 0), utc(2026, 12, 1, 5, 0, 0));
}

static void test_parse_rejects_ids_of_another_kind(void **state)
{
    static const char *ids[] = {"2026-11-21T13", "2026-11-21", "2026-W47", "2026-11", "2026", "42"};
    static const enum rc_period_kind kinds[] = {RC_PERIOD_HOUR,  RC_PERIOD_DAY,  RC_PERIOD_WEEK,
                                                RC_PERIOD_MONTH, RC_PERIOD_YEAR, RC_PERIOD_CUSTOM};
    (void)state;
    for (size_t k = 0; k < 6; k++) {
        struct rc_period_spec s = kinds[k] == RC_PERIOD_CUSTOM ? custom(0, 1000) : cal(kinds[k], 0);
        for (size_t i = 0; i < 6; i++) {
            if (i == k || (kinds[k] == RC_PERIOD_CUSTOM && i == 4))
                continue; /* "2026" is also a valid custom index */
            assert_parse_rejects(s, ids[i]);
        }
    }
}

static void test_parse_rejects_non_canonical_forms(void **state)
{
    struct rc_period_spec day = cal(RC_PERIOD_DAY, 0), hour = cal(RC_PERIOD_HOUR, 0);
    struct rc_period_spec week = cal(RC_PERIOD_WEEK, 0), month = cal(RC_PERIOD_MONTH, 0);
    struct rc_period_spec year = cal(RC_PERIOD_YEAR, 0);
    (void)state;
    assert_parse_rejects(day, "2026-1-05");
    assert_parse_rejects(day, "2026-01-5");
    assert_parse_rejects(day, "26-01-05");
    assert_parse_rejects(day, "02026-01-05");
    assert_parse_rejects(day, " 2026-11-21");
    assert_parse_rejects(day, "2026-11-21 ");
    assert_parse_rejects(day, "2026-11-21x");
    assert_parse_rejects(day, "2026/11/21");
    assert_parse_rejects(day, "2026-11-2a");
    assert_parse_rejects(day, "+026-11-21");
    assert_parse_rejects(day, "-026-11-21");
    assert_parse_rejects(day, "2026-+1-21");
    assert_parse_rejects(day, "");
    assert_parse_rejects(day, "current");
    assert_parse_rejects(hour, "2026-11-21T1");
    assert_parse_rejects(hour, "2026-11-21t13");
    assert_parse_rejects(hour, "2026-11-21 13");
    assert_parse_rejects(hour, "2026-11-21T13:00");
    assert_parse_rejects(hour, "2026-11-21T13Z");
    assert_parse_rejects(week, "2026-W7");
    assert_parse_rejects(week, "2026-w47");
    assert_parse_rejects(week, "2026W47");
    assert_parse_rejects(week, "2026-W047");
    assert_parse_rejects(week, "2026-W47-1");
    assert_parse_rejects(month, "2026-1");
    assert_parse_rejects(month, "2026-011");
    assert_parse_rejects(year, "+2026");
    assert_parse_rejects(year, "-2026");
    assert_parse_rejects(year, "226");
    assert_parse_rejects(year, "02026");
    assert_parse_rejects(year, "2026 ");
    assert_parse_rejects(year, " 2026");
}

static void test_parse_rejects_impossible_dates_and_fields(void **state)
{
    struct rc_period_spec day = cal(RC_PERIOD_DAY, 0), hour = cal(RC_PERIOD_HOUR, 0);
    struct rc_period_spec month = cal(RC_PERIOD_MONTH, 0), year = cal(RC_PERIOD_YEAR, 0);
    struct rc_period_spec week = cal(RC_PERIOD_WEEK, 0);
    (void)state;
    assert_parse_rejects(day, "2026-02-30");
    assert_parse_rejects(day, "2023-02-29");
    assert_parse_rejects(day, "2100-02-29");
    assert_parse_rejects(day, "2026-04-31");
    assert_parse_rejects(day, "2026-11-31");
    assert_parse_rejects(day, "2026-11-00");
    assert_parse_rejects(day, "2026-11-32");
    assert_parse_rejects(day, "2026-00-10");
    assert_parse_rejects(day, "2026-13-01");
    assert_parse_rejects(day, "0000-01-01");
    assert_parse_rejects(hour, "2026-11-21T24");
    assert_parse_rejects(hour, "2026-11-21T99");
    assert_parse_rejects(hour, "2026-02-30T00");
    assert_parse_rejects(month, "2026-13");
    assert_parse_rejects(month, "2026-00");
    assert_parse_rejects(year, "0000");
    assert_parse_rejects(week, "0000-W01");
}

static void test_parse_accepts_real_leap_days_and_range_ends(void **state)
{
    struct rc_period_spec day = cal(RC_PERIOD_DAY, 0), hour = cal(RC_PERIOD_HOUR, 0);
    struct rc_period_spec week = cal(RC_PERIOD_WEEK, 0), year = cal(RC_PERIOD_YEAR, 0);
    (void)state;
    assert_parses(day, "2024-02-29", utc(2024, 2, 29, 0, 0, 0), utc(2024, 3, 1, 0, 0, 0));
    assert_parses(day, "2000-02-29", utc(2000, 2, 29, 0, 0, 0), utc(2000, 3, 1, 0, 0, 0));
    assert_parses(day, "0001-01-01", utc(1, 1, 1, 0, 0, 0), utc(1, 1, 2, 0, 0, 0));
    assert_parses(hour, "9999-12-31T23", utc(9999, 12, 31, 23, 0, 0), utc(10000, 1, 1, 0, 0, 0));
    assert_parses(week, "0001-W01", utc(1, 1, 1, 0, 0, 0), utc(1, 1, 8, 0, 0, 0));
    assert_parses(week, "9999-W52", utc(9999, 12, 27, 0, 0, 0), utc(10000, 1, 3, 0, 0, 0));
    assert_parses(year, "0001", utc(1, 1, 1, 0, 0, 0), utc(2, 1, 1, 0, 0, 0));
    assert_parses(year, "9999", utc(9999, 1, 1, 0, 0, 0), utc(10000, 1, 1, 0, 0, 0));
}

/* ---- range ------------------------------------------------------------- */

static void test_at_rejects_years_outside_1_to_9999(void **state)
{
    static const enum rc_period_kind kinds[] = {RC_PERIOD_HOUR, RC_PERIOD_DAY, RC_PERIOD_MONTH,
                                                RC_PERIOD_YEAR};
    (void)state;
    for (size_t i = 0; i < 4; i++) {
        struct rc_period_spec s = cal(kinds[i], 0);
        assert_at_fails(s, utc(1, 1, 1, 0, 0, 0) - 1, RC_E_OUT_OF_RANGE);
        assert_at_fails(s, utc(10000, 1, 1, 0, 0, 0), RC_E_OUT_OF_RANGE);
        assert_int_equal(rc_period_max_length_ms(&s) > 0, 1);
        {
            struct rc_period p;
            assert_int_equal(rc_period_at(&s, utc(1, 1, 1, 0, 0, 0), &p), 0);
            assert_int_equal(rc_period_prev(&s, &p, &p), RC_E_OUT_OF_RANGE);
            assert_int_equal(rc_period_at(&s, utc(10000, 1, 1, 0, 0, 0) - 1, &p), 0);
            assert_int_equal(rc_period_next(&s, &p, &p), RC_E_OUT_OF_RANGE);
        }
    }
}

static void test_range_edges_are_in_local_time(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_DAY, OFF_MAX);
    int64_t first = utc(0, 12, 31, 10, 0, 0); /* 0001-01-01T00:00+14:00 */
    int64_t last = utc(10000, 1, 1, 14, 0, 0) - 1;
    (void)state;
    assert_at(s, first, "0001-01-01", first, first + DAY_MS);
    assert_at_fails(s, first - 1, RC_E_OUT_OF_RANGE);
    s.utc_offset_s = -OFF_MAX; /* 9999-12-31T23:59:59.999-14:00 */
    assert_at_id(s, last, "9999-12-31");
    assert_at_fails(s, last + 1, RC_E_OUT_OF_RANGE);
}

/* Week-years follow the ISO rule at the range ends too: 0001-01-01 is a
 * Monday, and 9999-W52 holds the first two days of 10000. */
static void test_week_range_is_iso_week_years_1_to_9999(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_WEEK, 0);
    struct rc_period p;
    (void)state;
    assert_at(s, utc(1, 1, 1, 0, 0, 0), "0001-W01", utc(1, 1, 1, 0, 0, 0), utc(1, 1, 8, 0, 0, 0));
    assert_at_fails(s, utc(1, 1, 1, 0, 0, 0) - 1, RC_E_OUT_OF_RANGE);
    assert_at(s, utc(10000, 1, 2, 23, 0, 0), "9999-W52", utc(9999, 12, 27, 0, 0, 0),
              utc(10000, 1, 3, 0, 0, 0));
    assert_at_fails(s, utc(10000, 1, 3, 0, 0, 0), RC_E_OUT_OF_RANGE);
    assert_int_equal(rc_period_parse(&s, "9999-W52", &p), 0);
    assert_int_equal(rc_period_next(&s, &p, &p), RC_E_OUT_OF_RANGE);
    assert_string_equal(p.id, "9999-W52");
}

static void test_int64_extremes_are_out_of_range_not_overflow(void **state)
{
    static const enum rc_period_kind kinds[] = {RC_PERIOD_HOUR, RC_PERIOD_DAY, RC_PERIOD_WEEK,
                                                RC_PERIOD_MONTH, RC_PERIOD_YEAR};
    static const int32_t offs[] = {-OFF_MAX, 0, OFF_MAX};
    (void)state;
    for (size_t k = 0; k < 5; k++) {
        for (size_t o = 0; o < 3; o++) {
            struct rc_period_spec s = cal(kinds[k], offs[o]);
            assert_at_fails(s, INT64_MAX, RC_E_OUT_OF_RANGE);
            assert_at_fails(s, INT64_MIN, RC_E_OUT_OF_RANGE);
            assert_at_fails(s, INT64_MAX - OFF_MAX * INT64_C(1000), RC_E_OUT_OF_RANGE);
        }
    }
}

/* ---- select ------------------------------------------------------------ */

static void test_select_current_for_null_empty_and_current(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_DAY, OFF_PLUS_0800);
    int64_t now = utc(2026, 11, 21, 16, 0, 0);
    struct rc_period p;
    (void)state;
    assert_int_equal(rc_period_select(&s, NULL, now, &p), 0);
    assert_string_equal(p.id, "2026-11-22");
    assert_int_equal(rc_period_select(&s, "", now, &p), 0);
    assert_string_equal(p.id, "2026-11-22");
    assert_int_equal(rc_period_select(&s, "current", now, &p), 0);
    assert_period(p, "2026-11-22", now, now + DAY_MS);
}

static void test_select_previous_is_the_period_before_now(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_WEEK, 0);
    struct rc_period p;
    (void)state;
    assert_int_equal(rc_period_select(&s, "previous", utc(2021, 1, 4, 0, 0, 0), &p), 0);
    assert_period(p, "2020-W53", utc(2020, 12, 28, 0, 0, 0), utc(2021, 1, 4, 0, 0, 0));
    s = custom(0, 10);
    assert_int_equal(rc_period_select(&s, "previous", 5, &p), 0);
    assert_period(p, "-1", -10, 0);
}

static void test_select_explicit_id_parses_it(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_MONTH, 0);
    struct rc_period p;
    (void)state;
    assert_int_equal(rc_period_select(&s, "2024-02", utc(2026, 11, 21, 0, 0, 0), &p), 0);
    assert_period(p, "2024-02", utc(2024, 2, 1, 0, 0, 0), utc(2024, 3, 1, 0, 0, 0));
    assert_int_equal(rc_period_select(&s, "Current", 0, &p), RC_E_BAD_REQUEST);
    assert_int_equal(rc_period_select(&s, "previous ", 0, &p), RC_E_BAD_REQUEST);
    assert_int_equal(rc_period_select(&s, "2024-13", 0, &p), RC_E_BAD_REQUEST);
    assert_int_equal(rc_period_select(&s, "current", utc(10000, 1, 1, 0, 0, 0), &p),
                     RC_E_OUT_OF_RANGE);
}

/* ---- argument checks --------------------------------------------------- */

static void test_invalid_specs_and_arguments_are_bad_requests(void **state)
{
    struct rc_period_spec bad[] = {
        cal(RC_PERIOD_DAY, OFF_MAX + 1), cal(RC_PERIOD_HOUR, -OFF_MAX - 1),
        cal((enum rc_period_kind)99, 0), custom(0, 0), custom(0, -1000),
    };
    struct rc_period_spec good = cal(RC_PERIOD_DAY, 0);
    struct rc_period p = {0, DAY_MS, "1970-01-01"};
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct rc_period q;
        assert_int_equal(rc_period_at(&bad[i], 0, &q), RC_E_BAD_REQUEST);
        assert_int_equal(rc_period_parse(&bad[i], "0", &q), RC_E_BAD_REQUEST);
        assert_int_equal(rc_period_prev(&bad[i], &p, &q), RC_E_BAD_REQUEST);
        assert_int_equal(rc_period_next(&bad[i], &p, &q), RC_E_BAD_REQUEST);
        assert_int_equal(rc_period_select(&bad[i], NULL, 0, &q), RC_E_BAD_REQUEST);
        assert_i64(rc_period_max_length_ms(&bad[i]), 0);
    }
    assert_int_equal(rc_period_at(NULL, 0, &p), RC_E_BAD_REQUEST);
    assert_int_equal(rc_period_at(&good, 0, NULL), RC_E_BAD_REQUEST);
    assert_int_equal(rc_period_parse(&good, NULL, &p), RC_E_BAD_REQUEST);
    assert_int_equal(rc_period_parse(&good, "1970-01-01", NULL), RC_E_BAD_REQUEST);
    assert_int_equal(rc_period_next(&good, NULL, &p), RC_E_BAD_REQUEST);
    assert_int_equal(rc_period_next(&good, &p, NULL), RC_E_BAD_REQUEST);
    assert_i64(rc_period_max_length_ms(NULL), 0);
}

static void test_offset_limits_of_plus_minus_14h_are_accepted(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_DAY, OFF_MAX);
    (void)state;
    assert_at(s, utc(2026, 11, 21, 10, 0, 0), "2026-11-22", utc(2026, 11, 21, 10, 0, 0),
              utc(2026, 11, 22, 10, 0, 0));
    s.utc_offset_s = -OFF_MAX;
    assert_at(s, utc(2026, 11, 22, 13, 59, 59), "2026-11-21", utc(2026, 11, 21, 14, 0, 0),
              utc(2026, 11, 22, 14, 0, 0));
}

static void test_prev_next_reject_a_period_of_another_spec(void **state)
{
    struct rc_period_spec utc_day = cal(RC_PERIOD_DAY, 0);
    struct rc_period_spec sgt_day = cal(RC_PERIOD_DAY, OFF_PLUS_0800);
    struct rc_period_spec month = cal(RC_PERIOD_MONTH, 0);
    struct rc_period p, q;
    (void)state;
    assert_int_equal(rc_period_parse(&utc_day, "2026-11-21", &p), 0);
    assert_int_equal(rc_period_next(&sgt_day, &p, &q), RC_E_BAD_REQUEST);
    assert_int_equal(rc_period_prev(&month, &p, &q), RC_E_BAD_REQUEST);
    p.end_ms += 1;
    assert_int_equal(rc_period_next(&utc_day, &p, &q), RC_E_BAD_REQUEST);
}

static void test_out_may_alias_the_input_period(void **state)
{
    struct rc_period_spec s = cal(RC_PERIOD_MONTH, OFF_PLUS_0800);
    struct rc_period p;
    (void)state;
    assert_int_equal(rc_period_parse(&s, "2026-12", &p), 0);
    assert_int_equal(rc_period_next(&s, &p, &p), 0);
    assert_period(p, "2027-01", utc(2026, 12, 31, 16, 0, 0), utc(2027, 1, 31, 16, 0, 0));
    assert_int_equal(rc_period_prev(&s, &p, &p), 0);
    assert_string_equal(p.id, "2026-12");
}

static void test_failed_calls_leave_out_untouched(void **state)
{
    struct rc_period_spec day = cal(RC_PERIOD_DAY, 0), c = custom(0, 1);
    struct rc_period p, before;
    (void)state;
    memset(&p, 0x5a, sizeof(p));
    before = p;
    assert_int_equal(rc_period_at(&day, INT64_MAX, &p), RC_E_OUT_OF_RANGE);
    assert_int_equal(rc_period_parse(&day, "2026-02-30", &p), RC_E_BAD_REQUEST);
    assert_int_equal(rc_period_at(&c, INT64_MAX, &p), RC_E_OUT_OF_RANGE);
    assert_int_equal(rc_period_parse(&c, "-0", &p), RC_E_BAD_REQUEST);
    assert_int_equal(rc_period_select(&day, "previous", utc(1, 1, 1, 0, 0, 0), &p),
                     RC_E_OUT_OF_RANGE);
    assert_memory_equal(&p, &before, sizeof(p));
}

/* ---- property ---------------------------------------------------------- */

#define PROPERTY_SAMPLES 100000

struct rng {
    uint64_t s;
};

/* splitmix64: tiny, full-period, good enough to spread test inputs. */
static uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Uniform-ish in [lo, hi); hi - lo is small enough here for modulo bias to
 * be irrelevant. */
static int64_t rng_range(struct rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo));
}

/* Ids of one kind compare like their periods: fixed-width calendar ids as
 * strings, custom ids as integers. */
static int id_cmp(enum rc_period_kind kind, const char *a, const char *b)
{
    if (kind == RC_PERIOD_CUSTOM) {
        long long x = strtoll(a, NULL, 10), y = strtoll(b, NULL, 10);
        return (x > y) - (x < y);
    }
    int c = strcmp(a, b);
    return (c > 0) - (c < 0);
}

static struct rc_period_spec random_spec(struct rng *r, int64_t t_lo, int64_t t_hi)
{
    static const enum rc_period_kind kinds[] = {RC_PERIOD_HOUR, RC_PERIOD_DAY,  RC_PERIOD_WEEK,
                                                RC_PERIOD_MONTH, RC_PERIOD_YEAR, RC_PERIOD_CUSTOM};
    struct rc_period_spec s = cal(kinds[rng_next(r) % 6], 0);

    if (s.kind == RC_PERIOD_CUSTOM) {
        int shift = (int)(rng_next(r) % 36); /* lengths from 1 ms to ~1 year */
        s.length_ms = 1 + (int64_t)(rng_next(r) % (UINT64_C(1) << shift));
        s.base_ms = rng_range(r, t_lo - 10 * 366 * DAY_MS, t_hi + 10 * 366 * DAY_MS);
    } else if (rng_next(r) % 2) {
        s.utc_offset_s = (int32_t)rng_range(r, -OFF_MAX, OFF_MAX + 1); /* any second */
    } else {
        s.utc_offset_s = (int32_t)rng_range(r, -56, 57) * 900; /* quarter hours */
    }
    return s;
}

/* Checks that a calendar period starts on a local boundary of its kind, lasts
 * as long as the calendar says, and is named after its local start. */
static void check_calendar_shape(const struct rc_period_spec *s, const struct rc_period *p)
{
    int64_t local = p->start_ms + (int64_t)s->utc_offset_s * 1000;
    int64_t z = (local - mod(local, DAY_MS)) / DAY_MS;
    int64_t len = p->end_ms - p->start_ms, y;
    unsigned m, d;
    char want[64];

    rc_period_civil_from_days(z, &y, &m, &d);
    switch (s->kind) {
    case RC_PERIOD_HOUR:
        assert_i64(mod(local, HOUR_MS), 0);
        assert_i64(len, HOUR_MS);
        snprintf(want, sizeof(want), "%04lld-%02u-%02uT%02lld", (long long)y, m, d,
                 (long long)(mod(local, DAY_MS) / HOUR_MS));
        assert_string_equal(p->id, want);
        break;
    case RC_PERIOD_DAY:
        assert_i64(mod(local, DAY_MS), 0);
        assert_i64(len, DAY_MS);
        snprintf(want, sizeof(want), "%04lld-%02u-%02u", (long long)y, m, d);
        assert_string_equal(p->id, want);
        break;
    case RC_PERIOD_WEEK:
        assert_i64(mod(local, DAY_MS), 0);
        assert_i64(iso_weekday(z), 0);
        assert_i64(len, 7 * DAY_MS);
        break;
    case RC_PERIOD_MONTH:
        assert_i64(mod(local, DAY_MS), 0);
        assert_int_equal(d, 1);
        assert_i64(len, month_days(y, m) * DAY_MS);
        snprintf(want, sizeof(want), "%04lld-%02u", (long long)y, m);
        assert_string_equal(p->id, want);
        break;
    case RC_PERIOD_YEAR:
        assert_i64(mod(local, DAY_MS), 0);
        assert_true(m == 1 && d == 1);
        assert_i64(len, (leap(y) ? 366 : 365) * DAY_MS);
        snprintf(want, sizeof(want), "%04lld", (long long)y);
        assert_string_equal(p->id, want);
        break;
    case RC_PERIOD_NONE:
    case RC_PERIOD_CUSTOM:
        break;
    }
}

static void assert_same_period(const struct rc_period *a, const struct rc_period *b)
{
    assert_string_equal(a->id, b->id);
    assert_i64(a->start_ms, b->start_ms);
    assert_i64(a->end_ms, b->end_ms);
}

/* For random instants in 1900..2200, random kinds and offsets: the period
 * holds the instant, parses back from its id, touches its neighbours, and
 * walking forward with next reaches the period of any later instant through
 * strictly increasing ids. */
static void test_property_random_instants_1900_to_2200(void **state)
{
    const int64_t t_lo = utc(1900, 1, 1, 0, 0, 0), t_hi = utc(2201, 1, 1, 0, 0, 0);
    const char *env = getenv("RC_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : UINT64_C(20261121);
    struct rng r = {seed};

    (void)state;
    printf("test_period: property seed %llu (set RC_TEST_SEED to change)\n",
           (unsigned long long)seed);
    for (int i = 0; i < PROPERTY_SAMPLES; i++) {
        struct rc_period_spec s = random_spec(&r, t_lo, t_hi);
        int64_t t = rng_range(&r, t_lo, t_hi);
        int64_t max_len = rc_period_max_length_ms(&s);
        int64_t t2 = t + rng_range(&r, 0, 3 * max_len + 1);
        struct rc_period p, parsed, prev, next, back, later, walk;

        assert_int_equal(rc_period_at(&s, t, &p), 0);
        assert_true(p.start_ms <= t && t < p.end_ms);
        assert_true(p.end_ms - p.start_ms <= max_len);
        if (s.kind != RC_PERIOD_CUSTOM)
            check_calendar_shape(&s, &p);

        assert_int_equal(rc_period_parse(&s, p.id, &parsed), 0);
        assert_same_period(&parsed, &p);

        assert_int_equal(rc_period_prev(&s, &p, &prev), 0);
        assert_int_equal(rc_period_next(&s, &p, &next), 0);
        assert_i64(prev.end_ms, p.start_ms);
        assert_i64(next.start_ms, p.end_ms);
        assert_int_equal(id_cmp(s.kind, prev.id, p.id), -1);
        assert_int_equal(id_cmp(s.kind, next.id, p.id), 1);
        assert_int_equal(rc_period_next(&s, &prev, &back), 0);
        assert_same_period(&back, &p);
        assert_int_equal(rc_period_prev(&s, &next, &back), 0);
        assert_same_period(&back, &p);

        assert_int_equal(rc_period_at(&s, t2, &later), 0);
        walk = p;
        for (int steps = 0; walk.start_ms != later.start_ms; steps++) {
            struct rc_period step;
            assert_true(steps < 5);
            assert_int_equal(rc_period_next(&s, &walk, &step), 0);
            assert_int_equal(id_cmp(s.kind, step.id, walk.id), 1);
            walk = step;
        }
        assert_same_period(&walk, &later);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_days_from_civil_matches_known_epoch_days),
        cmocka_unit_test(test_civil_conversions_agree_with_a_day_by_day_walk),
        cmocka_unit_test(test_civil_from_days_is_exact_far_from_the_epoch),
        cmocka_unit_test(test_civil_from_days_handles_int64_extremes),
        cmocka_unit_test(test_kind_names_round_trip),
        cmocka_unit_test(test_kind_parse_rejects_unknown_names),
        cmocka_unit_test(test_max_length_is_the_longest_period_of_each_kind),
        cmocka_unit_test(test_day_utc_id_and_bounds),
        cmocka_unit_test(test_day_rolls_over_at_local_midnight_plus_0800),
        cmocka_unit_test(test_day_rolls_over_at_local_midnight_minus_0500),
        cmocka_unit_test(test_day_before_1970_uses_floor_division),
        cmocka_unit_test(test_day_before_1970_with_negative_offset),
        cmocka_unit_test(test_day_next_crosses_month_ends),
        cmocka_unit_test(test_day_prev_crosses_month_and_year_ends),
        cmocka_unit_test(test_leap_day_2024_02_29_is_a_whole_day),
        cmocka_unit_test(test_hour_id_and_bounds_utc),
        cmocka_unit_test(test_hour_plus_0530_boundaries_fall_on_half_hours),
        cmocka_unit_test(test_hour_next_crosses_day_month_and_year_ends),
        cmocka_unit_test(test_week_2020_12_31_is_2020_W53),
        cmocka_unit_test(test_week_2021_01_03_is_2020_W53),
        cmocka_unit_test(test_week_2021_01_04_is_2021_W01),
        cmocka_unit_test(test_week_2024_12_30_is_2025_W01),
        cmocka_unit_test(test_week_sunday_2026_11_22_is_W47_and_monday_is_W48),
        cmocka_unit_test(test_week_starts_at_local_monday_midnight_plus_0800),
        cmocka_unit_test(test_week_starts_at_local_monday_midnight_minus_0500),
        cmocka_unit_test(test_week_next_and_prev_cross_week_year_ends),
        cmocka_unit_test(test_week_parse_accepts_2020_W53_and_rejects_2021_W53),
        cmocka_unit_test(test_week_parse_starts_monday_midnight_local),
        cmocka_unit_test(test_week_ids_follow_iso_rules_every_day_1900_to_2200),
        cmocka_unit_test(test_month_lengths_are_28_29_30_and_31_days),
        cmocka_unit_test(test_month_rolls_over_at_local_midnight_minus_0500),
        cmocka_unit_test(test_month_rolls_over_at_local_midnight_plus_0800),
        cmocka_unit_test(test_month_next_and_prev_cross_year_ends),
        cmocka_unit_test(test_year_lengths_follow_leap_rules),
        cmocka_unit_test(test_year_rolls_over_at_local_midnight_plus_0800),
        cmocka_unit_test(test_year_rolls_over_at_local_midnight_minus_0500),
        cmocka_unit_test(test_custom_index_is_floor_of_elapsed_over_length),
        cmocka_unit_test(test_custom_instants_before_base_get_negative_indexes),
        cmocka_unit_test(test_custom_ignores_utc_offset),
        cmocka_unit_test(test_custom_parse_prev_and_next),
        cmocka_unit_test(test_custom_parse_rejects_non_canonical_indexes),
        cmocka_unit_test(test_custom_extreme_indexes_that_fit_int64_are_exact),
        cmocka_unit_test(test_custom_index_or_bounds_overflow_is_out_of_range),
        cmocka_unit_test(test_custom_start_outside_int64_is_rejected),
        cmocka_unit_test(test_none_has_one_period_with_empty_id),
        cmocka_unit_test(test_none_has_no_prev_or_next_and_parses_only_empty),
        cmocka_unit_test(test_parse_round_trips_each_kind),
        cmocka_unit_test(test_parse_applies_the_offset),
        cmocka_unit_test(test_parse_rejects_ids_of_another_kind),
        cmocka_unit_test(test_parse_rejects_non_canonical_forms),
        cmocka_unit_test(test_parse_rejects_impossible_dates_and_fields),
        cmocka_unit_test(test_parse_accepts_real_leap_days_and_range_ends),
        cmocka_unit_test(test_at_rejects_years_outside_1_to_9999),
        cmocka_unit_test(test_range_edges_are_in_local_time),
        cmocka_unit_test(test_week_range_is_iso_week_years_1_to_9999),
        cmocka_unit_test(test_int64_extremes_are_out_of_range_not_overflow),
        cmocka_unit_test(test_select_current_for_null_empty_and_current),
        cmocka_unit_test(test_select_previous_is_the_period_before_now),
        cmocka_unit_test(test_select_explicit_id_parses_it),
        cmocka_unit_test(test_invalid_specs_and_arguments_are_bad_requests),
        cmocka_unit_test(test_offset_limits_of_plus_minus_14h_are_accepted),
        cmocka_unit_test(test_prev_next_reject_a_period_of_another_spec),
        cmocka_unit_test(test_out_may_alias_the_input_period),
        cmocka_unit_test(test_failed_calls_leave_out_untouched),
        cmocka_unit_test(test_property_random_instants_1900_to_2200),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
