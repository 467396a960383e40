/* test_decay_scripts.c - the decay scripts (lua/rebuild.lua, lua/scale.lua,
 * lua/lock_renew.lua, lua/lock_release.lua) against a real redis-server,
 * called with EVAL on blocking connections as the gateway calls them with
 * EVALSHA: keys from core/rc_decay.c, time and weights as arguments. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>

#include "rc_decay.h"
#include "rc_keys.h"
#include "rc_lua.h"
#include "rc_test_redis.h"

#define T0 INT64_C(1767225600000) /* 2026-01-01T00:00:00Z */
#define HOUR_MS INT64_C(3600000)
#define MAX_WORDS (2 * RC_DECAY_MAX_BUCKETS + 16)

/* The keys of board "hot": the result lives until 8 more calls (main thread
 * only; copy a key that must survive a rebuild() call). */
static const char *key(enum rc_decay_key which, int64_t index)
{
    static char bufs[8][RC_KEY_MAX];
    static unsigned next;
    char *k = bufs[next++ % 8];
    assert_int_equal(rc_decay_key(k, RC_KEY_MAX, "hot", which, index), 0);
    return k;
}

/* The keys scale.lua takes, in its KEYS order (safe from any thread). */
struct scale_keys {
    char k[3][RC_KEY_MAX];
};

static void scale_keys_of(struct scale_keys *sk)
{
    assert_int_equal(rc_decay_key(sk->k[0], RC_KEY_MAX, "hot", RC_DK_READ, 0), 0);
    assert_int_equal(rc_decay_key(sk->k[1], RC_KEY_MAX, "hot", RC_DK_SCALED_AT, 0), 0);
    assert_int_equal(rc_decay_key(sk->k[2], RC_KEY_MAX, "hot", RC_DK_SEQ, 0), 0);
}

/* EVAL script with words[0..n) (nkeys keys first). Caller frees the reply. */
static redisReply *eval(redisContext *c, const char *script, int nkeys, int n, const char *const *words)
{
    const char *argv[MAX_WORDS + 3];
    size_t lens[MAX_WORDS + 3];
    char nk[16];
    snprintf(nk, sizeof nk, "%d", nkeys);
    argv[0] = "EVAL";
    argv[1] = script;
    argv[2] = nk;
    for (int i = 0; i < 3; i++)
        lens[i] = strlen(argv[i]);
    for (int i = 0; i < n; i++) {
        argv[3 + i] = words[i];
        lens[3 + i] = strlen(words[i]);
    }
    redisReply *r = redisCommandArgv(c, n + 3, argv, lens);
    assert_non_null(r);
    if (r->type == REDIS_REPLY_ERROR)
        fail_msg("script error: %s", r->str);
    return r;
}

static long long cmd_int(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    assert_non_null(r);
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer
                  : r->type == REDIS_REPLY_STRING ? atoll(r->str)
                  : r->type == REDIS_REPLY_NIL     ? -100
                                                   : -200;
    freeReplyObject(r);
    return v;
}

static double zscore(redisContext *c, const char *z, const char *member)
{
    redisReply *r = redisCommand(c, "ZSCORE %s %s", z, member);
    assert_non_null(r);
    double v = r->type == REDIS_REPLY_STRING ? strtod(r->str, NULL) : NAN;
    freeReplyObject(r);
    return v;
}

/* rebuild.lua over the given bucket indexes and weights (newest first), as
 * token, with result_ttl ttl_ms. Returns its integer reply. */
