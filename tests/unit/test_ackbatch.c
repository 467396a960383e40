/* test_ackbatch.c - core/rc_ackbatch: one WAIT in flight per connection,
 * each write in the batch of the first WAIT sent after it, the watchdog's
 * allowance. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "rc_ackbatch.h"

static int count(const struct rc_ackbatch_item *l)
{
    int n = 0;
    for (; l; l = l->next)
        n++;
    return n;
}

/* The first write starts a WAIT; writes sent after it wait and share the
 * next one, in order; a batch is answered once. */
static void writes_share_one_wait_at_a_time(void **state)
{
    (void)state;
    struct rc_ackbatch b;
    struct rc_ackbatch_item it[5] = {{NULL, 1, 500}, {NULL, 1, 500}, {NULL, 1, 500}, {NULL, 1, 500}, {NULL, 1, 500}};
    uint64_t seq[5];
    int n;
    int64_t ms;
    rc_ackbatch_init(&b);
    assert_int_equal(rc_ackbatch_start(&b, 0, &n, &ms), 0); /* nothing pending */
    seq[0] = rc_ackbatch_sent(&b);
    assert_int_equal(rc_ackbatch_add(&b, &it[0], seq[0]), 1);
    assert_int_equal(rc_ackbatch_start(&b, 1000, &n, &ms), 1);
    assert_int_equal(n, 1);
    assert_int_equal(ms, 500);
    /* sent after the WAIT: they wait, and no second WAIT starts */
    for (int i = 1; i < 5; i++) {
        seq[i] = rc_ackbatch_sent(&b);
        assert_int_equal(rc_ackbatch_add(&b, &it[i], seq[i]), 0);
    }
    assert_int_equal(rc_ackbatch_start(&b, 1100, &n, &ms), 0);
    /* the first WAIT answers its one write */
    struct rc_ackbatch_item *first = rc_ackbatch_done(&b);
    assert_ptr_equal(first, &it[0]);
    assert_int_equal(count(first), 1);
    /* the four go in one WAIT, in order */
    assert_int_equal(rc_ackbatch_start(&b, 1500, &n, &ms), 1);
    struct rc_ackbatch_item *second = rc_ackbatch_done(&b);
    assert_int_equal(count(second), 4);
    for (int i = 1; i < 5; i++, second = second->next)
        assert_ptr_equal(second, &it[i]);
    assert_int_equal(rc_ackbatch_start(&b, 2000, &n, &ms), 0); /* nothing left */
    assert_null(rc_ackbatch_done(&b));
}

/* A write sent before the WAIT in flight but answered after it was sent
 * (Redis ran it first) is covered by it: it joins that batch, unless it
 * asks more than that WAIT does. */
static void a_write_sent_before_the_wait_is_in_its_batch(void **state)
{
    (void)state;
    struct rc_ackbatch b;
    struct rc_ackbatch_item a = {NULL, 1, 500}, early = {NULL, 1, 500}, more = {NULL, 2, 500}, late = {NULL, 1, 500};
    int n;
    int64_t ms;
    rc_ackbatch_init(&b);
    uint64_t sa = rc_ackbatch_sent(&b), se = rc_ackbatch_sent(&b), sm = rc_ackbatch_sent(&b);
    rc_ackbatch_add(&b, &a, sa);
    assert_int_equal(rc_ackbatch_start(&b, 0, &n, &ms), 1);
    uint64_t sl = rc_ackbatch_sent(&b);
    assert_int_equal(rc_ackbatch_add(&b, &early, se), 0);
    assert_int_equal(rc_ackbatch_add(&b, &more, sm), 0);
    assert_int_equal(rc_ackbatch_add(&b, &late, sl), 0);
    struct rc_ackbatch_item *batch = rc_ackbatch_done(&b);
    assert_int_equal(count(batch), 2);
    assert_ptr_equal(batch, &a);
    assert_ptr_equal(batch->next, &early);
    /* the next WAIT: the one that asked more, and the one sent after */
    assert_int_equal(rc_ackbatch_start(&b, 10, &n, &ms), 1);
    assert_int_equal(n, 2);
    batch = rc_ackbatch_done(&b);
    assert_ptr_equal(batch, &more);
    assert_ptr_equal(batch->next, &late);
    assert_null(batch->next->next);
}

