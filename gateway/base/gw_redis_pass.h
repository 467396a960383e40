/* gw_redis_pass.h - the credentials rankcast logs in to Redis with
 * (DESIGN.md "Operating it"): the ACL user from [redis] username and the
 * password from, in this order,
 *   1. RANKCAST_REDIS_PASSWORD, when set and not empty;
 *   2. the variable named by [redis] password_env, when set and not empty;
 *   3. the file named by [redis] password_file: its bytes, trailing CR/LF
 *      stripped. The file must be a regular file that "other" users cannot
 *      read (as libpq does for .pgpass): mode 0400/0440/0600/0640.
 * The password is never logged or printed; messages name the source only.
 * Used by the gateway (every Redis connection, redis/gw_node*.c) and by the
 * command-line tools (cli/gw_cli_redis.c). */
#ifndef GW_REDIS_PASS_H
#define GW_REDIS_PASS_H

#include "rc_conf.h"
#include "rc_err.h"

#define GW_REDIS_PASS_MAX 1024 /* bytes of a password */

struct gw_redis_cred {
    char username[RC_REDIS_USER_MAX + 1]; /* "" = AUTH password alone (the default user) */
    char password[GW_REDIS_PASS_MAX + 1]; /* "" = no AUTH at all */
    char source[RC_CONF_STR_MAX + 32];    /* where the password came from, for logs; "" = none */
};

/* Fills *out from c and the environment as above. Returns 0, or
 * RC_E_BAD_REQUEST with err saying why (a file that cannot be read or is
 * readable by everyone, a password_env naming an unset variable with no
 * file to fall back to, a username without any password). */
int gw_redis_pass_resolve(const struct rc_conf *c, struct gw_redis_cred *out, struct rc_error *err);

/* For --check-config: the configured password_file (if any) can be read and
 * passes the checks above. The environment is not consulted: the shell that
 * checks a file is rarely the service's. Returns 0 or RC_E_BAD_REQUEST. */
int gw_redis_pass_check_file(const struct rc_conf *c, struct rc_error *err);

/* Overwrites the password in memory once it has been copied to where it is used. */
void gw_redis_pass_wipe(struct gw_redis_cred *cred);

/* Overwrites s (a copy of a password; NULL is fine) before it is freed,
 * in a way the compiler cannot drop as a dead store. */
void gw_redis_pass_zero(char *s);

#endif