static long long rebuild(redisContext *c, const char *token, const int64_t *idx, const double *w, int n,
                         long long ttl_ms)
{
    static char text[MAX_WORDS][RC_KEY_MAX];
    static const char *words[MAX_WORDS];
    int k = 0;
    for (int i = 0; i < n; i++, k++)
        snprintf(text[k], RC_KEY_MAX, "%s", key(RC_DK_BUCKET, idx[i]));
    const enum rc_decay_key tail[] = {RC_DK_TMP, RC_DK_READ, RC_DK_SEQ, RC_DK_LOCK, RC_DK_REBUILDS};
    for (int i = 0; i < 5; i++, k++)
        snprintf(text[k], RC_KEY_MAX, "%s", key(tail[i], 0));
    snprintf(text[k++], RC_KEY_MAX, "%s", token);
    for (int i = 0; i < n; i++, k++)
        snprintf(text[k], RC_KEY_MAX, "%.17g", w[i]);
    snprintf(text[k++], RC_KEY_MAX, "%lld", ttl_ms);
    for (int i = 0; i < k; i++)
        words[i] = text[i];
    redisReply *r = eval(c, rc_lua_rebuild, n + 5, k, words);
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

static void take_lock(redisContext *c, const char *token)
{
    redisReply *r = redisCommand(c, "SET %s %s NX PX 60000", key(RC_DK_LOCK, 0), token);
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
}

/* ---- rebuild ------------------------------------------------------------------ */

static void test_rebuild_runs_only_for_the_lock_holder(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    int64_t idx[] = {7, 6};
    double w[] = {1, 0.5};
    freeReplyObject(redisCommand(f->c, "ZADD %s 10 a", key(RC_DK_BUCKET, 7)));
    /* nobody holds the lock: nothing happens */
    assert_int_equal(rebuild(f->c, "gw-a", idx, w, 2, 30000), -1);
    take_lock(f->c, "gw-a");
    /* someone else's token: nothing happens either */
    assert_int_equal(rebuild(f->c, "gw-b", idx, w, 2, 30000), -1);
    assert_int_equal(cmd_int(f->c, "EXISTS %s", key(RC_DK_READ, 0)), 0);
    assert_int_equal(cmd_int(f->c, "GET %s", key(RC_DK_REBUILDS, 0)), -100);
    assert_int_equal(cmd_int(f->c, "GET %s", key(RC_DK_SEQ, 0)), -100);
    /* the holder rebuilds */
    assert_int_equal(rebuild(f->c, "gw-a", idx, w, 2, 30000), 1);
    assert_true(zscore(f->c, key(RC_DK_READ, 0), "a") == 10);
    assert_int_equal(cmd_int(f->c, "GET %s", key(RC_DK_REBUILDS, 0)), 1);
}

static void test_rebuild_sums_buckets_with_their_weights(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    freeReplyObject(redisCommand(f->c, "ZADD %s 10 a 1 b", key(RC_DK_BUCKET, 3)));
    freeReplyObject(redisCommand(f->c, "ZADD %s 4 a 8 c", key(RC_DK_BUCKET, 2)));
    freeReplyObject(redisCommand(f->c, "ZADD %s 100 c 1000 gone", key(RC_DK_BUCKET, 1)));
    freeReplyObject(redisCommand(f->c, "ZADD %s 1000 gone", key(RC_DK_BUCKET, 0))); /* out of the window */
    take_lock(f->c, "gw-a");
    int64_t idx[] = {3, 2, 1};
    double w[] = {1, 0.5, 0.25};
    assert_int_equal(rebuild(f->c, "gw-a", idx, w, 3, 30000), 4);
    const char *z = key(RC_DK_READ, 0);
    assert_true(zscore(f->c, z, "a") == 12.0);  /* 10 + 4 * 0.5 */
    assert_true(zscore(f->c, z, "b") == 1.0);
    assert_true(zscore(f->c, z, "c") == 29.0);  /* 8 * 0.5 + 100 * 0.25 */
    assert_true(zscore(f->c, z, "gone") == 250.0); /* only bucket 1 counts */
    redisReply *r = redisCommand(f->c, "ZRANGE %s 0 -1 REV", z);
    assert_int_equal(r->elements, 4);
    assert_string_equal(r->element[0]->str, "gone");
    assert_string_equal(r->element[1]->str, "c");
    assert_string_equal(r->element[2]->str, "a");
    assert_string_equal(r->element[3]->str, "b");
    freeReplyObject(r);
    /* the temp key never outlives the script */
    assert_int_equal(cmd_int(f->c, "EXISTS %s", key(RC_DK_TMP, 0)), 0);
}

static void test_rebuild_sets_ttl_and_bumps_seq_and_counter(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    freeReplyObject(redisCommand(f->c, "ZADD %s 5 a", key(RC_DK_BUCKET, 9)));
    take_lock(f->c, "gw-a");
    int64_t idx[] = {9};
    double w[] = {1};
    freeReplyObject(redisCommand(f->c, "SET %s 41", key(RC_DK_SEQ, 0)));
    for (int i = 1; i <= 3; i++) {
        assert_int_equal(rebuild(f->c, "gw-a", idx, w, 1, 1500), 1);
        long long pttl = cmd_int(f->c, "PTTL %s", key(RC_DK_READ, 0));
        assert_true(pttl > 0 && pttl <= 1500);
        assert_int_equal(cmd_int(f->c, "GET %s", key(RC_DK_SEQ, 0)), 41 + i);
        assert_int_equal(cmd_int(f->c, "GET %s", key(RC_DK_REBUILDS, 0)), i);
    }
}

static void test_rebuild_replaces_the_board_and_deletes_it_when_the_window_is_empty(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    char z[RC_KEY_MAX];
    snprintf(z, sizeof z, "%s", key(RC_DK_READ, 0)); /* rebuild() reuses key()'s buffers */
    freeReplyObject(redisCommand(f->c, "ZADD %s 99 stale", z));
    freeReplyObject(redisCommand(f->c, "ZADD %s 5 a", key(RC_DK_BUCKET, 9)));
    take_lock(f->c, "gw-a");
    int64_t idx[] = {9, 8};
    double w[] = {1, 0.5};
    assert_int_equal(rebuild(f->c, "gw-a", idx, w, 2, 30000), 1);
    assert_true(isnan(zscore(f->c, z, "stale"))); /* not a merge: a new board */
    int64_t later[] = {11, 10};
    assert_int_equal(rebuild(f->c, "gw-a", later, w, 2, 30000), 0);
    assert_int_equal(cmd_int(f->c, "EXISTS %s", z), 0);
    assert_int_equal(cmd_int(f->c, "GET %s", key(RC_DK_REBUILDS, 0)), 2);
    assert_int_equal(cmd_int(f->c, "GET %s", key(RC_DK_SEQ, 0)), 2);
    /* idle: nothing in the window and no board to empty, nothing is touched */
    assert_int_equal(rebuild(f->c, "gw-a", later, w, 2, 30000), 0);
    assert_int_equal(cmd_int(f->c, "GET %s", key(RC_DK_REBUILDS, 0)), 2);
    assert_int_equal(cmd_int(f->c, "GET %s", key(RC_DK_SEQ, 0)), 2);
}

static void test_rebuild_takes_a_window_of_the_most_buckets_the_config_allows(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    static int64_t idx[RC_DECAY_MAX_BUCKETS];
    static double w[RC_DECAY_MAX_BUCKETS];
    for (int i = 0; i < RC_DECAY_MAX_BUCKETS; i++) {
        idx[i] = 5000 - i;
        w[i] = (double)(RC_DECAY_MAX_BUCKETS - i) / RC_DECAY_MAX_BUCKETS;
    }
    freeReplyObject(redisCommand(f->c, "ZADD %s 1 a", key(RC_DK_BUCKET, 5000)));
    freeReplyObject(redisCommand(f->c, "ZADD %s 1000 a", key(RC_DK_BUCKET, 5000 - 999)));
    take_lock(f->c, "gw-a");
    assert_int_equal(rebuild(f->c, "gw-a", idx, w, RC_DECAY_MAX_BUCKETS, 30000), 1);
    assert_true(zscore(f->c, key(RC_DK_READ, 0), "a") == 2.0); /* 1 * 1 + 1000 * 1/1000 */
}

/* ---- lock scripts -------------------------------------------------------------- */

static long long lock_script(redisContext *c, const char *script, const char *token, const char *ttl)
{
    const char *words[] = {key(RC_DK_LOCK, 0), token, ttl};
    redisReply *r = eval(c, script, 1, ttl ? 3 : 2, words);
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

static void test_only_the_owner_renews_or_releases_the_lock(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    const char *lock = key(RC_DK_LOCK, 0);
    freeReplyObject(redisCommand(f->c, "SET %s gw-a PX 1000", lock));
    assert_int_equal(lock_script(f->c, rc_lua_lock_renew, "gw-b", "60000"), 0);
    assert_true(cmd_int(f->c, "PTTL %s", lock) <= 1000);
    assert_int_equal(lock_script(f->c, rc_lua_lock_renew, "gw-a", "60000"), 1);
    assert_true(cmd_int(f->c, "PTTL %s", lock) > 1000);
    assert_int_equal(lock_script(f->c, rc_lua_lock_release, "gw-b", NULL), 0);
    assert_int_equal(cmd_int(f->c, "EXISTS %s", lock), 1);
    assert_int_equal(lock_script(f->c, rc_lua_lock_release, "gw-a", NULL), 1);
    assert_int_equal(cmd_int(f->c, "EXISTS %s", lock), 0);
    /* a lock nobody holds is nobody's to renew */
    assert_int_equal(lock_script(f->c, rc_lua_lock_renew, "gw-a", "60000"), 0);
    assert_int_equal(cmd_int(f->c, "EXISTS %s", lock), 0);
}

/* ---- scale ------------------------------------------------------------------------ */

/* scale.lua at now; returns k, *at = scaled_at afterwards. */
static long long scale(redisContext *c, int64_t now, int64_t every, double factor, long long *at)
{
    char n[32], e[32], fa[32];
    struct scale_keys sk;
    scale_keys_of(&sk);
    snprintf(n, sizeof n, "%lld", (long long)now);
    snprintf(e, sizeof e, "%lld", (long long)every);
    snprintf(fa, sizeof fa, "%.17g", factor);
    const char *words[] = {sk.k[0], sk.k[1], sk.k[2], n, e, fa};
    redisReply *r = eval(c, rc_lua_scale, 3, 6, words);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    long long k = r->element[0]->integer;
    if (at)
        *at = r->element[1]->integer;
    freeReplyObject(r);
    return k;
}

static void test_scale_starts_its_schedule_then_scales_once_per_period(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    const char *z = key(RC_DK_READ, 0);
    long long at;
    freeReplyObject(redisCommand(f->c, "ZADD %s 100 a 8 b", z));
    /* the first call starts the schedule: nothing scaled */
    assert_int_equal(scale(f->c, T0 + 7, HOUR_MS, 0.5, &at), 0);
    assert_int_equal(at, T0 + 7);
    assert_true(zscore(f->c, z, "a") == 100);
    /* not due yet */
    assert_int_equal(scale(f->c, T0 + 7 + HOUR_MS - 1, HOUR_MS, 0.5, &at), 0);
    assert_true(zscore(f->c, z, "a") == 100);
    /* due: once */
    assert_int_equal(scale(f->c, T0 + 7 + HOUR_MS + 500, HOUR_MS, 0.5, &at), 1);
    assert_int_equal(at, T0 + 7 + HOUR_MS); /* keeps its phase */
    assert_true(zscore(f->c, z, "a") == 50);
    assert_true(zscore(f->c, z, "b") == 4);
    assert_int_equal(cmd_int(f->c, "GET %s", key(RC_DK_SEQ, 0)), 1);
    assert_int_equal(scale(f->c, T0 + 7 + HOUR_MS + 900, HOUR_MS, 0.5, &at), 0);
    assert_true(zscore(f->c, z, "a") == 50);
    /* three periods missed: caught up in one step, factor^3 */
    assert_int_equal(scale(f->c, T0 + 7 + 4 * HOUR_MS, HOUR_MS, 0.5, &at), 3);
    assert_int_equal(at, T0 + 7 + 4 * HOUR_MS);
    assert_true(zscore(f->c, z, "a") == 6.25);
    assert_true(zscore(f->c, z, "b") == 0.5);
    /* a clock behind scaled_at scales nothing */
    assert_int_equal(scale(f->c, T0, HOUR_MS, 0.5, &at), 0);
    assert_true(zscore(f->c, z, "a") == 6.25);
}

struct racer {
    int port;
    int64_t base, every;
    int periods;
    int64_t jitter;    /* ms after the due instant this racer calls at */
    long long applied; /* periods this racer's calls applied */
    pthread_barrier_t *barrier;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    redisContext *c = redisConnect("127.0.0.1", r->port);
    for (int p = 1; p <= r->periods; p++) {
        pthread_barrier_wait(r->barrier);
        /* both callers see the period due at about the same instant */
        r->applied += scale(c, r->base + p * r->every + r->jitter, r->every, 0.9, NULL);
    }
    redisFree(c);
    return NULL;
}

static void test_scale_happens_exactly_once_when_two_callers_race(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    const int periods = 200;
    const char *z = key(RC_DK_READ, 0);
    freeReplyObject(redisCommand(f->c, "ZADD %s 1000 a", z));
    assert_int_equal(scale(f->c, T0, HOUR_MS, 0.9, NULL), 0); /* start the schedule */
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    struct racer a = {f->redis.port, T0, HOUR_MS, periods, 3, 0, &barrier};
    struct racer b = a;
    b.jitter = 5;
    pthread_t ta, tb;
    pthread_create(&ta, NULL, race, &a);
    pthread_create(&tb, NULL, race, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_barrier_destroy(&barrier);
    assert_int_equal(a.applied + b.applied, periods);
    double want = 1000 * pow(0.9, periods);
    double got = zscore(f->c, z, "a");
    if (fabs(got - want) > want * 1e-9)
        fail_msg("score %.17g after %d racing periods, expected %.17g", got, periods, want);
    assert_int_equal(cmd_int(f->c, "GET %s", key(RC_DK_SEQ, 0)), periods);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rebuild_runs_only_for_the_lock_holder, rc_test_redis_setup, rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(test_rebuild_sums_buckets_with_their_weights, rc_test_redis_setup, rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(test_rebuild_sets_ttl_and_bumps_seq_and_counter, rc_test_redis_setup, rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(test_rebuild_replaces_the_board_and_deletes_it_when_the_window_is_empty,
                                        rc_test_redis_setup, rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(test_rebuild_takes_a_window_of_the_most_buckets_the_config_allows, rc_test_redis_setup,
                                        rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(test_only_the_owner_renews_or_releases_the_lock, rc_test_redis_setup, rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(test_scale_starts_its_schedule_then_scales_once_per_period, rc_test_redis_setup,
                                        rc_test_redis_teardown),
        cmocka_unit_test_setup_teardown(test_scale_happens_exactly_once_when_two_callers_race, rc_test_redis_setup, rc_test_redis_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
