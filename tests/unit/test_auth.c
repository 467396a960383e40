/* test_auth.c - API keys: lookup by secret, board patterns, the
 * unauthorized/forbidden matrix of rc_auth_check, key validation, and the
 * token bucket behind rate_limited.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_auth.h"
#include "rc_err.h"

#define ALL_SCOPES (RC_SCOPE_READ | RC_SCOPE_WRITE | RC_SCOPE_ADMIN)

static const char *const star[] = {"*"};

/* Secrets of the fixture keys; S_ADMIN and S_READER share a prefix on purpose. */
#define S_ADMIN "admin-secret-0123456789abcdef"
#define S_WRITER "writer-secret-ABCDEFGHIJ"
#define S_READER "admin-secret-0123456789abcdeX"
#define S_MATCH "match-writer-secret-zz"

/* struct rc_auth is ~90 KB: keep it off the stack. */
static struct rc_auth *new_auth(void)
{
    struct rc_auth *a = calloc(1, sizeof *a);
    assert_non_null(a);
    return a;
}

static void add(struct rc_auth *a, const char *name, const char *secret, unsigned scopes,
                const char *const *patterns, unsigned n)
{
    if (rc_auth_add_key(a, name, secret, strlen(secret), scopes, patterns, n) != 0)
        fail_msg("key %s refused", name);
}

/* admin: everything; writer: read+write on demo and match:*; reader: read on
 * every board; matcher: write on match:* only (no read scope). */
static struct rc_auth *fixture(void)
{
    static const char *const writer_boards[] = {"demo", "match:*"};
    static const char *const match_boards[] = {"match:*"};
    struct rc_auth *a = new_auth();
    add(a, "admin", S_ADMIN, ALL_SCOPES, star, 1);
    add(a, "writer", S_WRITER, RC_SCOPE_READ | RC_SCOPE_WRITE, writer_boards, 2);
    add(a, "reader", S_READER, RC_SCOPE_READ, star, 1);
    add(a, "matcher", S_MATCH, RC_SCOPE_WRITE, match_boards, 1);
    return a;
}

static const struct rc_key *find(const struct rc_auth *a, const char *secret)
{
    return rc_auth_find(a, secret, strlen(secret));
}

static const struct rc_key *key_named(const struct rc_auth *a, const char *name)
{
    for (unsigned i = 0; i < a->nkeys; i++)
        if (strcmp(a->keys[i].name, name) == 0)
            return &a->keys[i];
    fail_msg("no key %s", name);
    return NULL;
}

/* ---- lookup by secret --------------------------------------------------- */

static void test_find_returns_the_key_whose_secret_matches(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    assert_string_equal(find(a, S_ADMIN)->name, "admin");
    assert_string_equal(find(a, S_WRITER)->name, "writer");
    assert_string_equal(find(a, S_READER)->name, "reader");
    assert_string_equal(find(a, S_MATCH)->name, "matcher");
    assert_ptr_equal(find(a, S_MATCH), key_named(a, "matcher"));
    free(a);
}

static void test_find_returns_null_for_an_unknown_secret(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    assert_null(find(a, "no-such-secret-at-all-xyz"));
    assert_null(find(a, "ADMIN-SECRET-0123456789ABCDEF")); /* case matters */
    free(a);
}

static void test_find_refuses_a_secret_of_the_wrong_length(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    assert_null(find(a, S_ADMIN "0"));   /* one byte longer */
    assert_null(rc_auth_find(a, S_ADMIN, strlen(S_ADMIN) - 1));
    /* A guess longer than any secret still runs and fails. */
    char big[300];
    memset(big, 'a', sizeof big);
    memcpy(big, S_ADMIN, strlen(S_ADMIN));
    assert_null(rc_auth_find(a, big, sizeof big));
    free(a);
}

static void test_find_refuses_a_prefix_of_a_secret(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    assert_null(find(a, "admin-secret-"));
    assert_null(find(a, "w"));
    free(a);
}

static void test_find_refuses_empty_and_null_secrets(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    assert_null(rc_auth_find(a, "", 0));
    assert_null(rc_auth_find(a, NULL, 0));
    assert_null(rc_auth_find(a, NULL, 5));
    assert_null(rc_auth_find(NULL, S_ADMIN, strlen(S_ADMIN)));
    free(a);
}

