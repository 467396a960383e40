/* test_node_auth.c - gw_node logging in to a real redis-server started with
 * --requirepass (and an ACL user): AUTH goes first on both connections, on
 * every reconnect; a refused AUTH keeps the node down, retrying, with a
 * reason that names the connection and never the password.
 *
 * Waits are for conditions with a generous deadline (WAIT_MS), never a
 * fixed sleep followed by an exact count. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_lua.h"
#include "rc_test_redis.h"
#include "redis/gw_node.h"
#include "redis/gw_script.h"

#define WAIT_MS 15000
#define PASSWORD "s3cret-Pa55 word" /* a space: AUTH goes as argv, never formatted */

static const char *const requirepass[] = {"--requirepass", PASSWORD, NULL};

struct fixture {
    struct rc_test_redis redis;
    uv_loop_t loop;
    uv_timer_t tick;
    struct gw_node *r;
    struct gw_script script;
    unsigned long ups, downs, msgs;
};

static void on_up(void *data)
{
    ((struct fixture *)data)->ups++;
}

static void on_down(void *data, const char *reason)
{
    (void)reason;
    ((struct fixture *)data)->downs++;
}

static void on_message(void *data, const char *pattern, const char *channel, const char *payload, size_t len)
{
    (void)pattern, (void)channel, (void)payload, (void)len;
    ((struct fixture *)data)->msgs++;
}

static void on_tick(uv_timer_t *t)
{
    (void)t;
}

typedef int cond_fn(struct fixture *f);

static int run_until(struct fixture *f, cond_fn *cond)
{
    uint64_t end = uv_hrtime() + (uint64_t)WAIT_MS * 1000000u;
    int ok;
    uv_timer_start(&f->tick, on_tick, 10, 10);
    while (!(ok = cond(f)) && uv_hrtime() < end)
        uv_run(&f->loop, UV_RUN_ONCE);
    uv_timer_stop(&f->tick);
    return ok;
}

/* One command on a fresh blocking connection that logs in first. */
static redisReply *ask(struct fixture *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *rep = rc_test_redis_vask(&f->redis, PASSWORD, fmt, ap);
    va_end(ap);
    assert_non_null(rep);
    return rep;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f || rc_test_redis_start(&f->redis, requirepass) != 0)
        return -1;
    uv_loop_init(&f->loop);
    uv_timer_init(&f->loop, &f->tick);
    gw_script_init(&f->script, rc_lua_write);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    if (f->r)
        gw_node_stop(f->r);
    uv_close((uv_handle_t *)&f->tick, NULL);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    int rc = uv_loop_close(&f->loop);
    rc_test_redis_stop(&f->redis);
    free(f);
    return rc;
}

static void start_node(struct fixture *f, const char *username, const char *password)
{
    struct gw_node_opts o = {
        .host = "127.0.0.1",
        .port = f->redis.port,
        .backoff_min_ms = 20,
        .backoff_max_ms = 200,
        .ping_every_ms = 100,
        .ping_timeout_ms = 1500,
        .username = username,
        .password = password,
    };
    struct gw_node_hooks h = {.data = f, .on_up = on_up, .on_down = on_down, .on_message = on_message};
    f->r = gw_node_start(&f->loop, &o, &h);
    assert_non_null(f->r);
    gw_node_add_script(f->r, &f->script);
    assert_int_equal(gw_node_psubscribe(f->r, "auth-test:*"), 0);
}

static int is_up(struct fixture *f)
{
    return f->ups >= 1 && gw_node_is_up(f->r);
}

static int up_twice(struct fixture *f)
{
    return f->ups >= 2 && gw_node_is_up(f->r);
}

static int got_message(struct fixture *f)
{
    if (f->msgs)
        return 1;
    freeReplyObject(ask(f, "PUBLISH auth-test:x hello"));
    return 0;
}

static int failed_thrice(struct fixture *f)
{
    struct gw_node_stats st;
    gw_node_get_stats(f->r, &st);
    return st.failures >= 3;
}

static void with_the_password_both_connections_log_in_before_setup(void **state)
{
    struct fixture *f = *state;
    start_node(f, NULL, PASSWORD);
    assert_true(run_until(f, is_up));
    /* SCRIPT LOAD ran after AUTH on the command connection ... */
    redisReply *rep = ask(f, "SCRIPT EXISTS %s", f->script.sha);
    assert_int_equal(rep->element[0]->integer, 1);
    freeReplyObject(rep);
    /* ... and PSUBSCRIBE after AUTH on the subscribe connection */
    assert_true(run_until(f, got_message));
}

