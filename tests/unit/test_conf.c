/* test_conf.c - the config parser: the shipped config, board lookup, every
 * class of error with its FILE:LINE, the 53-bit check, API keys (and that no
 * message ever carries a secret), and the value parsers.
 *
 * The shipped conf/rankcast.conf is read from the source tree: RC_SOURCE_DIR
 * when set, else the working directory, else the tree this file was compiled
 * from.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_conf.h"
#include "rc_err.h"

#define MS_D INT64_C(86400000)
#define JAN_1_2026_MS INT64_C(1767225600000) /* 2026-01-01T00:00:00Z */

/* ---- helpers ------------------------------------------------------------ */

/* The conf is ~140 KB: keep it off the stack. */
static struct rc_conf *new_conf(void)
{
    struct rc_conf *c = calloc(1, sizeof *c);
    assert_non_null(c);
    return c;
}

/* Parses text from a heap copy of exactly len bytes (no NUL after it), so a
 * read past len shows up under AddressSanitizer. */
static int parse_exact(const char *text, size_t len, struct rc_conf *c, struct rc_error *err)
{
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, text, len);
    memset(err, 0, sizeof *err);
    int rc = rc_conf_parse("t.conf", copy, len, c, err);
    free(copy);
    return rc;
}

static int parse_str(const char *text, struct rc_conf *c, struct rc_error *err)
{
    return parse_exact(text, strlen(text), c, err);
}

/* Parses text that must load; fails the test with the message otherwise. */
static void parse_ok(const char *text, struct rc_conf *c)
{
    struct rc_error err;
    int rc = parse_str(text, c, &err);
    if (rc != 0)
        fail_msg("unexpected error: %s", err.msg);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap);
        assert_non_null(buf);
    }
    fclose(f);
    *len = n;
    return buf;
}

/* conf/rankcast.conf from RC_SOURCE_DIR, ".", or this file's source tree. */
static char *read_shipped_conf(size_t *len, char *path, size_t cap)
{
    static const char suffix[] = "tests/unit/test_conf.c";
    const char *env = getenv("RC_SOURCE_DIR");
    char *text;
    snprintf(path, cap, "%s/conf/rankcast.conf", env && *env ? env : ".");
    if ((text = read_file(path, len)) != NULL || (env && *env))
        return text;
    const char *self = __FILE__;
    size_t n = strlen(self), s = sizeof suffix - 1;
    if (n > s && strcmp(self + n - s, suffix) == 0) {
        snprintf(path, cap, "%.*sconf/rankcast.conf", (int)(n - s), self);
        text = read_file(path, len);
    }
    return text;
}

static const struct rc_board *board(const struct rc_conf *c, const char *name)
{
    for (size_t i = 0; i < c->nboards; i++)
        if (strcmp(c->boards[i].name, name) == 0)
            return &c->boards[i];
    fail_msg("board %s not declared", name);
    return NULL;
}

/* ---- the shipped config ------------------------------------------------- */

static void test_shipped_config_parses_with_expected_boards(void **state)
{
    (void)state;
    char path[4096];
    size_t len = 0;
    char *text = read_shipped_conf(&len, path, sizeof path);
    if (!text)
        fail_msg("cannot read %s (set RC_SOURCE_DIR to the source tree)", path);
    struct rc_conf *c = new_conf();
    struct rc_error err;
    memset(&err, 0, sizeof err);
    if (rc_conf_parse(path, text, len, c, &err) != 0)
        fail_msg("shipped config refused: %s", err.msg);

    assert_string_equal(c->listen, "127.0.0.1:8080");
    assert_string_equal(c->redis, "127.0.0.1:6390");
    assert_int_equal(c->tick_ms, 50);
    assert_int_equal(c->max_frame, 65536);
    assert_int_equal(c->queue_bytes, 262144);
    assert_int_equal(c->conn_write_rate, 1000);
    assert_int_equal(c->conn_write_burst, 2000);
    assert_int_equal(c->key_write_rate, 20000);
    assert_int_equal(c->key_write_burst, 40000);
    assert_int_equal(c->idem_max_per_key, 0); /* auto (core/rc_idem.h) */
    /* reads open, and no key with a literal secret in a shipped file */
    assert_int_equal(c->auth.reads_need_key, 0);
    assert_int_equal(c->auth.nkeys, 0);
    assert_int_equal(c->nboards, 12); /* ... arena (tiebreak = arrival), burst (write_mode = queued), global
                                         (shards = 8), players and its team board squads */
    assert_string_equal(board(c, "players")->teams, "squads");
    assert_string_equal(board(c, "squads")->team_of, "players");
    assert_int_equal(board(c, "squads")->ops, 0); /* a team board takes no writes */
    assert_int_equal(board(c, "squads")->layout.tb_bits, board(c, "players")->layout.tb_bits);
    assert_int_equal(board(c, "global")->shards, 8);
    assert_int_equal(board(c, "global")->layout.tiebreak, RC_TB_EARLIEST);

    const struct rc_board *b = board(c, "demo");
    assert_false(b->is_template);
    assert_int_equal(b->layout.order, RC_ORDER_DESC);
    assert_true(b->ops & RC_OPF_INCR);
    assert_int_equal(b->layout.tiebreak, RC_TB_EARLIEST);
    assert_int_equal(b->layout.tb_resolution_ms, 1000);
    assert_int_equal(b->layout.tb_horizon_ms, 3650 * MS_D);
    assert_int_equal(b->layout.tb_base_ms, JAN_1_2026_MS);
    assert_int_equal(b->layout.tb_bits, 29);
    assert_int_equal(b->layout.points_max, 16777215);
    assert_int_equal(b->period.kind, RC_PERIOD_NONE);

    b = board(c, "match:*");
    assert_true(b->is_template);
    assert_int_equal(b->layout.order, RC_ORDER_DESC);
    assert_int_equal(b->period.kind, RC_PERIOD_NONE);
    assert_int_equal(b->decay.kind, RC_DECAY_NONE);
    assert_ptr_equal(rc_conf_board_find(c, "match:1842"), b);

    b = board(c, "laps");
    assert_int_equal(b->layout.order, RC_ORDER_ASC);
    assert_int_equal(b->ops, RC_OPF_BEST);
    assert_int_equal(b->layout.points_min, 0);
    assert_int_equal(b->layout.points_max, 3600000);
    assert_int_equal(b->layout.tiebreak, RC_TB_EARLIEST);

    b = board(c, "clears");
    assert_int_equal(b->layout.nfields, 3);
    assert_string_equal(b->layout.fields[0].name, "clears");
    assert_int_equal(b->layout.fields[0].bits, 16);
    assert_int_equal(b->layout.fields[0].ascending, 0);
    assert_string_equal(b->layout.fields[1].name, "revives");
    assert_int_equal(b->layout.fields[1].bits, 8);
    assert_int_equal(b->layout.fields[1].ascending, 1);
    assert_string_equal(b->layout.fields[2].name, "first_clear_ms");
    assert_int_equal(b->layout.fields[2].bits, 27);
    assert_int_equal(b->layout.fields[2].ascending, 1);
    assert_true(b->layout.field_bits + b->layout.tb_bits <= 53);
    assert_int_equal(b->ops, RC_OPF_SUBMIT);

    b = board(c, "daily");
    assert_int_equal(b->period.kind, RC_PERIOD_DAY);
    assert_int_equal(b->period.utc_offset_s, 8 * 3600);
    assert_int_equal(b->layout.tiebreak, RC_TB_EARLIEST);
    assert_int_equal(b->layout.tb_resolution_ms, 1);
    assert_int_equal(b->layout.tb_horizon_ms, MS_D);
    assert_int_equal(b->layout.tb_bits, 27);
    assert_int_equal(b->layout.points_max, 67108863);

    b = board(c, "weekly");
    assert_int_equal(b->period.kind, RC_PERIOD_WEEK);
    assert_int_equal(b->period.utc_offset_s, 0);

    b = board(c, "hot");
    assert_int_equal(b->decay.kind, RC_DECAY_BUCKETS);
    assert_int_equal(b->decay.bucket_ms, 3600000);
    assert_int_equal(b->decay.window_ms, 24 * 3600000);
    assert_int_equal(b->layout.tiebreak, RC_TB_NONE);
    assert_int_equal(b->queue.mode, RC_WRITE_DIRECT);

    b = board(c, "burst");
    assert_int_equal(b->queue.mode, RC_WRITE_QUEUED);
    assert_int_equal(b->layout.order, RC_ORDER_DESC);
    assert_int_equal(b->ops, RC_OPF_INCR);
    assert_int_equal(b->period.kind, RC_PERIOD_NONE);
    assert_int_equal(b->queue.max, 100000);
    assert_int_equal(b->queue.claim_after_ms, 5000);
    assert_int_equal(b->queue.lag_max_ms, 30000);

    free(text);
    free(c);
}

/* ---- defaults ----------------------------------------------------------- */

static void test_empty_text_gives_documented_defaults(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok("", c);
    assert_string_equal(c->listen, "127.0.0.1:8080");
    assert_string_equal(c->state_dir, "state");
    assert_string_equal(c->web_root, "web");
    assert_int_equal(c->tick_ms, 50);
    assert_int_equal(c->compression, 1);
    assert_string_equal(c->redis, "127.0.0.1:6390");
    assert_int_equal(c->keyspace_events, 1);
    assert_int_equal(c->reconnect_max_ms, 2000);
    assert_int_equal(c->max_frame, 65536);
    assert_int_equal(c->max_subs_per_conn, 64);
    assert_int_equal(c->max_conns, 0); /* auto */
    assert_int_equal(c->queue_bytes, 262144);
    assert_int_equal(c->conn_write_rate, 1000);
    assert_int_equal(c->conn_write_burst, 2000);
    assert_int_equal(c->key_write_rate, 20000);
    assert_int_equal(c->key_write_burst, 40000);
    assert_int_equal(c->read_rows_in_flight, 20000);
    assert_int_equal(c->conn_read_rows, 100000);
    assert_int_equal(c->ip_read_rows, 400000);
    assert_int_equal(c->auth.reads_need_key, 0);
    assert_int_equal(c->auth.nkeys, 0);
    assert_int_equal(c->nboards, 0);
    free(c);
}

