/* test_script_loader.c - gw_script (EVALSHA, NOSCRIPT reload-and-retry), the
 * build-time SHA-1 of the embedded scripts, and gw_redis_uv (our libuv
 * adapter) against a real redis-server. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "redis/gw_redis_uv.h"
#include "redis/gw_script.h"
#include "rc_err.h"
#include "rc_lua.h"
#include "rc_test_redis.h"
#include "rc_test_writer.h"

static const char *echo_script = "return {KEYS[1], ARGV[1], redis.call('INCR', KEYS[1])}";

struct answer {
    int done;
    int is_null;
    int type;
    char text[64];
    long long count;
};

static void on_answer(redisReply *r, void *privdata)
{
    struct answer *a = privdata;
    a->done = 1;
    a->is_null = r == NULL;
    if (!r)
        return;
    a->type = r->type;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 3) {
        snprintf(a->text, sizeof a->text, "%s", r->element[1]->str);
        a->count = r->element[2]->integer;
    } else if (r->type == REDIS_REPLY_ERROR || r->type == REDIS_REPLY_STRING) {
        snprintf(a->text, sizeof a->text, "%s", r->str);
    }
}

/* gw_script is tested on a plain async connection of its own (the front,
 * redis/gw_redis, calls it the same way on each node's connection). */
static redisAsyncContext *w_ac;

static void on_raw_connect(const redisAsyncContext *ac, int status)
{
    int *pending = ac->data;
    *pending = status == REDIS_OK ? 0 : -1;
}

static int open_raw(struct rc_test_writer *w, int port)
{
    static int pending;
    pending = 1;
    w_ac = redisAsyncConnect("127.0.0.1", port);
    if (!w_ac || w_ac->err || gw_redis_uv_attach(w_ac, &w->loop) != 0)
        return -1;
    w_ac->data = &pending;
    redisAsyncSetConnectCallback(w_ac, on_raw_connect);
    while (pending > 0)
        uv_run(&w->loop, UV_RUN_ONCE);
    return pending;
}

static int call_echo(struct rc_test_writer *w, struct gw_script *s, const char *arg, struct answer *a)
{
    const char *words[] = {"cnt", arg};
    size_t lens[] = {3, strlen(arg)};
    (void)w;
    memset(a, 0, sizeof *a);
    return gw_script_call(s, w_ac, 1, 2, words, lens, on_answer, a);
}

static void wait_done(struct rc_test_writer *w, struct answer *a)
{
    while (!a->done)
        uv_run(&w->loop, UV_RUN_ONCE);
}

struct fixture {
    struct rc_test_redis redis;
    struct rc_test_writer w;
    redisContext *sync;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (rc_test_redis_start(&f->redis, NULL) || rc_test_writer_open(&f->w, f->redis.port, 1) ||
        open_raw(&f->w, f->redis.port) != 0)
        return -1;
    f->sync = rc_test_redis_connect(&f->redis);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    redisFree(f->sync);
    if (w_ac)
        redisAsyncFree(w_ac);
    w_ac = NULL;
    rc_test_writer_close(&f->w);
    rc_test_redis_stop(&f->redis);
    free(f);
    return 0;
}

/* Redis' name for src, then forgotten again (SCRIPT FLUSH), so a test can
 * call a script Redis does not have, by the right name. */
static void init_known(struct fixture *f, struct gw_script *s, const char *src)
{
    redisReply *r = redisCommand(f->sync, "SCRIPT LOAD %s", src);
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    gw_script_init_sha(s, src, r->str);
    freeReplyObject(r);
    freeReplyObject(redisCommand(f->sync, "SCRIPT FLUSH"));
    assert_int_equal(strlen(s->sha), 40);
}

/* Every embedded script: the SHA-1 CMake computed is the one Redis gives it,
 * and gw_script_init picks it up. */
static void test_build_time_sha_matches_script_load_for_every_script(void **state)
{
    struct fixture *f = *state;
    int n = 0;
    for (const struct rc_lua_script *e = rc_lua_scripts; e->name; e++, n++) {
        struct gw_script s;
        gw_script_init(&s, e->source);
        redisReply *r = redisCommand(f->sync, "SCRIPT LOAD %s", e->source);
        assert_non_null(r);
        if (r->type != REDIS_REPLY_STRING)
            fail_msg("SCRIPT LOAD of %s.lua: %s", e->name, r->type == REDIS_REPLY_ERROR ? r->str : "not a string");
        assert_int_equal(strlen(e->sha), 40);
        if (strcmp(r->str, e->sha) != 0)
            fail_msg("%s.lua: embedded sha %s, Redis says %s", e->name, e->sha, r->str);
        assert_string_equal(s.sha, e->sha);
        freeReplyObject(r);
    }
    assert_int_equal(n, 14); /* write read rebuild scale lock_renew lock_release admin profile_set viewers freeze
                                enqueue queue_ack teams ckpt */
    assert_string_equal(rc_lua_sha_of(rc_lua_write), rc_lua_write_sha);
    assert_null(rc_lua_sha_of(echo_script));
}

