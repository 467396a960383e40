/* test_jwt.c - token rules without cryptography: the header's algorithm
 * (alg none and unknown algorithms refused), base64url, and the claims
 * (exp required, skew, nbf, scope words, board patterns, sub), plus the
 * claims `rankcast token` builds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rc_auth.h"
#include "rc_jwt.h"

#define NOW_MS INT64_C(1800000000000) /* 2027-01-15 */
#define NOW_S (NOW_MS / 1000)

static int claims(const char *json, int64_t now_ms, int64_t skew_ms, struct rc_token *t, struct rc_error *err)
{
    return rc_jwt_claims(json, strlen(json), now_ms, skew_ms, t, err);
}

/* A header segment from JSON text (base64url, no padding), for the alg tests. */
static void b64url(const char *in, char *out)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t n = strlen(in), o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)in[i] << 16;
        if (i + 1 < n)
            v |= (unsigned char)in[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)in[i + 2];
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        if (i + 1 < n)
            out[o++] = tab[(v >> 6) & 63];
        if (i + 2 < n)
            out[o++] = tab[v & 63];
    }
    out[o] = '\0';
}

static enum rc_jwt_alg alg_of(const char *header_json, int *rc)
{
    char tok[512];
    enum rc_jwt_alg alg;
    struct rc_error err = {0, ""};
    b64url(header_json, tok);
    strcat(tok, ".e30.sig");
    *rc = rc_jwt_header_alg(tok, strlen(tok), &alg, &err);
    return alg;
}

static void hs256_rs256_es256_are_named_by_the_header(void **state)
{
    int rc;
    (void)state;
    assert_int_equal(alg_of("{\"alg\":\"HS256\",\"typ\":\"JWT\"}", &rc), RC_JWT_HS256);
    assert_int_equal(rc, 0);
    assert_int_equal(alg_of("{\"alg\":\"RS256\"}", &rc), RC_JWT_RS256);
    assert_int_equal(alg_of("{\"alg\":\"ES256\"}", &rc), RC_JWT_ES256);
}

static void alg_none_and_other_algorithms_are_refused(void **state)
{
    int rc;
    (void)state;
    assert_int_equal(alg_of("{\"alg\":\"none\"}", &rc), RC_JWT_ALG_OTHER);
    assert_int_equal(alg_of("{\"alg\":\"None\"}", &rc), RC_JWT_ALG_OTHER);
    assert_int_equal(alg_of("{\"alg\":\"HS384\"}", &rc), RC_JWT_ALG_OTHER);
    assert_int_equal(alg_of("{\"alg\":\"hs256\"}", &rc), RC_JWT_ALG_OTHER);
    assert_int_equal(alg_of("{\"typ\":\"JWT\"}", &rc), RC_JWT_ALG_OTHER);
    assert_int_equal(rc, RC_E_UNAUTHORIZED);
    assert_int_equal(alg_of("{\"alg\":1}", &rc), RC_JWT_ALG_OTHER);
    assert_int_equal(rc, RC_E_UNAUTHORIZED);
    assert_int_equal(alg_of("[1]", &rc), RC_JWT_ALG_OTHER);
    assert_int_equal(rc, RC_E_UNAUTHORIZED);
}

static void a_header_that_is_not_base64url_is_unauthorized(void **state)
{
    enum rc_jwt_alg alg;
    struct rc_error err = {0, ""};
    (void)state;
    assert_int_equal(rc_jwt_header_alg("e*J.e30.x", 9, &alg, &err), RC_E_UNAUTHORIZED);
    assert_int_equal(rc_jwt_header_alg("nodots", 6, &alg, &err), RC_E_UNAUTHORIZED);
}