static void test_find_never_matches_a_key_whose_secret_env_is_unresolved(void **state)
{
    (void)state;
    /* The config parser leaves secret "" until the gateway reads secret_env:
     * an empty token must not unlock such a key. */
    struct rc_auth *a = new_auth();
    a->nkeys = 1;
    strcpy(a->keys[0].name, "pending");
    strcpy(a->keys[0].secret_env, "RANKCAST_KEY_PENDING");
    a->keys[0].scopes = ALL_SCOPES;
    assert_null(rc_auth_find(a, "", 0));
    assert_null(rc_auth_find(a, NULL, 0));
    free(a);
}

static void test_find_ignores_bytes_past_a_stored_secret(void **state)
{
    (void)state;
    /* Garbage after secret_len in the stored buffer must not matter. */
    struct rc_auth *a = new_auth();
    add(a, "k", "sixteen-chars-ok", RC_SCOPE_READ, star, 1);
    memset(a->keys[0].secret + 16, 'Z', RC_SECRET_MAX + 1 - 16);
    assert_non_null(find(a, "sixteen-chars-ok"));
    free(a);
}

/* ---- board patterns ----------------------------------------------------- */

static void test_covers_exact_name_only(void **state)
{
    (void)state;
    static const char *const pats[] = {"demo"};
    struct rc_auth *a = new_auth();
    add(a, "k", "0123456789abcdef", RC_SCOPE_READ, pats, 1);
    const struct rc_key *k = &a->keys[0];
    assert_true(rc_auth_key_covers(k, "demo"));
    assert_false(rc_auth_key_covers(k, "demo2"));
    assert_false(rc_auth_key_covers(k, "dem"));
    assert_false(rc_auth_key_covers(k, "Demo"));
    assert_false(rc_auth_key_covers(k, NULL));
    assert_false(rc_auth_key_covers(NULL, "demo"));
    free(a);
}

static void test_covers_template_by_prefix(void **state)
{
    (void)state;
    static const char *const pats[] = {"match:*", "laps"};
    struct rc_auth *a = new_auth();
    add(a, "k", "0123456789abcdef", RC_SCOPE_READ, pats, 2);
    const struct rc_key *k = &a->keys[0];
    assert_true(rc_auth_key_covers(k, "match:1842"));
    assert_true(rc_auth_key_covers(k, "match:"));
    assert_true(rc_auth_key_covers(k, "laps"));
    assert_false(rc_auth_key_covers(k, "match"));
    assert_false(rc_auth_key_covers(k, "xmatch:1"));
    assert_false(rc_auth_key_covers(k, "demo"));
    free(a);
}

static void test_covers_star_covers_every_board(void **state)
{
    (void)state;
    struct rc_auth *a = new_auth();
    add(a, "k", "0123456789abcdef", RC_SCOPE_READ, star, 1);
    assert_true(rc_auth_key_covers(&a->keys[0], "demo"));
    assert_true(rc_auth_key_covers(&a->keys[0], "match:1842"));
    assert_true(rc_auth_key_covers(&a->keys[0], "x"));
    free(a);
}

/* ---- rc_auth_check ------------------------------------------------------ */

static int check(const struct rc_auth *a, const char *secret, unsigned scope, const char *board,
                 struct rc_error *err)
{
    const struct rc_key *key = secret ? find(a, secret) : NULL;
    int bad = secret && !key;
    memset(err, 0, sizeof *err);
    return rc_auth_check(a, key, bad, scope, board, err);
}

static void test_check_open_read_without_key_is_allowed(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    struct rc_error err;
    assert_int_equal(check(a, NULL, RC_SCOPE_READ, "demo", &err), 0);
    assert_int_equal(check(a, NULL, RC_SCOPE_READ, NULL, &err), 0);
    free(a);
}

static void test_check_read_without_key_is_unauthorized_when_reads_need_key(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    struct rc_error err;
    a->reads_need_key = 1;
    assert_int_equal(check(a, NULL, RC_SCOPE_READ, "demo", &err), RC_E_UNAUTHORIZED);
    assert_int_equal(err.code, RC_E_UNAUTHORIZED);
    assert_string_equal(err.msg, "this needs an API key with the read scope (Authorization: Bearer "
                                 "KEY, or ?token=KEY on WebSocket)");
    assert_int_equal(check(a, S_READER, RC_SCOPE_READ, "demo", &err), 0);
    free(a);
}

