/* test_rate.c - the rate gate of a view with max_rate (core/rc_rate): the
 * interval, when a held change may go, and a simulated tick under a steady
 * stream of changes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rc_rate.h"

static void the_interval_is_rounded_up_so_no_second_holds_more(void **state)
{
    (void)state;
    assert_int_equal(rc_rate_interval_us(0), 0);
    assert_int_equal(rc_rate_interval_us(1), 1000000);
    assert_int_equal(rc_rate_interval_us(2), 500000);
    assert_int_equal(rc_rate_interval_us(3), 333334); /* 333333 would allow a 4th send in some second */
    assert_int_equal(rc_rate_interval_us(7), 142858);
    assert_int_equal(rc_rate_interval_us(50), 20000);
    for (unsigned r = RC_RATE_MIN; r <= RC_RATE_MAX; r++)
        assert_true(rc_rate_interval_us(r) * (int64_t)r >= 1000000);
}

static void an_ungated_view_or_a_first_send_goes_at_once(void **state)
{
    (void)state;
    struct rc_rate_gate none = {0}, fresh = {.rate = 2};
    assert_true(rc_rate_may_send(&none, 0));
    rc_rate_sent(&none, 5);
    assert_true(rc_rate_may_send(&none, 5)); /* rate 0: no gate */
    assert_true(rc_rate_may_send(&fresh, -1000000));
    assert_int_equal(rc_rate_next_us(&fresh), INT64_MIN);
}

static void a_change_within_the_interval_waits_for_the_trailing_edge(void **state)
{
    (void)state;
    struct rc_rate_gate g = {.rate = 2};
    rc_rate_sent(&g, 1000000);
    assert_int_equal(rc_rate_next_us(&g), 1500000);
    assert_false(rc_rate_may_send(&g, 1000001));
    assert_false(rc_rate_may_send(&g, 1499999));
    assert_true(rc_rate_may_send(&g, 1500000));
    assert_true(rc_rate_may_send(&g, 9000000));
    rc_rate_sent(&g, 1520000); /* sent late (on the next tick): the next interval counts from then */
    assert_int_equal(rc_rate_next_us(&g), 2020000);
}

/* A view at `rate` fed `per_s` changes a second for `secs` seconds, looked
 * at every `tick_us` as the gateway's tick does: at most `rate` sends in any
 * one-second window, and the last change goes out within one interval plus
 * one tick of it. */
static void simulate(unsigned rate, unsigned per_s, unsigned secs, int64_t tick_us)
{
    struct rc_rate_gate g = {.rate = rate};
    int64_t sends[4096];
    size_t nsends = 0;
    int held = 0;
    int64_t change_every = 1000000 / per_s, last_change = 0, next_change = 0;
    int64_t end = (int64_t)secs * 1000000;
    for (int64_t now = 0; now < end + 3000000; now += tick_us) {
        while (next_change <= now && next_change < end) {
            held = 1; /* coalesced with whatever is held */
            last_change = next_change;
            next_change += change_every;
        }
        if (held && rc_rate_may_send(&g, now)) {
            rc_rate_sent(&g, now);
            assert_true(nsends < sizeof sends / sizeof sends[0]);
            sends[nsends++] = now;
            held = 0;
        }
    }
    assert_false(held);
    assert_true(nsends > 0);
    assert_true(sends[nsends - 1] >= last_change);
    assert_true(sends[nsends - 1] - last_change <= rc_rate_interval_us(rate) + tick_us);
    for (size_t i = 0; i < nsends; i++) {
        size_t in_window = 0;
        for (size_t j = i; j < nsends && sends[j] < sends[i] + 1000000; j++)
            in_window++;
        assert_true(in_window <= rate);
    }
}

static void a_steady_stream_is_held_to_the_rate_and_ends_in_the_last_change(void **state)
{
    (void)state;
    simulate(2, 20, 3, 50000);
    simulate(1, 20, 3, 50000);
    simulate(3, 50, 3, 10000);
    simulate(7, 100, 2, 1000);
    simulate(50, 20, 2, 50000); /* faster than the tick: every tick */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_interval_is_rounded_up_so_no_second_holds_more),
        cmocka_unit_test(an_ungated_view_or_a_first_send_goes_at_once),
        cmocka_unit_test(a_change_within_the_interval_waits_for_the_trailing_edge),
        cmocka_unit_test(a_steady_stream_is_held_to_the_rate_and_ends_in_the_last_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
