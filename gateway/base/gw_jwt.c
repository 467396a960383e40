/* gw_jwt.c - token keys, verification and HS256 signing (see gw_jwt.h). */
#include "base/gw_jwt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jwt.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#define PEM_MAX (64 * 1024)
#define RSA_MIN_BITS 2048

/* Reads path into a malloc'd NUL-terminated buffer. */
static int read_file(const char *path, unsigned char **out, size_t *len, struct rc_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return rc_err_set(err, RC_E_BAD_REQUEST, "jwt_public_key %.120s: %s", path, strerror(errno));
    unsigned char *buf = malloc(PEM_MAX + 1);
    size_t n = buf ? fread(buf, 1, PEM_MAX + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!buf)
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    if (bad || n == 0 || n > PEM_MAX) {
        free(buf);
        return rc_err_set(err, RC_E_BAD_REQUEST, "jwt_public_key %.120s: %s", path,
                            bad ? "read error" : n ? "larger than 64k: not a public key" : "empty file");
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

/* Which algorithm the PEM public key serves: RS256 for RSA (>= 2048 bits),
 * ES256 for EC on P-256. Anything else is refused. */
static int key_alg(const char *path, const unsigned char *pem, size_t len, enum rc_jwt_alg *alg,
                   struct rc_error *err)
{
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    EVP_PKEY *k = bio ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;
    int rc = 0;
    BIO_free(bio);
    if (!k)
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "jwt_public_key %.120s is not a PEM public key (-----BEGIN PUBLIC KEY-----; "
                            "openssl pkey -pubout makes one from a private key)",
                            path);
    int type = EVP_PKEY_get_base_id(k);
    if (type == EVP_PKEY_RSA) {
        if (EVP_PKEY_get_bits(k) < RSA_MIN_BITS)
            rc = rc_err_set(err, RC_E_BAD_REQUEST, "jwt_public_key %.120s: an RSA key of %d bits (at least %d)",
                              path, EVP_PKEY_get_bits(k), RSA_MIN_BITS);
        *alg = RC_JWT_RS256;
    } else if (type == EVP_PKEY_EC) {
        char group[64] = "";
        size_t glen = 0;
        if (!EVP_PKEY_get_group_name(k, group, sizeof group, &glen) ||
            (strcmp(group, "prime256v1") != 0 && strcmp(group, "P-256") != 0))
            rc = rc_err_set(err, RC_E_BAD_REQUEST, "jwt_public_key %.120s: an EC key on curve %s (ES256 needs P-256)",
                              path, group[0] ? group : "?");
        *alg = RC_JWT_ES256;
    } else {
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "jwt_public_key %.120s: neither an RSA nor an EC key", path);
    }
    EVP_PKEY_free(k);
    return rc;
}

int gw_jwt_load(struct gw_jwt *j, const struct rc_conf *c, struct rc_error *err)
{
    memset(j, 0, sizeof *j);
    j->skew_ms = c->jwt_skew_ms;
    if (c->jwt_secret_len) {
        if (c->jwt_secret_len < RC_JWT_SECRET_MIN || c->jwt_secret_len > RC_JWT_SECRET_MAX)
            return rc_err_set(err, RC_E_BAD_REQUEST, "the JWT secret must be %d..%d bytes", RC_JWT_SECRET_MIN,
                                RC_JWT_SECRET_MAX);
        memcpy(j->secret, c->jwt_secret, c->jwt_secret_len);
        j->secret_len = c->jwt_secret_len;
    }
    if (c->jwt_public_key[0]) {
        int rc = read_file(c->jwt_public_key, &j->pem, &j->pem_len, err);
        if (rc == 0)
            rc = key_alg(c->jwt_public_key, j->pem, j->pem_len, &j->pem_alg, err);
        if (rc) {
            gw_jwt_free(j);
            return rc;
        }
    }
    return 0;
}

void gw_jwt_free(struct gw_jwt *j)
{
    free(j->pem);
    memset(j, 0, sizeof *j);
}

int gw_jwt_enabled(const struct gw_jwt *j)
{
    return j && (j->secret_len || j->pem_len);
}

static jwt_alg_t libjwt_alg(enum rc_jwt_alg a)
{
    return a == RC_JWT_HS256 ? JWT_ALG_HS256 : a == RC_JWT_RS256 ? JWT_ALG_RS256 : JWT_ALG_ES256;
}

int gw_jwt_verify(const struct gw_jwt *j, const char *token, size_t len, int64_t now_ms, struct rc_token *out,
                  struct rc_error *err)
{
    enum rc_jwt_alg alg;
    const unsigned char *key;
    size_t key_len;
    char buf[RC_JWT_MAX + 1];
    jwt_t *t = NULL;
    char *grants = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    if (!gw_jwt_enabled(j))
        return rc_err_set(err, RC_E_UNAUTHORIZED, "tokens are not accepted here (no jwt_secret or jwt_public_key)");
    if (len > RC_JWT_MAX)
        return rc_err_set(err, RC_E_UNAUTHORIZED, "the token is longer than %d bytes", RC_JWT_MAX);
    if ((rc = rc_jwt_header_alg(token, len, &alg, err)) != 0)
        return rc;
    if (alg == RC_JWT_ALG_OTHER)
        return RC_E_UNAUTHORIZED; /* err names the algorithm */
    /* The key is chosen by the algorithm, never the other way round. */
    if (alg == RC_JWT_HS256) {
        if (!j->secret_len)
            return rc_err_set(err, RC_E_UNAUTHORIZED, "HS256 tokens are not accepted (no jwt_secret configured)");
        key = j->secret;
        key_len = j->secret_len;
    } else {
        if (!j->pem_len || j->pem_alg != alg)
            return rc_err_set(err, RC_E_UNAUTHORIZED, "%s tokens are not accepted (jwt_public_key %s)",
                                alg == RC_JWT_RS256 ? "RS256" : "ES256",
                                !j->pem_len ? "is not configured" : j->pem_alg == RC_JWT_RS256 ? "is an RSA key"
                                                                                              : "is an EC key");
        key = j->pem;
        key_len = j->pem_len;
    }
    memcpy(buf, token, len);
    buf[len] = '\0';
    if (jwt_decode(&t, buf, key, (int)key_len) != 0 || !t) {
        rc = rc_err_set(err, RC_E_UNAUTHORIZED, "the token's signature does not verify");
        goto cleanup;
    }
    /* libjwt verified with the header's algorithm: it must be the pinned one. */
    if (jwt_get_alg(t) != libjwt_alg(alg)) {
        rc = rc_err_set(err, RC_E_UNAUTHORIZED, "the token's algorithm does not match its key");
        goto cleanup;
    }
    grants = jwt_get_grants_json(t, NULL);
    if (!grants) {
        rc = rc_err_set(err, RC_E_UNAUTHORIZED, "the token has no claims");
        goto cleanup;
    }
    rc = rc_jwt_claims(grants, strlen(grants), now_ms, j->skew_ms, out, err);

cleanup:
    free(grants);
    jwt_free(t);
    memset(buf, 0, sizeof buf);
    return rc;
}

char *gw_jwt_sign_hs256(const unsigned char *secret, size_t len, const char *claims_json, struct rc_error *err)
{
    jwt_t *t = NULL;
    char *out = NULL;
    if (jwt_new(&t) != 0 || jwt_add_grants_json(t, claims_json) != 0 ||
        jwt_set_alg(t, JWT_ALG_HS256, secret, (int)len) != 0 || !(out = jwt_encode_str(t)))
        rc_err_set(err, RC_E_INTERNAL, "libjwt could not sign the token");
    jwt_free(t);
    return out;
}
