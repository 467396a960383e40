/* gw_env.c - one job: the environment's part of the configuration, applied
 * once at start after the file is parsed (DESIGN.md, "Operating it"). */
#include "base/gw_env.h"

#include <stdlib.h>
#include <string.h>

#include "base/gw_log.h"
#include "rc_auth.h"
#include "rc_err.h"

/* Applies flag > environment > file for one string key. */
static int override(char *dst, size_t cap, const char *flag, const char *env_name)
{
    const char *v = flag ? flag : getenv(env_name);
    if (!v || !*v)
        return 0;
    size_t n = strlen(v);
    if (n >= cap)
        return RC_E_TOO_LARGE;
    memcpy(dst, v, n + 1);
    return 0;
}

int gw_env_apply_overrides(struct rc_conf *c, const struct gw_env_flags *f)
{
    if (override(c->listen, sizeof c->listen, f->listen, "RANKCAST_LISTEN") ||
        override(c->redis, sizeof c->redis, f->redis, "RANKCAST_REDIS") ||
        override(c->state_dir, sizeof c->state_dir, f->state, "RANKCAST_STATE")) {
        gw_log_error("an override is too long");
        return RC_E_TOO_LARGE;
    }
    return 0;
}

int gw_env_resolve_keys(struct rc_conf *c)
{
    struct rc_auth *a = &c->auth;
    for (unsigned i = 0; i < a->nkeys; i++) {
        struct rc_key *k = &a->keys[i];
        if (!k->secret_env[0])
            continue;
        const char *v = getenv(k->secret_env);
        size_t n = v ? strlen(v) : 0;
        if (n < RC_SECRET_MIN || n > RC_SECRET_MAX) {
            gw_log_error("key %s: environment variable %s is %s", k->name, k->secret_env,
                         v ? "not 16..128 characters long" : "not set");
            return RC_E_BAD_REQUEST;
        }
        memcpy(k->secret, v, n + 1);
        k->secret_len = n;
    }
    const char *admin = getenv("RANKCAST_ADMIN_KEY");
    if (admin && *admin) {
        static const char *const all[] = {"*"};
        if (rc_auth_add_key(a, "env-admin", admin, strlen(admin), RC_SCOPE_READ | RC_SCOPE_WRITE | RC_SCOPE_ADMIN,
                            all, 1) != 0) {
            gw_log_error("RANKCAST_ADMIN_KEY must be 16..128 characters (and the key table not full)");
            return RC_E_BAD_REQUEST;
        }
    }
    const char *jwt = getenv("RANKCAST_JWT_SECRET");
    if (jwt && *jwt) {
        size_t n = strlen(jwt);
        if (n < RC_JWT_SECRET_MIN || n > RC_JWT_SECRET_MAX) {
            gw_log_error("RANKCAST_JWT_SECRET must be %d..%d bytes (got %zu): e.g. openssl rand -hex 32",
                         RC_JWT_SECRET_MIN, RC_JWT_SECRET_MAX, n);
            return RC_E_BAD_REQUEST;
        }
        memset(c->jwt_secret, 0, sizeof c->jwt_secret);
        memcpy(c->jwt_secret, jwt, n);
        c->jwt_secret_len = n;
    }
    gw_log_info("auth: %u API keys; reads %s; writes need a key", a->nkeys, a->reads_need_key ? "need a key" : "open");
    return 0;
}

int gw_env_check_test_clock(const struct rc_conf *c)
{
    if (!c->test_clock)
        return 0;
    /* The test clock also decides token expiry (exp, nbf): whoever may move
     * it could make an expired token valid again. */
    if (c->jwt_secret_len || c->jwt_public_key[0]) {
        const char *allow = getenv("RANKCAST_ALLOW_TEST_CLOCK");
        if (!allow || strcmp(allow, "1") != 0) {
            gw_log_error("[server] test_clock = on with a JWT %s: refused (the test clock decides token expiry); "
                         "set RANKCAST_ALLOW_TEST_CLOCK=1 to allow it in a test",
                         c->jwt_secret_len ? "secret" : "public key");
            return RC_E_BAD_REQUEST;
        }
    }
    gw_log_warn("[server] test_clock = on: POST /api/v1/debug/clock may move this gateway's clock "
                "(periods, archives, token expiry); never run it so in production");
    return 0;
}
