/* rc_auth.h - API keys, scopes and board patterns (PROTOCOL.md,
 * "Credentials"), and the token bucket behind rate_limited.
 *
 * Each key has a name (for logs and audit; the secret is never logged), a
 * secret, scopes (read, write, admin) and the boards it covers (exact names,
 * templates "match:*", or "*" for all). Writes and admin operations always
 * need a key with that scope for that board; reads are open unless the config
 * says `[auth] reads = key`. Secrets are compared in constant time.
 * Pure: no environment reads (the gateway resolves secret_env at start).
 */
#ifndef RC_AUTH_H
#define RC_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "rc_err.h"

#define RC_SCOPE_READ (1u << 0)  /* subscribe, rank, GET */
#define RC_SCOPE_WRITE (1u << 1) /* incr, set, best, submit, PUT profile */
#define RC_SCOPE_ADMIN (1u << 2) /* admin operations */

#define RC_AUTH_MAX_KEYS 64
#define RC_AUTH_MAX_PATTERNS 16
#define RC_KEY_NAME_MAX 32
#define RC_SECRET_MIN 16
#define RC_SECRET_MAX 128
#define RC_ENV_NAME_MAX 64

struct rc_key {
    char name[RC_KEY_NAME_MAX + 1];       /* [a-z0-9_-], 1..32 */
    char secret[RC_SECRET_MAX + 1];       /* "" until resolved when secret_env is used */
    size_t secret_len;
    char secret_env[RC_ENV_NAME_MAX + 1]; /* environment variable holding the secret, or "" */
    unsigned scopes;                      /* RC_SCOPE_* */
    unsigned npatterns;
    char patterns[RC_AUTH_MAX_PATTERNS][66]; /* board name, "prefix*" or "*" */
    int config_line;
};

struct rc_auth {
    int reads_need_key;                   /* [auth] reads = key */
    unsigned nkeys;
    struct rc_key keys[RC_AUTH_MAX_KEYS];
};

/* Adds a key (for RANKCAST_ADMIN_KEY: every scope, pattern "*"). Copies all.
 * Returns 0, or RC_E_BAD_REQUEST (table full, bad name or secret length). */
int rc_auth_add_key(struct rc_auth *a, const char *name, const char *secret, size_t secret_len, unsigned scopes,
                    const char *const *patterns, unsigned npatterns);

/* The key whose secret equals secret[0..len), or NULL. Takes the same time
 * whichever key matches (or none): every key is compared in full, in
 * constant time, with no early exit. Borrows secret. */
const struct rc_key *rc_auth_find(const struct rc_auth *a, const char *secret, size_t len);

/* 1 when key's patterns cover board name `board`. */
int rc_auth_key_covers(const struct rc_key *key, const char *board);

/* May a caller holding `key` do something needing `scope` on `board` (NULL:
 * not about one board, e.g. profiles)? bad_token: the caller presented a
 * token that matched no key. Returns 0; RC_E_UNAUTHORIZED when a key is
 * needed and none (or a bad one) was given; RC_E_FORBIDDEN when the key lacks
 * the scope or the board. err says which, without the secret. Reads
 * (RC_SCOPE_READ) need no key unless reads_need_key; a bad token is refused
 * even for open reads (a typo should not pass silently). */
int rc_auth_check(const struct rc_auth *a, const struct rc_key *key, int bad_token, unsigned scope,
                  const char *board, struct rc_error *err);

/* Token bucket: `rate` tokens per second up to `burst`. */
struct rc_bucket {
    double tokens;
    int64_t last_ms;  /* 0: never used (starts full) */
};

/* Takes one token at now_ms. Returns 1 when allowed, 0 when rate limited. */
int rc_auth_bucket_take(struct rc_bucket *b, double rate, double burst, int64_t now_ms);

/* Takes n tokens (n >= 1; more than burst is charged as burst, so a costly
 * request needs a full bucket rather than never passing). Returns 1 or 0 as
 * rc_auth_bucket_take (which is this with n = 1). */
int rc_auth_bucket_take_n(struct rc_bucket *b, double rate, double burst, double n, int64_t now_ms);

/* Read budgets count cost, not requests (docs/security.md, issue 23): a read
 * of `rows` rows is charged 1 + rows / RC_READ_ROWS_PER_TOKEN tokens
 * (integer division), so a top 3 costs 1 and a 1,000-row page 11. */
#define RC_READ_ROWS_PER_TOKEN 100
unsigned rc_auth_read_tokens(uint64_t rows);

#endif