static void test_board_defaults_follow_board_kind(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok("[board plain]\ntiebreak = none\n"
             "[board multi]\nfields = a desc 10, b asc 10\ntiebreak = none\n"
             "[board hotb]\ndecay = buckets\n"
             "[board sc]\ndecay = scale\nscale_factor = 0.5\n"
             "[board cust]\nperiod = custom\nperiod_base = 2026-01-01T00:00:00Z\nperiod_length = 90m\n",
             c);
    const struct rc_board *b = board(c, "plain");
    assert_int_equal(b->layout.order, RC_ORDER_DESC);
    assert_int_equal(b->ops, RC_OPF_INCR | RC_OPF_SET | RC_OPF_BEST);
    assert_int_equal(b->idempotency_ms, 600000);
    assert_int_equal(b->log_cap, 1000);
    assert_int_equal(b->keep, 2);
    assert_int_equal(b->layout.tb_bits, 0);
    assert_int_equal(b->layout.points_max, RC_SAFE_INT_MAX);
    assert_int_equal(b->layout.points_min, -RC_SAFE_INT_MAX);
    assert_int_equal(b->config_line, 1);

    b = board(c, "multi");
    assert_int_equal(b->ops, RC_OPF_SUBMIT);
    assert_int_equal(b->submit_mode, RC_SUBMIT_REPLACE);
    assert_int_equal(b->layout.field_bits, 20);

    b = board(c, "hotb");
    assert_int_equal(b->layout.tiebreak, RC_TB_NONE);
    assert_int_equal(b->decay.bucket_ms, 3600000);
    assert_int_equal(b->decay.window_ms, 86400000);
    assert_int_equal(b->decay.weighting, RC_WEIGHT_LINEAR);
    assert_int_equal(b->decay.half_life_ms, 6 * 3600000);
    assert_int_equal(b->decay.rebuild_ms, 5000);
    assert_int_equal(b->decay.result_ttl_ms, 30000);

    b = board(c, "sc");
    assert_int_equal(b->decay.kind, RC_DECAY_SCALE);
    assert_true(b->decay.scale_factor == 0.5);
    assert_int_equal(b->decay.scale_every_ms, 3600000);
    assert_int_equal(b->layout.tiebreak, RC_TB_NONE);

    b = board(c, "cust");
    assert_int_equal(b->period.kind, RC_PERIOD_CUSTOM);
    assert_int_equal(b->period.base_ms, JAN_1_2026_MS);
    assert_int_equal(b->period.length_ms, 90 * 60000);
    assert_int_equal(b->layout.tiebreak, RC_TB_EARLIEST);
    assert_int_equal(b->layout.tb_horizon_ms, 90 * 60000);
    free(c);
}

static void test_multi_field_board_without_tiebreak_key_needs_horizon(void **state)
{
    (void)state;
    /* A multi-field all-time board inherits the earliest tie-break like any
     * other all-time board, so it needs a horizon and base (or none). */
    struct rc_conf *c = new_conf();
    struct rc_error err;
    assert_int_equal(parse_str("[board m]\nfields = a desc 10\n", c, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "needs tiebreak_horizon and tiebreak_base"));
    parse_ok("[board m]\nfields = a desc 10\ntiebreak_resolution = 1s\ntiebreak_horizon = 1d\n"
             "tiebreak_base = 2026-01-01T00:00:00Z\n",
             c);
    assert_int_equal(c->boards[0].layout.tb_bits, 17);
    assert_int_equal(c->boards[0].layout.field_bits, 10);
    free(c);
}

static void test_redis_credentials_are_stored_as_names_only(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok("[redis]\nusername = rankcast\npassword_env = RC_REDIS_PASS\n"
             "password_file = /etc/rankcast/redis.pass\n",
             c);
    assert_string_equal(c->redis_username, "rankcast");
    assert_string_equal(c->redis_password_env, "RC_REDIS_PASS");
    assert_string_equal(c->redis_password_file, "/etc/rankcast/redis.pass");
    parse_ok("[redis]\n", c);
    assert_string_equal(c->redis_username, "");
    assert_string_equal(c->redis_password_env, "");
    assert_string_equal(c->redis_password_file, "");
    free(c);
}

static void test_redis_password_in_the_file_is_refused_without_quoting_it(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    assert_int_equal(parse_str("[redis]\npassword = hunter2-secret\n", c, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, ":2: [redis] password: the Redis password never goes in the config file"));
    assert_null(strstr(err.msg, "hunter2-secret"));
    free(c);
}

static void test_server_redis_limits_values_are_stored(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok("[server]\nlisten = [::1]:9000\nstate_dir = /var/lib/rankcast # where\n"
             "web_root = ./web\ntick = 1ms\ncompression = off\n"
             "[redis]\naddress = redis://localhost:6379\nkeyspace_events = off\nreconnect_max = 1m\n"
             "[limits]\nmax_frame = 1m\nmax_subs_per_conn = 10000\nmax_conns = 1\nqueue_bytes = 64M\n"
             "conn_write_rate = 1\nconn_write_burst = 10000000\nkey_write_rate = 1000000\n"
             "key_write_burst = 1\nread_rows_in_flight = 1000\nconn_read_rows = 2000\n"
             "ip_read_rows = 100000000\n",
             c);
    assert_string_equal(c->listen, "[::1]:9000");
    assert_string_equal(c->state_dir, "/var/lib/rankcast");
    assert_string_equal(c->web_root, "./web");
    assert_int_equal(c->tick_ms, 1);
    assert_int_equal(c->compression, 0);
    assert_string_equal(c->redis, "redis://localhost:6379");
    assert_int_equal(c->keyspace_events, 0);
    assert_int_equal(c->reconnect_max_ms, 60000);
    assert_int_equal(c->max_frame, 1048576);
    assert_int_equal(c->max_subs_per_conn, 10000);
    assert_int_equal(c->max_conns, 1);
    assert_int_equal(c->queue_bytes, 64 * 1048576);
    assert_int_equal(c->conn_write_rate, 1);
    assert_int_equal(c->conn_write_burst, 10000000);
    assert_int_equal(c->key_write_rate, 1000000);
    assert_int_equal(c->key_write_burst, 1);
    assert_int_equal(c->read_rows_in_flight, 1000);
    assert_int_equal(c->conn_read_rows, 2000);
    assert_int_equal(c->ip_read_rows, 100000000);
    free(c);
}

/* ---- [auth] and [key NAME] ---------------------------------------------- */

static const struct rc_key *key_named(const struct rc_conf *c, const char *name)
{
    for (unsigned i = 0; i < c->auth.nkeys; i++)
        if (strcmp(c->auth.keys[i].name, name) == 0)
            return &c->auth.keys[i];
    fail_msg("key %s not declared", name);
    return NULL;
}

static void test_auth_and_key_sections_are_stored(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok("[auth]\nreads = key # everything needs a key\n"
             "\n"
             "[key scorer]\n"                                   /* line 4 */
             "secret = s3cret!-with=signs#and;more\n"
             "scopes = read, write\n"
             "boards = demo, match:*\n"
             "[key ops-admin_1]\n"                              /* line 8 */
             "secret_env = RANKCAST_KEY_OPS\n"
             "scopes = admin,read,write\n"
             "[key viewer]\n"                                   /* line 11 */
             "scopes = read\n"
             "secret = viewer-secret-000000   # trailing comment\n",
             c);
    assert_int_equal(c->auth.reads_need_key, 1);
    assert_int_equal(c->auth.nkeys, 3);

    const struct rc_key *k = key_named(c, "scorer");
    assert_int_equal(k->config_line, 4);
    assert_string_equal(k->secret, "s3cret!-with=signs#and;more");
    assert_int_equal(k->secret_len, strlen("s3cret!-with=signs#and;more"));
    assert_string_equal(k->secret_env, "");
    assert_int_equal(k->scopes, RC_SCOPE_READ | RC_SCOPE_WRITE);
    assert_int_equal(k->npatterns, 2);
    assert_string_equal(k->patterns[0], "demo");
    assert_string_equal(k->patterns[1], "match:*");
    assert_true(rc_auth_key_covers(k, "match:1842"));
    assert_false(rc_auth_key_covers(k, "laps"));

    k = key_named(c, "ops-admin_1");
    assert_int_equal(k->config_line, 8);
    assert_string_equal(k->secret_env, "RANKCAST_KEY_OPS");
    assert_int_equal(k->secret_len, 0); /* resolved by the gateway at start */
    assert_int_equal(k->scopes, RC_SCOPE_READ | RC_SCOPE_WRITE | RC_SCOPE_ADMIN);
    assert_int_equal(k->npatterns, 1); /* boards defaults to every board */
    assert_string_equal(k->patterns[0], "*");

    k = key_named(c, "viewer");
    assert_int_equal(k->config_line, 11);
    assert_string_equal(k->secret, "viewer-secret-000000");
    assert_int_equal(k->scopes, RC_SCOPE_READ);

    /* the parsed table is what the gateway looks tokens up in */
    assert_ptr_equal(rc_auth_find(&c->auth, "viewer-secret-000000", 20), k);
    assert_null(rc_auth_find(&c->auth, "", 0)); /* the secret_env key is unresolved */

    parse_ok("[auth]\nreads = open\n", c);
    assert_int_equal(c->auth.reads_need_key, 0);
    free(c);
}

