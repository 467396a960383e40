/* test_redis_conn.c - gw_node (the three kept-alive connections) against a
 * real redis-server: coming up, pub/sub delivery, keyspace notifications,
 * reconnecting after the server was down, restarted or SIGSTOPped, the host
 * looked up by name on every attempt, and a clean stop (the loop closes with
 * no handle left).
 *
 * Timing: the machine running this may be loaded, so no test waits a fixed
 * time and then expects an exact count. Each waits for a condition (a hook
 * count, a failure count, something the server reports) with a generous
 * deadline (WAIT_MS); counts are exact only where the behaviour makes them
 * so (one down per outage, however many attempts failed meanwhile). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <signal.h>

#include "redis/gw_node.h"
#include "redis/gw_script.h"
#include "rc_lua.h"
#include "rc_test_redis.h"

/* Deadline of every wait for a condition; only reached when the test fails. */
#define WAIT_MS 15000

struct fixture {
    struct rc_test_redis redis;
    uv_loop_t loop;
    uv_timer_t tick; /* wakes the loop so waits can time out */
    struct gw_node *r;
    struct gw_node_opts opts;
    struct gw_script script;
    int stopped;  /* gw_node_stop was called */
    int finished; /* the loop was closed */
    enum { STOP_NEVER, STOP_IN_UP, STOP_IN_DOWN, STOP_IN_MESSAGE } stop_in;
    /* what the hooks saw */
    unsigned long ups, downs, msgs, hooks_after_stop, seq, up_seq, down_seq;
    int cmd_set_on_up, cmd_null_on_down;
    char down_reason[256];
    char pattern[128], channel[128], payload[128];
    size_t payload_len;
    /* the loop's liveness: the longest gap between two 10 ms ticks */
    uint64_t last_tick_ns, max_tick_gap_ns;
    const char *probe_sha; /* for probe_exists */
};

/* ---- hooks ---------------------------------------------------------------- */

/* Calls gw_node_stop from inside the hook named by f->stop_in, that is from
 * inside a hiredis callback. */
static void stop_if(struct fixture *f, unsigned where)
{
    if (f->stop_in == where && !f->stopped) {
        f->stopped = 1;
        gw_node_stop(f->r);
    }
}

static void on_up(void *data)
{
    struct fixture *f = data;
    f->hooks_after_stop += f->stopped;
    f->ups++;
    f->up_seq = ++f->seq;
    f->cmd_set_on_up = gw_node_cmd(f->r) != NULL;
    stop_if(f, STOP_IN_UP);
}

static void on_down(void *data, const char *reason)
{
    struct fixture *f = data;
    f->hooks_after_stop += f->stopped;
    f->downs++;
    f->down_seq = ++f->seq;
    f->cmd_null_on_down = gw_node_cmd(f->r) == NULL;
    snprintf(f->down_reason, sizeof f->down_reason, "%s", reason);
    stop_if(f, STOP_IN_DOWN);
}

static void on_message(void *data, const char *pattern, const char *channel, const char *payload, size_t len)
{
    struct fixture *f = data;
    f->hooks_after_stop += f->stopped;
    f->msgs++;
    snprintf(f->pattern, sizeof f->pattern, "%s", pattern);
    snprintf(f->channel, sizeof f->channel, "%s", channel);
    f->payload_len = len < sizeof f->payload ? len : sizeof f->payload;
    memcpy(f->payload, payload, f->payload_len);
    stop_if(f, STOP_IN_MESSAGE);
}

/* ---- helpers -------------------------------------------------------------- */

static void on_tick(uv_timer_t *t)
{
    struct fixture *f = t->data;
    uint64_t now = uv_hrtime();
    if (f->last_tick_ns && now - f->last_tick_ns > f->max_tick_gap_ns)
        f->max_tick_gap_ns = now - f->last_tick_ns;
    f->last_tick_ns = now;
}

/* Runs the loop until *counter reaches target or ms pass. */
static int run_until(struct fixture *f, const unsigned long *counter, unsigned long target, int64_t ms)
{
    uint64_t end = uv_hrtime() + (uint64_t)ms * 1000000u;
    f->last_tick_ns = 0;
    uv_timer_start(&f->tick, on_tick, 10, 10);
    while (*counter < target && uv_hrtime() < end)
        uv_run(&f->loop, UV_RUN_ONCE);
    uv_timer_stop(&f->tick);
    return *counter >= target;
}

