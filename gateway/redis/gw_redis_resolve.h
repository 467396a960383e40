/* gw_redis_resolve.h - the Redis host name to an address, off the loop.
 *
 * hiredis resolves the host it is given with a blocking getaddrinfo inside
 * redisAsyncConnect, which would stall every client of the gateway while a
 * DNS server is slow. So the connection manager resolves the name itself with
 * uv_getaddrinfo (libuv's thread pool) before every attempt, and hands
 * hiredis a numeric address, which it connects to without a lookup. A name
 * whose address changes (a restarted container, a moved Kubernetes service)
 * is therefore followed on the next reconnect.
 */
#ifndef GW_REDIS_RESOLVE_H
#define GW_REDIS_RESOLVE_H

#include <uv.h>

#define GW_REDIS_ADDR_MAX 64 /* INET6_ADDRSTRLEN with room to spare */

struct gw_redis_resolver;

/* status is 0 and addr the numeric address (borrowed for the call), or status
 * is a negative libuv error (UV_ECANCELED after a cancel) and addr is NULL. */
typedef void gw_redis_resolved_cb(struct gw_redis_resolver *res, int status, const char *addr);

struct gw_redis_resolver {
    uv_getaddrinfo_t req;
    gw_redis_resolved_cb *done;
    void *data;               /* the owner's, untouched here */
    int busy;                 /* a lookup is running: done() is still to come */
    unsigned pick;            /* which of several addresses to answer */
    unsigned long started;    /* lookups started (the tests count them) */
};

/* Starts looking up host (borrowed for the call) on loop; done is called from
 * the loop later, never from inside this call. pick chooses among several
 * addresses (pick modulo their count), so successive failed attempts try them
 * in turn (localhost may be ::1 and 127.0.0.1, Redis listening on only one).
 * Returns 0, or RC_E_INTERNAL when a lookup is already running or libuv
 * refuses (done is not called then). */
int gw_redis_resolve(struct gw_redis_resolver *res, uv_loop_t *loop, const char *host, unsigned pick,
                     gw_redis_resolved_cb *done);

/* Asks libuv to cancel a running lookup. done still comes (UV_ECANCELED, or
 * the answer when the lookup had already started): the owner must stay alive
 * until then (busy turns 0 before done is called). */
void gw_redis_resolve_cancel(struct gw_redis_resolver *res);

#endif
