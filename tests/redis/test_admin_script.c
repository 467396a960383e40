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

/* The 8 keys admin.lua takes for board b (all-time period), as gw_admin.c
 * builds them for a reset. */
struct admin_keys {
    char k[8][RC_KEY_MAX];
};

static void keys_of(const char *b, struct admin_keys *ks)
{
    assert_int_equal(rc_keys_board(ks->k[0], RC_KEY_MAX, b, "", "z", NULL), 0);
    assert_int_equal(rc_keys_board(ks->k[1], RC_KEY_MAX, b, "", "seq", NULL), 0);
    assert_int_equal(rc_keys_board(ks->k[2], RC_KEY_MAX, b, "", "log", NULL), 0);
    assert_int_equal(rc_keys_board(ks->k[3], RC_KEY_MAX, b, "", "ch", NULL), 0);
    assert_int_equal(rc_keys_board(ks->k[4], RC_KEY_MAX, b, "", "blocked", NULL), 0);
    assert_int_equal(rc_keys_board(ks->k[5], RC_KEY_MAX, b, "", "f", "-"), 0);
    assert_int_equal(rc_keys_board(ks->k[6], RC_KEY_MAX, b, "", "req", ":reversed"), 0);
    assert_int_equal(rc_keys_board(ks->k[7], RC_KEY_MAX, b, "", "epoch", NULL), 0);
}

/* EVAL admin.lua's `action` on board b (member m, new epoch id `epoch`).
 * Returns its reply (caller frees). */
static redisReply *admin_any(struct rc_test_redis_fixture *f, const char *action, const char *b, const char *m,
                             const char *epoch)
{
    struct admin_keys ks;
    const char *argv[3 + 8 + 13];
    size_t lens[3 + 8 + 13];
    int n = 0;
    keys_of(b, &ks);
    argv[n++] = "EVAL";
    argv[n++] = rc_lua_admin;
    argv[n++] = "8";
    for (int i = 0; i < 8; i++)
        argv[n++] = ks.k[i];
    /* action, member, block, at, order, slot, 2^bits, points_min, points_max, log cap, ttl, publish, epoch */
    const char *args[] = {action, m, "0", T0, "desc", "0", "1", "-1000", "1000", "100", "0", "PUBLISH", epoch};
    for (int i = 0; i < 13; i++)
        argv[n++] = args[i];
    for (int i = 0; i < n; i++)
        lens[i] = strlen(argv[i]);
    redisReply *r = redisCommandArgv(f->c, n, argv, lens);
    assert_non_null(r);
    if (r->type == REDIS_REPLY_ERROR)
        fail_msg("script error: %s", r->str);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 6);
    return r;
}

/* admin_any, answered "ok". */
static redisReply *admin(struct rc_test_redis_fixture *f, const char *action, const char *b, const char *m, const char *epoch)
{
    redisReply *r = admin_any(f, action, b, m, epoch);
    assert_string_equal(r->element[0]->str, "ok");
    return r;
}

static redisReply *reset(struct rc_test_redis_fixture *f, const char *b)
{
    return admin(f, "reset", b, "", "e0");
}

/* HGET of the board's epoch hash field (NULL when absent: caller frees). */
static char *epoch_field(struct rc_test_redis_fixture *f, const char *b, const char *field)
{
    struct admin_keys ks;
    keys_of(b, &ks);
    redisReply *r = redisCommand(f->c, "HGET %s %s", ks.k[7], field);
    assert_non_null(r);
    char *v = r->type == REDIS_REPLY_STRING ? strdup(r->str) : NULL;
    freeReplyObject(r);
    return v;
}

static long long cmd_int(struct rc_test_redis_fixture *f, const char *fmt, const char *arg)
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
    struct rc_test_redis_fixture *f = *state;
    redisReply *r = reset(f, "fresh");
    assert_int_equal(r->element[1]->integer, 0); /* seq unchanged: still none */
    freeReplyObject(r);
    assert_int_equal(cmd_int(f, "DBSIZE", NULL), 0);
}

/* A reversal whose req has no marker on this board answers "unknown_req"
 * (not a plain bad_request): on a sharded board the gateway then asks the
 * next shard, since a req is remembered by the shard of its member. */
static void test_reverse_of_an_unknown_req_says_unknown_req(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    redisReply *r = admin_any(f, "reverse", "global#3", "", "");
    assert_string_equal(r->element[0]->str, "unknown_req");
    assert_non_null(strstr(r->element[5]->str, "no write with that req"));
    freeReplyObject(r);
    assert_int_equal(cmd_int(f, "DBSIZE", NULL), 0);
}