static void test_jwt_keys_are_read_in_auth(void **state)
{
    struct rc_conf *c = new_conf();
    (void)state;
    parse_ok("[auth]\n", c);
    assert_int_equal(c->jwt_secret_len, 0);
    assert_string_equal(c->jwt_public_key, "");
    assert_int_equal(c->jwt_skew_ms, 30000);
    parse_ok("[auth]\njwt_secret = 0123456789abcdef0123456789abcdef\njwt_public_key = keys/rs.pem\n"
             "jwt_skew = 5s\n",
             c);
    assert_int_equal(c->jwt_secret_len, 32);
    assert_string_equal(c->jwt_secret, "0123456789abcdef0123456789abcdef");
    assert_string_equal(c->jwt_public_key, "keys/rs.pem");
    assert_int_equal(c->jwt_skew_ms, 5000);
    parse_ok("[auth]\njwt_skew = 1ms\n", c);
    assert_int_equal(c->jwt_skew_ms, 1);
    free(c);
}

static void test_secret_length_bounds_are_16_and_128(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    char text[512], s[RC_SECRET_MAX + 2];
    for (size_t n = RC_SECRET_MIN - 1; n <= RC_SECRET_MAX + 1; n++) {
        memset(s, 'q', n);
        s[n] = '\0';
        snprintf(text, sizeof text, "[key k]\nscopes = read\nsecret = %s\n", s);
        int rc = parse_str(text, c, &err);
        if (n < RC_SECRET_MIN || n > RC_SECRET_MAX) {
            assert_int_equal(rc, RC_E_BAD_REQUEST);
            assert_string_equal(err.msg, "t.conf:3: secret must be 16..128 printable characters "
                                         "without spaces");
        } else {
            assert_int_equal(rc, 0);
            assert_int_equal(c->auth.keys[0].secret_len, n);
        }
    }
    free(c);
}

static void test_too_many_keys_are_refused(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    size_t cap = (RC_AUTH_MAX_KEYS + 1) * 64, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int i = 0; i < RC_AUTH_MAX_KEYS; i++)
        n += (size_t)snprintf(text + n, cap - n, "[key k%d]\nsecret_env = K%d\nscopes = read\n", i, i);
    assert_int_equal(parse_exact(text, n, c, &err), 0);
    assert_int_equal(c->auth.nkeys, RC_AUTH_MAX_KEYS);
    n += (size_t)snprintf(text + n, cap - n, "[key extra]\nsecret_env = KX\nscopes = read\n");
    assert_int_equal(parse_exact(text, n, c, &err), RC_E_BAD_REQUEST);
    char want[64];
    snprintf(want, sizeof want, "t.conf:%d: too many keys: at most %d", 3 * RC_AUTH_MAX_KEYS + 1,
             RC_AUTH_MAX_KEYS);
    assert_string_equal(err.msg, want);
    free(text);
    free(c);
}

/* Each text misplaces or mangles the secret "hunter2-..." somewhere in a
 * [key] section: the load fails, and the message must not carry any of it. */
static void test_errors_never_echo_a_secret(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "[key a]\nscopes = read\nsecret = hunter2 hunter2 hunter2\n",     /* space */
        "[key a]\nscopes = read\nsecret = hunter2\n",                     /* short */
        "[key a]\nscopes = read\nsecret = hunter2\thunter2-hunter2\n",    /* tab */
        "[key a]\nscopes = read\nsecret = hunter2\xc3\xa9-hunter2-hunter2\n", /* not ASCII */
        "[key a]\nscopes = read\nsecret = hunter2-hunter2-hunter2-hunter2-hunter2-hunter2-"
        "hunter2-hunter2-hunter2-hunter2-hunter2-hunter2-hunter2-hunter2-hunter2-hunter2-hunter2\n",
        "[key a]\nscopes = read\nsecret_env = hunter2-hunter2-hunter2\n",  /* pasted in secret_env */
        "[key a]\nsecret_env = A\nscopes = hunter2-hunter2-hunter2\n",     /* pasted in scopes */
        "[key a]\nsecret_env = A\nscopes = read, hunter2-hunter2\n",
        "[key a]\nscopes = read\nhunter2-hunter2-hunter2\n",               /* no "secret =" */
        "[key a]\nscopes = read\nhunter2-hunter2 = hunter2-hunter2\n",     /* as a key name */
        "[key a]\nscopes = read\nsecret = hunter2-hunter2-hunter2\n"
        "[key b]\nscopes = read\nsecret = hunter2-hunter2-hunter2\n",      /* shared */
        "[key a]\nscopes = read\nsecret = hunter2-hunter2-hunter2\nsecret_env = A\n",
        "[key a]\nscopes = read\nsecret_env = A\nsecret = hunter2-hunter2-hunter2\n",
        "[key a]\nscopes = read\nsecret = hunter2-hunter2-hunter2\nsecret = hunter2-hunter2-hunter2\n",
    };
    struct rc_conf *c = new_conf();
    int bad = 0;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        struct rc_error err;
        int rc = parse_str(texts[i], c, &err);
        if (rc != RC_E_BAD_REQUEST || strncmp(err.msg, "t.conf:", 7) != 0 ||
            strstr(err.msg, "hunter2") || strstr(err.msg, "hunter")) {
            print_error("case %zu: rc %d, message '%s'\n", i, rc, rc ? err.msg : "(accepted)");
            bad++;
        }
    }
    assert_int_equal(bad, 0);
    free(c);
}

/* ---- board lookup ------------------------------------------------------- */

static const char lookup_conf[] = "[board a:b:*]\ntiebreak = none\n"
                                  "[board a:*]\ntiebreak = none\n"
                                  "[board a:b:c]\ntiebreak = none\n"
                                  "[board a:b:c*]\ntiebreak = none\n"
                                  "[board solo]\ntiebreak = none\n";

static void test_find_board_exact_beats_template(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok(lookup_conf, c);
    const struct rc_board *b = rc_conf_board_find(c, "a:b:c");
    assert_non_null(b);
    assert_string_equal(b->name, "a:b:c");
    assert_string_equal(rc_conf_board_find(c, "solo")->name, "solo");
    free(c);
}

static void test_find_board_longest_template_wins(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok(lookup_conf, c);
    assert_string_equal(rc_conf_board_find(c, "a:b:cd")->name, "a:b:c*");
    assert_string_equal(rc_conf_board_find(c, "a:b:x")->name, "a:b:*");
    assert_string_equal(rc_conf_board_find(c, "a:x")->name, "a:*");
    assert_string_equal(rc_conf_board_find(c, "a:b:c:d")->name, "a:b:c*");
    free(c);
}

static void test_find_board_unknown_is_null(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok(lookup_conf, c);
    assert_null(rc_conf_board_find(c, "b:1"));
    assert_null(rc_conf_board_find(c, "sol"));
    assert_null(rc_conf_board_find(c, "soloist"));
    assert_null(rc_conf_board_find(c, "a"));
    assert_null(rc_conf_board_find(c, NULL));
    free(c);
}

/* A template stands for the boards it creates on first write, one per
 * remainder: "match:" would be a board with no match id at all. */
static void test_find_board_template_needs_a_non_empty_remainder(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok("[board match:*]\ntiebreak = none\n", c);
    assert_null(rc_conf_board_find(c, "match:"));
    assert_string_equal(rc_conf_board_find(c, "match:1")->name, "match:*");
    free(c);
}

/* With nested templates the bare prefix of the longer one falls back to the
 * shorter one, for which it does have a remainder. */
static void test_find_board_bare_prefix_falls_back_to_a_shorter_template(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok(lookup_conf, c);
    assert_string_equal(rc_conf_board_find(c, "a:b:")->name, "a:*");
    assert_null(rc_conf_board_find(c, "a:"));
    free(c);
}

/* ---- errors ------------------------------------------------------------- */

struct err_case {
    const char *text;
    int line;         /* expected LINE in "t.conf:LINE: " */
    const char *want; /* substring of the reason */
};

#define ALLTIME "tiebreak = none\n" /* the shortest valid all-time board body */