static void test_check_bad_token_is_unauthorized_even_for_open_reads(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    struct rc_error err;
    assert_int_equal(check(a, "typo-in-the-key-123456", RC_SCOPE_READ, "demo", &err),
                     RC_E_UNAUTHORIZED);
    assert_string_equal(err.msg, "the API key is not valid");
    assert_int_equal(check(a, "typo-in-the-key-123456", RC_SCOPE_WRITE, "demo", &err),
                     RC_E_UNAUTHORIZED);
    assert_string_equal(err.msg, "the API key is not valid");
    free(a);
}

static void test_check_write_without_key_is_unauthorized(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    struct rc_error err;
    assert_int_equal(check(a, NULL, RC_SCOPE_WRITE, "demo", &err), RC_E_UNAUTHORIZED);
    assert_string_equal(err.msg, "this needs an API key with the write scope (Authorization: Bearer "
                                 "KEY, or ?token=KEY on WebSocket)");
    assert_int_equal(check(a, NULL, RC_SCOPE_ADMIN, NULL, &err), RC_E_UNAUTHORIZED);
    assert_non_null(strstr(err.msg, "the admin scope"));
    free(a);
}

static void test_check_key_without_write_scope_is_forbidden(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    struct rc_error err;
    assert_int_equal(check(a, S_READER, RC_SCOPE_WRITE, "demo", &err), RC_E_FORBIDDEN);
    assert_int_equal(err.code, RC_E_FORBIDDEN);
    assert_string_equal(err.msg, "key 'reader' lacks the write scope");
    free(a);
}

static void test_check_key_not_covering_board_is_forbidden(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    struct rc_error err;
    assert_int_equal(check(a, S_WRITER, RC_SCOPE_WRITE, "laps", &err), RC_E_FORBIDDEN);
    assert_string_equal(err.msg, "key 'writer' does not cover board 'laps'");
    assert_int_equal(check(a, S_WRITER, RC_SCOPE_WRITE, "demo", &err), 0);
    assert_int_equal(check(a, S_WRITER, RC_SCOPE_WRITE, "match:1842", &err), 0);
    assert_int_equal(check(a, S_MATCH, RC_SCOPE_WRITE, "demo", &err), RC_E_FORBIDDEN);
    assert_string_equal(err.msg, "key 'matcher' does not cover board 'demo'");
    free(a);
}

static void test_check_read_needing_key_still_checks_scope_and_board(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    struct rc_error err;
    a->reads_need_key = 1;
    assert_int_equal(check(a, S_MATCH, RC_SCOPE_READ, "match:1", &err), RC_E_FORBIDDEN);
    assert_string_equal(err.msg, "key 'matcher' lacks the read scope");
    assert_int_equal(check(a, S_WRITER, RC_SCOPE_READ, "laps", &err), RC_E_FORBIDDEN);
    assert_string_equal(err.msg, "key 'writer' does not cover board 'laps'");
    free(a);
}

static void test_check_open_reads_allow_any_valid_key(void **state)
{
    (void)state;
    /* Holding a write-only key, or one for other boards, must not make a
     * caller worse off than holding none when reads are open. */
    struct rc_auth *a = fixture();
    struct rc_error err;
    assert_int_equal(check(a, S_MATCH, RC_SCOPE_READ, "demo", &err), 0);
    assert_int_equal(check(a, S_WRITER, RC_SCOPE_READ, "laps", &err), 0);
    free(a);
}

static void test_check_admin_needs_admin_scope(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    struct rc_error err;
    assert_int_equal(check(a, S_ADMIN, RC_SCOPE_ADMIN, "demo", &err), 0);
    assert_int_equal(check(a, S_ADMIN, RC_SCOPE_WRITE, "anything:at:all", &err), 0);
    assert_int_equal(check(a, S_WRITER, RC_SCOPE_ADMIN, "demo", &err), RC_E_FORBIDDEN);
    assert_string_equal(err.msg, "key 'writer' lacks the admin scope");
    /* admin does not imply write: scopes are independent */
    static const char *const pats[] = {"*"};
    assert_int_equal(rc_auth_add_key(a, "ops", "ops-only-admin-secret", 21, RC_SCOPE_ADMIN, pats, 1), 0);
    assert_int_equal(check(a, "ops-only-admin-secret", RC_SCOPE_WRITE, "demo", &err), RC_E_FORBIDDEN);
    assert_string_equal(err.msg, "key 'ops' lacks the write scope");
    free(a);
}

