/* rc_jwt.c - token header and claim rules (see rc_jwt.h). No cryptography
 * here: the signature is checked by the gateway with libjwt, and only after
 * this file has said which algorithm the token must use. */
#include "rc_jwt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rc_names.h"

#define HEADER_MAX 1024 /* decoded header bytes: real headers are well under 200 */
#define PATTERN_MAX (sizeof((struct rc_key *)0)->patterns[0] - 1)
#define EXP_MAX_S 253402300799.0 /* 9999-12-31T23:59:59Z: keeps ms in int64 and dates sane */

static int b64url_value(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '-')
        return 62;
    if (ch == '_')
        return 63;
    return -1;
}

int rc_jwt_shaped(const char *s, size_t len)
{
    size_t dots = 0, part = 0;
    if (!s || len < 5 || len > RC_JWT_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (part == 0 && dots < 2)
                return 0; /* empty header or payload */
            if (++dots > 2)
                return 0;
            part = 0;
        } else if (b64url_value((unsigned char)s[i]) < 0) {
            return 0;
        } else {
            part++;
        }
    }
    return dots == 2;
}

long rc_jwt_b64url_decode(const char *src, size_t len, unsigned char *out, size_t cap)
{
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    if (len % 4 == 1)
        return -1; /* no base64 text has this length */
    for (size_t i = 0; i < len; i++) {
        int v = b64url_value((unsigned char)src[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n >= cap)
                return -1;
            out[n++] = (unsigned char)(acc >> bits);
        }
    }
    /* The leftover bits of the last character must be zero (canonical). */
    if (bits && (acc & ((1u << bits) - 1)) != 0)
        return -1;
    return (long)n;
}

int rc_jwt_header_alg(const char *token, size_t len, enum rc_jwt_alg *alg, struct rc_error *err)
{
    unsigned char buf[HEADER_MAX + 1];
    const char *dot = token ? memchr(token, '.', len) : NULL;
    *alg = RC_JWT_ALG_OTHER;
    if (!dot)
        return rc_err_set(err, RC_E_UNAUTHORIZED, "the token is not a JWT (header.payload.signature)");
    long n = rc_jwt_b64url_decode(token, (size_t)(dot - token), buf, HEADER_MAX);
    if (n < 0)
        return rc_err_set(err, RC_E_UNAUTHORIZED, "the token's header is not base64url");
    buf[n] = '\0';
    cJSON *h = cJSON_ParseWithLength((const char *)buf, (size_t)n);
    const cJSON *a = cJSON_IsObject(h) ? cJSON_GetObjectItemCaseSensitive(h, "alg") : NULL;
    int rc = 0;
    if (!cJSON_IsString(a)) {
        rc = rc_err_set(err, RC_E_UNAUTHORIZED, "the token's header is not a JSON object with a string alg");
    } else if (strcmp(a->valuestring, "HS256") == 0) {
        *alg = RC_JWT_HS256;
    } else if (strcmp(a->valuestring, "RS256") == 0) {
        *alg = RC_JWT_RS256;
    } else if (strcmp(a->valuestring, "ES256") == 0) {
        *alg = RC_JWT_ES256;
    } else {
        /* alg is attacker text: quote a little of it, printable only. */
        char shown[17];
        size_t k = 0;
        for (const char *p = a->valuestring; *p && k < sizeof shown - 1; p++)
            shown[k++] = (*p >= 0x20 && *p < 0x7f && *p != '\'') ? *p : '?';
        shown[k] = '\0';
        rc_err_set(err, RC_E_UNAUTHORIZED, "token algorithm '%s' is refused (HS256, RS256 or ES256)", shown);
    }
    cJSON_Delete(h);
    return rc;
}

/* ---- claims ---------------------------------------------------------------- */

static int sub_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > RC_JWT_SUB_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
              ch == '.' || ch == ':' || ch == '@' || ch == '-'))
            return 0;
    }
    return 1;
}

static int pattern_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 1 && s[0] == '*')
        return 1;
    if (n == 0 || n > PATTERN_MAX)
        return 0;
    return s[n - 1] == '*' ? rc_names_board_template_valid(s, n) : rc_names_board_name_valid(s, n);
}

