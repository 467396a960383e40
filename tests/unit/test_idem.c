/* test_idem.c - core/rc_idem: a writer's idempotency records counted per
 * window; the cap refuses past it and frees up as records age out; the
 * automatic cap lets a writer at key_write_rate through forever. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_conf.h"
#include "rc_idem.h"

#define W 8000 /* window, ms: slots of 1000 ms */

static struct rc_conf *conf(const char *text)
{
    struct rc_conf *c = malloc(sizeof *c);
    struct rc_error err = {0, ""};
    assert_non_null(c);
    if (rc_conf_parse("t.conf", text, strlen(text), c, &err) != 0)
        fail_msg("%s", err.msg);
    return c;
}

static void test_the_cap_refuses_the_record_past_it_and_counts_nothing(void **state)
{
    (void)state;
    struct rc_idem_count ct = {0};
    int64_t slot;
    for (int i = 0; i < 5; i++)
        assert_int_equal(rc_idem_take(&ct, 5, W, 1000 + i, &slot), 1);
    assert_int_equal(rc_idem_take(&ct, 5, W, 1005, &slot), 0);
    assert_int_equal(rc_idem_live(&ct, W, 1005), 5);
}

static void test_records_count_for_a_whole_window_then_leave(void **state)
{
    (void)state;
    struct rc_idem_count ct = {0};
    int64_t slot;
    assert_int_equal(rc_idem_take(&ct, 1, W, 1500, &slot), 1);
    /* still live (and counted) until the window has passed */
    assert_int_equal(rc_idem_take(&ct, 1, W, 1500 + W - 1, &slot), 0);
    /* counted at most one slot longer than it lives */
    assert_int_equal(rc_idem_take(&ct, 1, W, 1500 + W + 1000, &slot), 1);
    /* a long pause empties every slot */
    assert_int_equal(rc_idem_live(&ct, W, 1500 + 100 * W), 0);
}

static void test_a_record_given_back_frees_its_place(void **state)
{
    (void)state;
    struct rc_idem_count ct = {0};
    int64_t slot, old;
    assert_int_equal(rc_idem_take(&ct, 2, W, 1000, &old), 1);
    assert_int_equal(rc_idem_take(&ct, 2, W, 2000, &slot), 1);
    rc_idem_give_back(&ct, slot); /* a duplicate: no record made */
    assert_int_equal(rc_idem_live(&ct, W, 2000), 1);
    assert_int_equal(rc_idem_take(&ct, 2, W, 2000, &slot), 1);
    /* a slot that has left the window is not taken from again */
    assert_int_equal(rc_idem_live(&ct, W, 1000 + 10 * W), 0);
    rc_idem_give_back(&ct, old);
    assert_int_equal(rc_idem_live(&ct, W, 1000 + 10 * W), 0);
}

static void test_a_writer_at_key_write_rate_never_meets_the_automatic_cap(void **state)
{
    (void)state;
    struct rc_conf *c = conf("[limits]\nkey_write_rate = 50\nkey_write_burst = 20\n"
                             "[board a]\ntiebreak = none\nidempotency_window = 8s\n"
                             "[board b]\ntiebreak = none\nidempotency_window = 2s\n");
    assert_int_equal(rc_idem_window_ms(c), 8000);
    uint64_t cap = rc_idem_cap(c);
    assert_int_equal(cap, 50 * 9 + 20); /* 9 slots of 1 s, and the burst */
    assert_true(cap > 50 * 8);          /* above key_write_rate x idempotency_window */
    /* the key's bucket: the whole burst at once, then the rate, for ten windows */
    struct rc_idem_count ct = {0};
    int64_t slot;
    for (int i = 0; i < 20; i++)
        assert_int_equal(rc_idem_take(&ct, cap, 8000, 0, &slot), 1);
    for (int64_t t = 20; t < 80000; t += 20)
        assert_int_equal(rc_idem_take(&ct, cap, 8000, t, &slot), 1);
    free(c);
}

static void test_an_explicit_cap_is_read_from_limits(void **state)
{
    (void)state;
    struct rc_conf *c = conf("[limits]\nidempotency_max_per_key = 1000\n");
    assert_int_equal(rc_idem_cap(c), 1000);
    assert_int_equal(rc_idem_floor(c), 20000 * 1125 / 1000 + 40000); /* no boards: a 1 s window, 9 slots of 125 ms */
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_cap_refuses_the_record_past_it_and_counts_nothing),
        cmocka_unit_test(test_records_count_for_a_whole_window_then_leave),
        cmocka_unit_test(test_a_record_given_back_frees_its_place),
        cmocka_unit_test(test_a_writer_at_key_write_rate_never_meets_the_automatic_cap),
        cmocka_unit_test(test_an_explicit_cap_is_read_from_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