static void test_reset_of_a_written_board_empties_it_and_bumps_seq(void **state)
{
    struct rc_test_redis_fixture *f = *state;
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
    struct rc_test_redis_fixture *f = *state;
    struct admin_keys ks;
    keys_of("emptied", &ks);
    freeReplyObject(redisCommand(f->c, "SET %s 3", ks.k[1]));
    freeReplyObject(redisCommand(f->c, "RPUSH %s {} {} {}", ks.k[2]));
    redisReply *r = reset(f, "emptied");
    assert_int_equal(r->element[1]->integer, 4);
    freeReplyObject(r);
    assert_int_equal(cmd_int(f, "LLEN %s", ks.k[2]), 1);
}

/* A reset starts the board's history over: the epoch is replaced by the
 * gateway's new id in the same step, marked "empty" (the set is gone on
 * purpose, not deleted from outside), and the reset event names it. A
 * reset of a board with no keys creates no epoch either. */
static void test_reset_replaces_the_epoch(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    struct admin_keys ks;
    keys_of("used", &ks);
    freeReplyObject(redisCommand(f->c, "ZADD %s 5 user:1", ks.k[0]));
    freeReplyObject(redisCommand(f->c, "SET %s 7", ks.k[1]));
    freeReplyObject(redisCommand(f->c, "HSET %s id old1", ks.k[7]));
    freeReplyObject(admin(f, "reset", "used", "", "new2"));
    char *id = epoch_field(f, "used", "id"), *empty = epoch_field(f, "used", "empty");
    assert_string_equal(id, "new2");
    assert_string_equal(empty, "1");
    free(id);
    free(empty);
    redisReply *r = redisCommand(f->c, "LINDEX %s -1", ks.k[2]);
    assert_non_null(strstr(r->str, "\"op\":\"reset\""));
    assert_non_null(strstr(r->str, "\"epoch\":\"new2\""));
    freeReplyObject(r);
    /* again: another history again */
    freeReplyObject(redisCommand(f->c, "ZADD %s 5 user:1", ks.k[0]));
    freeReplyObject(admin(f, "reset", "used", "", "new3"));
    id = epoch_field(f, "used", "id");
    assert_string_equal(id, "new3");
    free(id);
    /* an id the script cannot put into JSON as is: it makes its own */
    freeReplyObject(redisCommand(f->c, "ZADD %s 5 user:1", ks.k[0]));
    freeReplyObject(admin(f, "reset", "used", "", "bad\"id"));
    id = epoch_field(f, "used", "id");
    assert_int_equal(strlen(id), 16);
    free(id);
    freeReplyObject(admin(f, "reset", "fresh", "", "x1"));
    assert_null(epoch_field(f, "fresh", "id"));
}

/* Removing the last member leaves no set, on purpose: the epoch says so
 * ("empty"), so the history is not taken for lost and goes on. */
static void test_removing_the_last_member_keeps_the_epoch(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    struct admin_keys ks;
    keys_of("one", &ks);
    freeReplyObject(redisCommand(f->c, "ZADD %s 5 user:1", ks.k[0]));
    freeReplyObject(redisCommand(f->c, "SET %s 1", ks.k[1]));
    freeReplyObject(redisCommand(f->c, "HSET %s id keep1", ks.k[7]));
    redisReply *r = admin(f, "remove", "one", "user:1", "other2");
    assert_int_equal(r->element[5]->integer, 1);
    freeReplyObject(r);
    assert_int_equal(cmd_int(f, "EXISTS %s", ks.k[0]), 0);
    char *id = epoch_field(f, "one", "id"), *empty = epoch_field(f, "one", "empty");
    assert_string_equal(id, "keep1");
    assert_string_equal(empty, "1");
    free(id);
    free(empty);
    r = redisCommand(f->c, "LINDEX %s -1", ks.k[2]);
    assert_null(strstr(r->str, "epoch"));
    freeReplyObject(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reset_of_a_never_written_board_writes_nothing, rc_test_redis_setup, rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(test_reset_of_a_written_board_empties_it_and_bumps_seq, rc_test_redis_setup, rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(test_reverse_of_an_unknown_req_says_unknown_req, rc_test_redis_setup, rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(test_reset_of_a_board_with_only_a_history_still_resets, rc_test_redis_setup, rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(test_reset_replaces_the_epoch, rc_test_redis_setup, rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(test_removing_the_last_member_keeps_the_epoch, rc_test_redis_setup, rc_test_redis_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
