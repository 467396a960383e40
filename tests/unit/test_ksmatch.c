/* test_ksmatch.c - keyspace "zadd"s counted against change events
 * (core/rc_ksmatch): a busy board's own writes, with ticks falling between
 * a zadd and its event, are never taken for a change made outside the
 * scripts; a ZADD made outside is, a tick after the tick that first saw it
 * pending, whether writes go on or not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rc_ksmatch.h"

/* One script write: its zadd, then its event. */
static void write1(struct rc_ksmatch *k)
{
    rc_ksmatch_zadd(k);
    rc_ksmatch_event(k);
}

static void quiet_board_no_verdict(void **state)
{
    (void)state;
    struct rc_ksmatch k = {0};
    for (int i = 0; i < 10; i++)
        assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_NONE);
    write1(&k);
    assert_int_equal(rc_ksmatch_pending(&k), 0);
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_NONE);
}

/* Under load every tick falls after a zadd whose event is in the next
 * read: pending at every tick, a different zadd each time. The old rule
 * (pending at two ticks in a row) called the second tick's zadd a change
 * made outside. */
static void busy_board_ticks_between_zadd_and_event(void **state)
{
    (void)state;
    struct rc_ksmatch k = {0};
    for (int t = 0; t < 1000; t++) {
        for (int i = 0; i < 50; i++)
            write1(&k);
        rc_ksmatch_zadd(&k); /* the read ends here: its event is in the next */
        assert_int_equal(rc_ksmatch_pending(&k), 1);
        assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_WAIT);
        rc_ksmatch_event(&k);
    }
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_NONE);
}

/* A tick right after the zadd, the event in the next read, then quiet. */
static void event_in_the_next_read(void **state)
{
    (void)state;
    struct rc_ksmatch k = {0};
    rc_ksmatch_zadd(&k);
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_WAIT);
    rc_ksmatch_event(&k);
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_NONE);
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_NONE);
}

static void outside_zadd_on_a_quiet_board(void **state)
{
    (void)state;
    struct rc_ksmatch k = {0};
    rc_ksmatch_zadd(&k); /* redis-cli ZADD */
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_WAIT);
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_OUTSIDE);
    assert_int_equal(rc_ksmatch_pending(&k), 0); /* cleared: the caller reads again */
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_NONE);
}

/* A ZADD made outside while writes go on: pending never gets back to 0,
 * though every write's event matches a zadd. */
static void outside_zadd_among_writes(void **state)
{
    (void)state;
    struct rc_ksmatch k = {0};
    write1(&k);
    rc_ksmatch_zadd(&k); /* outside */
    for (int i = 0; i < 20; i++)
        write1(&k);
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_WAIT);
    for (int i = 0; i < 20; i++)
        write1(&k);
    rc_ksmatch_zadd(&k); /* a read ends between a write's zadd and its event */
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_OUTSIDE);
    rc_ksmatch_event(&k); /* (that write's event: nothing pending to match after the verdict) */
    assert_int_equal(rc_ksmatch_pending(&k), 0);
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_NONE);
}

/* One made outside just after a tick that saw a write's zadd pending: the
 * event of that write came (pending 0), so that tick's zadd was the
 * script's; the outside one is found a tick later. */
static void outside_zadd_after_a_waited_tick(void **state)
{
    (void)state;
    struct rc_ksmatch k = {0};
    rc_ksmatch_zadd(&k);
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_WAIT);
    rc_ksmatch_event(&k);
    rc_ksmatch_zadd(&k); /* outside */
    write1(&k);
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_WAIT);
    write1(&k);
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_OUTSIDE);
}

/* A read that reflects everything announced clears what is pending. */
static void clear_after_a_read(void **state)
{
    (void)state;
    struct rc_ksmatch k = {0};
    rc_ksmatch_zadd(&k);
    rc_ksmatch_zadd(&k);
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_WAIT);
    rc_ksmatch_clear(&k);
    assert_int_equal(rc_ksmatch_pending(&k), 0);
    rc_ksmatch_event(&k); /* an event with nothing pending matches nothing */
    assert_int_equal(rc_ksmatch_pending(&k), 0);
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_NONE);
    rc_ksmatch_zadd(&k);
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_WAIT);
    rc_ksmatch_clear(&k);
    rc_ksmatch_zadd(&k); /* a new zadd after the read: pending again, but the last tick's was accounted for */
    assert_int_equal(rc_ksmatch_tick(&k), RC_KSMATCH_WAIT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quiet_board_no_verdict),
        cmocka_unit_test(busy_board_ticks_between_zadd_and_event),
        cmocka_unit_test(event_in_the_next_read),
        cmocka_unit_test(outside_zadd_on_a_quiet_board),
        cmocka_unit_test(outside_zadd_among_writes),
        cmocka_unit_test(outside_zadd_after_a_waited_tick),
        cmocka_unit_test(clear_after_a_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
