/* gw_redis_resolve.c - the Redis host name to a numeric address with
 * uv_getaddrinfo, so the loop never waits for DNS (see gw_redis_resolve.h). */
#include "redis/gw_redis_resolve.h"

#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "rc_err.h"

/* The numeric form of one address; 0 or a libuv error. */
static int name_of(const struct addrinfo *a, char *out, size_t len)
{
    if (a->ai_family == AF_INET)
        return uv_ip4_name((const struct sockaddr_in *)a->ai_addr, out, len);
    if (a->ai_family == AF_INET6)
        return uv_ip6_name((const struct sockaddr_in6 *)a->ai_addr, out, len);
    return UV_EAI_FAMILY;
}

static void on_getaddrinfo(uv_getaddrinfo_t *req, int status, struct addrinfo *list)
{
    struct gw_redis_resolver *res = req->data;
    char addr[GW_REDIS_ADDR_MAX];
    size_t n = 0;
    res->busy = 0;
    for (const struct addrinfo *a = list; status == 0 && a; a = a->ai_next)
        n++;
    if (status == 0 && n == 0)
        status = UV_EAI_NONAME;
    if (status == 0) {
        const struct addrinfo *a = list;
        for (size_t i = res->pick % n; i > 0; i--)
            a = a->ai_next;
        status = name_of(a, addr, sizeof addr);
    }
    uv_freeaddrinfo(list); /* accepts NULL */
    res->done(res, status, status == 0 ? addr : NULL);
}

int gw_redis_resolve(struct gw_redis_resolver *res, uv_loop_t *loop, const char *host, unsigned pick,
                     gw_redis_resolved_cb *done)
{
    /* TCP only, so each address is listed once, not once per socket type. */
    struct addrinfo hints;
    if (res->busy)
        return RC_E_INTERNAL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    res->req.data = res;
    res->done = done;
    res->pick = pick;
    if (uv_getaddrinfo(loop, &res->req, on_getaddrinfo, host, NULL, &hints) != 0)
        return RC_E_INTERNAL;
    res->busy = 1;
    res->started++;
    return 0;
}

void gw_redis_resolve_cancel(struct gw_redis_resolver *res)
{
    if (res->busy)
        uv_cancel((uv_req_t *)&res->req);
}
