/* rc_conf_redis.c - one job: the [redis] keys that say how to log in to
 * Redis (DESIGN.md "Operating it"): the ACL user, and where the password
 * comes from. The password itself never goes into the file: a config file is
 * copied, versioned and shown in support tickets, so `password = ...` is
 * refused with a pointer to the two places it may live. Reading the variable
 * or the file is the gateway's job at start (base/gw_redis_pass.c); the core
 * only checks the names. */
#include "rc_conf_int.h"

#include <string.h>

/* An ACL user name goes into AUTH as one argument: printable ASCII without
 * spaces, so it cannot be mistaken for something else in a log line. */
int rc_conf__set_redis_username(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (!rc_conf__token_valid(v, 1, RC_REDIS_USER_MAX))
        return rc_conf__fail(p, p->lineno, "%s must be 1..%d printable characters without spaces (a Redis ACL user)",
                             k->name, RC_REDIS_USER_MAX);
    return rc_conf__set_string(p, k, obj, v); /* checked above: fits */
}

/* Always refused, without quoting the value (it is a password). */
int rc_conf__set_redis_password(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    (void)obj;
    (void)v;
    return rc_conf__fail(p, p->lineno,
                         "[redis] %s: the Redis password never goes in the config file; put it in "
                         "RANKCAST_REDIS_PASSWORD, in a variable named by password_env, or in a file named by "
                         "password_file",
                         k->name);
}

int rc_conf__set_redis_password_env(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (!rc_conf__env_name_valid(v))
        return rc_conf__fail(p, p->lineno,
                             "%s must name an environment variable: 1..%d of A-Z 0-9 _, not starting with a digit "
                             "(put the password itself in that variable)",
                             k->name, RC_ENV_NAME_MAX);
    return rc_conf__set_string(p, k, obj, v); /* checked above: fits */
}
