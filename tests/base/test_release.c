/* test_release.c - base/gw_release and jobs/gw_job on a real libuv loop: an
 * owner is freed only after its handles' close callbacks and its last hold,
 * once it asked, exactly once; a busy callback keeps it; a reply that comes
 * back after stop is told to touch nothing and is the one that frees; a job
 * is idle only while nothing it sent is unanswered. Each test leaves the
 * loop closed (uv_loop_close 0). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/gw_release.h"
#include "jobs/gw_job.h"

struct owner {
    struct gw_release rel;
    uv_timer_t a, b;
    int busy;         /* what the count does not see */
    int *freed;       /* the test's counter, outlives the owner */
};

static void owner_free(struct gw_release *rel)
{
    struct owner *o = (struct owner *)((char *)rel - offsetof(struct owner, rel));
    (*o->freed)++;
    free(o);
}

static int owner_busy(const struct gw_release *rel)
{
    return ((const struct owner *)((const char *)rel - offsetof(struct owner, rel)))->busy;
}

static struct owner *owner_new(uv_loop_t *loop, int *freed)
{
    struct owner *o = calloc(1, sizeof *o);
    assert_non_null(o);
    o->freed = freed;
    gw_release_init(&o->rel, owner_free, owner_busy);
    uv_timer_init(loop, &o->a);
    uv_timer_init(loop, &o->b);
    gw_release_hold(&o->rel);
    gw_release_hold(&o->rel);
    return o;
}

static void close_loop(uv_loop_t *loop)
{
    uv_run(loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(loop), 0);
}

static void test_an_owner_goes_after_its_last_close_callback(void **state)
{
    (void)state;
    uv_loop_t loop;
    int freed = 0;
    assert_int_equal(uv_loop_init(&loop), 0);
    struct owner *o = owner_new(&loop, &freed);
    assert_int_equal(gw_release_stop(&o->rel), 0); /* two timers hold it */
    gw_release_close(&o->rel, (uv_handle_t *)&o->a);
    gw_release_close(&o->rel, (uv_handle_t *)&o->b);
    assert_int_equal(freed, 0); /* close callbacks run on the loop, not in uv_close */
    close_loop(&loop);
    assert_int_equal(freed, 1);
}

static void test_a_hold_or_busy_keeps_it_and_the_last_one_frees(void **state)
{
    (void)state;
    uv_loop_t loop;
    int freed = 0;
    assert_int_equal(uv_loop_init(&loop), 0);
    struct owner *o = owner_new(&loop, &freed);
    gw_release_hold(&o->rel); /* a command in flight */
    o->busy = 1;              /* and a context still to call back */
    gw_release_stop(&o->rel);
    gw_release_close(&o->rel, (uv_handle_t *)&o->a);
    gw_release_close(&o->rel, (uv_handle_t *)&o->b);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(freed, 0);
    assert_int_equal(gw_release_drop(&o->rel), 0); /* still busy */
    o->busy = 0;
    assert_int_equal(gw_release_check(&o->rel), 1);
    assert_int_equal(freed, 1);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_nothing_is_freed_before_stop(void **state)
{
    (void)state;
    uv_loop_t loop;
    int freed = 0;
    assert_int_equal(uv_loop_init(&loop), 0);
    struct owner *o = owner_new(&loop, &freed);
    gw_release_hold(&o->rel);
    assert_int_equal(gw_release_drop(&o->rel), 0); /* not stopping: a drop to 2 holds frees nothing */
    gw_release_close(&o->rel, (uv_handle_t *)&o->a);
    gw_release_close(&o->rel, (uv_handle_t *)&o->b);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(freed, 0);
    assert_int_equal(gw_release_stop(&o->rel), 1); /* nothing holds it: at once */
    assert_int_equal(freed, 1);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_close_free_frees_the_handle_too(void **state)
{
    (void)state;
    uv_loop_t loop;
    int freed = 0;
    assert_int_equal(uv_loop_init(&loop), 0);
    struct owner *o = owner_new(&loop, &freed);
    uv_timer_t *extra = malloc(sizeof *extra); /* like a struct sock: the handle first */
    assert_non_null(extra);
    uv_timer_init(&loop, extra);
    gw_release_hold(&o->rel);
    gw_release_stop(&o->rel);
    gw_release_close_free(&o->rel, (uv_handle_t *)extra);
    gw_release_close(&o->rel, (uv_handle_t *)&o->a);
    gw_release_close(&o->rel, (uv_handle_t *)&o->b);
    close_loop(&loop); /* leak-free under the sanitizer pass */
    assert_int_equal(freed, 1);
}

/* ---- jobs/gw_job ------------------------------------------------------------------ */

struct jobs {
    struct gw_release rel;
    struct gw_job job;
    int *freed;
};

static void jobs_free(struct gw_release *rel)
{
    struct jobs *s = (struct jobs *)((char *)rel - offsetof(struct jobs, rel));
    (*s->freed)++;
    free(s);
}

static void on_tick(uv_timer_t *t)
{
    (void)t;
}

static void test_a_reply_after_stop_touches_nothing_and_frees_last(void **state)
{
    (void)state;
    uv_loop_t loop;
    int freed = 0;
    assert_int_equal(uv_loop_init(&loop), 0);
    struct jobs *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->freed = &freed;
    gw_release_init(&s->rel, jobs_free, NULL);
    gw_job_init(&s->job, &s->rel, "test", "b");
    gw_job_start(&s->job, &loop, on_tick, s, 1000, 1000);
    assert_true(gw_job_idle(&s->job));
    gw_job_sent(&s->job);
    gw_job_sent(&s->job);
    assert_false(gw_job_idle(&s->job)); /* a step in flight: the tick waits */
    assert_int_equal(gw_job_answered(&s->job), 0);
    gw_release_stop(&s->rel);
    assert_false(gw_job_idle(&s->job)); /* stopping: never idle again */
    gw_job_close(&s->job);
    uv_run(&loop, UV_RUN_DEFAULT); /* the timer's close callback: one command still out */
    assert_int_equal(freed, 0);
    struct gw_job *j = &s->job;
    assert_int_equal(gw_job_answered(j), -1); /* the last hold: freed, touch nothing */
    assert_int_equal(freed, 1);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_owner_goes_after_its_last_close_callback),
        cmocka_unit_test(test_a_hold_or_busy_keeps_it_and_the_last_one_frees),
        cmocka_unit_test(test_nothing_is_freed_before_stop),
        cmocka_unit_test(test_close_free_frees_the_handle_too),
        cmocka_unit_test(test_a_reply_after_stop_touches_nothing_and_frees_last),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