static const struct err_case err_cases[] = {
    /* structure */
    {"listen = 127.0.0.1:80\n", 1, "key 'listen' outside any section"},
    {"# c\n\n[bogus]\n", 3, "unknown section [bogus]"},
    {"[board x]\nfoo = 1\n", 2, "unknown key 'foo' in [board x]"},
    {"[server]\norder = desc\n", 2, "unknown key 'order' in [server]"},
    {"[limits]\nlisten = 1.2.3.4:5\n", 2, "unknown key 'listen' in [limits]"},
    {"[server]\ntick = 5ms\ntick = 6ms\n", 3, "key 'tick' repeated in [server] (first at line 2)"},
    {"[board x]\n" ALLTIME "log_cap = 5\nlog_cap = 6\n", 4, "key 'log_cap' repeated in [board x]"},
    {"[server]\nlisten 127.0.0.1:80\n", 2, "missing '='"},
    {"[server]\n= 5\n", 2, "missing key before '='"},
    {"[server]\nlisten =   \n", 2, "empty value for 'listen'"},
    {"[server]\nlisten = # just a comment\n", 2, "empty value for 'listen'"},
    {"[server]\n[redis]\n[server]\n", 3, "section [server] appears twice (first at line 1)"},
    {"[limits]\n[limits]\n", 2, "section [limits] appears twice"},
    {"[board a]\n" ALLTIME "[board a]\n" ALLTIME, 3, "board 'a' declared twice (first at line 1)"},
    {"[board m:*]\n" ALLTIME "[board m:*]\n" ALLTIME, 3, "board 'm:*' declared twice"},
    {"[board bad name]\n", 1, "bad board name 'bad name'"},
    {"[board *]\n", 1, "bad board name '*'"},
    {"[board a*b]\n", 1, "bad board name"},
    {"[board]\n", 1, "[board] needs a name"},
    {"[server\n", 1, "no closing ']'"},
    {"[server] junk\n", 1, "unexpected text after section header"},
    {"[server]\nx\x01y = 1\n", 2, "control character 0x01"},
    /* [server] */
    {"[server]\nlisten = 127.0.0.1\n", 2, "listen must be HOST:PORT"},
    {"[server]\nlisten = 127.0.0.1:0\n", 2, "listen must be HOST:PORT"},
    {"[server]\nlisten = 127.0.0.1:65536\n", 2, "port 1..65535, got '127.0.0.1:65536'"},
    {"[server]\nlisten = :8080\n", 2, "listen must be HOST:PORT"},
    {"[server]\nlisten = ::1:8080\n", 2, "listen must be HOST:PORT"},
    {"[server]\nlisten = [::1]8080\n", 2, "listen must be HOST:PORT"},
    {"[server]\nlisten = host:80x\n", 2, "listen must be HOST:PORT"},
    {"[server]\ntick = 50\n", 2, "tick must be a duration from 1ms to 10s"},
    {"[server]\ntick = 0ms\n", 2, "tick must be a duration"},
    {"[server]\ntick = 11s\n", 2, "got '11s'"},
    {"[server]\ncompression = gzip\n", 2, "compression must be on or off, got 'gzip'"},
    /* [redis] */
    {"[redis]\naddress = redis://:6390\n", 2, "address must be HOST:PORT or redis://HOST:PORT"},
    {"[redis]\naddress = http://x:1\n", 2, "address must be"},
    {"[redis]\nkeyspace_events = yes\n", 2, "keyspace_events must be on or off, got 'yes'"},
    {"[redis]\nreconnect_max = 1h\n", 2, "reconnect_max must be a duration from 10ms to 10m"},
    {"[redis]\nusername = two words\n", 2, "username must be 1..128 printable characters without spaces"},
    {"[redis]\npassword_env = lower\n", 2, "password_env must name an environment variable"},
    {"[redis]\npassword_env = 9X\n", 2, "password_env must name an environment variable: 1..64"},
    {"[redis]\npassword_env = A\npassword_env = B\n", 3, "key 'password_env' repeated in [redis]"},
    /* [limits] */
    {"[limits]\nmax_frame = 100\n", 2, "max_frame must be a byte count from 256 to 1m"},
    {"[limits]\nmax_frame = 2m\n", 2, "max_frame must be"},
    {"[limits]\nmax_frame = 64kb\n", 2, "got '64kb'"},
    {"[limits]\nqueue_bytes = 1k\n", 2, "queue_bytes must be a byte count from 4k to 64m"},
    {"[limits]\nmax_subs_per_conn = 0\n", 2, "max_subs_per_conn must be an integer from 1 to 10000"},
    {"[limits]\nread_rows_in_flight = 999\n", 2, "read_rows_in_flight must be an integer from 1000 to 10000000"},
    {"[limits]\nconn_read_rows = 0\n", 2, "conn_read_rows must be an integer from 1000 to 10000000"},
    {"[limits]\nip_read_rows = 100000001\n", 2, "ip_read_rows must be an integer from 1000 to 100000000"},
    {"[limits]\nmax_conns = 1000001\n", 2, "max_conns must be auto or an integer from 1 to 1000000"},
    {"[limits]\nmax_conns = 12abc\n", 2, "max_conns must be auto or an integer"},
    {"[limits]\nconn_write_rate = 0\n", 2, "conn_write_rate must be an integer from 1 to 1000000"},
    {"[limits]\nconn_write_rate = 5/s\n", 2, "conn_write_rate must be an integer"},
    {"[limits]\nconn_write_burst = 10000001\n", 2,
     "conn_write_burst must be an integer from 1 to 10000000, got '10000001'"},
    {"[limits]\nkey_write_rate = 1000001\n", 2, "key_write_rate must be an integer from 1 to 1000000"},
    {"[limits]\nkey_write_burst = 0\n", 2, "key_write_burst must be an integer from 1 to 10000000"},
    {"[limits]\nidempotency_max_per_key = 0\n", 2,
     "idempotency_max_per_key must be auto or an integer from 1 to 4000000000, got '0'"},
    {"[limits]\nkey_write_rate = 5\nkey_write_rate = 6\n", 3,
     "key 'key_write_rate' repeated in [limits] (first at line 2)"},
    /* [auth] */
    {"[auth]\nreads = maybe\n", 2, "reads must be open or key, got 'maybe'"},
    {"[auth]\nreads = open\n[auth]\n", 3, "section [auth] appears twice (first at line 1)"},
    {"[auth]\nscopes = read\n", 2, "unknown key 'scopes' in [auth]"},
    {"[auth]\nreads = key\nreads = open\n", 3, "key 'reads' repeated in [auth]"},
    {"[auth]\njwt_secret = too-short-0123456789\n", 2,
     "jwt_secret must be 32..256 printable characters without spaces (got 20)"},
    {"[auth]\njwt_secret = has space 0123456789abcdef0123456789\n", 2, "jwt_secret must be 32..256"},
    {"[auth]\njwt_skew = 11m\n", 2, "jwt_skew must be a duration from 1ms to 10m"},
    /* [key NAME]: header */
    {"[key]\n", 1, "[key] needs a name: [key NAME]"},
    {"[key Ops]\n", 1, "bad key name 'Ops': 1..32 of a-z 0-9 _ -"},
    {"[key a.b]\n", 1, "bad key name 'a.b'"},
    {"[key aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n", 1, "bad key name"}, /* 33 chars */
    {"[key a]\nsecret_env = KA\nscopes = read\n\n[key a]\n", 5,
     "key 'a' declared twice (first at line 1)"},
    /* [key NAME]: keys and values */
    {"[key a]\nsecret_env = KA\nscopes = read\nreads = key\n", 4,
     "unknown key in [key a] (expected secret, secret_env, scopes, boards)"},
    {"[key a]\nsecret_env = KA\nscopes = read\nscopes = write\n", 4,
     "key 'scopes' repeated in [key a] (first at line 3)"},
    {"[key a]\nsecret_env = KA\nscopes\n", 3, "missing '=' in [key a]"},
    {"[key a]\nsecret = tooshort\n", 2, "secret must be 16..128 printable characters without spaces"},
    {"[key a]\nsecret = 0123456789 abcdef\n", 2, "secret must be 16..128 printable characters"},
    {"[key a]\nsecret_env = lower_case\n", 2, "secret_env must name an environment variable"},
    {"[key a]\nsecret_env = 1ABC\n", 2, "secret_env must name an environment variable"},
    {"[key a]\nsecret_env = AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n", 2,
     "secret_env must name an environment variable: 1..64"}, /* 65 chars */
    {"[key a]\nsecret = 0123456789abcdef\nsecret_env = KA\n", 3,
     "secret and secret_env are exclusive: give one (secret at line 2)"},
    {"[key a]\nsecret_env = KA\nsecret = 0123456789abcdef\n", 3,
     "secret and secret_env are exclusive: give one (secret_env at line 2)"},
    {"[key a]\nscopes = read, delete\n", 2, "scopes must be a comma list of read, write, admin"},
    {"[key a]\nscopes = read, read\n", 2, "scopes lists 'read' twice"},
    {"[key a]\nscopes = read,\n", 2, "scopes has an empty item"},
    {"[key a]\nboards = bad name\n", 2, "boards: bad board pattern 'bad name'"},
    {"[key a]\nboards = a*b\n", 2, "boards: bad board pattern 'a*b'"},
    {"[key a]\nboards = **\n", 2, "boards: bad board pattern '**'"},
    {"[key a]\nboards = demo, , laps\n", 2, "boards has an empty item"},
    {"[key a]\nboards = demo, match:*, demo\n", 2, "boards lists 'demo' twice"},
    {"[key a]\nboards = b1,b2,b3,b4,b5,b6,b7,b8,b9,b10,b11,b12,b13,b14,b15,b16,b17\n", 2,
     "boards: at most 16 patterns"},
    /* [key NAME]: the key as a whole, at its header line */
    {"# keys\n[key a]\nscopes = read\n", 2, "[key a] needs secret or secret_env (exactly one)"},
    {"[key a]\nsecret_env = KA\nboards = demo\n[server]\n", 1, "[key a] needs scopes"},
    {"[key a]\nsecret = 0123456789abcdef\nscopes = read\n[key b]\nscopes = write\n"
     "secret = 0123456789abcdef\n",
     6, "secret repeats the secret of key 'a' (line 1): each key needs its own"},
    {"[key a]\nsecret_env = KA\nscopes = read\n[key b]\nsecret_env = KA\n", 5,
     "secret_env KA is already used by key 'a' (line 1): each key needs its own secret"},
    {"[key a]\nsecret = 0123456789abcdef\n", 1, "[key a] needs scopes"},
    /* board values */
    {"[board x]\norder = up\n", 2, "order must be desc or asc, got 'up'"},
    {"[board x]\nops = incr, add\n", 2, "ops must be a comma list of incr, set, best, submit, got 'add'"},
    {"[board x]\nops = incr,\n", 2, "ops has an empty item in 'incr,'"},
    {"[board x]\nops = incr, incr\n", 2, "ops lists 'incr' twice"},
    {"[board x]\nsubmit_mode = worst\n", 2, "submit_mode must be replace or best"},
    {"[board x]\npoints_min = 1.5\n", 2, "points_min must be an integer"},
    {"[board x]\npoints_max = 99999999999999999999\n", 2, "points_max must be an integer"},
    {"[board x]\ntiebreak = first\n", 2, "tiebreak must be earliest, latest, arrival or none, got 'first'"},
    {"[board x]\ntiebreak_resolution = 1\n", 2, "tiebreak_resolution must be a duration"},
    {"[board x]\ntiebreak_horizon = 36501d\n", 2, "tiebreak_horizon must be a duration from 1ms to 36500d"},
    {"[board x]\ntiebreak_base = 2023-02-29T00:00:00Z\n", 2, "tiebreak_base must be a timestamp"},
    {"[board x]\nperiod = fortnight\n", 2, "period must be none, hour, day, week, month, year or custom"},
    {"[board x]\nutc_offset = +14:30\n", 2, "utc_offset must be +HH:MM or -HH:MM"},
    {"[board x]\nutc_offset = 08:00\n", 2, "utc_offset must be"},
    {"[board x]\nperiod_length = 500ms\n", 2, "period_length must be a duration from 1s to 3660d"},
    {"[board x]\nkeep = 0\n", 2, "keep must be an integer from 1 to 1000"},
    {"[board x]\nkeep = 1001\n", 2, "keep must be an integer from 1 to 1000"},
    {"[board x]\ndecay = fast\n", 2, "decay must be none, buckets or scale"},
    {"[board x]\nweighting = exp\n", 2, "weighting must be linear or halflife"},
    {"[board x]\nscale_factor = 1.0\n", 2, "scale_factor must be a decimal between 0 and 1"},
    {"[board x]\nscale_factor = 0\n", 2, "scale_factor must be"},
    {"[board x]\nscale_factor = 0.5e1\n", 2, "scale_factor must be"},
    {"[board x]\nidempotency_window = 1500ms\n", 2, "idempotency_window must be whole seconds"},
    {"[board x]\nidempotency_window = 31d\n", 2, "idempotency_window must be a duration from 1s to 30d"},
    {"[board x]\nlog_cap = 0\n", 2, "log_cap must be an integer from 1 to 100000"},
    {"[board x]\nlog_cap = 100001\n", 2, "log_cap must be"},
    {"[board x]\nfields = a desc\n", 2, "fields must list 'name desc|asc bits' items"},
    {"[board x]\nfields = a desc 8 extra\n", 2, "fields must list 'name desc|asc bits' items separated by commas, got 'a desc 8 extra'"},
    {"[board x]\nfields = a desc 8,\n", 2, "fields must list"},
    {"[board x]\nfields = Alpha desc 8\n", 2, "fields: bad field name 'Alpha'"},
    {"[board x]\nfields = a desc 8, a asc 8\n", 2, "fields: field 'a' appears twice"},
    {"[board x]\nfields = a up 8\n", 2, "fields: field a: direction must be desc or asc, got 'up'"},
    {"[board x]\nfields = a desc 0\n", 2, "fields: field a: bits must be an integer from 1 to 52"},
    {"[board x]\nfields = a desc 53\n", 2, "bits must be an integer from 1 to 52"},
    {"[board x]\nfields = a desc 1, b desc 1, c desc 1, d desc 1, e desc 1, f desc 1, g desc 1, "
     "h desc 1, i desc 1\n",
     2, "fields: at most 8 fields"},
    /* board-level combinations: reported at the [board] header line */
    {"# c\n[board x]\n" ALLTIME "keep = 3\n", 2, "keep applies only to periodic boards"},
    {"[board x]\n" ALLTIME "utc_offset = +01:00\n", 1, "utc_offset applies only to periodic boards"},
    {"[board x]\n" ALLTIME "fields = a desc 8\npoints_min = 0\n", 1,
     "points_min cannot be combined with fields"},
    {"[board x]\n" ALLTIME "fields = a desc 8\npoints_max = 9\n", 1,
     "points_max cannot be combined with fields"},
    {"[board x]\n" ALLTIME "fields = a desc 8\norder = asc\n", 1,
     "order = asc cannot be combined with fields"},
    {"[board x]\nfields = a desc 8\ndecay = buckets\n", 1, "decay cannot be combined with fields"},
    {"[board x]\n" ALLTIME "ops = submit\n", 1, "ops = submit needs fields"},
    {"[board x]\n" ALLTIME "ops = incr, submit\n", 1, "ops = submit needs fields"},
    {"[board x]\n" ALLTIME "fields = a desc 8\nops = incr\n", 1, "ops must be submit on a multi-field board"},
    {"[board x]\n" ALLTIME "submit_mode = best\n", 1, "submit_mode applies only to multi-field boards"},
    {"[board x]\ndecay = buckets\ntiebreak = earliest\n", 1,
     "decaying boards hold weighted scores: tiebreak must be none"},
    {"[board x]\ndecay = scale\nscale_factor = 0.9\ntiebreak = latest\n", 1,
     "decaying boards hold weighted scores: tiebreak must be none"},
    {"[board x]\ndecay = buckets\nperiod = day\n", 1, "decay cannot be combined with period"},
    {"[board x]\nperiod = day\ntiebreak_horizon = 1d\n", 1,
     "tiebreak_horizon cannot be set with period = day"},
    {"[board x]\nperiod = week\ntiebreak_base = 2026-01-05T00:00:00Z\n", 1,
     "tiebreak_base cannot be set with period = week"},
    {"[board x]\norder = desc\n", 1, "tiebreak = earliest on an all-time board needs tiebreak_horizon"},
    {"[board x]\ntiebreak = latest\ntiebreak_horizon = 1d\n", 1,
     "tiebreak = latest on an all-time board needs tiebreak_horizon and tiebreak_base"},
    {"[board x]\ntiebreak_base = 2026-01-01T00:00:00Z\n", 1, "needs tiebreak_horizon and tiebreak_base"},
    {"[board x]\n" ALLTIME "tiebreak_resolution = 1s\n", 1,
     "tiebreak_resolution does not apply with tiebreak = none"},
    {"[board x]\ndecay = buckets\ntiebreak_horizon = 1d\n", 1,
     "tiebreak_horizon does not apply with tiebreak = none"},
    {"[board x]\nperiod = custom\nperiod_base = 2026-01-01T00:00:00Z\n", 1,
     "period = custom needs period_base and period_length"},
    {"[board x]\nperiod = custom\nperiod_length = 1d\n", 1, "period = custom needs period_base"},
    {"[board x]\nperiod = custom\nperiod_base = 2026-01-01T00:00:00Z\nperiod_length = 1d\n"
     "utc_offset = +01:00\n",
     1, "utc_offset does not apply to period = custom"},
    {"[board x]\nperiod = day\nperiod_base = 2026-01-01T00:00:00Z\n", 1,
     "period_base applies only to period = custom (period is day)"},
    {"[board x]\n" ALLTIME "period_length = 1d\n", 1, "period_length applies only to period = custom"},
    {"[board x]\n" ALLTIME "bucket_span = 1h\n", 1, "bucket_span applies only to decay = buckets"},
    {"[board x]\ndecay = scale\nscale_factor = 0.5\nwindow = 1d\n", 1,
     "window applies only to decay = buckets"},
    {"[board x]\ndecay = buckets\nscale_every = 1h\n", 1, "scale_every applies only to decay = scale"},
    {"[board x]\n" ALLTIME "scale_factor = 0.5\n", 1, "scale_factor applies only to decay = scale"},
    {"[board x]\ndecay = scale\n", 1, "decay = scale needs scale_factor"},
    {"[board x]\ndecay = buckets\nhalf_life = 2h\n", 1, "half_life applies only to weighting = halflife"},
    {"[board x]\ndecay = buckets\nbucket_span = 2h\nwindow = 25h\n", 1,
     "window (25h) must be a whole multiple of bucket_span (2h)"},
    {"[board x]\ndecay = buckets\nbucket_span = 2h\nwindow = 1h\n", 1,
     "window (1h) must be a whole multiple of bucket_span (2h)"},
    {"[board x]\ndecay = buckets\nbucket_span = 1s\nwindow = 1h\n", 1, "3600 buckets, at most 1000"},
    {"[board x]\ndecay = buckets\nrebuild_every = 30s\n", 1,
     "result_ttl (30s) must exceed rebuild_every (30s)"},
    /* layout-level: the 53-bit budget, at the header of the second board */
    {"[board ok]\n" ALLTIME "\n[board d]\nperiod = day\npoints_max = 67108864\n", 4,
     "[board d] score layout does not fit in 53 bits"},
    {"[board x]\ntiebreak_horizon = 36500d\ntiebreak_base = 2026-01-01T00:00:00Z\npoints_max = 5000\n",
     1, "with a 42-bit tie-break (1ms resolution over 36500d) points must stay within -2047..2047"},
    {"[board x]\n" ALLTIME "fields = a desc 30, b asc 30\n", 1, "fields need 60 bits"},
    {"[board x]\n" ALLTIME "points_min = 10\npoints_max = 9\n", 1, "points_min 10 exceeds points_max 9"},
    /* write_mode = queued: unknown words, where it does not apply, its bounds (at their key's line) */
    {"[board x]\n" ALLTIME "write_mode = sideways\n", 3, "write_mode must be direct or queued, got 'sideways'"},
    {"[board x]\n" ALLTIME "queue_max = 10\n", 3, "queue_max applies only to write_mode = queued"},
    {"[board x]\n" ALLTIME "write_mode = direct\nclaim_after = 1s\n", 4,
     "claim_after applies only to write_mode = queued"},
    {"[board x]\n" ALLTIME "queue_lag_max = 1s\n", 3, "queue_lag_max applies only to write_mode = queued"},
    {"[board x]\n" ALLTIME "write_mode = queued\nqueue_max = 0\n", 4, "queue_max must be an integer from 1"},
    {"[board x]\n" ALLTIME "write_mode = queued\nclaim_after = 10ms\n", 4, "claim_after"},
    {"[board x]\ndecay = buckets\nwrite_mode = queued\n", 3,
     "write_mode = queued cannot be combined with decay"},
    {"[board x]\ndecay = scale\nscale_factor = 0.5\nwrite_mode = queued\n", 4,
     "write_mode = queued cannot be combined with decay"},
    {"[board x]\nperiod = day\nwrite_mode = queued\n", 3, "write_mode = queued cannot be combined with period"},
    {"[board x:*]\n" ALLTIME "write_mode = queued\n", 3,
     "write_mode = queued applies only to a board with an exact name, not to template x:*"},
    /* shards = S (docs/sharded.md): its range and the boards it cannot split (at the key's line) */
    {"[board x]\n" ALLTIME "shards = 1\n", 3, "shards must be an integer from 2"},
    {"[board x]\n" ALLTIME "shards = 65\n", 3, "shards must be an integer from 2"},
    {"[board x]\n" ALLTIME "shards = eight\n", 3, "shards"},
    {"[board x]\ndecay = buckets\nshards = 4\n", 3, "shards cannot be combined with decay"},
    {"[board x]\ntiebreak = arrival\nshards = 4\n", 3,
     "shards cannot be combined with tiebreak = arrival"},
    {"[board x]\n" ALLTIME "write_mode = queued\nshards = 4\n", 4,
     "shards cannot be combined with write_mode = queued"},
    /* periods and templates split; what stays refused is refused on them too */
    {"[board x]\nperiod = day\ntiebreak = arrival\nshards = 4\n", 4,
     "shards cannot be combined with tiebreak = arrival"},
    {"[board x:*]\ndecay = buckets\nshards = 4\n", 3, "shards cannot be combined with decay"},
    {"[board x:*]\nperiod = day\n\ntiebreak = arrival\nshards = 4\n", 5,
     "shards cannot be combined with tiebreak = arrival"},
    /* the last board is checked at the end of the text, at its header */
    {"[board a]\n" ALLTIME "[board b]\n\n\nkeep = 2\n", 3, "keep applies only to periodic boards"},
};