typedef int cond_fn(struct fixture *f, long arg);

/* Runs the loop until cond(f, arg) holds or ms pass; cond is checked after
 * every loop iteration (at least every 10 ms). */
static int run_until_cond(struct fixture *f, cond_fn *cond, long arg, int64_t ms)
{
    uint64_t end = uv_hrtime() + (uint64_t)ms * 1000000u;
    int ok;
    f->last_tick_ns = 0;
    uv_timer_start(&f->tick, on_tick, 10, 10);
    while (!(ok = cond(f, arg)) && uv_hrtime() < end)
        uv_run(&f->loop, UV_RUN_ONCE);
    uv_timer_stop(&f->tick);
    return ok;
}

static struct gw_node_stats stats(struct fixture *f)
{
    struct gw_node_stats st;
    gw_node_get_stats(f->r, &st);
    return st;
}

static int failures_reach(struct fixture *f, long n)
{
    return stats(f).failures >= (unsigned long)n;
}

static void run_for(struct fixture *f, int64_t ms)
{
    unsigned long never = 0;
    run_until(f, &never, 1, ms);
}

static int64_t ms_since(uint64_t t0)
{
    return (int64_t)((uv_hrtime() - t0) / 1000000u);
}

/* One blocking command on a fresh connection (the server may have been
 * restarted since the last one). Caller frees the reply. */
static redisReply *ask(struct fixture *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *rep = rc_test_redis_vask(&f->redis, NULL, fmt, ap);
    va_end(ap);
    assert_non_null(rep);
    return rep;
}

static int sha_exists(struct fixture *f, const char *sha)
{
    redisReply *rep = ask(f, "SCRIPT EXISTS %s", sha);
    int exists = rep->type == REDIS_REPLY_ARRAY && rep->elements == 1 && rep->element[0]->integer == 1;
    freeReplyObject(rep);
    return exists;
}

static int script_exists(struct fixture *f)
{
    return sha_exists(f, f->script.sha);
}

static int probe_exists(struct fixture *f, long arg)
{
    (void)arg;
    return sha_exists(f, f->probe_sha);
}

/* The server counts our PSUBSCRIBE patterns: a message published after this
 * holds is delivered. */
static int patterns_reach(struct fixture *f, long n)
{
    redisReply *rep = ask(f, "PUBSUB NUMPAT");
    int ok = rep->type == REDIS_REPLY_INTEGER && rep->integer >= n;
    freeReplyObject(rep);
    return ok;
}

/* PINGs the server has answered since it started (ours: the tests' own
 * connections send none after the server is ready). */
static long server_pings(struct fixture *f)
{
    redisReply *rep = ask(f, "INFO commandstats");
    long calls = 0;
    const char *at = rep->type == REDIS_REPLY_STRING ? strstr(rep->str, "cmdstat_ping:calls=") : NULL;
    if (at)
        calls = atol(at + strlen("cmdstat_ping:calls="));
    freeReplyObject(rep);
    return calls;
}

static int pings_reach(struct fixture *f, long n)
{
    return server_pings(f) >= n;
}

static void publish(struct fixture *f, const char *channel, const char *payload, size_t len)
{
    freeReplyObject(ask(f, "PUBLISH %s %b", channel, payload, len));
}

static void start_gw(struct fixture *f)
{
    struct gw_node_hooks hooks = {.data = f, .on_up = on_up, .on_down = on_down, .on_message = on_message};
    f->r = gw_node_start(&f->loop, &f->opts, &hooks);
    assert_non_null(f->r);
    gw_node_add_script(f->r, &f->script);
}

/* Stops gw_node, runs the loop dry and closes it: 0 when no handle is left. */
static int finish(struct fixture *f)
{
    f->finished = 1;
    if (f->r && !f->stopped) {
        f->stopped = 1;
        gw_node_stop(f->r);
    }
    uv_close((uv_handle_t *)&f->tick, NULL);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    return uv_loop_close(&f->loop);
}

