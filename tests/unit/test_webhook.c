/* test_webhook.c - the pure part of the period-close webhook (core/rc_webhook.c)
 * and its [webhook] config section: the body's shape, the signature against
 * known HMAC-SHA256 vectors, the delivery id, the retry schedule, URLs, and
 * every config error with its FILE:LINE (never quoting a secret). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rc_conf.h"
#include "rc_err.h"
#include "rc_webhook.h"

/* ---- body --------------------------------------------------------------------- */

static void test_the_body_has_board_period_total_and_snapshot_rows_with_profiles(void **state)
{
    (void)state;
    struct rc_kv bea[] = {{"name", "Bea"}, {"avatar", "b.png"}};
    struct rc_profile pb = {.n = 2, .kv = bea};
    const struct rc_row rows[] = {
        {.member = "user:e", .score = 70},
        {.member = "user:b", .score = 50, .profile = &pb},
    };
    const struct rc_rows_out out = {.rows = rows, .n = 2, .first_rank = 1};
    char *body = rc_webhook_body("daily", "2026-11-22", 5, &out);
    assert_non_null(body);
    cJSON *o = cJSON_Parse(body);
    assert_non_null(o);
    assert_string_equal(cJSON_GetObjectItem(o, "board")->valuestring, "daily");
    assert_string_equal(cJSON_GetObjectItem(o, "period")->valuestring, "2026-11-22");
    assert_int_equal((int)cJSON_GetObjectItem(o, "total")->valuedouble, 5);
    assert_null(cJSON_GetObjectItem(o, "op")); /* not a snapshot message */
    const cJSON *r = cJSON_GetObjectItem(o, "rows");
    assert_int_equal(cJSON_GetArraySize(r), 2);
    const cJSON *second = cJSON_GetArrayItem(r, 1);
    assert_int_equal((int)cJSON_GetObjectItem(second, "rank")->valuedouble, 2);
    assert_string_equal(cJSON_GetObjectItem(second, "member")->valuestring, "user:b");
    assert_int_equal((int)cJSON_GetObjectItem(second, "score")->valuedouble, 50);
    assert_string_equal(cJSON_GetObjectItem(second, "name")->valuestring, "Bea");
    assert_string_equal(cJSON_GetObjectItem(second, "avatar")->valuestring, "b.png");
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(r, 0), "name"));
    cJSON_Delete(o);
    /* keys in a fixed order, no spaces: the bytes that are signed */
    assert_memory_equal(body, "{\"board\":\"daily\",\"period\":\"2026-11-22\",\"total\":5,\"rows\":[", 56);
    free(body);
}

static void test_an_empty_window_gives_an_empty_rows_array(void **state)
{
    (void)state;
    const struct rc_rows_out none = {0};
    char *body = rc_webhook_body("sprint", "12", 0, &none);
    assert_non_null(body);
    assert_string_equal(body, "{\"board\":\"sprint\",\"period\":\"12\",\"total\":0,\"rows\":[]}");
    free(body);
}

/* ---- signature and delivery id -------------------------------------------------------- */

