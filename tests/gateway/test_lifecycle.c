/* test_lifecycle.c - the stop sequence (gateway/gw_lifecycle.c) on a real uv
 * loop: the first signal begins the stop, the grace timer finishes it, and
 * the loop closes clean - also when memory runs out at the moment of the
 * signal (malloc is wrapped: -Wl,--wrap=malloc). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "gw_lifecycle.h"

void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);
static int fail_malloc; /* while set, every malloc fails */

void *__wrap_malloc(size_t n)
{
    if (fail_malloc)
        return NULL;
    return __real_malloc(n);
}

struct calls {
    int begun, finished, signum;
};

static void begin_stop(void *data, int signum)
{
    struct calls *c = data;
    c->begun++;
    c->signum = signum;
}

static void finish_stop(void *data)
{
    struct calls *c = data;
    c->finished++;
}

static void close_loop_clean(uv_loop_t *loop)
{
    uv_run(loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(loop), 0);
}

static void test_a_stop_without_memory_still_finishes_and_closes_the_loop(void **state)
{
    (void)state;
    uv_loop_t loop;
    struct gw_lifecycle lc;
    struct calls c = {0, 0, 0};
    struct gw_lifecycle_hooks hooks = {&c, begin_stop, finish_stop};
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(gw_lifecycle_start(&lc, &loop, 10, &hooks), 0);
    fail_malloc = 1;
    gw_lifecycle_stop(&lc, SIGTERM);
    fail_malloc = 0;
    close_loop_clean(&loop);
    assert_int_equal(c.begun, 1);
    assert_int_equal(c.finished, 1);
}

static void test_a_real_signal_begins_then_finishes_after_the_grace(void **state)
{
    (void)state;
    uv_loop_t loop;
    struct gw_lifecycle lc;
    struct calls c = {0, 0, 0};
    struct gw_lifecycle_hooks hooks = {&c, begin_stop, finish_stop};
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(gw_lifecycle_start(&lc, &loop, 50, &hooks), 0);
    assert_int_equal(uv_kill(getpid(), SIGTERM), 0);
    /* Runs until the signal arrives and the grace timer has fired: the loop
     * only empties once both signals and the timer are closed. */
    close_loop_clean(&loop);
    assert_int_equal(c.begun, 1);
    assert_int_equal(c.signum, SIGTERM);
    assert_int_equal(c.finished, 1);
}

static void test_a_second_stop_is_ignored(void **state)
{
    (void)state;
    uv_loop_t loop;
    struct gw_lifecycle lc;
    struct calls c = {0, 0, 0};
    struct gw_lifecycle_hooks hooks = {&c, begin_stop, finish_stop};
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(gw_lifecycle_start(&lc, &loop, 10, &hooks), 0);
    gw_lifecycle_stop(&lc, SIGINT);
    gw_lifecycle_stop(&lc, SIGTERM);
    close_loop_clean(&loop);
    assert_int_equal(c.begun, 1);
    assert_int_equal(c.signum, SIGINT);
    assert_int_equal(c.finished, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_real_signal_begins_then_finishes_after_the_grace),
        cmocka_unit_test(test_a_second_stop_is_ignored),
        cmocka_unit_test(test_a_stop_without_memory_still_finishes_and_closes_the_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