static void test_check_null_board_skips_the_board_check(void **state)
{
    (void)state;
    /* Profiles belong to no board: scope alone decides. */
    struct rc_auth *a = fixture();
    struct rc_error err;
    assert_int_equal(check(a, S_MATCH, RC_SCOPE_WRITE, NULL, &err), 0);
    assert_int_equal(check(a, S_READER, RC_SCOPE_WRITE, NULL, &err), RC_E_FORBIDDEN);
    assert_int_equal(check(a, NULL, RC_SCOPE_WRITE, NULL, &err), RC_E_UNAUTHORIZED);
    free(a);
}

static void test_check_messages_never_contain_a_secret(void **state)
{
    (void)state;
    static const char *const secrets[] = {S_ADMIN, S_WRITER, S_READER, S_MATCH, "typo-in-the-key-123456"};
    static const unsigned scopes[] = {RC_SCOPE_READ, RC_SCOPE_WRITE, RC_SCOPE_ADMIN};
    static const char *const boards[] = {"demo", "laps", "match:7", NULL};
    struct rc_auth *a = fixture();
    struct rc_error err;
    for (int need = 0; need < 2; need++) {
        a->reads_need_key = need;
        for (size_t s = 0; s < 5; s++)
            for (size_t sc = 0; sc < 3; sc++)
                for (size_t b = 0; b < 4; b++) {
                    if (check(a, secrets[s], scopes[sc], boards[b], &err) == 0)
                        continue;
                    for (size_t x = 0; x < 5; x++)
                        if (strstr(err.msg, secrets[x]))
                            fail_msg("message leaks a secret: %s", err.msg);
                }
    }
    free(a);
}

static void test_check_refuses_a_bad_scope_as_internal(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    struct rc_error err;
    assert_int_equal(check(a, S_ADMIN, 0, "demo", &err), RC_E_INTERNAL);
    assert_int_equal(check(a, S_ADMIN, 1u << 7, "demo", &err), RC_E_INTERNAL);
    free(a);
}

/* ---- rc_auth_add_key ---------------------------------------------------- */

static void test_add_key_validates_name_secret_scopes_and_patterns(void **state)
{
    (void)state;
    static const char *const bad_pats[][1] = {{""}, {"has space"}, {"a*b"}, {"**"}};
    static const char *const null_pat[] = {NULL};
    char s128[RC_SECRET_MAX + 1], s129[RC_SECRET_MAX + 2], n33[RC_KEY_NAME_MAX + 2];
    memset(s128, 'x', RC_SECRET_MAX);
    memset(s129, 'y', RC_SECRET_MAX + 1);
    memset(n33, 'n', RC_KEY_NAME_MAX + 1);
    n33[RC_KEY_NAME_MAX + 1] = '\0';
    struct rc_auth *a = new_auth();
    const char *ok = "0123456789abcdef"; /* 16 bytes */

    assert_int_equal(rc_auth_add_key(a, "", ok, 16, RC_SCOPE_READ, star, 1), RC_E_BAD_REQUEST);
    assert_int_equal(rc_auth_add_key(a, "Upper", ok, 16, RC_SCOPE_READ, star, 1), RC_E_BAD_REQUEST);
    assert_int_equal(rc_auth_add_key(a, "dot.name", ok, 16, RC_SCOPE_READ, star, 1), RC_E_BAD_REQUEST);
    assert_int_equal(rc_auth_add_key(a, n33, ok, 16, RC_SCOPE_READ, star, 1), RC_E_BAD_REQUEST);
    assert_int_equal(rc_auth_add_key(a, NULL, ok, 16, RC_SCOPE_READ, star, 1), RC_E_BAD_REQUEST);
    assert_int_equal(rc_auth_add_key(a, "k", ok, 15, RC_SCOPE_READ, star, 1), RC_E_BAD_REQUEST);
    assert_int_equal(rc_auth_add_key(a, "k", s129, RC_SECRET_MAX + 1, RC_SCOPE_READ, star, 1),
                     RC_E_BAD_REQUEST);
    assert_int_equal(rc_auth_add_key(a, "k", NULL, 16, RC_SCOPE_READ, star, 1), RC_E_BAD_REQUEST);
    assert_int_equal(rc_auth_add_key(a, "k", ok, 16, 0, star, 1), RC_E_BAD_REQUEST);
    assert_int_equal(rc_auth_add_key(a, "k", ok, 16, 1u << 5, star, 1), RC_E_BAD_REQUEST);
    assert_int_equal(rc_auth_add_key(a, "k", ok, 16, RC_SCOPE_READ, NULL, 0), RC_E_BAD_REQUEST);
    assert_int_equal(rc_auth_add_key(a, "k", ok, 16, RC_SCOPE_READ, star, 0), RC_E_BAD_REQUEST);
    assert_int_equal(rc_auth_add_key(a, "k", ok, 16, RC_SCOPE_READ, null_pat, 1), RC_E_BAD_REQUEST);
    for (size_t i = 0; i < sizeof bad_pats / sizeof bad_pats[0]; i++)
        assert_int_equal(rc_auth_add_key(a, "k", ok, 16, RC_SCOPE_READ, bad_pats[i], 1),
                         RC_E_BAD_REQUEST);
    assert_int_equal(rc_auth_add_key(a, "k", ok, 16, RC_SCOPE_READ, star, RC_AUTH_MAX_PATTERNS + 1),
                     RC_E_BAD_REQUEST);
    assert_int_equal(a->nkeys, 0); /* nothing refused was added */

    assert_int_equal(rc_auth_add_key(a, "min_len-1", ok, 16, RC_SCOPE_READ, star, 1), 0);
    assert_int_equal(rc_auth_add_key(a, "max-len", s128, RC_SECRET_MAX, ALL_SCOPES, star, 1), 0);
    assert_int_equal(a->nkeys, 2);
    free(a);
}

