/* test_group.c - base/gw_group: the worker group's shared region across a
 * real fork. A child's publication is read by its parent; the sum covers
 * every slot; a dead worker's counters stay in the sum and its gauges do
 * not; an empty region sums to zero. The group's connection counts: what
 * one worker sets the others read (its own not included), and a dead
 * worker's counts are gone; the test clock's offset is one word for all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/gw_group.h"
#include "base/gw_metrics.h"

/* Forks a child that publishes m as worker i with pid 1000 + i, and waits
 * for it to exit. */
static void publish_from_child(struct gw_group *g, unsigned i, const struct gw_metrics *m)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        gw_group_publish(g, i, 1000 + (long)i, 1, 0, m);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_what_a_child_publishes_its_parent_reads_and_sums(void **state)
{
    (void)state;
    struct gw_group *g = gw_group_create(2);
    assert_non_null(g);
    struct gw_metrics a, b, sum;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.connections = 3;
    a.deltas_sent = 100;
    a.rtt_sum_us = 7;
    b.connections = 4;
    b.deltas_sent = 50;
    b.errors[2] = 1;
    publish_from_child(g, 0, &a);
    publish_from_child(g, 1, &b);
    struct gw_group_worker each[2];
    assert_int_equal(gw_group_read_all(g, each, &sum), 2);
    assert_int_equal(each[0].pid, 1000);
    assert_int_equal(each[1].pid, 1001);
    assert_true(each[0].redis_up);
    assert_int_equal(each[1].m.deltas_sent, 50);
    assert_int_equal(sum.connections, 7);
    assert_int_equal(sum.deltas_sent, 150);
    assert_int_equal(sum.errors[2], 1);
    assert_int_equal(sum.rtt_sum_us, 7);
    gw_group_free(g);
}

static void test_a_dead_workers_counters_stay_in_the_sum_and_its_gauges_go(void **state)
{
    (void)state;
    struct gw_group *g = gw_group_create(2);
    struct gw_metrics a, sum;
    memset(&a, 0, sizeof a);
    a.connections = 30;
    a.connections_total = 31;
    a.subscriptions[3] = 30;
    a.deltas_sent = 900;
    publish_from_child(g, 1, &a);
    gw_group_retire(g, 1, 1);
    struct gw_group_worker each[2];
    assert_int_equal(gw_group_read_all(g, each, &sum), 0);
    assert_int_equal(each[1].pid, 0);
    assert_int_equal(each[1].restarts, 1);
    assert_int_equal(each[1].m.deltas_sent, 0);
    assert_int_equal(sum.connections, 0);
    assert_int_equal(sum.subscriptions[3], 0);
    assert_int_equal(sum.connections_total, 31);
    assert_int_equal(sum.deltas_sent, 900);
    /* the new worker starts from 0; the group's count goes on from 900 */
    a.connections = 2;
    a.connections_total = 2;
    a.deltas_sent = 10;
    publish_from_child(g, 1, &a);
    gw_group_retire(g, 1, 2);
    publish_from_child(g, 1, &a);
    assert_int_equal(gw_group_read_all(g, each, &sum), 1);
    assert_int_equal(sum.connections, 2);
    assert_int_equal(sum.connections_total, 31 + 2 + 2);
    assert_int_equal(sum.deltas_sent, 920);
    gw_group_free(g);
}

static void test_an_empty_region_sums_to_zero(void **state)
{
    (void)state;
    struct gw_group *g = gw_group_create(3);
    struct gw_group_worker each[3];
    struct gw_metrics sum, zero;
    memset(&zero, 0, sizeof zero);
    assert_int_equal(gw_group_size(g), 3);
    assert_int_equal(gw_group_read_all(g, each, &sum), 0);
    assert_memory_equal(&sum, &zero, sizeof sum);
    assert_null(gw_group_create(0));
    gw_group_free(g);
}

static void test_connection_counts_are_read_by_the_others_and_die_with_their_worker(void **state)
{
    (void)state;
    struct gw_group *g = gw_group_create(3);
    const uint8_t a[16] = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 3};
    const uint8_t b[16] = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 4};
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* worker 1 */
        gw_group_set_sockets(g, 1, 5);
        _exit(gw_group_set_addr(g, 1, a, 3) == 0 ? 0 : 1);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    gw_group_set_sockets(g, 2, 2); /* worker 2, this process */
    assert_int_equal(gw_group_set_addr(g, 2, a, 1), 0);
    assert_int_equal(gw_group_sockets_others(g, 0), 7);
    assert_int_equal(gw_group_sockets_others(g, 2), 5); /* not its own */
    assert_int_equal(gw_group_addr_others(g, 0, a), 4);
    assert_int_equal(gw_group_addr_others(g, 2, a), 3);
    assert_int_equal(gw_group_addr_others(g, 0, b), 0);
    gw_group_retire(g, 1, 1);
    assert_int_equal(gw_group_sockets_others(g, 0), 2);
    assert_int_equal(gw_group_addr_others(g, 0, a), 1);
    gw_group_free(g);
}

static void test_the_clock_offset_is_one_word_for_the_group(void **state)
{
    (void)state;
    struct gw_group *g = gw_group_create(2);
    assert_null(gw_group_clock_offset(NULL));
    _Atomic int64_t *off = gw_group_clock_offset(g);
    assert_non_null(off);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        atomic_store(gw_group_clock_offset(g), 86400000);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_int_equal(atomic_load(off), 86400000);
    gw_group_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_what_a_child_publishes_its_parent_reads_and_sums),
        cmocka_unit_test(test_a_dead_workers_counters_stay_in_the_sum_and_its_gauges_go),
        cmocka_unit_test(test_an_empty_region_sums_to_zero),
        cmocka_unit_test(test_connection_counts_are_read_by_the_others_and_die_with_their_worker),
        cmocka_unit_test(test_the_clock_offset_is_one_word_for_the_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
