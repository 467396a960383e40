/* gw_jwt.h - JSON Web Tokens with libjwt: the keys loaded at start, the
 * verification of a presented token, and HS256 signing for `rankcast token`.
 *
 * libjwt 1.x verifies a token with whatever algorithm its own header names,
 * so the algorithm is pinned here, by key, before libjwt sees the token and
 * again after: HS256 only with jwt_secret, RS256 only with an RSA public key,
 * ES256 only with a P-256 public key, nothing else (alg none included). An
 * HS256 token "signed" with the RSA public key's PEM as its HMAC secret (the
 * algorithm-confusion attack) is therefore refused: HS256 is never checked
 * against the public key. Claims are checked by core/rc_jwt.c.
 */
#ifndef GW_JWT_H
#define GW_JWT_H

#include <stddef.h>
#include <stdint.h>

#include "rc_conf.h"
#include "rc_jwt.h"

struct gw_jwt {
    unsigned char secret[RC_JWT_SECRET_MAX]; /* HS256 secret (copied) */
    size_t secret_len;                       /* 0: HS256 tokens are refused */
    unsigned char *pem;                      /* public key PEM (owned), NUL-terminated */
    size_t pem_len;                          /* 0: RS256/ES256 tokens are refused */
    enum rc_jwt_alg pem_alg;                 /* RC_JWT_RS256 or RC_JWT_ES256, by the key's type */
    int64_t skew_ms;
};

/* Loads what c says (jwt_secret, jwt_public_key read from disk, jwt_skew)
 * into *j. The public key must be a PEM public key: RSA of at least 2048
 * bits, or EC on P-256. Returns 0, or RC_E_BAD_REQUEST with err saying why
 * (for rankcast --check-config and the start). */
int gw_jwt_load(struct gw_jwt *j, const struct rc_conf *c, struct rc_error *err);
void gw_jwt_free(struct gw_jwt *j);

/* 1 when some token could be accepted (a secret or a public key). */
int gw_jwt_enabled(const struct gw_jwt *j);

/* Verifies token[0..len) at now_ms: algorithm, signature, claims. Fills
 * *out and returns 0, or RC_E_UNAUTHORIZED with err saying why (never
 * quoting the token). Borrows token. */
int gw_jwt_verify(const struct gw_jwt *j, const char *token, size_t len, int64_t now_ms, struct rc_token *out,
                  struct rc_error *err);

/* Signs claims_json (an object) with HS256 and secret[0..len). Returns the
 * compact token (malloc'd, free it), or NULL with err set. */
char *gw_jwt_sign_hs256(const unsigned char *secret, size_t len, const char *claims_json, struct rc_error *err);

#endif