static int setup_with(void **state, const char *const *redis_args)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f || rc_test_redis_start(&f->redis, redis_args) != 0)
        return -1;
    uv_loop_init(&f->loop);
    uv_timer_init(&f->loop, &f->tick);
    f->tick.data = f;
    gw_script_init(&f->script, rc_lua_write);
    f->opts = (struct gw_node_opts){
        .host = "127.0.0.1",
        .port = f->redis.port,
        .backoff_min_ms = 20,
        .backoff_max_ms = 200,
        .ping_every_ms = 100,
        /* generous, so a loaded machine is not taken for a dead server; the
         * SIGSTOP test still sees the watchdog fire */
        .ping_timeout_ms = 1500,
        .keyspace_events = 0,
    };
    *state = f;
    return 0;
}

static int setup(void **state)
{
    return setup_with(state, NULL);
}

static int setup_elh(void **state)
{
    const char *args[] = {"--notify-keyspace-events", "Elh", NULL};
    return setup_with(state, args);
}

static int setup_no_config(void **state)
{
    const char *args[] = {"--rename-command", "CONFIG", "", NULL};
    return setup_with(state, args);
}

static int setup_no_config_events_on(void **state)
{
    const char *args[] = {"--rename-command", "CONFIG", "", "--notify-keyspace-events", "Kgzxe", NULL};
    return setup_with(state, args);
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    int rc = f->finished ? 0 : finish(f);
    rc_test_redis_stop(&f->redis);
    free(f);
    return rc;
}

static void wait_up(struct fixture *f, unsigned long n)
{
    assert_true(run_until(f, &f->ups, n, WAIT_MS));
    assert_true(gw_node_is_up(f->r));
}

/* ---- tests ---------------------------------------------------------------- */

static void test_comes_up_once_with_scripts_loaded(void **state)
{
    struct fixture *f = *state;
    start_gw(f);
    assert_false(gw_node_is_up(f->r));
    assert_null(gw_node_cmd(f->r));
    wait_up(f, 1);
    assert_true(f->cmd_set_on_up);
    assert_non_null(gw_node_cmd(f->r));
    assert_true(script_exists(f));
    assert_int_equal(gw_node_keyspace_ok(f->r), -1); /* not asked for */
    long pings = server_pings(f);                     /* a few watchdog PINGs answered */
    assert_true(run_until_cond(f, pings_reach, pings + 3, WAIT_MS));
    assert_int_equal(f->ups, 1);
    assert_int_equal(f->downs, 0);
    struct gw_node_stats st;
    gw_node_get_stats(f->r, &st);
    assert_int_equal(st.reconnects, 0);
    assert_int_equal(st.failures, 0);
    assert_int_equal(finish(f), 0);
}

static void test_pmessage_arrives_with_pattern_channel_and_payload(void **state)
{
    struct fixture *f = *state;
    start_gw(f);
    assert_int_equal(gw_node_psubscribe(f->r, "rc:*:ch"), 0);
    wait_up(f, 1);
    publish(f, "rc:{demo|}:ch", "a\0b", 3); /* binary: len, not strlen */
    assert_true(run_until(f, &f->msgs, 1, WAIT_MS));
    assert_string_equal(f->pattern, "rc:*:ch");
    assert_string_equal(f->channel, "rc:{demo|}:ch");
    assert_int_equal(f->payload_len, 3);
    assert_memory_equal(f->payload, "a\0b", 3);
    assert_int_equal(finish(f), 0);
}

static void test_pattern_added_while_up_is_subscribed_at_once(void **state)
{
    struct fixture *f = *state;
    start_gw(f);
    wait_up(f, 1);
    assert_int_equal(gw_node_psubscribe(f->r, "late:*"), 0);
    assert_true(run_until_cond(f, patterns_reach, 1, WAIT_MS));
    publish(f, "late:x", "hi", 2);
    assert_true(run_until(f, &f->msgs, 1, WAIT_MS));
    assert_string_equal(f->pattern, "late:*");
    assert_string_equal(f->channel, "late:x");
    assert_int_equal(f->ups, 1);
    assert_int_equal(finish(f), 0);
}

