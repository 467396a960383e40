/* test_edge.c - the leading edge of the fan-out's tick (core/rc_edge): a
 * change on a quiet board goes at once, the ones after it coalesce into a
 * later tick, and a board never goes out twice within a tick period or
 * less than a tick apart because of the edge. A simulated board with the
 * fan-out's rules (gw_fanout.c run_boards) under a 50 ms tick. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rc_edge.h"

#define TICK 50000 /* us */
#define MAX_SENDS 4096

/* One board as the fan-out drives it: changes come at given times, ticks
 * every TICK us from 0; what went out, and when, is recorded. */
struct sim {
    struct rc_edge e;
    uint64_t ticks;    /* ticks run */
    int pending;       /* a change not yet sent */
    int64_t sends[MAX_SENDS];
    size_t nsends;
    int64_t first_change[MAX_SENDS]; /* per send: the oldest change it carried */
    int64_t oldest;
};

static void send_now(struct sim *s, int64_t now)
{
    assert_true(s->nsends < MAX_SENDS);
    s->first_change[s->nsends] = s->oldest;
    s->sends[s->nsends++] = now;
    s->pending = 0;
}

static void tick(struct sim *s, int64_t now)
{
    uint64_t period = s->ticks++;
    if (!s->pending)
        return;
    if (!rc_edge_tick_may_send(&s->e, period))
        return; /* went out at its edge in this period */
    rc_edge_sent_tick(&s->e, now);
    send_now(s, now);
}

static void change(struct sim *s, int64_t now)
{
    if (!s->pending)
        s->oldest = now;
    s->pending = 1;
    if (rc_edge_quiet(&s->e, now, TICK)) {
        rc_edge_sent_edge(&s->e, now, s->ticks);
        send_now(s, now);
    }
}

/* Runs changes at times[0..n) (ascending) with ticks at TICK, 2 TICK, ...
 * until `end`. */
static void run(struct sim *s, const int64_t *times, size_t n, int64_t end)
{
    memset(s, 0, sizeof *s);
    size_t i = 0;
    for (int64_t t = TICK; t <= end; t += TICK) {
        while (i < n && times[i] < t)
            change(s, times[i++]);
        tick(s, t);
    }
    assert_int_equal(i, n);
}

static void sparse_changes_each_go_out_at_once(void **state)
{
    (void)state;
    struct sim s;
    int64_t times[20];
    for (size_t i = 0; i < 20; i++)
        times[i] = 7000 + (int64_t)i * 123000; /* 123 ms apart: every phase of the tick */
    run(&s, times, 20, 3000000);
    assert_int_equal(s.nsends, 20);
    for (size_t i = 0; i < 20; i++)
        assert_int_equal(s.sends[i], times[i]); /* no wait for the tick */
}

static void changes_after_the_edge_coalesce_into_one_later_tick(void **state)
{
    (void)state;
    struct sim s;
    /* the edge at 10 ms; three more within the period; the tick at 50 ms
     * passes over the board (it went out in that period), the one at 100 ms
     * sends the three as one */
    int64_t times[] = {10000, 12000, 30000, 45000};
    run(&s, times, 4, 400000);
    assert_int_equal(s.nsends, 2);
    assert_int_equal(s.sends[0], 10000);
    assert_int_equal(s.sends[1], 100000);
    assert_int_equal(s.first_change[1], 12000);
}

static void an_edge_just_before_a_tick_is_not_followed_by_that_tick(void **state)
{
    (void)state;
    struct sim s;
    int64_t times[] = {49000, 49500};
    run(&s, times, 2, 400000);
    assert_int_equal(s.nsends, 2);
    assert_int_equal(s.sends[0], 49000);
    assert_int_equal(s.sends[1], 100000); /* not 50000: 1 ms after the edge */
}

static void a_steady_stream_goes_out_once_per_tick_and_waits_under_two(void **state)
{
    (void)state;
    struct sim s;
    int64_t times[400];
    for (size_t i = 0; i < 400; i++)
        times[i] = 1000 + (int64_t)i * 5000; /* 200 changes a second for 2 s */
    run(&s, times, 400, 2500000);
    assert_int_equal(s.sends[0], 1000); /* the first found the board quiet */
    for (size_t i = 1; i < s.nsends; i++) {
        assert_true(s.sends[i] - s.sends[i - 1] >= TICK);       /* never two within a tick */
        assert_true(s.sends[i] - s.first_change[i] < 2 * TICK); /* nothing waits two ticks */
    }
    assert_true(s.nsends >= 2000000 / TICK - 2); /* and about one per tick */
    assert_false(s.pending);
}

static void a_board_that_went_out_on_a_tick_is_not_quiet_for_a_tick(void **state)
{
    (void)state;
    struct rc_edge e = {0};
    assert_true(rc_edge_quiet(&e, 0, TICK)); /* never went out */
    rc_edge_sent_tick(&e, 100000);
    assert_false(rc_edge_quiet(&e, 100001, TICK));
    assert_false(rc_edge_quiet(&e, 149999, TICK));
    assert_true(rc_edge_quiet(&e, 150000, TICK));
    assert_true(rc_edge_tick_may_send(&e, 2)); /* a tick never stops the next tick */
    rc_edge_sent_edge(&e, 160000, 3);          /* in the period after 3 ticks */
    assert_false(rc_edge_tick_may_send(&e, 3)); /* the 4th tick ends it: passes over */
    assert_true(rc_edge_tick_may_send(&e, 4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sparse_changes_each_go_out_at_once),
        cmocka_unit_test(changes_after_the_edge_coalesce_into_one_later_tick),
        cmocka_unit_test(an_edge_just_before_a_tick_is_not_followed_by_that_tick),
        cmocka_unit_test(a_steady_stream_goes_out_once_per_tick_and_waits_under_two),
        cmocka_unit_test(a_board_that_went_out_on_a_tick_is_not_quiet_for_a_tick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
