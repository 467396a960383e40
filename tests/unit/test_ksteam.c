/* test_ksteam.c - a team membership's keyspace notifications counted
 * against its team messages (core/rc_ksteam): a stream of team ops whose
 * messages lag their notifications at every tick (two connections on a
 * cluster) is never taken for an edit made outside; an edit made outside
 * is, a wait after it, whether ops go on or not; a "del" always is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rc_ksteam.h"

#define WAIT 1000000 /* µs, as the gateway's (fanout/gw_rowteam_load.c) */
#define TICK 50000

/* One op's notifications: the old team's count, HSET and HINCRBY of the new,
 * the version's HINCRBY (lua/write.lua, op team). */
static void op_heard(struct rc_ksteam *k)
{
    for (int i = 0; i < 4; i++)
        rc_ksteam_heard(k, 0);
}

static void quiet_no_verdict(void **state)
{
    (void)state;
    struct rc_ksteam k = {0};
    for (int64_t t = 1; t < 40 * TICK; t += TICK)
        assert_int_equal(rc_ksteam_tick(&k, t, WAIT), RC_KSTEAM_NONE);
    op_heard(&k);
    rc_ksteam_explained(&k, 4);
    assert_int_equal(rc_ksteam_tick(&k, 40 * TICK, WAIT), RC_KSTEAM_NONE);
    assert_int_equal(rc_ksteam_pending(&k), 0);
}

/* The case the 3+3 cluster test met under load: each op's message comes
 * after the next op's notifications, so at every tick some are unexplained.
 * The old rule (unexplained at every tick for the wait) read the membership
 * again a second into the stream. */
static void lagging_messages_never_outside(void **state)
{
    (void)state;
    struct rc_ksteam k = {0};
    int64_t t = 1;
    op_heard(&k); /* op 0's notifications */
    for (int op = 1; op < 200; op++) {
        op_heard(&k);               /* op's notifications ... */
        rc_ksteam_explained(&k, 4); /* ... then op - 1's message */
        t += TICK;
        assert_int_not_equal(rc_ksteam_tick(&k, t, WAIT), RC_KSTEAM_OUTSIDE);
    }
    rc_ksteam_explained(&k, 4); /* the last message */
    assert_int_equal(rc_ksteam_tick(&k, t + TICK, WAIT), RC_KSTEAM_NONE);
}

/* Messages up to 19 ticks (0.95 s) late, many ops per tick. */
static void messages_late_by_most_of_the_wait(void **state)
{
    (void)state;
    struct rc_ksteam k = {0};
    enum { LAG = 19, OPS = 5, TICKS = 400 };
    int64_t t = 1;
    for (int tick = 0; tick < TICKS + LAG; tick++) {
        for (int i = 0; i < OPS && tick < TICKS; i++)
            op_heard(&k);
        if (tick >= LAG)
            rc_ksteam_explained(&k, 4 * OPS); /* the messages of tick - LAG */
        t += TICK;
        assert_int_not_equal(rc_ksteam_tick(&k, t, WAIT), RC_KSTEAM_OUTSIDE);
    }
    assert_int_equal(rc_ksteam_tick(&k, t + TICK, WAIT), RC_KSTEAM_NONE);
}

static void edit_outside_quiet(void **state)
{
    (void)state;
    struct rc_ksteam k = {0};
    rc_ksteam_heard(&k, 0); /* redis-cli HSET */
    int64_t t = 5 * TICK;
    assert_int_equal(rc_ksteam_tick(&k, t, WAIT), RC_KSTEAM_WAIT);
    assert_int_equal(rc_ksteam_tick(&k, t + WAIT - 1, WAIT), RC_KSTEAM_WAIT);
    assert_int_equal(rc_ksteam_tick(&k, t + WAIT, WAIT), RC_KSTEAM_OUTSIDE);
    assert_int_equal(rc_ksteam_pending(&k), 0);
}

/* An edit made outside in the middle of a stream of ops whose messages come
 * first (they explain more than was heard so far): seen once the stream's
 * messages stop covering it, at most a wait or two after the stream ends. */
static void edit_outside_in_a_stream(void **state)
{
    (void)state;
    struct rc_ksteam k = {0};
    int64_t t = 1, outside_at = 0;
    for (int tick = 0; tick < 200 && !outside_at; tick++) {
        if (tick < 100) {
            rc_ksteam_explained(&k, 4); /* the message first ... */
            if (tick == 30)
                rc_ksteam_heard(&k, 0); /* (the edit) */
            op_heard(&k);               /* ... then its notifications */
        }
        t += TICK;
        if (rc_ksteam_tick(&k, t, WAIT) == RC_KSTEAM_OUTSIDE)
            outside_at = t;
    }
    assert_true(outside_at > 0);
    assert_true(outside_at <= 1 + 100 * TICK + 2 * WAIT + TICK);
}

static void del_is_outside(void **state)
{
    (void)state;
    struct rc_ksteam k = {0};
    rc_ksteam_heard(&k, 1);
    rc_ksteam_explained(&k, 100); /* whatever the messages say */
    assert_int_equal(rc_ksteam_tick(&k, 1, WAIT), RC_KSTEAM_WAIT);
    assert_int_equal(rc_ksteam_tick(&k, 1 + WAIT, WAIT), RC_KSTEAM_OUTSIDE);
}

static void clear_forgets(void **state)
{
    (void)state;
    struct rc_ksteam k = {0};
    rc_ksteam_heard(&k, 0);
    assert_int_equal(rc_ksteam_tick(&k, 1, WAIT), RC_KSTEAM_WAIT);
    rc_ksteam_clear(&k); /* a read of the membership has it */
    assert_int_equal(rc_ksteam_tick(&k, 1 + WAIT, WAIT), RC_KSTEAM_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quiet_no_verdict),
        cmocka_unit_test(lagging_messages_never_outside),
        cmocka_unit_test(messages_late_by_most_of_the_wait),
        cmocka_unit_test(edit_outside_quiet),
        cmocka_unit_test(edit_outside_in_a_stream),
        cmocka_unit_test(del_is_outside),
        cmocka_unit_test(clear_forgets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