static void assert_flags_include(struct fixture *f, const char *want)
{
    redisReply *rep = ask(f, "CONFIG GET notify-keyspace-events");
    assert_int_equal(rep->type, REDIS_REPLY_ARRAY);
    assert_int_equal(rep->elements, 2);
    const char *have = rep->element[1]->str;
    for (const char *c = want; *c; c++) {
        int covered = strchr(have, *c) || (strchr(have, 'A') && strchr("g$lshzxetd", *c));
        if (!covered)
            fail_msg("flag '%c' missing from notify-keyspace-events \"%s\"", *c, have);
    }
    freeReplyObject(rep);
}

static void test_keyspace_notifications_are_enabled_after_connect(void **state)
{
    struct fixture *f = *state;
    f->opts.keyspace_events = 1;
    start_gw(f);
    assert_int_equal(gw_node_psubscribe(f->r, "__keyspace@*__:rc:*"), 0);
    wait_up(f, 1);
    assert_int_equal(gw_node_keyspace_ok(f->r), 1);
    assert_flags_include(f, "Kghzxe");
    freeReplyObject(ask(f, "ZADD rc:{demo|}:z 1 alice"));
    assert_true(run_until(f, &f->msgs, 1, WAIT_MS));
    assert_string_equal(f->pattern, "__keyspace@*__:rc:*");
    assert_string_equal(f->channel, "__keyspace@0__:rc:{demo|}:z");
    assert_int_equal(f->payload_len, 4);
    assert_memory_equal(f->payload, "zadd", 4);
    assert_int_equal(finish(f), 0);
}

static void test_existing_keyspace_flags_survive_the_merge(void **state)
{
    struct fixture *f = *state;
    f->opts.keyspace_events = 1;
    start_gw(f);
    wait_up(f, 1);
    assert_int_equal(gw_node_keyspace_ok(f->r), 1);
    assert_flags_include(f, "ElhKgzxe");
    assert_int_equal(finish(f), 0);
}

static int keyspace_known(struct fixture *f, long arg)
{
    (void)arg;
    return gw_node_keyspace_ok(f->r) != -1;
}

/* Without CONFIG the node tries a probe key once up: the server's default
 * (no notifications) is found missing. */
static void test_refused_config_is_recorded_and_still_comes_up(void **state)
{
    struct fixture *f = *state;
    f->opts.keyspace_events = 1;
    start_gw(f);
    assert_int_equal(gw_node_psubscribe(f->r, "__keyspace@*__:rc:*"), 0);
    wait_up(f, 1);
    assert_true(script_exists(f));
    assert_true(run_until_cond(f, keyspace_known, 0, WAIT_MS));
    assert_int_equal(gw_node_keyspace_ok(f->r), 0);
    assert_int_equal(f->msgs, 0);
    assert_int_equal(finish(f), 0);
}

/* ... and an operator's notify-keyspace-events is found on; the probe's own
 * notifications never reach the hooks, and its key is gone. */
static void test_without_config_a_probe_finds_keyspace_events_on(void **state)
{
    struct fixture *f = *state;
    f->opts.keyspace_events = 1;
    start_gw(f);
    assert_int_equal(gw_node_psubscribe(f->r, "__keyspace@*__:rc:*"), 0);
    wait_up(f, 1);
    assert_true(run_until_cond(f, keyspace_known, 0, WAIT_MS));
    assert_int_equal(gw_node_keyspace_ok(f->r), 1);
    assert_int_equal(f->msgs, 0);
    redisReply *rep = ask(f, "EXISTS rc:{~probe}:z");
    assert_int_equal(rep->integer, 0);
    freeReplyObject(rep);
    freeReplyObject(ask(f, "ZADD rc:{demo|}:z 1 alice")); /* a board's notification still arrives */
    assert_true(run_until(f, &f->msgs, 1, WAIT_MS));
    assert_string_equal(f->channel, "__keyspace@0__:rc:{demo|}:z");
    assert_int_equal(finish(f), 0);
}

static void test_starting_with_redis_down_retries_until_it_appears(void **state)
{
    struct fixture *f = *state;
    rc_test_redis_kill(&f->redis); /* the port is known, nothing listens */
    start_gw(f);
    assert_true(run_until_cond(f, failures_reach, 3, WAIT_MS));
    struct gw_node_stats st;
    assert_int_equal(f->ups, 0);
    assert_int_equal(f->downs, 0); /* never up, so nothing was lost */
    assert_null(gw_node_cmd(f->r));
    assert_int_equal(rc_test_redis_restart(&f->redis, NULL), 0);
    wait_up(f, 1);
    assert_true(script_exists(f));
    gw_node_get_stats(f->r, &st);
    assert_int_equal(st.reconnects, 0); /* the first up is not a reconnect */
    assert_int_equal(finish(f), 0);
}