/* The WAIT asks the most replicas and the longest timeout of its batch. */
static void a_batch_waits_for_its_largest_ask(void **state)
{
    (void)state;
    struct rc_ackbatch b;
    struct rc_ackbatch_item a = {NULL, 1, 2000}, c = {NULL, 2, 300};
    int n;
    int64_t ms;
    rc_ackbatch_init(&b);
    rc_ackbatch_add(&b, &a, rc_ackbatch_sent(&b));
    rc_ackbatch_add(&b, &c, rc_ackbatch_sent(&b));
    assert_int_equal(rc_ackbatch_start(&b, 0, &n, &ms), 1);
    assert_int_equal(n, 2);
    assert_int_equal(ms, 2000);
}

/* A lost connection hands back the pending writes (their WAIT can never
 * be sent there); the WAIT in flight keeps its batch until it is answered. */
static void a_lost_connection_returns_the_pending(void **state)
{
    (void)state;
    struct rc_ackbatch b;
    struct rc_ackbatch_item a = {NULL, 1, 100}, c = {NULL, 1, 100}, d = {NULL, 1, 100};
    int n;
    int64_t ms;
    rc_ackbatch_init(&b);
    rc_ackbatch_add(&b, &a, rc_ackbatch_sent(&b));
    assert_int_equal(rc_ackbatch_start(&b, 0, &n, &ms), 1);
    rc_ackbatch_add(&b, &c, rc_ackbatch_sent(&b));
    rc_ackbatch_add(&b, &d, rc_ackbatch_sent(&b));
    struct rc_ackbatch_item *left = rc_ackbatch_take_pending(&b);
    assert_ptr_equal(left, &c);
    assert_ptr_equal(left->next, &d);
    assert_null(left->next->next);
    assert_null(rc_ackbatch_take_pending(&b));
    assert_int_equal(b.busy, 1);
    assert_ptr_equal(rc_ackbatch_done(&b), &a);
    /* usable again: the lists' tails were reset */
    assert_int_equal(rc_ackbatch_add(&b, &c, rc_ackbatch_sent(&b)), 1);
    assert_int_equal(rc_ackbatch_start(&b, 5, &n, &ms), 1);
    assert_ptr_equal(rc_ackbatch_done(&b), &c);
}

/* A reply sent behind the WAIT in flight may come as late as that WAIT's
 * timeout; with none in flight, or past it, no allowance. */
static void the_delay_is_what_is_left_of_the_wait(void **state)
{
    (void)state;
    struct rc_ackbatch b;
    struct rc_ackbatch_item a = {NULL, 1, 4000};
    int n;
    int64_t ms;
    rc_ackbatch_init(&b);
    assert_int_equal(rc_ackbatch_delay(&b, 100), 0);
    rc_ackbatch_add(&b, &a, rc_ackbatch_sent(&b));
    rc_ackbatch_start(&b, 1000, &n, &ms);
    assert_int_equal(rc_ackbatch_delay(&b, 1000), 4000);
    assert_int_equal(rc_ackbatch_delay(&b, 3500), 1500);
    assert_int_equal(rc_ackbatch_delay(&b, 6000), 0);
    rc_ackbatch_done(&b);
    assert_int_equal(rc_ackbatch_delay(&b, 1000), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writes_share_one_wait_at_a_time),
        cmocka_unit_test(a_write_sent_before_the_wait_is_in_its_batch),
        cmocka_unit_test(a_batch_waits_for_its_largest_ask),
        cmocka_unit_test(a_lost_connection_returns_the_pending),
        cmocka_unit_test(the_delay_is_what_is_left_of_the_wait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