/* RFC 4231, test cases 2 and 1. */
static void test_the_signature_is_sha256_equals_lowercase_hex_hmac(void **state)
{
    (void)state;
    char sig[RC_WEBHOOK_SIG_MAX];
    const char *data = "what do ya want for nothing?";
    assert_int_equal(rc_webhook_sign("Jefe", 4, data, strlen(data), sig), 0);
    assert_string_equal(sig, "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    char key[20];
    memset(key, 0x0b, sizeof key);
    assert_int_equal(rc_webhook_sign(key, sizeof key, "Hi There", 8, sig), 0);
    assert_string_equal(sig, "sha256=b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    assert_int_equal(strlen(sig), RC_WEBHOOK_SIG_MAX - 1);
}

static void test_one_changed_byte_changes_the_signature(void **state)
{
    (void)state;
    char a[RC_WEBHOOK_SIG_MAX], b[RC_WEBHOOK_SIG_MAX];
    const char *secret = "0123456789abcdef0123";
    assert_int_equal(rc_webhook_sign(secret, strlen(secret), "{\"total\":5}", 11, a), 0);
    assert_int_equal(rc_webhook_sign(secret, strlen(secret), "{\"total\":6}", 11, b), 0);
    assert_string_not_equal(a, b);
}

static void test_the_delivery_id_is_stable_per_board_period(void **state)
{
    (void)state;
    char a[RC_WEBHOOK_ID_MAX], b[RC_WEBHOOK_ID_MAX], c[RC_WEBHOOK_ID_MAX];
    rc_webhook_delivery_id("daily", "2026-11-22", a);
    rc_webhook_delivery_id("daily", "2026-11-22", b);
    rc_webhook_delivery_id("daily", "2026-11-23", c);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
    assert_int_equal(strlen(a), 32);
    assert_int_equal(strspn(a, "0123456789abcdef"), 32);
    /* the first 16 bytes of SHA-256("daily|2026-11-22"), as `printf 'daily|2026-11-22' | sha256sum` */
    assert_string_equal(a, "b153a4d1e7a7ddfcdaa339c3bd3a5934");
}

/* ---- retries --------------------------------------------------------------------------- */

static void test_backoff_doubles_from_base_and_stops_at_the_cap(void **state)
{
    (void)state;
    const int64_t want[] = {1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000};
    for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(rc_webhook_backoff_ms(1000, 30000, i + 1), want[i]);
    assert_int_equal(rc_webhook_backoff_ms(200, 200, 1), 200);
    assert_int_equal(rc_webhook_backoff_ms(200, 200, 20), 200);
    /* no overflow far out */
    assert_int_equal(rc_webhook_backoff_ms(3600000, 3600000, 4000000000u), 3600000);
}

static void test_only_2xx_counts_as_delivered(void **state)
{
    (void)state;
    assert_true(rc_webhook_delivered(200));
    assert_true(rc_webhook_delivered(204));
    assert_true(rc_webhook_delivered(299));
    assert_false(rc_webhook_delivered(0));
    assert_false(rc_webhook_delivered(199));
    assert_false(rc_webhook_delivered(301));
    assert_false(rc_webhook_delivered(500));
}

static void test_urls_need_http_or_https_and_a_host(void **state)
{
    (void)state;
    assert_true(rc_webhook_url_valid("http://127.0.0.1:8081/hook"));
    assert_true(rc_webhook_url_valid("https://hooks.example.com/rankcast?x=1"));
    assert_true(rc_webhook_url_valid("http://[::1]:9000/"));
    assert_true(rc_webhook_url_valid("http://h"));
    assert_false(rc_webhook_url_valid("ftp://h/"));
    assert_false(rc_webhook_url_valid("http://"));
    assert_false(rc_webhook_url_valid("http:///path"));
    assert_false(rc_webhook_url_valid("http://h:0/"));
    assert_false(rc_webhook_url_valid("http://h:65536/"));
    assert_false(rc_webhook_url_valid("http://h:port/"));
    assert_false(rc_webhook_url_valid("http://h/a b"));
    assert_false(rc_webhook_url_valid("hooks.example.com"));
    assert_false(rc_webhook_url_valid("http://[::1/"));
}

/* ---- [webhook] config ------------------------------------------------------------------ */

static struct rc_conf *parse(const char *text, int *rc, struct rc_error *err)
{
    struct rc_conf *c = calloc(1, sizeof *c);
    assert_non_null(c);
    memset(err, 0, sizeof *err);
    *rc = rc_conf_parse("t.conf", text, strlen(text), c, err);
    return c;
}

static void expect_error(const char *text, const char *msg)
{
    struct rc_error err;
    int rc;
    struct rc_conf *c = parse(text, &rc, &err);
    assert_int_equal(rc, RC_E_BAD_REQUEST);
    if (!strstr(err.msg, msg))
        fail_msg("message '%s' does not contain '%s'", err.msg, msg);
    free(c);
}

#define SECRET "s3cret-value-0123456789"

static void test_no_webhook_section_means_no_webhook_and_defaults(void **state)
{
    (void)state;
    struct rc_error err;
    int rc;
    struct rc_conf *c = parse("[server]\nlisten = 127.0.0.1:8080\n", &rc, &err);
    assert_int_equal(rc, 0);
    assert_string_equal(c->webhook.url, "");
    assert_int_equal(c->webhook.top, 10);
    assert_int_equal(c->webhook.timeout_ms, 10000);
    assert_int_equal(c->webhook.retries, 5);
    assert_int_equal(c->webhook.backoff_base_ms, 1000);
    assert_int_equal(c->webhook.backoff_cap_ms, 60000);
    assert_int_equal(c->webhook.lock_ttl_ms, 30000);
    free(c);
}

static void test_a_full_webhook_section_is_read(void **state)
{
    (void)state;
    struct rc_error err;
    int rc;
    struct rc_conf *c = parse("[webhook]\nurl = https://hooks.example.com/rc # where\nsecret = " SECRET
                              "\ntop = 25\ntimeout = 2s\nretries = 3\nbackoff_base = 200ms\nbackoff_cap = 5s\nlock_ttl = 5s\n",
                              &rc, &err);
    assert_int_equal(rc, 0);
    assert_string_equal(c->webhook.url, "https://hooks.example.com/rc");
    assert_string_equal(c->webhook.secret, SECRET);
    assert_int_equal(c->webhook.top, 25);
    assert_int_equal(c->webhook.timeout_ms, 2000);
    assert_int_equal(c->webhook.retries, 3);
    assert_int_equal(c->webhook.backoff_base_ms, 200);
    assert_int_equal(c->webhook.backoff_cap_ms, 5000);
    assert_int_equal(c->webhook.lock_ttl_ms, 5000);
    free(c);
    c = parse("[webhook]\nurl = http://127.0.0.1:9/\nsecret_env = RC_HOOK_SECRET\n", &rc, &err);
    assert_int_equal(rc, 0);
    assert_string_equal(c->webhook.secret_env, "RC_HOOK_SECRET");
    assert_string_equal(c->webhook.secret, "");
    free(c);
}

static void test_webhook_errors_name_file_and_line(void **state)
{
    (void)state;
    expect_error("[webhook]\nsecret = " SECRET "\n", "t.conf:1: [webhook] needs url");
    expect_error("[webhook]\nurl = http://h/\n", "t.conf:1: [webhook] needs secret or secret_env");
    expect_error("[webhook]\nurl = ftp://h/\n", "t.conf:2: url must be an http:// or https:// URL");
    expect_error("[webhook]\nurl = http://h/\nsecret = " SECRET "\ntop = 0\n", "t.conf:4: top must be");
    expect_error("[webhook]\nurl = http://h/\nsecret = " SECRET "\ntop = 1001\n", "t.conf:4: top must be");
    expect_error("[webhook]\nurl = http://h/\nsecret = " SECRET "\ntimeout = 10\n", "t.conf:4: timeout must be a duration");
    expect_error("[webhook]\nurl = http://h/\nsecret = " SECRET "\ntimeout = 2m\n", "t.conf:4: timeout must be a duration");
    expect_error("[webhook]\nurl = http://h/\nsecret = " SECRET "\nretries = 21\n", "t.conf:4: retries must be");
    expect_error("[webhook]\nurl = http://h/\nsecret = " SECRET "\nlock_ttl = 2s\n", "t.conf:4: lock_ttl must be a duration");
    expect_error("[webhook]\nurl = http://h/\nsecret = " SECRET "\nlock_ttl = 2h\n", "t.conf:4: lock_ttl must be a duration");
    expect_error("[webhook]\nurl = http://h/\nsecret = " SECRET "\nbackoff_base = 10s\nbackoff_cap = 1s\n",
                 "t.conf:4: [webhook] backoff_base (10s) is longer than backoff_cap (1s)");
    expect_error("[webhook]\nurl = http://h/\nsecret = " SECRET "\nsecret_env = X\n",
                 "t.conf:4: secret and secret_env are exclusive");
    expect_error("[webhook]\nurl = http://h/\nsecret_env = lower\n", "t.conf:3: secret_env must name");
    expect_error("[webhook]\nurl = http://h/\nsecret = " SECRET "\nurl = http://g/\n", "t.conf:4: key 'url' repeated in [webhook]");
    expect_error("[webhook]\nurl = http://h/\nsecret = " SECRET "\nmethod = PUT\n", "t.conf:4: unknown key 'method' in [webhook]");
    expect_error("[webhook]\nurl = http://h/\nsecret = " SECRET "\n[webhook]\n", "t.conf:4: section [webhook] appears twice");
}

static void test_a_bad_webhook_secret_is_never_quoted(void **state)
{
    (void)state;
    struct rc_error err;
    int rc;
    struct rc_conf *c = parse("[webhook]\nurl = http://h/\nsecret = short-Zq9\n", &rc, &err);
    assert_int_equal(rc, RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "t.conf:3: [webhook] secret must be 16..128 printable characters"));
    assert_null(strstr(err.msg, "short-Zq9"));
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_body_has_board_period_total_and_snapshot_rows_with_profiles),
        cmocka_unit_test(test_an_empty_window_gives_an_empty_rows_array),
        cmocka_unit_test(test_the_signature_is_sha256_equals_lowercase_hex_hmac),
        cmocka_unit_test(test_one_changed_byte_changes_the_signature),
        cmocka_unit_test(test_the_delivery_id_is_stable_per_board_period),
        cmocka_unit_test(test_backoff_doubles_from_base_and_stops_at_the_cap),
        cmocka_unit_test(test_only_2xx_counts_as_delivered),
        cmocka_unit_test(test_urls_need_http_or_https_and_a_host),
        cmocka_unit_test(test_no_webhook_section_means_no_webhook_and_defaults),
        cmocka_unit_test(test_a_full_webhook_section_is_read),
        cmocka_unit_test(test_webhook_errors_name_file_and_line),
        cmocka_unit_test(test_a_bad_webhook_secret_is_never_quoted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
