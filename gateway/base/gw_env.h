/* gw_env.h - what the environment adds to a loaded config: overrides of
 * single keys (flag > environment > file) and API key secrets. */
#ifndef GW_ENV_H
#define GW_ENV_H

#include <stddef.h>

#include "rc_conf.h"

/* Flags given on the command line; NULL = not given. Borrowed. */
struct gw_env_flags {
    const char *listen;
    const char *redis;
    const char *state;
};

/* Applies flag > RANKCAST_LISTEN/REDIS/STATE > file to c->listen, c->redis
 * and c->state_dir. Returns 0, or RC_E_TOO_LARGE (logged) if one is too long. */
int gw_env_apply_overrides(struct rc_conf *c, const struct gw_env_flags *f);

/* Fills the secrets of keys declared with `secret_env`, and adds
 * RANKCAST_ADMIN_KEY as a key with every scope on every board; puts
 * RANKCAST_JWT_SECRET (32..256 bytes) over [auth] jwt_secret. Logs key
 * names, never secrets. Returns 0, or RC_E_BAD_REQUEST (logged). */
int gw_env_resolve_keys(struct rc_conf *c);

/* With [server] test_clock = on: logs a warning (at every start), and
 * refuses a JWT secret or public key beside it (the test clock decides token
 * expiry) unless RANKCAST_ALLOW_TEST_CLOCK=1. Call after gw_env_resolve_keys.
 * Returns 0, or RC_E_BAD_REQUEST (logged). */
int gw_env_check_test_clock(const struct rc_conf *c);

#endif
