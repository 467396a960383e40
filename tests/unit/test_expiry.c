/* test_expiry.c - how long a period's keys live (core/rc_expiry): the
 * archive's walk over finished periods that may still be in Redis (oldest
 * first, caught up, restarted when the clock moves back or far ahead) and
 * whether a period's keys still live. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rc_conf.h"
#include "rc_err.h"
#include "rc_expiry.h"

#define S 1000LL
#define BASE 1767225600000LL /* 2026-01-01T00:00:00Z */

static const char CONF[] = "[board tick]\nperiod = custom\nperiod_base = 2026-01-01T00:00:00Z\n"
                           "period_length = 10s\nkeep = 3\ntiebreak = none\n";

static struct rc_conf *load(void)
{
    struct rc_conf *c = malloc(sizeof *c);
    struct rc_error err = {0, ""};
    assert_non_null(c);
    if (rc_conf_parse("t.conf", CONF, sizeof CONF - 1, c, &err) != 0)
        fail_msg("%s", err.msg);
    return c;
}

static void test_a_first_walk_starts_keep_periods_back_and_steps_to_the_present(void **state)
{
    (void)state;
    struct rc_conf *c = load();
    const struct rc_board *b = &c->boards[0];
    struct rc_period next;
    int64_t now = BASE + 55 * S; /* inside period 5; grace 2 s */
    assert_int_equal(rc_expiry_archive_walk(b, now, 2 * S, 0, &next), 1);
    assert_string_equal(next.id, "2"); /* 5 - keep */
    const char *want[] = {"2", "3", "4"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rc_expiry_archive_walk(b, now, 2 * S, 1, &next), 1);
        assert_string_equal(next.id, want[i]);
        assert_int_equal(rc_period_next(&b->period, &next, &next), 0);
    }
    /* caught up: period 5 is not over */
    assert_int_equal(rc_expiry_archive_walk(b, now, 2 * S, 1, &next), 0);
    assert_string_equal(next.id, "5");
    free(c);
}

static void test_a_period_is_due_only_after_the_grace(void **state)
{
    (void)state;
    struct rc_conf *c = load();
    const struct rc_board *b = &c->boards[0];
    struct rc_period next;
    assert_int_equal(rc_period_at(&b->period, BASE + 45 * S, &next), 0); /* period 4 */
    assert_int_equal(rc_expiry_archive_walk(b, BASE + 51 * S, 2 * S, 1, &next), 0);
    assert_string_equal(next.id, "4");
    assert_int_equal(rc_expiry_archive_walk(b, BASE + 52 * S, 2 * S, 1, &next), 1);
    assert_string_equal(next.id, "4");
    free(c);
}

static void test_the_walk_restarts_when_the_clock_moves_back_or_far_ahead(void **state)
{
    (void)state;
    struct rc_conf *c = load();
    const struct rc_board *b = &c->boards[0];
    struct rc_period next;
    assert_int_equal(rc_period_at(&b->period, BASE + 95 * S, &next), 0); /* period 9 */
    /* back to period 5: 9 lies ahead of it */
    assert_int_equal(rc_expiry_archive_walk(b, BASE + 55 * S, 2 * S, 1, &next), 1);
    assert_string_equal(next.id, "2");
    /* a gateway down for 100 periods: only the last keep are still in Redis */
    assert_int_equal(rc_expiry_archive_walk(b, BASE + 1055 * S, 2 * S, 1, &next), 1);
    assert_string_equal(next.id, "102");
    free(c);
}

static void test_a_period_is_kept_until_keep_periods_after_it_end(void **state)
{
    (void)state;
    struct rc_conf *c = load();
    const struct rc_board *b = &c->boards[0];
    struct rc_period p;
    assert_int_equal(rc_period_at(&b->period, BASE + 5 * S, &p), 0); /* period 0, kept to the end of 3 */
    assert_int_equal(rc_expiry_period_kept(b, &p, BASE + 5 * S), 1);
    assert_int_equal(rc_expiry_period_kept(b, &p, BASE + 39 * S), 1);
    assert_int_equal(rc_expiry_period_kept(b, &p, BASE + 40 * S), 0);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_first_walk_starts_keep_periods_back_and_steps_to_the_present),
        cmocka_unit_test(test_a_period_is_due_only_after_the_grace),
        cmocka_unit_test(test_the_walk_restarts_when_the_clock_moves_back_or_far_ahead),
        cmocka_unit_test(test_a_period_is_kept_until_keep_periods_after_it_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
