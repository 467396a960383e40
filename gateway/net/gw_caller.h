/* gw_caller.h - who is asking: what a connection (or a REST request) carries
 * into every operation. Lives in net/ because a connection holds one and
 * net/ is below ops/, which reads it. */
#ifndef GW_CALLER_H
#define GW_CALLER_H

struct rc_key;
struct rc_bucket;

/* The API key they presented (NULL: none), whether they presented one that
 * matched no key, and their connection's write bucket (NULL for REST).
 * Borrowed for the call. */
struct gw_caller {
    const struct rc_key *key;
    int bad_token;
    struct rc_bucket *conn_bucket;
};

#endif