/* Scope words separated by sep characters; unknown words are skipped when
 * lenient, refused otherwise. Returns the RC_SCOPE_* bits, or -1. */
static long scope_bits(const char *s, const char *sep, int lenient)
{
    static const char *const words[] = {"read", "write", "admin"};
    static const unsigned flags[] = {RC_SCOPE_READ, RC_SCOPE_WRITE, RC_SCOPE_ADMIN};
    unsigned bits = 0;
    while (*s) {
        size_t n = strcspn(s, sep);
        int known = 0;
        for (int i = 0; i < 3 && n; i++)
            if (n == strlen(words[i]) && strncmp(s, words[i], n) == 0) {
                bits |= flags[i];
                known = 1;
            }
        if (n && !known && !lenient)
            return -1;
        s += n;
        s += strspn(s, sep);
    }
    return (long)bits;
}

static int read_exp(const cJSON *v, const char *name, double *out, struct rc_error *err)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 || v->valuedouble > EXP_MAX_S)
        return rc_err_set(err, RC_E_UNAUTHORIZED, "the token's %s claim must be a date in seconds since 1970",
                            name);
    *out = v->valuedouble;
    return 0;
}

static int read_boards(const cJSON *b, struct rc_key *key, struct rc_error *err)
{
    unsigned n = 0;
    const cJSON *item;
    if (!b) {
        memcpy(key->patterns[0], "*", 2);
        key->npatterns = 1;
        return 0;
    }
    if (!cJSON_IsArray(b) || cJSON_GetArraySize(b) < 1 || cJSON_GetArraySize(b) > RC_AUTH_MAX_PATTERNS)
        return rc_err_set(err, RC_E_UNAUTHORIZED, "the token's boards claim must be an array of 1..%d board patterns",
                            RC_AUTH_MAX_PATTERNS);
    cJSON_ArrayForEach(item, b)
    {
        if (!cJSON_IsString(item) || !pattern_valid(item->valuestring))
            return rc_err_set(err, RC_E_UNAUTHORIZED,
                                "the token's boards claim holds a bad pattern (a board name, a template ending "
                                "in * such as match:*, or *)");
        memcpy(key->patterns[n++], item->valuestring, strlen(item->valuestring) + 1);
    }
    key->npatterns = n;
    return 0;
}

int rc_jwt_claims(const char *json, size_t len, int64_t now_ms, int64_t skew_ms, struct rc_token *out,
                  struct rc_error *err)
{
    double exp = 0, nbf = 0;
    int rc = 0;
    memset(out, 0, sizeof *out);
    cJSON *c = json ? cJSON_ParseWithLength(json, len) : NULL;
    if (!cJSON_IsObject(c)) {
        rc = rc_err_set(err, RC_E_UNAUTHORIZED, "the token's payload is not a JSON object");
        goto cleanup;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, "exp");
    if (!v) {
        rc = rc_err_set(err, RC_E_UNAUTHORIZED, "the token has no exp claim: tokens must expire");
        goto cleanup;
    }
    if ((rc = read_exp(v, "exp", &exp, err)) != 0)
        goto cleanup;
    out->exp_ms = (int64_t)floor(exp * 1000.0);
    if (rc_jwt_expired(out, now_ms, skew_ms)) {
        rc = rc_err_set(err, RC_E_UNAUTHORIZED, "the token expired (exp %.0f)", exp);
        goto cleanup;
    }
    v = cJSON_GetObjectItemCaseSensitive(c, "nbf");
    if (v) {
        if ((rc = read_exp(v, "nbf", &nbf, err)) != 0)
            goto cleanup;
        if ((double)now_ms + (double)skew_ms < nbf * 1000.0) {
            rc = rc_err_set(err, RC_E_UNAUTHORIZED, "the token is not valid yet (nbf %.0f)", nbf);
            goto cleanup;
        }
    }
    v = cJSON_GetObjectItemCaseSensitive(c, "scope");
    long bits = cJSON_IsString(v) ? scope_bits(v->valuestring, " ", 1) : -1;
    if (!cJSON_IsString(v)) {
        rc = rc_err_set(err, RC_E_UNAUTHORIZED, "the token has no scope claim (a string: read, write, admin)");
        goto cleanup;
    }
    if (bits <= 0) {
        rc = rc_err_set(err, RC_E_UNAUTHORIZED, "the token's scope grants none of read, write, admin");
        goto cleanup;
    }
    out->key.scopes = (unsigned)bits;
    if ((rc = read_boards(cJSON_GetObjectItemCaseSensitive(c, "boards"), &out->key, err)) != 0)
        goto cleanup;
    v = cJSON_GetObjectItemCaseSensitive(c, "sub");
    if (v) {
        if (!cJSON_IsString(v) || !sub_valid(v->valuestring)) {
            rc = rc_err_set(err, RC_E_UNAUTHORIZED, "the token's sub claim must be 1..%d of A-Z a-z 0-9 _ . : @ -",
                              RC_JWT_SUB_MAX);
            goto cleanup;
        }
        memcpy(out->sub, v->valuestring, strlen(v->valuestring) + 1);
    }
    memcpy(out->key.name, "jwt", 4);

cleanup:
    cJSON_Delete(c);
    if (rc) {
        int64_t keep = out->exp_ms;
        memset(out, 0, sizeof *out);
        out->exp_ms = keep; /* so a caller can say when it expired */
    }
    return rc;
}