static void test_add_key_copies_its_inputs(void **state)
{
    (void)state;
    char name[] = "copy", secret[] = "copied-secret-0123", pat[] = "match:*";
    const char *pats[] = {pat};
    struct rc_auth *a = new_auth();
    assert_int_equal(rc_auth_add_key(a, name, secret, strlen(secret), RC_SCOPE_WRITE, pats, 1), 0);
    memset(name, 'z', 4);
    memset(secret, 'z', strlen(secret));
    memset(pat, 'z', strlen(pat));
    const struct rc_key *k = find(a, "copied-secret-0123");
    assert_non_null(k);
    assert_string_equal(k->name, "copy");
    assert_int_equal(k->scopes, RC_SCOPE_WRITE);
    assert_int_equal(k->npatterns, 1);
    assert_string_equal(k->patterns[0], "match:*");
    assert_int_equal(k->secret_len, 18);
    free(a);
}

static void test_add_key_refuses_duplicate_name_or_secret(void **state)
{
    (void)state;
    struct rc_auth *a = fixture();
    assert_int_equal(rc_auth_add_key(a, "admin", "another-secret-12345", 20, RC_SCOPE_READ, star, 1),
                     RC_E_BAD_REQUEST);
    assert_int_equal(rc_auth_add_key(a, "other", S_WRITER, strlen(S_WRITER), RC_SCOPE_READ, star, 1),
                     RC_E_BAD_REQUEST);
    assert_int_equal(a->nkeys, 4);
    assert_string_equal(find(a, S_WRITER)->name, "writer");
    free(a);
}

static void test_add_key_refuses_when_the_table_is_full(void **state)
{
    (void)state;
    struct rc_auth *a = new_auth();
    char name[16], secret[32];
    for (int i = 0; i < RC_AUTH_MAX_KEYS; i++) {
        snprintf(name, sizeof name, "k%d", i);
        snprintf(secret, sizeof secret, "secret-number-%04d", i);
        assert_int_equal(rc_auth_add_key(a, name, secret, strlen(secret), RC_SCOPE_READ, star, 1), 0);
    }
    assert_int_equal(rc_auth_add_key(a, "extra", "secret-number-extra", 19, RC_SCOPE_READ, star, 1),
                     RC_E_BAD_REQUEST);
    assert_int_equal(a->nkeys, RC_AUTH_MAX_KEYS);
    /* every one of the 64 is still found, the last one too */
    assert_string_equal(find(a, "secret-number-0063")->name, "k63");
    assert_string_equal(find(a, "secret-number-0000")->name, "k0");
    free(a);
}

/* ---- token bucket ------------------------------------------------------- */

