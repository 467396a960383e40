/* test_lock.c - redis/gw_lock against a real redis-server: two owners (only
 * one gets it), a release or renewal by a non-owner changes nothing, expiry
 * lets the next owner take over (and the old one can no longer renew or
 * release it), renewal keeps a lock past its first expiry. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <uv.h>

#include "redis/gw_lock.h"
#include "redis/gw_redis.h"
#include "rc_err.h"
#include "rc_test_redis.h"

#define KEY "rc:{t|}:lock"
#define DEADLINE_MS 10000

struct fixture {
    struct rc_test_redis redis;
    uv_loop_t loop;
    uv_timer_t tick; /* wakes the loop so waits can time out */
    struct gw_redis *redis_front; /* the front, as the jobs use it */
    redisContext *sync; /* for looking at the key */
    struct gw_lock_scripts scripts;
};

struct answer {
    int done, rc;
};

static void on_answer(int rc, const char *err, void *privdata)
{
    struct answer *a = privdata;
    (void)err;
    a->done = 1;
    a->rc = rc;
}

static void on_tick(uv_timer_t *t)
{
    (void)t;
}

/* Runs the loop until a->done (fails after DEADLINE_MS). */
static int wait_answer(struct fixture *f, struct answer *a)
{
    uint64_t end = uv_hrtime() / 1000000 + DEADLINE_MS;
    while (!a->done && uv_hrtime() / 1000000 < end)
        uv_run(&f->loop, UV_RUN_ONCE);
    assert_true(a->done);
    return a->rc;
}

static int acquire(struct fixture *f, const char *token, int64_t ttl)
{
    struct answer a = {0, 0};
    assert_int_equal(gw_lock_acquire(f->redis_front, KEY, token, ttl, on_answer, &a), 0);
    return wait_answer(f, &a);
}

static int renew(struct fixture *f, const char *token, int64_t ttl)
{
    struct answer a = {0, 0};
    assert_int_equal(gw_lock_renew(&f->scripts, f->redis_front, KEY, token, ttl, on_answer, &a), 0);
    return wait_answer(f, &a);
}

static int release(struct fixture *f, const char *token)
{
    struct answer a = {0, 0};
    assert_int_equal(gw_lock_release(&f->scripts, f->redis_front, KEY, token, on_answer, &a), 0);
    return wait_answer(f, &a);
}

/* The key's value, or "" when it is absent. */
static void holder(struct fixture *f, char *out, size_t cap)
{
    redisReply *r = redisCommand(f->sync, "GET %s", KEY);
    assert_non_null(r);
    snprintf(out, cap, "%s", r->type == REDIS_REPLY_STRING ? r->str : "");
    freeReplyObject(r);
}

static long long pttl(struct fixture *f)
{
    redisReply *r = redisCommand(f->sync, "PTTL %s", KEY);
    assert_non_null(r);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f || rc_test_redis_start(&f->redis, NULL) != 0)
        return -1;
    uv_loop_init(&f->loop);
    uv_timer_init(&f->loop, &f->tick);
    uv_timer_start(&f->tick, on_tick, 20, 20);
    char seeds[32];
    snprintf(seeds, sizeof seeds, "127.0.0.1:%d", f->redis.port);
    struct gw_redis_opts o = {.seeds = seeds, .backoff_min_ms = 20, .backoff_max_ms = 500};
    if (!(f->redis_front = gw_redis_start(&f->loop, &o, NULL)))
        return -1;
    gw_lock_scripts_init(&f->scripts);
    gw_redis_add_script(f->redis_front, &f->scripts.renew);
    gw_redis_add_script(f->redis_front, &f->scripts.release);
    uint64_t end = uv_hrtime() / 1000000 + DEADLINE_MS;
    while (!gw_redis_is_up(f->redis_front) && uv_hrtime() / 1000000 < end)
        uv_run(&f->loop, UV_RUN_ONCE);
    if (!gw_redis_is_up(f->redis_front))
        return -1;
    f->sync = rc_test_redis_connect(&f->redis);
    if (!f->sync)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    gw_redis_stop(f->redis_front);
    uv_close((uv_handle_t *)&f->tick, NULL);
    while (uv_run(&f->loop, UV_RUN_NOWAIT))
        ;
    uv_loop_close(&f->loop);
    redisFree(f->sync);
    rc_test_redis_stop(&f->redis);
    free(f);
    return 0;
}

static void del_key(struct fixture *f)
{
    freeReplyObject(redisCommand(f->sync, "DEL %s", KEY));
}

static void test_two_owners(void **state)
{
    struct fixture *f = *state;
    char h[64];
    del_key(f);
    assert_int_equal(acquire(f, "A", 60000), 1);
    assert_int_equal(acquire(f, "B", 60000), 0);
    holder(f, h, sizeof h);
    assert_string_equal(h, "A");
    /* A non-owner neither releases nor renews it. */
    assert_int_equal(release(f, "B"), 0);
    assert_int_equal(renew(f, "B", 5), 0);
    holder(f, h, sizeof h);
    assert_string_equal(h, "A");
    assert_true(pttl(f) > 30000);
    /* The owner releases it; then B gets it. */
    assert_int_equal(release(f, "A"), 1);
    holder(f, h, sizeof h);
    assert_string_equal(h, "");
    assert_int_equal(acquire(f, "B", 60000), 1);
    assert_int_equal(release(f, "A"), 0);
    holder(f, h, sizeof h);
    assert_string_equal(h, "B");
}

static void test_expiry_takeover(void **state)
{
    struct fixture *f = *state;
    char h[64];
    del_key(f);
    assert_int_equal(acquire(f, "A", 100), 1);
    /* Wait (no fixed sleep) until it has expired. */
    uint64_t end = uv_hrtime() / 1000000 + DEADLINE_MS;
    do {
        uv_run(&f->loop, UV_RUN_ONCE);
        holder(f, h, sizeof h);
    } while (h[0] && uv_hrtime() / 1000000 < end);
    assert_string_equal(h, "");
    assert_int_equal(acquire(f, "B", 60000), 1);
    /* The old owner can neither renew nor release the new owner's lock. */
    assert_int_equal(renew(f, "A", 60000), 0);
    assert_int_equal(release(f, "A"), 0);
    holder(f, h, sizeof h);
    assert_string_equal(h, "B");
}

static void test_renewal_keeps_it(void **state)
{
    struct fixture *f = *state;
    char h[64];
    del_key(f);
    assert_int_equal(acquire(f, "A", 300), 1);
    assert_int_equal(renew(f, "A", 60000), 1);
    assert_true(pttl(f) > 30000);
    /* Past the first expiry (300 ms), with a margin, it is still A's. */
    uint64_t until = uv_hrtime() / 1000000 + 800;
    while (uv_hrtime() / 1000000 < until)
        uv_run(&f->loop, UV_RUN_ONCE);
    holder(f, h, sizeof h);
    assert_string_equal(h, "A");
    assert_int_equal(acquire(f, "B", 60000), 0);
    assert_int_equal(release(f, "A"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_owners),
        cmocka_unit_test(test_expiry_takeover),
        cmocka_unit_test(test_renewal_keeps_it),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