int rc_jwt_expired(const struct rc_token *t, int64_t now_ms, int64_t skew_ms)
{
    return (double)now_ms >= (double)t->exp_ms + (double)skew_ms;
}

/* ---- claims for `rankcast token` --------------------------------------------- */

int rc_jwt_build_claims(const char *scope, const char *boards, const char *sub, int64_t exp_s, char *out,
                        size_t cap, struct rc_error *err)
{
    int rc = 0;
    long bits = scope ? scope_bits(scope, " ,", 0) : -1;
    if (bits <= 0)
        return rc_err_set(err, RC_E_BAD_REQUEST, "--scope must list read, write and/or admin (e.g. read or "
                                                   "\"read write\")");
    if (sub && *sub && !sub_valid(sub))
        return rc_err_set(err, RC_E_BAD_REQUEST, "--sub must be 1..%d of A-Z a-z 0-9 _ . : @ -", RC_JWT_SUB_MAX);
    if (exp_s <= 0 || (double)exp_s > EXP_MAX_S)
        return rc_err_set(err, RC_E_BAD_REQUEST, "the expiry is out of range");
    cJSON *c = cJSON_CreateObject();
    char words[32] = "";
    static const char *const names[] = {"read", "write", "admin"};
    for (int i = 0; i < 3; i++)
        if (bits & (1L << i)) {
            if (words[0])
                strcat(words, " ");
            strcat(words, names[i]);
        }
    if (!c || !cJSON_AddStringToObject(c, "scope", words) || !cJSON_AddNumberToObject(c, "exp", (double)exp_s)) {
        rc = rc_err_set(err, RC_E_INTERNAL, "out of memory");
        goto cleanup;
    }
    if (sub && *sub && !cJSON_AddStringToObject(c, "sub", sub)) {
        rc = rc_err_set(err, RC_E_INTERNAL, "out of memory");
        goto cleanup;
    }
    if (boards && *boards) {
        cJSON *arr = cJSON_AddArrayToObject(c, "boards");
        char buf[1024];
        unsigned n = 0;
        if (!arr || strlen(boards) >= sizeof buf) {
            rc = rc_err_set(err, RC_E_BAD_REQUEST, "--board list is too long");
            goto cleanup;
        }
        memcpy(buf, boards, strlen(boards) + 1);
        for (char *save = NULL, *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
            if (!pattern_valid(it) || ++n > RC_AUTH_MAX_PATTERNS) {
                rc = rc_err_set(err, RC_E_BAD_REQUEST,
                                  "--board takes 1..%d board patterns (a name, a template ending in * or *)",
                                  RC_AUTH_MAX_PATTERNS);
                goto cleanup;
            }
            cJSON_AddItemToArray(arr, cJSON_CreateString(it));
        }
        if (n == 0) {
            rc = rc_err_set(err, RC_E_BAD_REQUEST, "--board is empty");
            goto cleanup;
        }
    }
    if (!cJSON_PrintPreallocated(c, out, (int)cap, 0))
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "the claims are too long");

cleanup:
    cJSON_Delete(c);
    return rc;
}
