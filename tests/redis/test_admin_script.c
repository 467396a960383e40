/* test_admin_script.c - lua/admin.lua's reset against a real redis-server,
 * called with EVAL on a blocking connection with the keys and arguments
 * gateway/gw_admin.c sends with EVALSHA. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_keys.h"
#include "rc_lua.h"
#include "rc_test_redis.h"

#define T0 "1767225600000" /* 2026-01-01T00:00:00Z */

struct fixture {
    struct rc_test_redis redis;
    redisContext *c;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f || rc_test_redis_start(&f->redis, NULL) != 0)
        return -1;
    f->c = rc_test_redis_connect(&f->redis);
    *state = f;
    return f->c ? 0 : -1;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    redisFree(f->c);
    rc_test_redis_stop(&f->redis);
    free(f);
    return 0;
}

/* The 7 keys admin.lua takes for board b (all-time period), as gw_admin.c
 * builds them for a reset. */
struct admin_keys {
    char k[7][RC_KEY_MAX];
};

static void keys_of(const char *b, struct admin_keys *ks)
{
    assert_int_equal(rc_board_key(ks->k[0], RC_KEY_MAX, b, "", "z", NULL), 0);
    assert_int_equal(rc_board_key(ks->k[1], RC_KEY_MAX, b, "", "seq", NULL), 0);
    assert_int_equal(rc_board_key(ks->k[2], RC_KEY_MAX, b, "", "log", NULL), 0);
    assert_int_equal(rc_board_key(ks->k[3], RC_KEY_MAX, b, "", "ch", NULL), 0);
    assert_int_equal(rc_board_key(ks->k[4], RC_KEY_MAX, b, "", "blocked", NULL), 0);
    assert_int_equal(rc_board_key(ks->k[5], RC_KEY_MAX, b, "", "f", "-"), 0);
    assert_int_equal(rc_board_key(ks->k[6], RC_KEY_MAX, b, "", "req", ":reversed"), 0);
}

/* EVAL admin.lua's reset on board b. Returns its reply (caller frees). */
static redisReply *reset(struct fixture *f, const char *b)
{
    struct admin_keys ks;
    const char *argv[3 + 7 + 11];
    size_t lens[3 + 7 + 11];
    int n = 0;
    keys_of(b, &ks);
    argv[n++] = "EVAL";
    argv[n++] = rc_lua_admin;
    argv[n++] = "7";
    for (int i = 0; i < 7; i++)
        argv[n++] = ks.k[i];
    /* action, member, block, at, order, slot, 2^bits, points_min, points_max, log cap, ttl */
    const char *args[] = {"reset", "", "0", T0, "desc", "0", "1", "-1000", "1000", "100", "0"};
    for (int i = 0; i < 11; i++)
        argv[n++] = args[i];
    for (int i = 0; i < n; i++)
        lens[i] = strlen(argv[i]);
    redisReply *r = redisCommandArgv(f->c, n, argv, lens);
    assert_non_null(r);
    if (r->type == REDIS_REPLY_ERROR)
        fail_msg("script error: %s", r->str);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 6);
    assert_string_equal(r->element[0]->str, "ok");
    return r;
}

static long long cmd_int(struct fixture *f, const char *fmt, const char *arg)
{
    redisReply *r = redisCommand(f->c, fmt, arg);
    assert_non_null(r);
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer
                  : r->type == REDIS_REPLY_STRING ? atoll(r->str)
                  : r->type == REDIS_REPLY_NIL     ? -100
                                                   : -200;
    freeReplyObject(r);
    return v;
}

/* An operator's reset of a board nobody wrote to must not bring the board's
 * keys into existence (a seq of 1 and a log holding only "reset" would make
 * a never-used board look used, and never expire on all-time boards). */
static void test_reset_of_a_never_written_board_writes_nothing(void **state)
{
    struct fixture *f = *state;
    redisReply *r = reset(f, "fresh");
    assert_int_equal(r->element[1]->integer, 0); /* seq unchanged: still none */
    freeReplyObject(r);
    assert_int_equal(cmd_int(f, "DBSIZE", NULL), 0);
}

static void test_reset_of_a_written_board_empties_it_and_bumps_seq(void **state)
{
    struct fixture *f = *state;
    struct admin_keys ks;
    keys_of("used", &ks);
    freeReplyObject(redisCommand(f->c, "ZADD %s 5 user:1", ks.k[0]));
    freeReplyObject(redisCommand(f->c, "SET %s 7", ks.k[1]));
    freeReplyObject(redisCommand(f->c, "RPUSH %s {}", ks.k[2]));
    redisReply *r = reset(f, "used");
    assert_int_equal(r->element[1]->integer, 8);
    freeReplyObject(r);
    assert_int_equal(cmd_int(f, "EXISTS %s", ks.k[0]), 0);
    assert_int_equal(cmd_int(f, "GET %s", ks.k[1]), 8);
    assert_int_equal(cmd_int(f, "LLEN %s", ks.k[2]), 1); /* just the reset event */
}

/* A board whose last member was removed has no sorted set but still has a
 * history: a reset there is a real reset (the log is cleared, seq grows). */
static void test_reset_of_a_board_with_only_a_history_still_resets(void **state)
{
    struct fixture *f = *state;
    struct admin_keys ks;
    keys_of("emptied", &ks);
    freeReplyObject(redisCommand(f->c, "SET %s 3", ks.k[1]));
    freeReplyObject(redisCommand(f->c, "RPUSH %s {} {} {}", ks.k[2]));
    redisReply *r = reset(f, "emptied");
    assert_int_equal(r->element[1]->integer, 4);
    freeReplyObject(r);
    assert_int_equal(cmd_int(f, "LLEN %s", ks.k[2]), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reset_of_a_never_written_board_writes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reset_of_a_written_board_empties_it_and_bumps_seq, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reset_of_a_board_with_only_a_history_still_resets, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
