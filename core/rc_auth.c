/* rc_auth.c - API keys, the constant-time secret lookup, the scope and board
 * check behind unauthorized/forbidden, and the token bucket behind
 * rate_limited.
 *
 * Secrets are only ever compared by ct_equal_key(), which walks all
 * RC_SECRET_MAX bytes of every key and folds every difference (and the
 * length mismatch) into one accumulator: how long a lookup takes says nothing
 * about which key matched, or how many leading bytes of a guess were right.
 * Nothing here logs, and no message built here contains a secret.
 */
#include "rc_auth.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rc_names.h"

#define SCOPES_ALL (RC_SCOPE_READ | RC_SCOPE_WRITE | RC_SCOPE_ADMIN)
#define PATTERN_MAX (sizeof ((struct rc_key *)0)->patterns[0] - 1) /* chars, without NUL */

/* ---------------------------------------------------------------------------
 * Constant-time helpers. Every one is plain arithmetic on its operands: no
 * branch, no table lookup, no early exit depends on a secret byte.
 * ------------------------------------------------------------------------ */

/* 0xff when i < n, else 0. Both are below 2^63, so the subtraction wraps (and
 * sets the top bit) exactly when i < n. */
static unsigned char ct_lt_mask(size_t i, size_t n)
{
    size_t top = (i - n) >> (sizeof(size_t) * 8 - 1);
    return (unsigned char)(0u - (unsigned)top);
}

/* All ones when x == 0, else 0. (x | -x) has the top bit set for every x but 0. */
static size_t ct_zero_mask(size_t x)
{
    size_t nonzero = (x | (0 - x)) >> (sizeof(size_t) * 8 - 1);
    return nonzero - 1;
}

/* All ones when the presented guess[0..len) equals key's secret, else 0.
 * guess is RC_SECRET_MAX bytes, zero-padded after len (the caller copies it),
 * so the loop reads the same bytes whatever the lengths. A key whose secret
 * is not resolved yet (secret_len 0, secret_env pending) never matches. */
static size_t ct_equal_key(const struct rc_key *k, const unsigned char *guess, size_t len)
{
    const unsigned char *s = (const unsigned char *)k->secret;
    size_t klen = k->secret_len;
    size_t acc = len ^ klen;           /* length mismatch, folded in, not tested */
    acc |= ct_zero_mask(klen) & 1u;    /* unresolved key */
    for (size_t i = 0; i < RC_SECRET_MAX; i++)
        acc |= (size_t)((guess[i] ^ s[i]) & ct_lt_mask(i, klen));
    return ct_zero_mask(acc);
}

/* Overwrites n bytes through a volatile pointer so the store is not dropped
 * as dead: the stack copy of a presented secret should not outlive the call. */
static void wipe(void *p, size_t n)
{
    volatile unsigned char *v = p;
    while (n--)
        *v++ = 0;
}

/* ---------------------------------------------------------------------------
 * Keys
 * ------------------------------------------------------------------------ */

/* Key names appear in logs and in forbidden messages: keep them plain. */
static int key_name_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > RC_KEY_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-'))
            return 0;
    }
    return 1;
}

/* "*", a board name, or a template "prefix*". */
static int pattern_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 1 && s[0] == '*')
        return 1;
    if (n > PATTERN_MAX)
        return 0;
    return n > 0 && s[n - 1] == '*' ? rc_names_board_template_valid(s, n) : rc_names_board_name_valid(s, n);
}

/* Validates everything first, then appends a copy: a refused key leaves *a
 * untouched. Besides the header's reasons (table full, bad name, secret
 * length) it refuses what would make lookups ambiguous: a name already taken,
 * or a secret another key already has (rc_auth_find would return the first). */
int rc_auth_add_key(struct rc_auth *a, const char *name, const char *secret, size_t secret_len, unsigned scopes,
                    const char *const *patterns, unsigned npatterns)
{
    if (!a || !name || !secret || a->nkeys >= RC_AUTH_MAX_KEYS || !key_name_valid(name))
        return RC_E_BAD_REQUEST;
    if (secret_len < RC_SECRET_MIN || secret_len > RC_SECRET_MAX)
        return RC_E_BAD_REQUEST;
    if (scopes == 0 || (scopes & ~SCOPES_ALL) != 0)
        return RC_E_BAD_REQUEST;
    if (!patterns || npatterns == 0 || npatterns > RC_AUTH_MAX_PATTERNS)
        return RC_E_BAD_REQUEST;
    for (unsigned i = 0; i < npatterns; i++)
        if (!patterns[i] || !pattern_valid(patterns[i]))
            return RC_E_BAD_REQUEST;
    for (unsigned i = 0; i < a->nkeys; i++)
        if (strcmp(a->keys[i].name, name) == 0)
            return RC_E_BAD_REQUEST;
    if (rc_auth_find(a, secret, secret_len) != NULL)
        return RC_E_BAD_REQUEST;

    struct rc_key *k = &a->keys[a->nkeys];
    memset(k, 0, sizeof *k);
    memcpy(k->name, name, strlen(name) + 1);
    memcpy(k->secret, secret, secret_len);
    k->secret_len = secret_len;
    k->scopes = scopes;
    for (unsigned i = 0; i < npatterns; i++)
        memcpy(k->patterns[i], patterns[i], strlen(patterns[i]) + 1);
    k->npatterns = npatterns;
    a->nkeys++;
    return 0;
}

