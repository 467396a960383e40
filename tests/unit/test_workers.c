/* test_workers.c - rc_workers: the worker count from flag, environment and
 * file; what the supervisor does when a worker ends; the restart backoff;
 * and rc_wslot, the shared per-worker counters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rc_conf.h"
#include "rc_err.h"
#include "rc_workers.h"
#include "rc_wslot.h"

static void test_a_count_within_1_to_64_is_taken(void **state)
{
    (void)state;
    unsigned n = 0;
    struct rc_error err = {0, ""};
    assert_int_equal(rc_workers_parse("--workers", "1", &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(rc_workers_parse("--workers", "64", &n, &err), 0);
    assert_int_equal(n, 64);
    assert_int_equal(rc_workers_parse("--workers", "08", &n, &err), 0);
    assert_int_equal(n, 8);
}

static void test_zero_and_65_are_refused_naming_the_bounds(void **state)
{
    (void)state;
    unsigned n = 7;
    struct rc_error err = {0, ""};
    assert_int_equal(rc_workers_parse("--workers", "0", &n, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "--workers"));
    assert_non_null(strstr(err.msg, "1..64"));
    assert_int_equal(rc_workers_parse("RANKCAST_WORKERS", "65", &n, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "RANKCAST_WORKERS"));
    assert_non_null(strstr(err.msg, "out of range"));
    assert_int_equal(rc_workers_parse("--workers", "99999999999999999999", &n, &err), RC_E_BAD_REQUEST);
    assert_int_equal(n, 7); /* untouched */
}

static void test_words_signs_spaces_and_empty_are_refused(void **state)
{
    (void)state;
    unsigned n = 7;
    struct rc_error err = {0, ""};
    static const char *const bad[] = {"x", "2x", "-1", "+2", " 2", "2 ", "1.5", "0x2", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(rc_workers_parse("--workers", bad[i], &n, &err), RC_E_BAD_REQUEST);
        assert_non_null(strstr(err.msg, "1..64"));
    }
    assert_int_equal(rc_workers_parse("--workers", "x", &n, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "'x' is not a number"));
    assert_int_equal(n, 7);
}

