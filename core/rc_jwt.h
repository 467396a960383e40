/* rc_jwt.h - what a JSON Web Token may claim (PROTOCOL.md v1.1, "Tokens"),
 * checked without any cryptography: the header's algorithm, and the claims
 * once the gateway (gateway/base/gw_jwt.c, libjwt) has verified the signature.
 *
 * A token is turned into a struct rc_token whose embedded rc_key carries the
 * token's scopes and board patterns, so rc_auth_check() treats it exactly like
 * an API key. Pure: the time is passed in; nothing here logs or reads files.
 */
#ifndef RC_JWT_H
#define RC_JWT_H

#include <stddef.h>
#include <stdint.h>

#include "rc_auth.h"
#include "rc_err.h"

#define RC_JWT_MAX 4096          /* longest token accepted, in bytes */
#define RC_JWT_SUB_MAX 64        /* longest sub claim */
#define RC_JWT_SECRET_MIN 32     /* HS256 secret, bytes (RFC 7518 3.2: at least the hash size) */
#define RC_JWT_SECRET_MAX 256
#define RC_JWT_WHY_MAX 120

/* The algorithms rankcast accepts; anything else (none, HS384, PS256, ...)
 * is refused before any key is tried. */
enum rc_jwt_alg {
    RC_JWT_ALG_OTHER = 0, /* refused */
    RC_JWT_HS256,         /* HMAC with the configured secret */
    RC_JWT_RS256,         /* RSA signature, checked with an RSA public key */
    RC_JWT_ES256,         /* ECDSA P-256 signature, checked with an EC public key */
};

/* A verified token's rights. key.name is "jwt"; key.secret is empty (a
 * token is never looked up by secret). */
struct rc_token {
    struct rc_key key;
    char sub[RC_JWT_SUB_MAX + 1]; /* "" when the token names no one */
    int64_t exp_ms;               /* exp claim, in ms since the epoch */
};

/* 1 when s[0..len) has the shape of a compact JWT: three base64url parts
 * separated by two dots, the first two non-empty. Says nothing about
 * validity; it only decides whether a credential is tried as a token. */
int rc_jwt_shaped(const char *s, size_t len);

/* Decodes base64url (no padding, as JWTs use) src[0..len) into out (cap
 * bytes). Returns the decoded length, or -1 on a bad character, a bad
 * length or no room. */
long rc_jwt_b64url_decode(const char *src, size_t len, unsigned char *out, size_t cap);

/* Reads the header (first part) of token[0..len) and its "alg". Returns 0
 * with *alg set (RC_JWT_ALG_OTHER for none and every algorithm rankcast does
 * not take, with err naming it), or RC_E_UNAUTHORIZED when the header is not
 * a base64url JSON object with a string alg. */
int rc_jwt_header_alg(const char *token, size_t len, enum rc_jwt_alg *alg, struct rc_error *err);

/* Checks the claims (the payload's JSON text json[0..len)) at now_ms,
 * allowing skew_ms of clock difference, and fills *out. Rules:
 *   exp   required, a NumericDate (seconds); refused once now >= exp + skew;
 *   nbf   optional; refused while now + skew < nbf;
 *   scope required string, space-separated; read, write and admin are taken,
 *         other words ignored; a token granting none of the three is refused;
 *   boards optional array of 1..RC_AUTH_MAX_PATTERNS board patterns as for
 *         keys (a name, "prefix*" or "*"); absent means every board;
 *   sub   optional string of 1..RC_JWT_SUB_MAX of [A-Za-z0-9_.:@-].
 * Returns 0, or RC_E_UNAUTHORIZED with err saying which rule failed (never
 * quoting more than a board pattern). Borrows json. */
int rc_jwt_claims(const char *json, size_t len, int64_t now_ms, int64_t skew_ms, struct rc_token *out,
                  struct rc_error *err);

/* 1 once the token has expired at now_ms (with skew_ms allowed). */
int rc_jwt_expired(const struct rc_token *t, int64_t now_ms, int64_t skew_ms);

/* Builds the claims of a token that `rankcast token` signs: scope words
 * (space- or comma-separated read/write/admin), board patterns (comma list,
 * "" = every board), sub ("" = none) and exp. Writes the JSON into out
 * (cap bytes). Returns 0, or RC_E_BAD_REQUEST with err saying which
 * argument is wrong. */
int rc_jwt_build_claims(const char *scope, const char *boards, const char *sub, int64_t exp_s, char *out,
                        size_t cap, struct rc_error *err);

#endif