static void base64url_decodes_and_refuses_bad_text(void **state)
{
    unsigned char out[16];
    (void)state;
    assert_int_equal(rc_jwt_b64url_decode("aGk", 3, out, sizeof out), 2);
    assert_memory_equal(out, "hi", 2);
    assert_int_equal(rc_jwt_b64url_decode("-_8", 3, out, sizeof out), 2);
    assert_int_equal(out[0], 0xfb);
    assert_int_equal(rc_jwt_b64url_decode("aGk=", 4, out, sizeof out), -1); /* padding is not base64url */
    assert_int_equal(rc_jwt_b64url_decode("a", 1, out, sizeof out), -1);
    assert_int_equal(rc_jwt_b64url_decode("aGl", 3, out, sizeof out), -1); /* non-zero leftover bits */
    assert_int_equal(rc_jwt_b64url_decode("aGVsbG8gd29ybGQ", 15, out, 4), -1); /* no room */
}

static void shaped_means_three_base64url_parts(void **state)
{
    (void)state;
    assert_true(rc_jwt_shaped("eyJh.eyJi.c2ln", 14));
    assert_true(rc_jwt_shaped("eyJh.eyJi.", 10)); /* alg none has an empty signature */
    assert_false(rc_jwt_shaped("eyJh.eyJi", 9));
    assert_false(rc_jwt_shaped("eyJh..c2ln", 10));
    assert_false(rc_jwt_shaped("eyJh.eyJi.c2ln.x", 16));
    assert_false(rc_jwt_shaped("an-api-key-0123456789", 21));
    assert_false(rc_jwt_shaped("ey Jh.eyJi.c2ln", 15));
}

static void a_good_token_gives_its_scopes_boards_and_sub(void **state)
{
    struct rc_token t;
    struct rc_error err = {0, ""};
    char json[256];
    (void)state;
    snprintf(json, sizeof json,
             "{\"sub\":\"overlay@studio\",\"exp\":%lld,\"scope\":\"read write\",\"boards\":[\"demo\",\"match:*\"]}",
             (long long)NOW_S + 60);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), 0);
    assert_string_equal(t.sub, "overlay@studio");
    assert_int_equal(t.exp_ms, (NOW_S + 60) * 1000);
    assert_int_equal(t.key.scopes, RC_SCOPE_READ | RC_SCOPE_WRITE);
    assert_int_equal(t.key.npatterns, 2);
    assert_true(rc_auth_key_covers(&t.key, "demo"));
    assert_true(rc_auth_key_covers(&t.key, "match:7"));
    assert_false(rc_auth_key_covers(&t.key, "other"));
    assert_string_equal(t.key.name, "jwt");
}

static void a_token_without_boards_covers_every_board(void **state)
{
    struct rc_token t;
    struct rc_error err = {0, ""};
    char json[128];
    (void)state;
    snprintf(json, sizeof json, "{\"exp\":%lld,\"scope\":\"admin\"}", (long long)NOW_S + 5);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), 0);
    assert_true(rc_auth_key_covers(&t.key, "anything"));
    assert_string_equal(t.sub, "");
    assert_int_equal(t.key.scopes, RC_SCOPE_ADMIN);
}