static void test_the_flag_beats_the_environment_which_beats_the_file(void **state)
{
    (void)state;
    unsigned n = 0;
    struct rc_error err = {0, ""};
    assert_int_equal(rc_workers_resolve("3", "5", 2, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(rc_workers_resolve(NULL, "5", 2, &n, &err), 0);
    assert_int_equal(n, 5);
    assert_int_equal(rc_workers_resolve(NULL, "", 2, &n, &err), 0); /* an empty variable is not set */
    assert_int_equal(n, 2);
    assert_int_equal(rc_workers_resolve(NULL, NULL, 1, &n, &err), 0);
    assert_int_equal(n, 1);
    /* a bad flag is refused even when the environment is good */
    assert_int_equal(rc_workers_resolve("x", "5", 2, &n, &err), RC_E_BAD_REQUEST);
    assert_int_equal(rc_workers_resolve("", "5", 2, &n, &err), RC_E_BAD_REQUEST);
}

static int parse(const char *text, struct rc_conf *c, struct rc_error *err)
{
    return rc_conf_parse("t.conf", text, strlen(text), c, err);
}

static void test_the_config_key_defaults_to_one_and_is_bounded(void **state)
{
    (void)state;
    struct rc_conf *c = malloc(sizeof *c);
    struct rc_error err = {0, ""};
    assert_int_equal(parse("[server]\n", c, &err), 0);
    assert_int_equal(c->workers, 1);
    assert_int_equal(parse("[server]\nworkers = 4\n", c, &err), 0);
    assert_int_equal(c->workers, 4);
    assert_int_not_equal(parse("[server]\nworkers = 0\n", c, &err), 0);
    assert_non_null(strstr(err.msg, "workers"));
    assert_int_not_equal(parse("[server]\nworkers = 65\n", c, &err), 0);
    free(c);
}

static void test_a_worker_that_could_not_start_fails_the_group(void **state)
{
    (void)state;
    assert_int_equal(rc_workers_end(0, 1, RC_WORKER_EXIT_START), RC_WORKER_FAIL);
    assert_int_equal(rc_workers_end(0, 0, 9), RC_WORKER_RESTART);  /* killed by a signal */
    assert_int_equal(rc_workers_end(0, 1, 0), RC_WORKER_RESTART);  /* exited on its own */
    assert_int_equal(rc_workers_end(0, 1, 1), RC_WORKER_RESTART);
    assert_int_equal(rc_workers_end(1, 1, RC_WORKER_EXIT_START), RC_WORKER_DONE);
    assert_int_equal(rc_workers_end(1, 0, 15), RC_WORKER_DONE);
}

static void test_restarts_back_off_doubling_up_to_the_cap(void **state)
{
    (void)state;
    struct rc_restart r = {0};
    int64_t t = 1000;
    int64_t want[] = {100, 200, 400, 800, 1600, 3200, 6400, 10000, 10000, 10000};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int64_t d = rc_workers_restart_delay(&r, t, t + 5); /* crashed 5 ms after its start */
        assert_int_equal(d, want[i]);
        t += d + 5;
    }
    /* a very long streak does not overflow */
    r.streak = 1000000;
    assert_int_equal(rc_workers_restart_delay(&r, t, t + 1), RC_RESTART_MAX_MS);
}

static void test_a_worker_that_ran_long_enough_starts_the_backoff_over(void **state)
{
    (void)state;
    struct rc_restart r = {0};
    for (int i = 0; i < 5; i++)
        rc_workers_restart_delay(&r, 0, 10);
    assert_int_equal(rc_workers_restart_delay(&r, 0, RC_RESTART_STABLE_MS - 1), 3200);
    assert_int_equal(rc_workers_restart_delay(&r, 0, RC_RESTART_STABLE_MS), RC_RESTART_FIRST_MS);
    assert_int_equal(rc_workers_restart_delay(&r, 0, 10), 200);
}

static void test_a_published_slot_reads_back_and_sums(void **state)
{
    (void)state;
    static struct rc_wslot a, b;
    uint64_t wa[4] = {1, 2, 3, 4}, wb[4] = {10, 20, 30, 40}, got[4], sum[4] = {0};
    rc_wslot_publish(&a, wa, 4);
    rc_wslot_publish(&b, wb, 4);
    rc_wslot_publish(&b, wb, 4);
    assert_int_equal(rc_wslot_read(&a, got, 4, 3), 0);
    assert_memory_equal(got, wa, sizeof wa);
    rc_wslot_sum(sum, got, 4);
    assert_int_equal(rc_wslot_read(&b, got, 4, 3), 0);
    rc_wslot_sum(sum, got, 4);
    assert_int_equal(sum[0], 11);
    assert_int_equal(sum[3], 44);
    assert_int_equal(atomic_load(&b.seq) % 2, 0);
}

static void test_a_slot_left_mid_write_is_not_read(void **state)
{
    (void)state;
    static struct rc_wslot s;
    uint64_t w[2] = {5, 6}, got[2] = {0, 0};
    rc_wslot_publish(&s, w, 2);
    atomic_store(&s.seq, atomic_load(&s.seq) + 1); /* a writer that died between its stores */
    assert_int_equal(rc_wslot_read(&s, got, 2, 100), -1);
    assert_int_equal(got[0], 0);
    rc_wslot_publish(&s, NULL, 0); /* the supervisor's clear: all zero, seq even again */
    assert_int_equal(rc_wslot_read(&s, got, 2, 1), 0);
    assert_int_equal(got[0], 0);
    assert_int_equal(got[1], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_count_within_1_to_64_is_taken),
        cmocka_unit_test(test_zero_and_65_are_refused_naming_the_bounds),
        cmocka_unit_test(test_words_signs_spaces_and_empty_are_refused),
        cmocka_unit_test(test_the_flag_beats_the_environment_which_beats_the_file),
        cmocka_unit_test(test_the_config_key_defaults_to_one_and_is_bounded),
        cmocka_unit_test(test_a_worker_that_could_not_start_fails_the_group),
        cmocka_unit_test(test_restarts_back_off_doubling_up_to_the_cap),
        cmocka_unit_test(test_a_worker_that_ran_long_enough_starts_the_backoff_over),
        cmocka_unit_test(test_a_published_slot_reads_back_and_sums),
        cmocka_unit_test(test_a_slot_left_mid_write_is_not_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