#define T0 INT64_C(1763769600000) /* a realistic clock reading, in ms */

static void test_bucket_starts_full_then_limits(void **state)
{
    (void)state;
    struct rc_bucket b = {0};
    for (int i = 0; i < 5; i++)
        assert_int_equal(rc_auth_bucket_take(&b, 1.0, 5.0, T0), 1);
    assert_int_equal(rc_auth_bucket_take(&b, 1.0, 5.0, T0), 0);
    assert_int_equal(rc_auth_bucket_take(&b, 1.0, 5.0, T0), 0);
}

static void test_bucket_take_n_charges_n_tokens_and_at_most_burst(void **state)
{
    (void)state;
    struct rc_bucket b = {0};
    assert_int_equal(rc_auth_bucket_take_n(&b, 1.0, 25.0, 11.0, T0), 1);
    assert_int_equal(rc_auth_bucket_take_n(&b, 1.0, 25.0, 11.0, T0), 1);
    assert_int_equal(rc_auth_bucket_take_n(&b, 1.0, 25.0, 11.0, T0), 0); /* 3 left */
    assert_int_equal(rc_auth_bucket_take_n(&b, 1.0, 25.0, 1.0, T0), 1);
    /* more than burst is charged as burst: it needs a full bucket */
    struct rc_bucket big = {0};
    assert_int_equal(rc_auth_bucket_take_n(&big, 1.0, 5.0, 11.0, T0), 1);
    assert_int_equal(rc_auth_bucket_take_n(&big, 1.0, 5.0, 11.0, T0 + 4000), 0);
    assert_int_equal(rc_auth_bucket_take_n(&big, 1.0, 5.0, 11.0, T0 + 5000), 1);
}

static void test_read_tokens_grow_with_rows(void **state)
{
    (void)state;
    assert_int_equal(rc_auth_read_tokens(0), 1);
    assert_int_equal(rc_auth_read_tokens(3), 1);
    assert_int_equal(rc_auth_read_tokens(RC_READ_ROWS_PER_TOKEN - 1), 1);
    assert_int_equal(rc_auth_read_tokens(RC_READ_ROWS_PER_TOKEN), 2);
    assert_int_equal(rc_auth_read_tokens(1000), 1 + 1000 / RC_READ_ROWS_PER_TOKEN);
}

static void test_bucket_refills_with_time(void **state)
{
    (void)state;
    struct rc_bucket b = {0};
    for (int i = 0; i < 2; i++)
        assert_int_equal(rc_auth_bucket_take(&b, 10.0, 2.0, T0), 1);
    assert_int_equal(rc_auth_bucket_take(&b, 10.0, 2.0, T0), 0);
    /* 10/s: a token every 100 ms, accumulated continuously */
    assert_int_equal(rc_auth_bucket_take(&b, 10.0, 2.0, T0 + 50), 0);
    assert_int_equal(rc_auth_bucket_take(&b, 10.0, 2.0, T0 + 100), 1);
    assert_int_equal(rc_auth_bucket_take(&b, 10.0, 2.0, T0 + 100), 0);
    assert_int_equal(rc_auth_bucket_take(&b, 10.0, 2.0, T0 + 250), 1);
    assert_int_equal(rc_auth_bucket_take(&b, 10.0, 2.0, T0 + 250), 0);
}

static void test_bucket_never_holds_more_than_burst(void **state)
{
    (void)state;
    struct rc_bucket b = {0};
    assert_int_equal(rc_auth_bucket_take(&b, 100.0, 3.0, T0), 1);
    /* an hour idle refills to burst, not to 360,000 */
    int taken = 0;
    for (int i = 0; i < 10; i++)
        taken += rc_auth_bucket_take(&b, 100.0, 3.0, T0 + 3600 * 1000);
    assert_int_equal(taken, 3);
    assert_true(b.tokens <= 3.0);
}