static void test_restart_gives_down_then_up_with_scripts_and_subscriptions_restored(void **state)
{
    struct fixture *f = *state;
    start_gw(f);
    assert_int_equal(gw_node_psubscribe(f->r, "rc:*:ch"), 0);
    wait_up(f, 1);
    assert_int_equal(rc_test_redis_restart(&f->redis, NULL), 0);
    assert_false(script_exists(f)); /* a new server: SCRIPT FLUSH in effect */
    assert_true(run_until(f, &f->ups, 2, WAIT_MS));
    assert_int_equal(f->downs, 1);
    assert_true(f->down_seq < f->up_seq);
    assert_true(f->cmd_null_on_down);
    assert_true(script_exists(f));
    publish(f, "rc:{demo|}:ch", "after", 5);
    assert_true(run_until(f, &f->msgs, 1, WAIT_MS));
    assert_string_equal(f->channel, "rc:{demo|}:ch");
    struct gw_node_stats st;
    gw_node_get_stats(f->r, &st);
    assert_int_equal(st.reconnects, 1);
    assert_true(st.failures >= 1);
    assert_int_equal(finish(f), 0);
}

static void test_cmd_is_null_while_down(void **state)
{
    struct fixture *f = *state;
    start_gw(f);
    wait_up(f, 1);
    rc_test_redis_kill(&f->redis);
    assert_true(run_until(f, &f->downs, 1, WAIT_MS));
    assert_true(f->cmd_null_on_down);
    unsigned long failed = stats(f).failures;
    for (long i = 1; i <= 4; i++) { /* through several failed attempts */
        assert_true(run_until_cond(f, failures_reach, (long)failed + i, WAIT_MS));
        assert_null(gw_node_cmd(f->r));
        assert_false(gw_node_is_up(f->r));
    }
    assert_int_equal(f->downs, 1); /* once per outage, not per attempt */
    assert_int_equal(rc_test_redis_restart(&f->redis, NULL), 0);
    wait_up(f, 2);
    assert_non_null(gw_node_cmd(f->r));
    assert_int_equal(finish(f), 0);
}

static void test_sigstopped_server_is_caught_by_the_ping_watchdog(void **state)
{
    struct fixture *f = *state;
    start_gw(f);
    wait_up(f, 1);
    uint64_t t0 = uv_hrtime();
    assert_int_equal(kill(f->redis.pid, SIGSTOP), 0);
    assert_true(run_until(f, &f->downs, 1, WAIT_MS));
    assert_true(ms_since(t0) >= f->opts.ping_timeout_ms); /* the watchdog, not a socket error */
    assert_non_null(strstr(f->down_reason, "PING"));
    assert_null(gw_node_cmd(f->r));
    /* attempts meanwhile connect (backlog) but get no answer: each fails */
    assert_true(run_until_cond(f, failures_reach, (long)stats(f).failures + 2, WAIT_MS));
    assert_int_equal(f->ups, 1);
    assert_int_equal(kill(f->redis.pid, SIGCONT), 0);
    wait_up(f, 2);
    assert_int_equal(f->downs, 1);
    assert_int_equal(finish(f), 0);
}

static void test_stop_when_up_leaves_no_handles_and_calls_no_hook(void **state)
{
    struct fixture *f = *state;
    start_gw(f);
    assert_int_equal(gw_node_psubscribe(f->r, "rc:*:ch"), 0);
    wait_up(f, 1);
    f->stopped = 1;
    gw_node_stop(f->r);
    publish(f, "rc:{demo|}:ch", "late", 4);
    assert_int_equal(finish(f), 0);
    assert_int_equal(f->hooks_after_stop, 0);
    assert_int_equal(f->downs, 0);
}