/* Every key is compared in full; the index of the first match is picked with
 * masks, not a branch, so the time depends only on nkeys. The presented
 * length is not secret (the caller sent it), so copying min(len, MAX) bytes
 * into a zero-padded buffer is fine; a guess longer than any secret still
 * runs the full comparison and fails on the folded length. */
const struct rc_key *rc_auth_find(const struct rc_auth *a, const char *secret, size_t len)
{
    unsigned char guess[RC_SECRET_MAX];
    size_t found = 0, idx = 0;

    if (!a || (!secret && len))
        return NULL;
    memset(guess, 0, sizeof guess);
    if (len)
        memcpy(guess, secret, len < RC_SECRET_MAX ? len : RC_SECRET_MAX);
    for (unsigned i = 0; i < a->nkeys && i < RC_AUTH_MAX_KEYS; i++) {
        size_t match = ct_equal_key(&a->keys[i], guess, len);
        size_t take = match & ~found;  /* first match only */
        idx |= take & (size_t)i;
        found |= match;
    }
    wipe(guess, sizeof guess);
    /* The one branch is on "some key matched", which the caller's answer
     * (accepted or unauthorized) reveals anyway. */
    return found ? &a->keys[idx] : NULL;
}

/* Board patterns are not secret: plain string comparison is fine here. */
int rc_auth_key_covers(const struct rc_key *key, const char *board)
{
    if (!key || !board)
        return 0;
    for (unsigned i = 0; i < key->npatterns && i < RC_AUTH_MAX_PATTERNS; i++) {
        const char *pat = key->patterns[i];
        size_t n = strlen(pat);
        if (n > 0 && pat[n - 1] == '*') {
            /* "*" has an empty prefix and so covers everything. */
            if (strncmp(pat, board, n - 1) == 0)
                return 1;
        } else if (strcmp(pat, board) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The name of the first scope bit of `missing` (for messages). */
static const char *scope_name(unsigned missing)
{
    if (missing & RC_SCOPE_READ)
        return "read";
    if (missing & RC_SCOPE_WRITE)
        return "write";
    return "admin";
}

/* Order matters: a bad token is refused before anything else, even for open
 * reads, so a mistyped key never passes silently as anonymous. Open reads
 * then need nothing more: holding a write-only key, or one for other boards,
 * must not make a caller worse off than holding none. Scopes are independent
 * (admin does not imply write); RANKCAST_ADMIN_KEY simply has all three. */
int rc_auth_check(const struct rc_auth *a, const struct rc_key *key, int bad_token, unsigned scope,
                  const char *board, struct rc_error *err)
{
    if (scope == 0 || (scope & ~SCOPES_ALL) != 0)
        return rc_err_set(err, RC_E_INTERNAL, "bad scope 0x%x in an auth check", scope);
    if (bad_token)
        return rc_err_set(err, RC_E_UNAUTHORIZED, "the API key is not valid");
    if (scope == RC_SCOPE_READ && !(a && a->reads_need_key))
        return 0;
    if (!key)
        return rc_err_set(err, RC_E_UNAUTHORIZED,
                            "this needs an API key with the %s scope (Authorization: Bearer KEY, "
                            "or ?token=KEY on WebSocket)",
                            scope_name(scope));
    unsigned missing = scope & ~key->scopes;
    if (missing)
        return rc_err_set(err, RC_E_FORBIDDEN, "key '%s' lacks the %s scope", key->name,
                            scope_name(missing));
    if (board && !rc_auth_key_covers(key, board))
        return rc_err_set(err, RC_E_FORBIDDEN, "key '%s' does not cover board '%.64s'", key->name,
                            board);
    return 0;
}

/* ---------------------------------------------------------------------------
 * Token bucket
 * ------------------------------------------------------------------------ */

/* Refill is computed from elapsed time on each take, so an idle bucket costs
 * nothing. A clock that steps back grants nothing and keeps last_ms where it
 * was: time already paid for is never paid again, so a clock that jitters
 * back and forth cannot mint tokens. */
int rc_auth_bucket_take(struct rc_bucket *b, double rate, double burst, int64_t now_ms)
{
    return rc_auth_bucket_take_n(b, rate, burst, 1.0, now_ms);
}

int rc_auth_bucket_take_n(struct rc_bucket *b, double rate, double burst, double n, int64_t now_ms)
{
    if (!b || !(burst >= 1.0))
        return 0;
    if (!(n >= 1.0))
        n = 1.0; /* also NaN */
    if (n > burst)
        n = burst;
    if (!(rate > 0.0))
        rate = 0.0; /* also NaN: no refill rather than poisoned state */
    if (b->last_ms == 0) {
        b->tokens = burst;
        /* 0 means "never used": a first call at time 0 must not look unused
         * on the next call and refill the bucket a second time. */
        b->last_ms = now_ms != 0 ? now_ms : 1;
    } else if (now_ms > b->last_ms) {
        /* In double: an int64 subtraction could overflow on wild inputs. */
        double elapsed = (double)now_ms - (double)b->last_ms;
        b->tokens += elapsed * rate / 1000.0;
        b->last_ms = now_ms;
    }
    if (!(b->tokens <= burst)) /* above the cap, or NaN from a corrupt struct */
        b->tokens = b->tokens > burst ? burst : 0.0;
    if (b->tokens < n)
        return 0;
    b->tokens -= n;
    return 1;
}

unsigned rc_auth_read_tokens(uint64_t rows)
{
    uint64_t t = 1 + rows / RC_READ_ROWS_PER_TOKEN;
    return t > UINT32_MAX ? UINT32_MAX : (unsigned)t;
}
