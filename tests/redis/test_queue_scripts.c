/* test_queue_scripts.c - lua/enqueue.lua and lua/queue_ack.lua against a real
 * redis-server: the first write creates the stream with its consumer group;
 * a req is queued once and answered duplicate with its entry after; a full
 * queue adds nothing; a blocked member adds nothing; applied entries leave
 * the stream and the group's pending list together. One server for all. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_lua.h"
#include "rc_queue.h"
#include "rc_test_redis.h"

#define STREAM "rc:{q|}:in"
#define BLOCKED "rc:{q|}:blocked"

static int fresh(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    freeReplyObject(redisCommand(f->c, "FLUSHALL"));
    return 0;
}

static long long integer(struct rc_test_redis_fixture *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(f->c, fmt, ap);
    va_end(ap);
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

/* enqueue.lua: an incr of 1 for member m with req (or "") and queue_max max;
 * the reply (caller frees). */
static redisReply *enqueue(struct rc_test_redis_fixture *f, const char *m, const char *req, const char *max)
{
    char marker[128];
    snprintf(marker, sizeof marker, "rc:{q|}:req:%s", req);
    const char *argv[] = {"EVAL", rc_lua_enqueue, "3", STREAM, marker, BLOCKED, max, req, "600", RC_QUEUE_GROUP, m,
                          "0" /* records may be made */, "op", "incr", "m", m, "at", "1", "v", "1", "req", req};
    int argc = (int)(sizeof argv / sizeof argv[0]) - (req[0] ? 0 : 2);
    redisReply *r = redisCommandArgv(f->c, argc, argv, NULL);
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    return r;
}

static void test_first_write_creates_the_stream_and_its_group(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    redisReply *r = enqueue(f, "ann", "r1", "10");
    assert_string_equal(r->element[0]->str, "ok");
    assert_int_equal(r->element[2]->integer, 1);
    freeReplyObject(r);
    redisReply *g = redisCommand(f->c, "XINFO GROUPS %s", STREAM);
    assert_non_null(g);
    assert_int_equal(g->type, REDIS_REPLY_ARRAY);
    assert_int_equal(g->elements, 1);
    freeReplyObject(g);
    /* the group starts before the first entry: a consumer reads it */
    redisReply *x = redisCommand(f->c, "XREADGROUP GROUP %s c1 COUNT 10 STREAMS %s >", RC_QUEUE_GROUP, STREAM);
    assert_non_null(x);
    assert_int_equal(x->type, REDIS_REPLY_ARRAY);
    assert_int_equal(x->element[0]->element[1]->elements, 1);
    const redisReply *kv = x->element[0]->element[1]->element[0]->element[1];
    const char *want[] = {"op", "incr", "m", "ann", "at", "1", "v", "1", "req", "r1"};
    assert_int_equal(kv->elements, 10);
    for (size_t i = 0; i < 10; i++)
        assert_string_equal(kv->element[i]->str, want[i]);
    freeReplyObject(x);
}

static void test_a_req_is_queued_once_and_answered_with_its_entry(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    redisReply *a = enqueue(f, "ann", "r1", "10");
    redisReply *b = enqueue(f, "bob", "r1", "10"); /* same req, another member: still the first */
    assert_string_equal(b->element[0]->str, "duplicate");
    assert_string_equal(b->element[1]->str, a->element[1]->str);
    assert_string_equal(b->element[2]->str, "ann");
    assert_int_equal(integer(f, "XLEN %s", STREAM), 1);
    freeReplyObject(a);
    freeReplyObject(b);
    /* no req: never a duplicate */
    freeReplyObject(enqueue(f, "ann", "", "10"));
    freeReplyObject(enqueue(f, "ann", "", "10"));
    assert_int_equal(integer(f, "XLEN %s", STREAM), 3);
}

static void test_a_full_queue_adds_nothing(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    freeReplyObject(enqueue(f, "a", "r1", "2"));
    freeReplyObject(enqueue(f, "a", "r2", "2"));
    redisReply *r = enqueue(f, "a", "r3", "2");
    assert_string_equal(r->element[0]->str, "full");
    assert_int_equal(r->element[1]->integer, 2);
    freeReplyObject(r);
    assert_int_equal(integer(f, "XLEN %s", STREAM), 2);
    assert_int_equal(integer(f, "EXISTS rc:{q|}:req:r3"), 0); /* a retry later is queued */
    /* a queued req is still a duplicate when full */
    r = enqueue(f, "a", "r1", "2");
    assert_string_equal(r->element[0]->str, "duplicate");
    freeReplyObject(r);
}

static void test_a_blocked_member_adds_nothing(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    integer(f, "SADD %s eve", BLOCKED);
    redisReply *r = enqueue(f, "eve", "r1", "10");
    assert_string_equal(r->element[0]->str, "forbidden");
    freeReplyObject(r);
    assert_int_equal(integer(f, "EXISTS %s", STREAM), 0);
    assert_int_equal(integer(f, "EXISTS rc:{q|}:req:r1"), 0);
}

static void test_applied_entries_leave_the_stream_and_the_pending_list(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    redisReply *a = enqueue(f, "a", "", "10");
    redisReply *b = enqueue(f, "b", "", "10");
    freeReplyObject(redisCommand(f->c, "XREADGROUP GROUP %s c1 COUNT 10 STREAMS %s >", RC_QUEUE_GROUP, STREAM));
    long long n = integer(f, "EVAL %s 1 %s %s %s", rc_lua_queue_ack, STREAM, RC_QUEUE_GROUP, a->element[1]->str);
    assert_int_equal(n, 1);
    assert_int_equal(integer(f, "XLEN %s", STREAM), 1);
    redisReply *p = redisCommand(f->c, "XPENDING %s %s", STREAM, RC_QUEUE_GROUP);
    assert_non_null(p);
    assert_int_equal(p->element[0]->integer, 1);
    assert_string_equal(p->element[1]->str, b->element[1]->str);
    freeReplyObject(p);
    freeReplyObject(a);
    freeReplyObject(b);
    /* no ids: nothing to do */
    assert_int_equal(integer(f, "EVAL %s 1 %s %s", rc_lua_queue_ack, STREAM, RC_QUEUE_GROUP), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_first_write_creates_the_stream_and_its_group, fresh),
        cmocka_unit_test_setup(test_a_req_is_queued_once_and_answered_with_its_entry, fresh),
        cmocka_unit_test_setup(test_a_full_queue_adds_nothing, fresh),
        cmocka_unit_test_setup(test_a_blocked_member_adds_nothing, fresh),
        cmocka_unit_test_setup(test_applied_entries_leave_the_stream_and_the_pending_list, fresh),
    };
    return cmocka_run_group_tests(tests, rc_test_redis_setup, rc_test_redis_teardown);
}