static void test_stop_while_connecting_leaves_no_handles(void **state)
{
    struct fixture *f = *state;
    start_gw(f);
    uv_run(&f->loop, UV_RUN_NOWAIT); /* the contexts exist, nothing answered */
    assert_int_equal(finish(f), 0);
    assert_int_equal(f->ups, 0);
}

static void test_stop_while_retrying_leaves_no_handles(void **state)
{
    struct fixture *f = *state;
    rc_test_redis_kill(&f->redis);
    start_gw(f);
    run_for(f, 150);
    assert_int_equal(finish(f), 0);
    assert_int_equal(f->ups, 0);
}

static void test_stop_from_inside_on_message_is_safe(void **state)
{
    struct fixture *f = *state;
    f->stop_in = STOP_IN_MESSAGE;
    start_gw(f);
    assert_int_equal(gw_node_psubscribe(f->r, "rc:*:ch"), 0);
    wait_up(f, 1);
    publish(f, "rc:{demo|}:ch", "one", 3);
    publish(f, "rc:{demo|}:ch", "two", 3);
    assert_true(run_until(f, &f->msgs, 1, WAIT_MS));
    assert_int_equal(finish(f), 0);
    assert_int_equal(f->msgs, 1); /* nothing after stop */
    assert_int_equal(f->hooks_after_stop, 0);
}

static void test_stop_from_inside_on_up_is_safe(void **state)
{
    struct fixture *f = *state;
    f->stop_in = STOP_IN_UP;
    start_gw(f);
    assert_int_equal(gw_node_psubscribe(f->r, "rc:*:ch"), 0);
    assert_true(run_until(f, &f->ups, 1, WAIT_MS));
    assert_int_equal(finish(f), 0);
    assert_int_equal(f->hooks_after_stop, 0);
    assert_int_equal(f->downs, 0);
}

static void test_stop_from_inside_on_down_is_safe(void **state)
{
    struct fixture *f = *state;
    f->stop_in = STOP_IN_DOWN;
    start_gw(f);
    wait_up(f, 1);
    rc_test_redis_kill(&f->redis);
    assert_true(run_until(f, &f->downs, 1, WAIT_MS));
    assert_int_equal(finish(f), 0);
    assert_int_equal(f->hooks_after_stop, 0);
}

static void test_script_added_while_up_is_loaded_at_once(void **state)
{
    struct fixture *f = *state;
    struct gw_script late;
    /* the name Redis gives it, then forgotten: only our SCRIPT LOAD brings it back */
    redisReply *rep = ask(f, "SCRIPT LOAD %s", "return 'late'");
    assert_int_equal(rep->type, REDIS_REPLY_STRING);
    gw_script_init_sha(&late, "return 'late'", rep->str);
    freeReplyObject(rep);
    freeReplyObject(ask(f, "SCRIPT FLUSH"));
    start_gw(f);
    wait_up(f, 1);
    assert_false(sha_exists(f, late.sha));
    gw_node_add_script(f->r, &late);
    f->probe_sha = late.sha;
    assert_true(run_until_cond(f, probe_exists, 0, WAIT_MS));
    assert_int_equal(f->ups, 1); /* loaded while up, no reconnect */
    assert_int_equal(finish(f), 0);
}

/* The error reply arrives inside a hiredis reply callback: the attempt is
 * dropped from there (hiredis defers that free) and retried, never up. */
static void test_script_load_error_fails_the_attempt_and_retries(void **state)
{
    struct fixture *f = *state;
    struct gw_script broken;
    gw_script_init(&broken, "this is not lua");
    start_gw(f);
    gw_node_add_script(f->r, &broken);
    assert_true(run_until_cond(f, failures_reach, 2, WAIT_MS));
    assert_int_equal(f->ups, 0);
    assert_null(gw_node_cmd(f->r));
    assert_int_equal(finish(f), 0);
}

static int null_replies;

static void on_pending_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    (void)ac;
    (void)privdata;
    null_replies += reply == NULL;
}

static void test_stop_answers_pending_commands_with_null(void **state)
{
    struct fixture *f = *state;
    start_gw(f);
    wait_up(f, 1);
    null_replies = 0;
    assert_int_equal(redisAsyncCommand(gw_node_cmd(f->r), on_pending_reply, NULL, "PING"), REDIS_OK);
    assert_int_equal(finish(f), 0);
    assert_int_equal(null_replies, 1);
}