static void test_errors_report_file_line_and_reason(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    int bad = 0;
    for (size_t i = 0; i < sizeof err_cases / sizeof err_cases[0]; i++) {
        const struct err_case *t = &err_cases[i];
        struct rc_error err;
        char prefix[32];
        int rc = parse_str(t->text, c, &err);
        snprintf(prefix, sizeof prefix, "t.conf:%d: ", t->line);
        if (rc != RC_E_BAD_REQUEST || err.code != RC_E_BAD_REQUEST ||
            strncmp(err.msg, prefix, strlen(prefix)) != 0 || !strstr(err.msg, t->want)) {
            print_error("case %zu: rc %d, want '%s...%s', got '%s'\n", i, rc, prefix, t->want,
                        rc ? err.msg : "(accepted)");
            bad++;
        }
    }
    assert_int_equal(bad, 0);
    free(c);
}

static void test_queued_board_keeps_its_bounds(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok("[board q]\n" ALLTIME "write_mode = queued\nqueue_max = 20\nclaim_after = 1500ms\n"
             "queue_lag_max = 2s\n[board d]\n" ALLTIME, c);
    const struct rc_board *b = board(c, "q");
    assert_int_equal(b->queue.mode, RC_WRITE_QUEUED);
    assert_int_equal(b->queue.max, 20);
    assert_int_equal(b->queue.claim_after_ms, 1500);
    assert_int_equal(b->queue.lag_max_ms, 2000);
    b = board(c, "d");
    assert_int_equal(b->queue.mode, RC_WRITE_DIRECT);
    assert_int_equal(b->queue.max, 100000);
    assert_int_equal(b->queue.claim_after_ms, 5000);
    assert_int_equal(b->queue.lag_max_ms, 30000);
    free(c);
}