static void test_bucket_time_going_backwards_grants_nothing(void **state)
{
    (void)state;
    struct rc_bucket b = {0};
    assert_int_equal(rc_auth_bucket_take(&b, 1.0, 1.0, T0 + 10000), 1);
    assert_int_equal(rc_auth_bucket_take(&b, 1.0, 1.0, T0), 0);
    assert_int_equal(rc_auth_bucket_take(&b, 1.0, 1.0, INT64_MIN), 0);
    assert_int_equal(rc_auth_bucket_take(&b, 1.0, 1.0, -5), 0);
    assert_true(b.tokens >= 0.0 && b.tokens <= 1.0);
    /* the time already counted is not counted again after the step back */
    assert_int_equal(rc_auth_bucket_take(&b, 1.0, 1.0, T0 + 10500), 0);
    assert_int_equal(rc_auth_bucket_take(&b, 1.0, 1.0, T0 + 11000), 1);
    /* a jump to the far future just fills to burst */
    assert_int_equal(rc_auth_bucket_take(&b, 1.0, 1.0, INT64_MAX), 1);
    assert_int_equal(rc_auth_bucket_take(&b, 1.0, 1.0, INT64_MAX), 0);
}

static void test_bucket_first_use_at_time_zero_fills_once(void **state)
{
    (void)state;
    /* last_ms 0 means "never used": a first take at 0 must not refill again. */
    struct rc_bucket b = {0};
    assert_int_equal(rc_auth_bucket_take(&b, 1.0, 2.0, 0), 1);
    assert_int_equal(rc_auth_bucket_take(&b, 1.0, 2.0, 0), 1);
    assert_int_equal(rc_auth_bucket_take(&b, 1.0, 2.0, 0), 0);
}

static void test_bucket_with_burst_below_one_never_allows(void **state)
{
    (void)state;
    struct rc_bucket b = {0};
    assert_int_equal(rc_auth_bucket_take(&b, 1000.0, 0.5, T0), 0);
    assert_int_equal(rc_auth_bucket_take(&b, 1000.0, 0.5, T0 + 100000), 0);
    assert_int_equal(rc_auth_bucket_take(NULL, 1.0, 1.0, T0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_returns_the_key_whose_secret_matches),
        cmocka_unit_test(test_find_returns_null_for_an_unknown_secret),
        cmocka_unit_test(test_find_refuses_a_secret_of_the_wrong_length),
        cmocka_unit_test(test_find_refuses_a_prefix_of_a_secret),
        cmocka_unit_test(test_find_refuses_empty_and_null_secrets),
        cmocka_unit_test(test_find_never_matches_a_key_whose_secret_env_is_unresolved),
        cmocka_unit_test(test_find_ignores_bytes_past_a_stored_secret),
        cmocka_unit_test(test_covers_exact_name_only),
        cmocka_unit_test(test_covers_template_by_prefix),
        cmocka_unit_test(test_covers_star_covers_every_board),
        cmocka_unit_test(test_check_open_read_without_key_is_allowed),
        cmocka_unit_test(test_check_read_without_key_is_unauthorized_when_reads_need_key),
        cmocka_unit_test(test_check_bad_token_is_unauthorized_even_for_open_reads),
        cmocka_unit_test(test_check_write_without_key_is_unauthorized),
        cmocka_unit_test(test_check_key_without_write_scope_is_forbidden),
        cmocka_unit_test(test_check_key_not_covering_board_is_forbidden),
        cmocka_unit_test(test_check_read_needing_key_still_checks_scope_and_board),
        cmocka_unit_test(test_check_open_reads_allow_any_valid_key),
        cmocka_unit_test(test_check_admin_needs_admin_scope),
        cmocka_unit_test(test_check_null_board_skips_the_board_check),
        cmocka_unit_test(test_check_messages_never_contain_a_secret),
        cmocka_unit_test(test_check_refuses_a_bad_scope_as_internal),
        cmocka_unit_test(test_add_key_validates_name_secret_scopes_and_patterns),
        cmocka_unit_test(test_add_key_copies_its_inputs),
        cmocka_unit_test(test_add_key_refuses_duplicate_name_or_secret),
        cmocka_unit_test(test_add_key_refuses_when_the_table_is_full),
        cmocka_unit_test(test_bucket_starts_full_then_limits),
        cmocka_unit_test(test_bucket_refills_with_time),
        cmocka_unit_test(test_bucket_take_n_charges_n_tokens_and_at_most_burst),
        cmocka_unit_test(test_read_tokens_grow_with_rows),
        cmocka_unit_test(test_bucket_never_holds_more_than_burst),
        cmocka_unit_test(test_bucket_time_going_backwards_grants_nothing),
        cmocka_unit_test(test_bucket_first_use_at_time_zero_fills_once),
        cmocka_unit_test(test_bucket_with_burst_below_one_never_allows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