/* A command connection that answers nothing for longer than the ping
 * timeout (a BLPOP standing in for a backlog of page reads: Redis answers a
 * connection in order) is not a dead server: the watchdog PING goes on the
 * write connection and the node stays up; the write connection answers
 * meanwhile. Before the write connection the PING queued behind the BLPOP
 * and the node went down with "PING unanswered" (issue 23). */
static unsigned long blpop_replies, wr_replies;

static void on_blpop(redisAsyncContext *ac, void *reply, void *privdata)
{
    (void)ac;
    (void)privdata;
    blpop_replies += reply != NULL;
}

static void on_wr_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    (void)ac;
    (void)privdata;
    wr_replies += reply != NULL;
}

static void test_a_read_backlog_does_not_fail_the_watchdog(void **state)
{
    struct fixture *f = *state;
    start_gw(f);
    wait_up(f, 1);
    blpop_replies = wr_replies = 0;
    char secs[16];
    snprintf(secs, sizeof secs, "%.1f", (double)f->opts.ping_timeout_ms * 3 / 1000.0);
    assert_int_equal(redisAsyncCommand(gw_node_cmd(f->r), on_blpop, NULL, "BLPOP rc:test:nothing %s", secs),
                     REDIS_OK);
    assert_non_null(gw_node_wr(f->r));
    assert_int_equal(redisAsyncCommand(gw_node_wr(f->r), on_wr_reply, NULL, "PING"), REDIS_OK);
    assert_true(run_until(f, &wr_replies, 1, WAIT_MS));
    assert_int_equal(blpop_replies, 0); /* the write connection answered past the blocked one */
    assert_true(run_until(f, &blpop_replies, 1, WAIT_MS));
    assert_int_equal(f->downs, 0);
    assert_int_equal(stats(f).failures, 0);
    assert_true(gw_node_is_up(f->r));
    assert_int_equal(finish(f), 0);
}

/* The gateway's own loop busy for longer than the ping timeout (thousands
 * of snapshots to encode) is not a dead server: the PONG came back while
 * the loop was busy and sits unread when the deadline timer runs first
 * (libuv runs timers before it polls). Before the deadline read it, the
 * node went down with "PING unanswered" on every long stall. */
static unsigned stalls;
static uv_timer_t stall; /* static: closed by the loop after the test returns */

static void on_stall(uv_timer_t *t)
{
    struct fixture *f = t->data;
    uint64_t t0 = uv_hrtime();
    while (ms_since(t0) < f->opts.ping_timeout_ms + 500)
        ; /* busy, as a loop encoding snapshots is */
    stalls++;
}

static void test_a_busy_loop_does_not_fail_the_watchdog(void **state)
{
    struct fixture *f = *state;
    start_gw(f);
    wait_up(f, 1);
    uv_timer_init(&f->loop, &stall);
    stall.data = f;
    stalls = 0;
    /* every 130 ms: a PING (every 100 ms) is out before most stalls */
    uv_timer_start(&stall, on_stall, 130, 130);
    while (stalls < 4 && f->downs == 0)
        uv_run(&f->loop, UV_RUN_ONCE);
    uv_timer_stop(&stall);
    uv_close((uv_handle_t *)&stall, NULL);
    assert_int_equal(f->downs, 0);
    assert_int_equal(stats(f).failures, 0);
    assert_int_equal(finish(f), 0);
}

/* ---- the host by name ---------------------------------------------------- */

static int resolutions_reach(struct fixture *f, long n)
{
    return stats(f).resolutions >= (unsigned long)n;
}

/* "localhost" goes through uv_getaddrinfo before the first attempt and again
 * before every reconnect: a host whose address changes would be followed. */