static void exp_is_required(void **state)
{
    struct rc_token t;
    struct rc_error err = {0, ""};
    (void)state;
    assert_int_equal(claims("{\"scope\":\"read\"}", NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
    assert_non_null(strstr(err.msg, "exp"));
    assert_int_equal(claims("{\"scope\":\"read\",\"exp\":\"soon\"}", NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
    assert_int_equal(claims("{\"scope\":\"read\",\"exp\":-1}", NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
    assert_int_equal(claims("{\"scope\":\"read\",\"exp\":1e300}", NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
}

static void an_expired_token_passes_only_within_the_skew(void **state)
{
    struct rc_token t;
    struct rc_error err = {0, ""};
    char json[128];
    (void)state;
    snprintf(json, sizeof json, "{\"exp\":%lld,\"scope\":\"read\"}", (long long)NOW_S - 10);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
    assert_non_null(strstr(err.msg, "expired"));
    assert_int_equal(claims(json, NOW_MS, 9999, &t, &err), RC_E_UNAUTHORIZED);
    assert_int_equal(claims(json, NOW_MS, 10001, &t, &err), 0);
    /* exactly at exp it has expired */
    snprintf(json, sizeof json, "{\"exp\":%lld,\"scope\":\"read\"}", (long long)NOW_S);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
}

static void expired_follows_exp_and_skew(void **state)
{
    struct rc_token t;
    (void)state;
    memset(&t, 0, sizeof t);
    t.exp_ms = NOW_MS;
    assert_false(rc_jwt_expired(&t, NOW_MS - 1, 0));
    assert_true(rc_jwt_expired(&t, NOW_MS, 0));
    assert_false(rc_jwt_expired(&t, NOW_MS + 499, 500));
    assert_true(rc_jwt_expired(&t, NOW_MS + 500, 500));
}

static void nbf_in_the_future_is_refused_beyond_the_skew(void **state)
{
    struct rc_token t;
    struct rc_error err = {0, ""};
    char json[160];
    (void)state;
    snprintf(json, sizeof json, "{\"exp\":%lld,\"nbf\":%lld,\"scope\":\"read\"}", (long long)NOW_S + 100,
             (long long)NOW_S + 20);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
    assert_non_null(strstr(err.msg, "not valid yet"));
    assert_int_equal(claims(json, NOW_MS, 30000, &t, &err), 0);
}

static void scope_is_required_and_must_grant_something(void **state)
{
    struct rc_token t;
    struct rc_error err = {0, ""};
    char json[160];
    (void)state;
    snprintf(json, sizeof json, "{\"exp\":%lld}", (long long)NOW_S + 100);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
    snprintf(json, sizeof json, "{\"exp\":%lld,\"scope\":\"openid profile\"}", (long long)NOW_S + 100);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
    snprintf(json, sizeof json, "{\"exp\":%lld,\"scope\":[\"read\"]}", (long long)NOW_S + 100);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
    /* other words beside ours are ignored (identity providers add their own) */
    snprintf(json, sizeof json, "{\"exp\":%lld,\"scope\":\"openid  write\"}", (long long)NOW_S + 100);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), 0);
    assert_int_equal(t.key.scopes, RC_SCOPE_WRITE);
    /* "readwrite" is not "read" */
    snprintf(json, sizeof json, "{\"exp\":%lld,\"scope\":\"readwrite\"}", (long long)NOW_S + 100);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
}

static void bad_board_patterns_are_refused(void **state)
{
    static const char *const bad[] = {"[]", "\"demo\"", "[1]", "[\"\"]", "[\"bad name\"]", "[\"a*b\"]",
                                      "[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\","
                                      "\"m\",\"n\",\"o\",\"p\",\"q\"]"};
    struct rc_token t;
    struct rc_error err = {0, ""};
    char json[400];
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(json, sizeof json, "{\"exp\":%lld,\"scope\":\"read\",\"boards\":%s}", (long long)NOW_S + 100, bad[i]);
        if (claims(json, NOW_MS, 0, &t, &err) != RC_E_UNAUTHORIZED)
            fail_msg("boards %s accepted", bad[i]);
    }
}

static void a_bad_sub_is_refused(void **state)
{
    struct rc_token t;
    struct rc_error err = {0, ""};
    char json[300];
    (void)state;
    snprintf(json, sizeof json, "{\"exp\":%lld,\"scope\":\"read\",\"sub\":\"a b\"}", (long long)NOW_S + 100);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
    snprintf(json, sizeof json, "{\"exp\":%lld,\"scope\":\"read\",\"sub\":42}", (long long)NOW_S + 100);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
    snprintf(json, sizeof json, "{\"exp\":%lld,\"scope\":\"read\",\"sub\":\"%065d\"}", (long long)NOW_S + 100, 0);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
}

static void a_payload_that_is_not_an_object_is_refused(void **state)
{
    struct rc_token t;
    struct rc_error err = {0, ""};
    (void)state;
    assert_int_equal(claims("[]", NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
    assert_int_equal(claims("{", NOW_MS, 0, &t, &err), RC_E_UNAUTHORIZED);
}

static void a_token_checks_like_a_key(void **state)
{
    struct rc_token t;
    struct rc_error err = {0, ""};
    struct rc_auth a;
    char json[200];
    (void)state;
    memset(&a, 0, sizeof a);
    snprintf(json, sizeof json, "{\"exp\":%lld,\"scope\":\"read\",\"boards\":[\"demo\"]}", (long long)NOW_S + 100);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), 0);
    assert_int_equal(rc_auth_check(&a, &t.key, 0, RC_SCOPE_READ, "demo", &err), 0);
    assert_int_equal(rc_auth_check(&a, &t.key, 0, RC_SCOPE_WRITE, "demo", &err), RC_E_FORBIDDEN);
    a.reads_need_key = 1;
    assert_int_equal(rc_auth_check(&a, &t.key, 0, RC_SCOPE_READ, "other", &err), RC_E_FORBIDDEN);
}

static void built_claims_read_back(void **state)
{
    char json[512];
    struct rc_token t;
    struct rc_error err = {0, ""};
    (void)state;
    assert_int_equal(rc_jwt_build_claims("read", "demo", "obs", NOW_S + 3600, json, sizeof json, &err), 0);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), 0);
    assert_int_equal(t.key.scopes, RC_SCOPE_READ);
    assert_true(rc_auth_key_covers(&t.key, "demo"));
    assert_false(rc_auth_key_covers(&t.key, "demo2"));
    assert_string_equal(t.sub, "obs");
    assert_int_equal(rc_jwt_build_claims("read,write admin", "", "", NOW_S + 1, json, sizeof json, &err), 0);
    assert_int_equal(claims(json, NOW_MS, 0, &t, &err), 0);
    assert_int_equal(t.key.scopes, RC_SCOPE_READ | RC_SCOPE_WRITE | RC_SCOPE_ADMIN);
    assert_true(rc_auth_key_covers(&t.key, "x"));
}

static void building_refuses_bad_arguments(void **state)
{
    char json[512];
    struct rc_error err = {0, ""};
    (void)state;
    assert_int_equal(rc_jwt_build_claims("reed", "demo", "", NOW_S, json, sizeof json, &err), RC_E_BAD_REQUEST);
    assert_int_equal(rc_jwt_build_claims("", "demo", "", NOW_S, json, sizeof json, &err), RC_E_BAD_REQUEST);
    assert_int_equal(rc_jwt_build_claims("read", "bad board", "", NOW_S, json, sizeof json, &err),
                     RC_E_BAD_REQUEST);
    assert_int_equal(rc_jwt_build_claims("read", ",", "", NOW_S, json, sizeof json, &err), RC_E_BAD_REQUEST);
    assert_int_equal(rc_jwt_build_claims("read", "demo", "a b", NOW_S, json, sizeof json, &err), RC_E_BAD_REQUEST);
    assert_int_equal(rc_jwt_build_claims("read", "demo", "", 0, json, sizeof json, &err), RC_E_BAD_REQUEST);
    assert_int_equal(rc_jwt_build_claims("read", "demo", "", NOW_S, json, 8, &err), RC_E_BAD_REQUEST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hs256_rs256_es256_are_named_by_the_header),
        cmocka_unit_test(alg_none_and_other_algorithms_are_refused),
        cmocka_unit_test(a_header_that_is_not_base64url_is_unauthorized),
        cmocka_unit_test(base64url_decodes_and_refuses_bad_text),
        cmocka_unit_test(shaped_means_three_base64url_parts),
        cmocka_unit_test(a_good_token_gives_its_scopes_boards_and_sub),
        cmocka_unit_test(a_token_without_boards_covers_every_board),
        cmocka_unit_test(exp_is_required),
        cmocka_unit_test(an_expired_token_passes_only_within_the_skew),
        cmocka_unit_test(expired_follows_exp_and_skew),
        cmocka_unit_test(nbf_in_the_future_is_refused_beyond_the_skew),
        cmocka_unit_test(scope_is_required_and_must_grant_something),
        cmocka_unit_test(bad_board_patterns_are_refused),
        cmocka_unit_test(a_bad_sub_is_refused),
        cmocka_unit_test(a_payload_that_is_not_an_object_is_refused),
        cmocka_unit_test(a_token_checks_like_a_key),
        cmocka_unit_test(built_claims_read_back),
        cmocka_unit_test(building_refuses_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
