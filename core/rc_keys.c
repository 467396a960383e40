/* rc_keys.c - builds the Redis key names (see rc_keys.h). */
#include "rc_keys.h"

#include <stdio.h>

#include "rc_err.h"

int rc_board_key(char *out, size_t cap, const char *board, const char *period_id, const char *suffix,
                 const char *arg)
{
    int n = arg ? snprintf(out, cap, "rc:{%s|%s}:%s:%s", board, period_id ? period_id : "", suffix, arg)
                : snprintf(out, cap, "rc:{%s|%s}:%s", board, period_id ? period_id : "", suffix);
    return n < 0 || (size_t)n >= cap ? RC_E_INTERNAL : 0;
}

int rc_profile_key(char *out, size_t cap, const char *member)
{
    int n = snprintf(out, cap, "rc:profile:%s", member);
    return n < 0 || (size_t)n >= cap ? RC_E_INTERNAL : 0;
}
