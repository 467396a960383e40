/* gw_caller.h - who is asking: what a connection (or a REST request) carries
 * into every operation. Lives in net/ because a connection holds one and
 * net/ is below ops/, which reads it. */
#ifndef GW_CALLER_H
#define GW_CALLER_H

#include <stdlib.h>
#include <string.h>

#include "rc_jwt.h"

struct rc_key;
struct rc_bucket;

#define GW_CALLER_WHY_MAX RC_ERROR_MSG_MAX

/* The API key they presented (NULL: none), whether they presented one that
 * matched no key, and their connection's write bucket (NULL for REST).
 * Borrowed for the call.
 *
 * With a token (JWT), token holds its rights (owned, malloc'd: no table
 * holds them; release with gw_caller_release), key points at token->key,
 * and the token stops counting at token->exp_ms (plus the configured skew).
 * why says what was wrong with a bad credential (for the unauthorized
 * message; never the credential itself). */
struct gw_caller {
    const struct rc_key *key;
    int bad_token;
    struct rc_bucket *conn_bucket;
    struct rc_token *token;        /* NULL unless the credential is a verified token */
    char why[GW_CALLER_WHY_MAX];
};

/* Frees who's token, if any (key then points nowhere: it is cleared too). */
static inline void gw_caller_release(struct gw_caller *who)
{
    if (who->token) {
        memset(who->token, 0, sizeof *who->token);
        free(who->token);
        who->token = NULL;
        who->key = NULL;
    }
}

#endif