static void test_sharded_board_keeps_its_count(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok("[board g]\n" ALLTIME "shards = 8\n[board d]\n" ALLTIME, c);
    assert_int_equal(board(c, "g")->shards, 8);
    assert_int_equal(board(c, "d")->shards, 1);
    free(c);
}

static void test_periodic_and_template_boards_can_be_sharded(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok("[board daily]\nperiod = day\nkeep = 3\nshards = 4\n"
             "[board m:*]\n" ALLTIME "shards = 3\n"
             "[board w:*]\nperiod = week\nshards = 2\n", c);
    assert_int_equal(board(c, "daily")->shards, 4);
    assert_int_equal(board(c, "daily")->period.kind, RC_PERIOD_DAY);
    assert_int_equal(board(c, "m:*")->shards, 3);
    assert_true(board(c, "m:*")->is_template);
    assert_int_equal(board(c, "w:*")->shards, 2);
    assert_int_equal(board(c, "w:*")->period.kind, RC_PERIOD_WEEK);
    /* a board of the template is found by its name, with the template's shards */
    const struct rc_board *b = rc_conf_board_find(c, "m:17");
    assert_non_null(b);
    assert_int_equal(b->shards, 3);
    free(c);
}

static void test_unknown_key_message_is_exact(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    memset(&err, 0, sizeof err);
    const char *text = "[board demo]\ntiebreak = none\nodrer = desc\n";
    assert_int_equal(rc_conf_parse("conf/x.conf", text, strlen(text), c, &err), RC_E_BAD_REQUEST);
    assert_string_equal(err.msg, "conf/x.conf:3: unknown key 'odrer' in [board demo]");
    free(c);
}

static void test_overlong_line_and_value_are_refused(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    size_t n = 100000;
    char *text = malloc(n + 64);
    assert_non_null(text);

    /* one huge line */
    int k = snprintf(text, 64, "[server]\nstate_dir = ");
    memset(text + k, 'a', n);
    assert_int_equal(parse_exact(text, (size_t)k + n, c, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "t.conf:2: line is too long"));

    /* a value that fits the line but not the field */
    k = snprintf(text, 64, "[server]\nstate_dir = ");
    memset(text + k, 'b', 300);
    assert_int_equal(parse_exact(text, (size_t)k + 300, c, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "t.conf:2: state_dir is too long"));

    k = snprintf(text, 64, "[redis]\naddress = ");
    memset(text + k, 'h', 600);
    memcpy(text + k + 600, ":1", 2);
    assert_int_equal(parse_exact(text, (size_t)k + 602, c, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "t.conf:2: address is too long"));

    /* a long unknown key and a long board name are quoted, cut, not overflowed */
    k = snprintf(text, 64, "[board x]\n");
    memset(text + k, 'k', 900);
    memcpy(text + k + 900, "=1", 2);
    assert_int_equal(parse_exact(text, (size_t)k + 902, c, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "t.conf:2: unknown key 'kkk"));
    k = snprintf(text, 64, "[board ");
    memset(text + k, 'n', 65);
    text[k + 65] = ']';
    assert_int_equal(parse_exact(text, (size_t)k + 66, c, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "t.conf:1: bad board name"));
    free(text);
    free(c);
}

static void test_nul_byte_in_text_is_refused(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    static const char text[] = "[server]\ntick = 5ms\0junk\n";
    assert_int_equal(parse_exact(text, sizeof text - 1, c, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "t.conf:2: control character 0x00"));
    free(c);
}

static void test_too_many_boards_are_refused(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    size_t cap = (RC_CONF_MAX_BOARDS + 1) * 40, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int i = 0; i < RC_CONF_MAX_BOARDS; i++)
        n += (size_t)snprintf(text + n, cap - n, "[board b%d]\ntiebreak = none\n", i);
    assert_int_equal(parse_exact(text, n, c, &err), 0);
    assert_int_equal(c->nboards, RC_CONF_MAX_BOARDS);
    n += (size_t)snprintf(text + n, cap - n, "[board extra]\ntiebreak = none\n");
    assert_int_equal(parse_exact(text, n, c, &err), RC_E_BAD_REQUEST);
    char want[64];
    snprintf(want, sizeof want, "t.conf:%d: too many boards: at most %d", 2 * RC_CONF_MAX_BOARDS + 1,
             RC_CONF_MAX_BOARDS);
    assert_string_equal(err.msg, want);
    free(text);
    free(c);
}

/* ---- the 53-bit budget -------------------------------------------------- */

static void test_layout_over_53_bits_is_refused(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    /* 1ms over 3650d needs 39 bits: a lap range up to 3,600,000 (22 bits) cannot fit. */
    assert_int_equal(parse_str("[board laps]\norder = asc\nops = best\npoints_min = 0\n"
                               "points_max = 3600000\ntiebreak_horizon = 3650d\n"
                               "tiebreak_base = 2026-01-01T00:00:00Z\n",
                               c, &err),
                     RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "t.conf:1: "));
    assert_non_null(strstr(err.msg, "53 bits"));
    /* fields plus tie-break over 53 */
    assert_int_equal(parse_str("[board f]\nfields = a desc 20, b asc 20\nperiod = day\n", c, &err),
                     RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "53 bits"));
    free(c);
}

