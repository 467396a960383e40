/* gw_caller.h - who is asking: what a connection (or a REST request) carries
 * into every operation. Lives in net/ because a connection holds one and
 * net/ is below ops/, which reads it. */
#ifndef GW_CALLER_H
#define GW_CALLER_H

#include "rc_jwt.h"

struct rc_key;
struct rc_bucket;

#define GW_CALLER_WHY_MAX 160

/* The API key they presented (NULL: none), whether they presented one that
 * matched no key, and their connection's write bucket (NULL for REST).
 * Borrowed for the call.
 *
 * With a token (JWT), key points at token.key (the token's rights, kept
 * here by value because no table holds them), is_token is 1, and the token
 * stops counting at token.exp_ms (plus the configured skew). why says what
 * was wrong with a bad credential (for the unauthorized message; never the
 * credential itself). */
struct gw_caller {
    const struct rc_key *key;
    int bad_token;
    struct rc_bucket *conn_bucket;
    int is_token;
    struct rc_token token;
    char why[GW_CALLER_WHY_MAX];
};

#endif