static void test_host_name_is_looked_up_on_start_and_on_every_reconnect(void **state)
{
    struct fixture *f = *state;
    f->opts.host = "localhost";
    start_gw(f);
    assert_int_equal(gw_node_psubscribe(f->r, "rc:*:ch"), 0);
    wait_up(f, 1);
    assert_true(script_exists(f));
    unsigned long before = stats(f).resolutions;
    assert_true(before >= 1);
    /* up: the watchdog works without looking the name up again */
    long pings = server_pings(f);
    assert_true(run_until_cond(f, pings_reach, pings + 3, WAIT_MS));
    assert_int_equal(stats(f).resolutions, before);

    assert_int_equal(rc_test_redis_restart(&f->redis, NULL), 0);
    wait_up(f, 2);
    assert_int_equal(f->downs, 1);
    struct gw_node_stats st = stats(f);
    /* looked up again, at most once per attempt (the failed ones and the
     * one that came up) */
    assert_true(st.resolutions > before);
    assert_true(st.resolutions <= st.failures + 1);
    assert_true(script_exists(f));
    publish(f, "rc:{demo|}:ch", "after", 5);
    assert_true(run_until(f, &f->msgs, 1, WAIT_MS));
    assert_int_equal(finish(f), 0);
}

/* A name that does not resolve: never up, no command connection (callers
 * answer unavailable), a new lookup on every attempt with backoff, and the
 * loop keeps running meanwhile (its 10 ms tick is never held up for long). */
static void test_unresolvable_name_is_unavailable_and_retried_without_blocking(void **state)
{
    struct fixture *f = *state;
    f->opts.host = "no-such-host.invalid";
    f->max_tick_gap_ns = 0;
    start_gw(f);
    assert_true(run_until_cond(f, failures_reach, 4, WAIT_MS));
    struct gw_node_stats st = stats(f);
    assert_int_equal(f->ups, 0);
    assert_int_equal(f->downs, 0);
    assert_false(gw_node_is_up(f->r));
    assert_null(gw_node_cmd(f->r));
    /* every failed attempt looked the name up (one more may be running) */
    assert_true(st.resolutions >= st.failures);
    assert_true(st.resolutions <= st.failures + 1);
    /* the loop was never stuck in a lookup for as long as an attempt lasts */
    assert_true(f->max_tick_gap_ns < (uint64_t)f->opts.ping_timeout_ms * 1000000u);
    /* and it keeps trying */
    assert_true(run_until_cond(f, resolutions_reach, (long)st.resolutions + 2, WAIT_MS));
    assert_int_equal(f->ups, 0);
    assert_int_equal(finish(f), 0);
}

/* Stopping while a lookup runs: r is freed only after libuv reports the
 * lookup back (cancelled or answered); the loop ends with no handle left. */
static void test_stop_while_looking_up_leaves_no_handles(void **state)
{
    struct fixture *f = *state;
    f->opts.host = "localhost";
    start_gw(f);
    assert_true(run_until_cond(f, resolutions_reach, 1, WAIT_MS));
    assert_int_equal(finish(f), 0);
    assert_int_equal(f->ups, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_comes_up_once_with_scripts_loaded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pmessage_arrives_with_pattern_channel_and_payload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pattern_added_while_up_is_subscribed_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keyspace_notifications_are_enabled_after_connect, setup, teardown),
        cmocka_unit_test_setup_teardown(test_existing_keyspace_flags_survive_the_merge, setup_elh, teardown),
        cmocka_unit_test_setup_teardown(test_without_config_a_probe_finds_keyspace_events_on,
                                        setup_no_config_events_on, teardown),
        cmocka_unit_test_setup_teardown(test_refused_config_is_recorded_and_still_comes_up, setup_no_config,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_starting_with_redis_down_retries_until_it_appears, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_gives_down_then_up_with_scripts_and_subscriptions_restored,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_cmd_is_null_while_down, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigstopped_server_is_caught_by_the_ping_watchdog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_when_up_leaves_no_handles_and_calls_no_hook, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_while_connecting_leaves_no_handles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_while_retrying_leaves_no_handles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_from_inside_on_message_is_safe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_from_inside_on_up_is_safe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_from_inside_on_down_is_safe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_answers_pending_commands_with_null, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_read_backlog_does_not_fail_the_watchdog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_busy_loop_does_not_fail_the_watchdog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_script_added_while_up_is_loaded_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_script_load_error_fails_the_attempt_and_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_name_is_looked_up_on_start_and_on_every_reconnect, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unresolvable_name_is_unavailable_and_retried_without_blocking, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stop_while_looking_up_leaves_no_handles, setup, teardown),
    };
    return cmocka_run_group_tests_name("redis_conn", tests, NULL, NULL);
}