static void test_daily_example_gives_points_max_67108863(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    parse_ok("[board daily]\nperiod = day\nutc_offset = +08:00\ntiebreak = earliest\n"
             "tiebreak_resolution = 1ms\n",
             c);
    assert_int_equal(c->boards[0].layout.tb_bits, 27);
    assert_int_equal(c->boards[0].layout.points_max, 67108863);
    assert_int_equal(c->boards[0].layout.points_min, -67108863);
    parse_ok("[board daily]\nperiod = day\npoints_max = 67108863\n", c);
    assert_int_equal(c->boards[0].layout.points_max, 67108863);
    assert_int_equal(parse_str("[board daily]\nperiod = day\npoints_max = 67108864\n", c, &err),
                     RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "53 bits"));
    free(c);
}

/* ---- line endings and buffer bounds ------------------------------------- */

static void test_text_without_trailing_newline_parses(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok("[board b]\ntiebreak = none\nlog_cap = 7", c);
    assert_int_equal(c->boards[0].log_cap, 7);
    parse_ok("[server]\ntick = 20ms # last line, no newline", c);
    assert_int_equal(c->tick_ms, 20);
    free(c);
}

static void test_crlf_line_endings_parse(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    parse_ok("\xEF\xBB\xBF# with a BOM\r\n[server]\r\nlisten = 0.0.0.0:9\r\n\r\n"
             "[board b]\r\ntiebreak = none\r\nlog_cap = 9\r\n",
             c);
    assert_string_equal(c->listen, "0.0.0.0:9");
    assert_string_equal(c->boards[0].name, "b");
    assert_int_equal(c->boards[0].log_cap, 9);
    free(c);
}

/* [server] viewers_every: how often viewer counts go through Redis
 * (fanout/gw_viewers.c); 2 s unless set, 200ms..1m. */
static void test_viewers_every_is_read_and_bounded(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    parse_ok("", c);
    assert_int_equal(c->viewers_every_ms, 2000);
    parse_ok("[server]\nviewers_every = 500ms\n", c);
    assert_int_equal(c->viewers_every_ms, 500);
    assert_int_equal(parse_str("[server]\nviewers_every = 100ms\n", c, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "t.conf:2: viewers_every must be a duration from 200ms to 1m"));
    assert_int_equal(parse_str("[server]\nviewers_every = 2m\n", c, &err), RC_E_BAD_REQUEST);
    free(c);
}

/* [server] list_builds_per_turn: member lists' windows one loop turn
 * builds (fanout/gw_members.c); 256 unless set, 1..1000000. */
static void test_list_builds_per_turn_is_read_and_bounded(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    parse_ok("", c);
    assert_int_equal(c->list_builds_per_turn, 256);
    parse_ok("[server]\nlist_builds_per_turn = 3\n", c);
    assert_int_equal(c->list_builds_per_turn, 3);
    assert_int_equal(parse_str("[server]\nlist_builds_per_turn = 0\n", c, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "t.conf:2: list_builds_per_turn"));
    assert_int_equal(parse_str("[limits]\nlist_builds_per_turn = 3\n", c, &err), RC_E_BAD_REQUEST);
    free(c);
}

static void test_unterminated_buffer_respects_len(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    /* Past len the text would make tick "20ms5" and open a bad section. */
    static const char text[] = "[server]\ntick = 20ms5\n[nonsense";
    size_t len = strlen("[server]\ntick = 20ms");
    assert_int_equal(parse_exact(text, len, c, &err), 0);
    assert_int_equal(c->tick_ms, 20);
    /* Cut inside a value: "2" alone is a bare number. */
    assert_int_equal(parse_exact(text, strlen("[server]\ntick = 2"), c, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "t.conf:2: tick must be a duration"));
    /* Cut inside a header. */
    assert_int_equal(parse_exact(text, strlen("[ser"), c, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "t.conf:1: section header has no closing ']'"));
    /* Zero length is an empty config. */
    assert_int_equal(rc_conf_parse("t.conf", text, 0, c, &err), 0);
    assert_int_equal(c->tick_ms, 50);
    free(c);
}

/* Mutates the shipped config (byte flips, cuts, inserted bytes) a few
 * thousand times with a fixed seed: the parser must answer 0 or bad_request
 * with a FILE:LINE message, and never read outside the buffer. */
static void test_mutated_configs_never_crash(void **state)
{
    (void)state;
    char path[4096];
    size_t len = 0;
    char *orig = read_shipped_conf(&len, path, sizeof path);
    if (!orig)
        fail_msg("cannot read %s", path);
    struct rc_conf *c = new_conf();
    uint64_t seed = 0x9e3779b97f4a7c15u;
    static const char alphabet[] = "\n\r\t =#;[]*,:-+0123456789msdhwkzZTabcdefgxyz\x01\xff";
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = len;
        char *buf = malloc(len + 16);
        assert_non_null(buf);
        memcpy(buf, orig, len);
        int edits = 1 + (int)(seed % 6);
        for (int e = 0; e < edits; e++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            size_t at = (size_t)(seed >> 33) % (n ? n : 1);
            char ch = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
            switch ((seed >> 8) % 4) {
            case 0: buf[at] = ch; break;
            case 1: n = at; break; /* truncate */
            case 2:
                if (n < len + 16) {
                    memmove(buf + at + 1, buf + at, n - at);
                    buf[at] = ch;
                    n++;
                }
                break;
            default:
                if (n) {
                    memmove(buf + at, buf + at + 1, n - at - 1);
                    n--;
                }
            }
        }
        struct rc_error err;
        int rc = parse_exact(buf, n, c, &err);
        assert_true(rc == 0 || rc == RC_E_BAD_REQUEST);
        if (rc)
            assert_int_equal(strncmp(err.msg, "t.conf:", 7), 0);
        free(buf);
    }
    free(orig);
    free(c);
}

/* ---- value parsers ------------------------------------------------------ */

static void test_durations_parse_and_reject(void **state)
{
    (void)state;
    static const struct { const char *s; int64_t ms; } ok[] = {
        {"50ms", 50}, {"5s", 5000}, {"10m", 600000}, {"24h", 86400000}, {"7d", 604800000},
        {"1w", 604800000}, {"007s", 7000}, {"9223372036854775807ms", INT64_MAX},
        {"106751991167d", INT64_C(106751991167) * 86400000}};
    static const char *const bad[] = {
        "", "5", "s", "0s", "0ms", "-5s", "+5s", "5 s", "5sec", "1.5s", "5S", "5ms ", " 5ms",
        "99999999999999999999s", "9223372036854775808ms", "9223372036854775807s", "106751991168d",
        "5mss", "5h5m"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t ms = -1;
        assert_int_equal(rc_conf_value_parse_duration_ms(ok[i].s, &ms), 0);
        assert_int_equal(ms, ok[i].ms);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t ms = -1;
        if (rc_conf_value_parse_duration_ms(bad[i], &ms) != RC_E_BAD_REQUEST)
            fail_msg("duration '%s' accepted", bad[i]);
        assert_int_equal(ms, -1);
    }
}

/* message_timeout: 10 s unless set, 1 s..10 m. */
static void test_message_timeout_defaults_to_10s_within_1s_to_10m(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    parse_ok("", c);
    assert_int_equal(c->message_timeout_ms, 10000);
    parse_ok("[limits]\nmessage_timeout = 1s\n", c);
    assert_int_equal(c->message_timeout_ms, 1000);
    parse_ok("[limits]\nmessage_timeout = 10m\n", c);
    assert_int_equal(c->message_timeout_ms, 600000);
    memset(&err, 0, sizeof err);
    assert_int_not_equal(parse_str("[limits]\nmessage_timeout = 999ms\n", c, &err), 0);
    assert_non_null(strstr(err.msg, "message_timeout"));
    memset(&err, 0, sizeof err);
    assert_int_not_equal(parse_str("[limits]\nmessage_timeout = 11m\n", c, &err), 0);
    free(c);
}

/* ip_handshake_rate / ip_handshake_burst: 1000 and 2000 unless set, each
 * refused at 0 and past its top with the key's name. */
static void test_ip_handshake_budget_defaults_and_ranges(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    parse_ok("", c);
    assert_int_equal(c->ip_handshake_rate, 1000);
    assert_int_equal(c->ip_handshake_burst, 2000);
    parse_ok("[limits]\nip_handshake_rate = 5\nip_handshake_burst = 20\n", c);
    assert_int_equal(c->ip_handshake_rate, 5);
    assert_int_equal(c->ip_handshake_burst, 20);
    memset(&err, 0, sizeof err);
    assert_int_not_equal(parse_str("[limits]\nip_handshake_rate = 0\n", c, &err), 0);
    assert_non_null(strstr(err.msg, "ip_handshake_rate"));
    memset(&err, 0, sizeof err);
    assert_int_not_equal(parse_str("[limits]\nip_handshake_burst = 10000001\n", c, &err), 0);
    assert_non_null(strstr(err.msg, "ip_handshake_burst"));
    free(c);
}

