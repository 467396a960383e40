/* test_viewers_script.c - lua/viewers.lua against a real redis-server: it
 * answers the sum of the other gateways' live counts (never its caller's),
 * writes the caller's count with an expiry by Redis's clock and gives the key
 * a TTL (extended, never shortened), drops expired or malformed fields, removes the caller's field on a
 * count of 0, and refuses a bad count without writing. One server for all. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "rc_lua.h"
#include "rc_test_redis.h"

#define KEY "rc:{demo|}:viewers"
#define FAR "99999999999999" /* an expiry far in the future (ms) */

static void run(struct rc_test_redis_fixture *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(f->c, fmt, ap);
    va_end(ap);
    assert_non_null(r);
    assert_int_not_equal(r->type, REDIS_REPLY_ERROR);
    freeReplyObject(r);
}

/* The script as gateway `id` with `count` and `ttl`: its reply (caller frees). */
static redisReply *call(struct rc_test_redis_fixture *f, const char *id, const char *count, const char *ttl)
{
    redisReply *r = redisCommand(f->c, "EVAL %s 1 %s %s %s %s", rc_lua_viewers, KEY, id, count, ttl);
    assert_non_null(r);
    return r;
}

static long long sum_as(struct rc_test_redis_fixture *f, const char *id, const char *count)
{
    redisReply *r = call(f, id, count, "5000");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

static int has_field(struct rc_test_redis_fixture *f, const char *id)
{
    redisReply *r = redisCommand(f->c, "HEXISTS %s %s", KEY, id);
    assert_non_null(r);
    int v = (int)r->integer;
    freeReplyObject(r);
    return v;
}

static long long pttl(struct rc_test_redis_fixture *f)
{
    redisReply *r = redisCommand(f->c, "PTTL %s", KEY);
    assert_non_null(r);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

static void sums_the_other_gateways_live_counts_but_never_the_callers(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    run(f, "HSET %s g1 3:" FAR " g2 4:" FAR, KEY);
    assert_int_equal(sum_as(f, "g3", "2"), 7);
    assert_int_equal(sum_as(f, "g3", "5"), 7); /* its own count is not in its sum */
    assert_int_equal(sum_as(f, "g1", "3"), 9); /* g2 + g3 */
    redisReply *r = redisCommand(f->c, "HGET %s g3", KEY);
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_true(strncmp(r->str, "5:", 2) == 0);
    freeReplyObject(r);
}

static void writes_an_expiry_by_redis_clock_and_a_ttl_on_the_key(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    assert_int_equal(sum_as(f, "g1", "2"), 0);
    long long t = pttl(f);
    assert_true(t > 0 && t <= 5000);
    redisReply *now = redisCommand(f->c, "TIME");
    redisReply *r = redisCommand(f->c, "HGET %s g1", KEY);
    assert_non_null(now);
    assert_non_null(r);
    long long now_ms = atoll(now->element[0]->str) * 1000 + atoll(now->element[1]->str) / 1000;
    long long expires = atoll(strchr(r->str, ':') + 1);
    assert_true(expires > now_ms && expires <= now_ms + 5000);
    freeReplyObject(now);
    freeReplyObject(r);
}

static void a_count_that_expired_drops_out_and_its_field_goes(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    run(f, "HSET %s dead 9:1 live 1:" FAR " junk notacount", KEY);
    assert_int_equal(sum_as(f, "me", "1"), 1);
    assert_false(has_field(f, "dead"));
    assert_false(has_field(f, "junk"));
    assert_true(has_field(f, "live"));

    /* a gateway that stops refreshing: gone once its ttl has passed */
    redisReply *r = call(f, "short", "4", "300");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    freeReplyObject(r);
    assert_true(has_field(f, "short"));
    assert_true(pttl(f) > 1000); /* a shorter ttl never cuts the others' key short */
    nanosleep(&(struct timespec){0, 600 * 1000 * 1000}, NULL); /* sure to be past its expiry, however slow the machine */
    assert_int_equal(sum_as(f, "me", "1"), 1);
    assert_false(has_field(f, "short"));
}

static void a_count_of_zero_removes_the_callers_field(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    assert_int_equal(sum_as(f, "g1", "2"), 0);
    assert_int_equal(sum_as(f, "g2", "1"), 2);
    assert_int_equal(sum_as(f, "g1", "0"), 1);
    assert_false(has_field(f, "g1"));
    assert_true(has_field(f, "g2"));
    assert_int_equal(sum_as(f, "g2", "0"), 0);
    redisReply *r = redisCommand(f->c, "EXISTS %s", KEY);
    assert_int_equal(r->integer, 0); /* nobody left: no key */
    freeReplyObject(r);
}

static void a_bad_count_or_ttl_is_refused_and_writes_nothing(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    const char *bad[][2] = {{"-1", "5000"}, {"1.5", "5000"}, {"x", "5000"}, {"1", "0"}, {"1", "y"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        redisReply *r = call(f, "g1", bad[i][0], bad[i][1]);
        assert_int_equal(r->type, REDIS_REPLY_ERROR);
        freeReplyObject(r);
    }
    redisReply *r = redisCommand(f->c, "EXISTS %s", KEY);
    assert_int_equal(r->integer, 0);
    freeReplyObject(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(sums_the_other_gateways_live_counts_but_never_the_callers, rc_test_redis_setup, rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(writes_an_expiry_by_redis_clock_and_a_ttl_on_the_key, rc_test_redis_setup, rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(a_count_that_expired_drops_out_and_its_field_goes, rc_test_redis_setup, rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(a_count_of_zero_removes_the_callers_field, rc_test_redis_setup, rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(a_bad_count_or_ttl_is_refused_and_writes_nothing, rc_test_redis_setup, rc_test_redis_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
