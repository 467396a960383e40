/* gw_rawreq.c - taps the request line of each accepted socket as it is
 * read (gw_rawreq.h).
 *
 * Why: libwebsockets 4.1 decodes %XX in the request path and folds "/./"
 * and "/seg/../" while it parses, so every callback sees
 * "/api/v1/boards/match:1/scores" for a raw
 * "/api/v1/boards/laps%2F..%2Fmatch:1/scores": a proxy rule on the raw path
 * (allow laps, deny match:*) is walked past. No lws option keeps the raw
 * target, so the raw bytes are looked at as they are read.
 *
 * How: lws 4.1 reads plain sockets with recv(), which serve/gw_wsguard.c
 * defines for the whole process and implements with recvfrom(). This file
 * defines recvfrom(): the executable's definition comes first in symbol
 * lookup, so those reads land here; it reads with the recvfrom system call
 * (no libc symbol: no recursion, nothing interposed twice) and feeds the
 * bytes of an fd whose request line has not ended to that fd's
 * core/rc_httpstrict checker. It never changes what the caller gets. Once
 * the line's target has ended, a read costs one comparison. Should the
 * read path change (recv() no longer built on recvfrom()), nothing is
 * seen: every verdict is "unknown" and the path checks stop; the e2e test
 * tests/e2e/hostile_http.test.js fails then.
 *
 * Scope: only sockets reset at accept are meaningful (gw_rawreq_reset);
 * other fds read with recvfrom (none today: hiredis and libuv use read()
 * and recvmsg()) feed a slot nobody asks about. TLS connections are read
 * by OpenSSL with read(): serve/gw_tlsread.c feeds what SSL_read() decrypts
 * through gw_rawreq_feed instead.
 * There is no keep-alive (every answer closes its connection, gw_http.c),
 * so a socket's first request line is its only one that is routed.
 *
 * State: one small slot per fd below the fd limit (net/gw_fdslots.h), allocated once (calloc:
 * pages untouched stay unmapped) at the first use. A slot is touched only
 * by the lws loop's thread, the only one reading its sockets.
 */
#define _DEFAULT_SOURCE /* syscall() */
#include "serve/gw_rawreq.h"
#include "net/gw_fdslots.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>


struct slot {
    struct rc_httpstrict_path path; /* the request line so far */
    uint8_t armed;                  /* reset at accept: a zeroed slot is an fd nobody asks about */
};

GW_FDSLOTS_DEFINE(struct slot)

/* Interposes libc's recvfrom() for the whole process (see the banner). */
ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *addr, socklen_t *addrlen)
{
    ssize_t n = syscall(SYS_recvfrom, fd, buf, len, flags, addr, addrlen);
    if (n <= 0 || (flags & MSG_PEEK))
        return n;
    int saved = errno;
    gw_rawreq_feed(fd, buf, (size_t)n);
    errno = saved;
    return n;
}

void gw_rawreq_feed(int fd, const void *buf, size_t n)
{
    struct slot *s = slot_of(fd);
    if (s && s->armed)
        rc_httpstrict_path_feed(&s->path, buf, n);
}

void gw_rawreq_reset(int fd)
{
    struct slot *s = slot_of(fd);
    if (s) {
        rc_httpstrict_path_init(&s->path);
        s->armed = 1;
    }
}

enum rc_httpstrict_verdict gw_rawreq_verdict(int fd)
{
    struct slot *s = slot_of(fd);
    return s && s->armed ? rc_httpstrict_path_verdict(&s->path) : RC_HTTPSTRICT_UNKNOWN;
}