static void test_timestamps_parse_and_reject(void **state)
{
    (void)state;
    static const struct { const char *s; int64_t ms; } ok[] = {
        {"1970-01-01T00:00:00Z", 0},
        {"2026-01-01T00:00:00Z", JAN_1_2026_MS},
        {"2026-01-01T08:00:00+08:00", JAN_1_2026_MS},
        {"2025-12-31T19:00:00-05:00", JAN_1_2026_MS},
        {"2024-02-29T00:00:00Z", INT64_C(1709164800000)},
        {"2000-02-29T23:59:59Z", INT64_C(951868799000)},
        {"1969-12-31T23:59:59Z", -1000},
        {"9999-12-31T23:59:59Z", INT64_C(253402300799000)},
        {"0001-01-01T00:00:00Z", INT64_C(-62135596800000)}};
    static const char *const bad[] = {
        "2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z",
        "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-01-00T00:00:00Z",
        "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z",
        "2026-01-01 00:00:00Z", "2026-01-01T00:00:00",  "2026-01-01T00:00:00z",
        "2026-01-01T00:00:00+15:00", "2026-01-01T00:00:00+0800", "2026-01-01T00:00:00+08:00Z",
        "2026-1-01T00:00:00Z",  "0000-01-01T00:00:00Z", "2026-01-01T00:00:00Z ",
        "2026-01-01T00:00:00.5Z", "+2026-01-01T00:00:00Z", "",  "2026-01-01"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t ms = -7;
        if (rc_conf_value_parse_timestamp_ms(ok[i].s, &ms) != 0)
            fail_msg("timestamp '%s' refused", ok[i].s);
        assert_int_equal(ms, ok[i].ms);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t ms = -7;
        if (rc_conf_value_parse_timestamp_ms(bad[i], &ms) != RC_E_BAD_REQUEST)
            fail_msg("timestamp '%s' accepted", bad[i]);
        assert_int_equal(ms, -7);
    }
}

static void test_utc_offsets_parse_and_reject(void **state)
{
    (void)state;
    static const struct { const char *s; int32_t secs; } ok[] = {
        {"+00:00", 0}, {"-00:00", 0}, {"+08:00", 28800}, {"-05:30", -19800},
        {"+05:45", 20700}, {"+14:00", 50400}, {"-14:00", -50400}};
    static const char *const bad[] = {"", "Z", "08:00", "+8:00", "+08:0", "+0800", "+08:60",
                                      "+14:01", "-14:30", "+15:00", "+08:00:00", "+08:00 ", "+ab:cd"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int32_t s = 99;
        assert_int_equal(rc_conf_value_parse_utc_offset(ok[i].s, &s), 0);
        assert_int_equal(s, ok[i].secs);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int32_t s = 99;
        if (rc_conf_value_parse_utc_offset(bad[i], &s) != RC_E_BAD_REQUEST)
            fail_msg("offset '%s' accepted", bad[i]);
        assert_int_equal(s, 99);
    }
}

static void test_int64_parse_is_strict(void **state)
{
    (void)state;
    static const struct { const char *s; int64_t v; } ok[] = {
        {"0", 0}, {"-0", 0}, {"42", 42}, {"-7", -7}, {"007", 7},
        {"9223372036854775807", INT64_MAX}, {"-9223372036854775808", INT64_MIN}};
    static const char *const bad[] = {"", "-", "+1", " 1", "1 ", "1a", "1.0", "0x10", "--1",
                                      "9223372036854775808", "-9223372036854775809",
                                      "99999999999999999999"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t v = 99;
        assert_int_equal(rc_conf_value_parse_int64(ok[i].s, &v), 0);
        assert_int_equal(v, ok[i].v);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v = 99;
        if (rc_conf_value_parse_int64(bad[i], &v) != RC_E_BAD_REQUEST)
            fail_msg("integer '%s' accepted", bad[i]);
        assert_int_equal(v, 99);
    }
}

static void test_ip_board_share_is_a_percentage_defaulting_to_10(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    parse_ok("", c);
    assert_int_equal(c->ip_board_share, 10);
    parse_ok("[limits]\nip_board_share = 100\n", c);
    assert_int_equal(c->ip_board_share, 100);
    assert_int_equal(parse_str("[limits]\nip_board_share = 0\n", c, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "ip_board_share must be an integer from 1 to 100"));
    assert_int_equal(parse_str("[limits]\nip_board_share = 101\n", c, &err), RC_E_BAD_REQUEST);
    free(c);
}

/* history_checkpoint_every: auto (half of history_undo_max), off, or N no
 * larger than history_undo_max (docs/history.md, "Checkpoints"). */
static void test_history_checkpoint_every_is_auto_off_or_within_the_undo_cap(void **state)
{
    (void)state;
    struct rc_conf *c = new_conf();
    struct rc_error err;
    parse_ok("", c);
    assert_int_equal(rc_conf_checkpoint_every(c), 5000);
    /* auto grows with the board: half its members, 5,000 to 20,000 */
    assert_int_equal(rc_conf_checkpoint_every_at(c, 0), 5000);
    assert_int_equal(rc_conf_checkpoint_every_at(c, 10000), 5000);
    assert_int_equal(rc_conf_checkpoint_every_at(c, 30000), 15000);
    assert_int_equal(rc_conf_checkpoint_every_at(c, 100000), 20000);
    assert_int_equal(rc_conf_checkpoint_every_at(c, 100000000), 20000);
    parse_ok("[limits]\nhistory_undo_max = 40\n", c);
    assert_int_equal(rc_conf_checkpoint_every(c), 20);
    assert_int_equal(rc_conf_checkpoint_every_at(c, 100000), 80); /* auto: at most twice the cap */
    parse_ok("[limits]\nhistory_checkpoint_every = off\n", c);
    assert_int_equal(rc_conf_checkpoint_every(c), 0);
    assert_int_equal(rc_conf_checkpoint_every_at(c, 100000), 0);
    parse_ok("[limits]\nhistory_checkpoint_every = 10000\n", c);
    assert_int_equal(rc_conf_checkpoint_every(c), 10000);
    assert_int_equal(rc_conf_checkpoint_every_at(c, 1000000), 10000);
    parse_ok("[limits]\nhistory_checkpoint_every = 100\nhistory_undo_max = 100\n[server]\n", c);
    assert_int_equal(rc_conf_checkpoint_every(c), 100);
    assert_int_equal(parse_str("[limits]\nhistory_checkpoint_every = 101\nhistory_undo_max = 100\n", c, &err),
                     RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "t.conf:2: history_checkpoint_every (101) must not exceed history_undo_max (100)"));
    assert_int_equal(parse_str("[limits]\nhistory_checkpoint_every = 9\n", c, &err), RC_E_BAD_REQUEST);
    assert_int_equal(parse_str("[limits]\nhistory_checkpoint_every = often\n", c, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "history_checkpoint_every must be auto, off or an integer from 10 to 100000000"));
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_config_parses_with_expected_boards),
        cmocka_unit_test(test_empty_text_gives_documented_defaults),
        cmocka_unit_test(test_board_defaults_follow_board_kind),
        cmocka_unit_test(test_multi_field_board_without_tiebreak_key_needs_horizon),
        cmocka_unit_test(test_server_redis_limits_values_are_stored),
        cmocka_unit_test(test_viewers_every_is_read_and_bounded),
        cmocka_unit_test(test_list_builds_per_turn_is_read_and_bounded),
        cmocka_unit_test(test_redis_credentials_are_stored_as_names_only),
        cmocka_unit_test(test_redis_password_in_the_file_is_refused_without_quoting_it),
        cmocka_unit_test(test_auth_and_key_sections_are_stored),
        cmocka_unit_test(test_secret_length_bounds_are_16_and_128),
        cmocka_unit_test(test_jwt_keys_are_read_in_auth),
        cmocka_unit_test(test_too_many_keys_are_refused),
        cmocka_unit_test(test_errors_never_echo_a_secret),
        cmocka_unit_test(test_find_board_exact_beats_template),
        cmocka_unit_test(test_find_board_longest_template_wins),
        cmocka_unit_test(test_find_board_unknown_is_null),
        cmocka_unit_test(test_find_board_template_needs_a_non_empty_remainder),
        cmocka_unit_test(test_find_board_bare_prefix_falls_back_to_a_shorter_template),
        cmocka_unit_test(test_errors_report_file_line_and_reason),
        cmocka_unit_test(test_unknown_key_message_is_exact),
        cmocka_unit_test(test_queued_board_keeps_its_bounds),
        cmocka_unit_test(test_sharded_board_keeps_its_count),
        cmocka_unit_test(test_periodic_and_template_boards_can_be_sharded),
        cmocka_unit_test(test_overlong_line_and_value_are_refused),
        cmocka_unit_test(test_nul_byte_in_text_is_refused),
        cmocka_unit_test(test_too_many_boards_are_refused),
        cmocka_unit_test(test_layout_over_53_bits_is_refused),
        cmocka_unit_test(test_daily_example_gives_points_max_67108863),
        cmocka_unit_test(test_text_without_trailing_newline_parses),
        cmocka_unit_test(test_crlf_line_endings_parse),
        cmocka_unit_test(test_unterminated_buffer_respects_len),
        cmocka_unit_test(test_mutated_configs_never_crash),
        cmocka_unit_test(test_durations_parse_and_reject),
        cmocka_unit_test(test_message_timeout_defaults_to_10s_within_1s_to_10m),
        cmocka_unit_test(test_ip_handshake_budget_defaults_and_ranges),
        cmocka_unit_test(test_timestamps_parse_and_reject),
        cmocka_unit_test(test_utc_offsets_parse_and_reject),
        cmocka_unit_test(test_int64_parse_is_strict),
        cmocka_unit_test(test_ip_board_share_is_a_percentage_defaulting_to_10),
        cmocka_unit_test(test_history_checkpoint_every_is_auto_off_or_within_the_undo_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