static unsigned long wr_answers;
static char wr_answer[64];

static void on_wr_answer(redisAsyncContext *ac, void *reply, void *privdata)
{
    redisReply *rep = reply;
    (void)ac;
    (void)privdata;
    if (rep)
        snprintf(wr_answer, sizeof wr_answer, "%s", rep->str ? rep->str : "");
    wr_answers += rep != NULL;
}

static int wr_answered(struct fixture *f)
{
    (void)f;
    return wr_answers > 0;
}

/* The write connection (writes and the watchdog PING) logs in like the
 * others: a command on it runs as the logged-in user, and the three
 * connections show as that user in CLIENT LIST. */
static void the_write_connection_logs_in_too(void **state)
{
    struct fixture *f = *state;
    freeReplyObject(ask(f, "ACL SETUSER rc-wr on >%s ~* &* +@all", "user-" PASSWORD));
    start_node(f, "rc-wr", "user-" PASSWORD);
    assert_true(run_until(f, is_up));
    wr_answers = 0;
    assert_non_null(gw_node_wr(f->r));
    assert_int_equal(redisAsyncCommand(gw_node_wr(f->r), on_wr_answer, NULL, "ACL WHOAMI"), REDIS_OK);
    assert_true(run_until(f, wr_answered));
    assert_string_equal(wr_answer, "rc-wr");
    redisReply *rep = ask(f, "CLIENT LIST");
    unsigned n = 0;
    for (const char *p = rep->str; (p = strstr(p, "user=rc-wr")); p++)
        n++;
    freeReplyObject(rep);
    assert_int_equal(n, 3);
}

static void a_wrong_password_keeps_the_node_down_retrying_and_unnamed(void **state)
{
    struct fixture *f = *state;
    start_node(f, NULL, "not-the-" PASSWORD);
    assert_true(run_until(f, failed_thrice));
    assert_false(gw_node_is_up(f->r));
    assert_int_equal(f->ups, 0);
    const char *why = gw_node_last_error(f->r);
    assert_non_null(strstr(why, "AUTH refused on the"));
    assert_non_null(strstr(why, "WRONGPASS"));
    assert_null(strstr(why, PASSWORD));
}

static void no_password_against_requirepass_says_noauth(void **state)
{
    struct fixture *f = *state;
    start_node(f, NULL, NULL);
    assert_true(run_until(f, failed_thrice));
    assert_int_equal(f->ups, 0);
    assert_non_null(strstr(gw_node_last_error(f->r), "NOAUTH"));
}

/* The restarted server knows nothing of the old login: AUTH again. */
static void after_a_restart_the_node_logs_in_again(void **state)
{
    struct fixture *f = *state;
    start_node(f, NULL, PASSWORD);
    assert_true(run_until(f, is_up));
    assert_int_equal(rc_test_redis_restart(&f->redis, requirepass), 0);
    assert_true(run_until(f, up_twice));
    assert_int_equal(f->downs, 1);
}

static void an_acl_user_logs_in_with_username_and_password(void **state)
{
    struct fixture *f = *state;
    freeReplyObject(ask(f, "ACL SETUSER rc-test on >%s ~* &* +@all", "user-" PASSWORD));
    start_node(f, "rc-test", "user-" PASSWORD);
    assert_true(run_until(f, is_up));
    redisReply *rep = ask(f, "CLIENT LIST");
    assert_non_null(strstr(rep->str, "user=rc-test"));
    freeReplyObject(rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(with_the_password_both_connections_log_in_before_setup, setup, teardown),
        cmocka_unit_test_setup_teardown(the_write_connection_logs_in_too, setup, teardown),
        cmocka_unit_test_setup_teardown(a_wrong_password_keeps_the_node_down_retrying_and_unnamed, setup, teardown),
        cmocka_unit_test_setup_teardown(no_password_against_requirepass_says_noauth, setup, teardown),
        cmocka_unit_test_setup_teardown(after_a_restart_the_node_logs_in_again, setup, teardown),
        cmocka_unit_test_setup_teardown(an_acl_user_logs_in_with_username_and_password, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