static void test_async_load_teaches_an_unknown_script_its_sha(void **state)
{
    struct fixture *f = *state;
    struct gw_script s;
    struct answer a;
    memset(&a, 0, sizeof a);
    gw_script_init(&s, echo_script);
    assert_string_equal(s.sha, ""); /* not embedded: no name yet */
    assert_int_equal(call_echo(&f->w, &s, "early", &a), RC_E_INTERNAL);
    assert_int_equal(gw_script_load(&s, w_ac, on_answer, &a), 0);
    wait_done(&f->w, &a);
    assert_int_equal(a.type, REDIS_REPLY_STRING);
    assert_int_equal(strlen(a.text), 40);
    assert_string_equal(a.text, s.sha);
    /* loaded: the first call needs no reload */
    assert_int_equal(call_echo(&f->w, &s, "warm", &a), 0);
    wait_done(&f->w, &a);
    assert_string_equal(a.text, "warm");
    assert_int_equal(s.reloads, 0);
}

static void test_call_before_any_load_reloads_once_and_succeeds(void **state)
{
    struct fixture *f = *state;
    struct gw_script s;
    struct answer a;
    init_known(f, &s, echo_script);
    assert_int_equal(call_echo(&f->w, &s, "hello", &a), 0);
    wait_done(&f->w, &a);
    assert_false(a.is_null);
    assert_int_equal(a.type, REDIS_REPLY_ARRAY);
    assert_string_equal(a.text, "hello");
    assert_int_equal(s.reloads, 1);
    /* now loaded: no more reloads */
    assert_int_equal(call_echo(&f->w, &s, "again", &a), 0);
    wait_done(&f->w, &a);
    assert_string_equal(a.text, "again");
    assert_int_equal(s.reloads, 1);
}

static void test_script_flush_between_pipelined_calls_fails_none(void **state)
{
    struct fixture *f = *state;
    struct gw_script s;
    enum { N = 2000 };
    struct answer *a = calloc(N, sizeof *a);
    init_known(f, &s, echo_script);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            char arg[16];
            snprintf(arg, sizeof arg, "%d", i);
            assert_int_equal(call_echo(&f->w, &s, arg, &a[i]), 0);
            if (i == N / 2) {
                uv_run(&f->w.loop, UV_RUN_NOWAIT);
                redisReply *r = redisCommand(f->sync, "SCRIPT FLUSH");
                freeReplyObject(r);
            }
        }
        for (int i = 0; i < N; i++) {
            wait_done(&f->w, &a[i]);
            assert_int_equal(a[i].type, REDIS_REPLY_ARRAY);
            char arg[16];
            snprintf(arg, sizeof arg, "%d", i);
            assert_string_equal(a[i].text, arg);
        }
    }
    /* every call ran exactly once: the counter saw all of them */
    redisReply *r = redisCommand(f->sync, "GET cnt");
    assert_int_equal(atoll(r->str), 3 * N);
    freeReplyObject(r);
    assert_true(s.reloads >= 1);
    free(a);
}

static void test_lost_connection_answers_null_not_hang(void **state)
{
    struct fixture *f = *state;
    struct gw_script s;
    struct answer a;
    init_known(f, &s, echo_script);
    redisReply *r = redisCommand(f->sync, "CLIENT KILL SKIPME yes TYPE normal");
    freeReplyObject(r);
    assert_int_equal(call_echo(&f->w, &s, "x", &a), 0);
    wait_done(&f->w, &a);
    assert_true(a.is_null);
    w_ac = NULL; /* hiredis freed it after the disconnect */
}

static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    bind(fd, (struct sockaddr *)&sa, sizeof sa);
    getsockname(fd, (struct sockaddr *)&sa, &len);
    close(fd); /* nothing listens there now */
    return ntohs(sa.sin_port);
}

static int connect_status = 99;

static void on_connect(const redisAsyncContext *ac, int status)
{
    (void)ac;
    connect_status = status;
}

/* hiredis 0.14's stock adapter never calls back here (STYLE.md, Known traps). */
static void test_adapter_reports_failed_connect(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    redisAsyncContext *ac = redisAsyncConnect("127.0.0.1", closed_port());
    assert_non_null(ac);
    if (ac->err == 0) {
        assert_int_equal(gw_redis_uv_attach(ac, &loop), 0);
        redisAsyncSetConnectCallback(ac, on_connect);
        uv_run(&loop, UV_RUN_DEFAULT); /* returns only when hiredis let go */
        assert_int_equal(connect_status, REDIS_ERR);
    } else {
        redisAsyncFree(ac); /* refused synchronously: nothing to wait for */
    }
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_build_time_sha_matches_script_load_for_every_script, setup, teardown),
        cmocka_unit_test_setup_teardown(test_async_load_teaches_an_unknown_script_its_sha, setup, teardown),
        cmocka_unit_test_setup_teardown(test_call_before_any_load_reloads_once_and_succeeds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_script_flush_between_pipelined_calls_fails_none, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_connection_answers_null_not_hang, setup, teardown),
        cmocka_unit_test(test_adapter_reports_failed_connect),
    };
    return cmocka_run_group_tests_name("script_loader", tests, NULL, NULL);
}
