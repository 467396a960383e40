/* gw_wsguard.c - RFC 6455 frame rules below lws, enforced from recv().
 *
 * Why this exists: RFC 6455 says a server MUST close the connection on an
 * unmasked client frame (5.1), and that a control frame over 125 bytes is a
 * protocol error (5.5): close 1002. libwebsockets 4.1 serves unmasked frames
 * as if they were masked, and for a 126-byte ping drops the connection
 * without a close frame. Both are decided in lws' frame parser
 * (lws_ws_rx_sm), below every callback the gateway gets, so no callback can
 * fix them.
 *
 * How: lws 4.1 reads plain sockets with recv(fd, buf, len, 0)
 * (lws_ssl_capable_read_no_ssl). This file defines recv(): the executable's
 * definition comes first in symbol lookup, so lws' calls land here (and not
 * in libc's, nor in ASan's interceptor under RC_SANITIZE). It reads with
 * recvfrom() (another symbol: no recursion) and, for a watched fd, feeds
 * the bytes read to that fd's core/rc_wsframe checker. On a violation it
 * sends the close frame 1002 itself, stops watching and returns 0 (end of
 * file), so lws closes the connection without parsing any byte of that
 * read: the bad frame is never served.
 *
 * Scope: recv() is process-wide, but it only acts on watched fds: sockets
 * gw_ws.c watches from LWS_CALLBACK_ESTABLISHED to LWS_CALLBACK_CLOSED.
 * With TLS the bytes recv() could see are ciphertext (and OpenSSL reads
 * them with read()): there serve/gw_tlsread.c hands the decrypted bytes lws
 * gets from SSL_read() to gw_wsguard_feed, and sends the close frame
 * through the TLS session, so TLS connections are checked and charged the
 * same way. hiredis and libuv
 * read with read()/recvmsg() and never pass through here. MSG_PEEK reads
 * consume nothing and are not fed.
 *
 * Bytes lws read together with the handshake: a client MUST wait for the
 * 101 before sending frames (RFC 6455, 4.1), and browsers do; one that does
 * not has frames (or part of one) already read and buffered inside lws when
 * ESTABLISHED fires, and a checker started there would begin mid-frame. So
 * for a socket reset at accept (gw_wsguard_reset) the stream is followed
 * from its first byte: the first "\r\n\r\n" ends the handshake (no
 * keep-alive: a socket's first request is its only one), and every byte
 * after it is fed, from then on, to the frame checker, before the watch
 * too ("early" bytes: counted, checked, charged at the watch). A client
 * that pipelines its first frame is served as before; one whose early
 * frames break a rule is refused at the watch, before lws parses them, and
 * a flood begun early is charged like any other (before, such connections
 * escaped the guard and the frame budgets). A socket never reset (none
 * today) keeps the old rule: watched only when its last four bytes read
 * were the end of the handshake, else not checked.
 *
 * Frames that cost without being requests (continuation, ping, pong: lws
 * answers pings itself, below every callback) are counted by the same
 * checker and charged, one read at a time, through the charge hook
 * (gw_wsguard.h); a connection past its budget is closed the same way, with
 * the hook's close code (1008), before lws parses that read.
 *
 * The close frame is written straight to the socket (MSG_DONTWAIT): if lws
 * holds a partial write for that peer, the close lands inside it; only the
 * violating client sees that, and it is being closed.
 *
 * State: one slot per fd below the fd limit (net/gw_fdslots.h), allocated once (calloc: pages
 * untouched stay unmapped) at the first recv(). A slot is touched only by
 * the thread reading its fd; the lws loop is the only one reading WebSockets.
 */
#define _GNU_SOURCE /* memmem */
#include "serve/gw_wsguard.h"
#include "net/gw_fdslots.h"
#include "rc_err.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "rc_wsframe.h"

#define END_OF_HEADERS 0x0d0a0d0au /* "\r\n\r\n" as the last four bytes, in order */

struct slot {
    struct rc_wsframe frame; /* the client stream after the handshake: early bytes, then while watched */
    void *conn;              /* the charge hook's, while watched */
    uint32_t last4;          /* the last four bytes read, until the end of the handshake */
    uint16_t pending;        /* a close code the watch decided: the next read is refused with it */
    uint8_t armed;           /* reset at accept: the stream is followed from its first byte */
    uint8_t headers_done;    /* (armed) the handshake's "\r\n\r\n" was read: the rest is frames */
    uint8_t early;           /* (armed) bytes came after it before the watch: fed to frame */
    uint8_t watched;
};

static gw_wsguard_charge_fn charge;
GW_FDSLOTS_DEFINE(struct slot)

static void remember_last4(struct slot *s, const unsigned char *p, size_t n)
{
    size_t from = n > 4 ? n - 4 : 0;
    for (size_t i = from; i < n; i++)
        s->last4 = (s->last4 << 8) | p[i];
}

/* Stops watching s and forgets its stream: its connection is closing. */
static void stop(struct slot *s)
{
    memset(s, 0, sizeof *s);
}

/* A read on an fd not watched (yet): until the end of the handshake its
 * bytes are only looked for it; after it (armed sockets) they are frames
 * lws may parse before the watch, fed to the checker now. */
static void before_watch(struct slot *s, const unsigned char *p, size_t n)
{
    if (!s->armed) {
        remember_last4(s, p, n);
        return;
    }
    size_t i = 0;
    if (!s->headers_done) {
        /* an end that began in the last read, then memmem for one inside
         * this one (headers can be 16 KiB: no byte loop over them) */
        while (i < n && i < 3 && !s->headers_done) {
            s->last4 = (s->last4 << 8) | p[i++];
            s->headers_done = s->last4 == END_OF_HEADERS;
        }
        if (!s->headers_done) {
            const unsigned char *e = i < n ? memmem(p, n, "\r\n\r\n", 4) : NULL;
            if (!e) {
                remember_last4(s, p + i, n - i); /* p[0..i) are in last4 already */
                return;
            }
            i = (size_t)(e - p) + 4;
            s->last4 = END_OF_HEADERS;
            s->headers_done = 1;
        }
    }
    if (i == n)
        return;
    if (!s->early) {
        /* whether permessage-deflate is on is known at the watch only:
         * RSV1 is let through here, and forbidden then if it is not */
        rc_wsframe_init(&s->frame);
        rc_wsframe_allow_compressed(&s->frame);
        s->early = 1;
    }
    (void)rc_wsframe_feed(&s->frame, p + i, n - i); /* a violation stays in the checker */
}

/* The counted frames of this read go to the charge hook: its close code, or 0. */
static int charged(struct slot *s)
{
    uint32_t n[RC_WSFRAME_KINDS];
    rc_wsframe_take_counts(&s->frame, n);
    if (!charge || (n[RC_WSFRAME_CONT] | n[RC_WSFRAME_PING] | n[RC_WSFRAME_PONG]) == 0)
        return 0;
    return charge(s->conn, n);
}

int gw_wsguard_feed(int fd, const void *buf, size_t n)
{
    struct slot *s = slot_of(fd);
    if (!s)
        return 0;
    if (!s->watched) {
        before_watch(s, buf, n);
        return 0;
    }
    int code = s->pending ? s->pending : rc_wsframe_feed(&s->frame, buf, n);
    if (code == 0)
        code = charged(s);
    if (code != 0)
        stop(s);
    return code;
}

void gw_wsguard_close_frame(unsigned char out[4], int code)
{
    out[0] = 0x88; /* FIN, close */
    out[1] = 0x02; /* unmasked, two bytes: the code */
    out[2] = (unsigned char)(code >> 8);
    out[3] = (unsigned char)code;
}

/* Interposes libc's recv() for the whole process (see the banner): reads,
 * then checks what a watched fd read. buf is the caller's, as for recv().
 * On a violation it sends the close frame itself (best effort) and returns
 * 0 (end of file), so lws closes without parsing the read. */
ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    ssize_t n = recvfrom(fd, buf, len, flags, NULL, NULL);
    if (n <= 0 || (flags & MSG_PEEK))
        return n;
    int saved = errno;
    int code = gw_wsguard_feed(fd, buf, (size_t)n);
    if (code != 0) {
        unsigned char f[4];
        gw_wsguard_close_frame(f, code);
        (void)send(fd, f, sizeof f, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    errno = saved;
    return code != 0 ? 0 : n;
}

void gw_wsguard_set_charge(gw_wsguard_charge_fn fn)
{
    charge = fn;
}

void gw_wsguard_reset(int fd)
{
    struct slot *s = slot_of(fd);
    if (s) {
        memset(s, 0, sizeof *s);
        s->armed = 1;
    }
}

int gw_wsguard_early_error(int fd)
{
    struct slot *s = slot_of(fd);
    if (!s || s->watched || !s->early)
        return 0;
    return rc_wsframe_feed(&s->frame, NULL, 0);
}

int gw_wsguard_watch(int fd, int compressed, void *conn)
{
    struct slot *s = slot_of(fd);
    if (!s || (s->armed ? !s->headers_done : s->last4 != END_OF_HEADERS))
        return RC_E_INTERNAL;
    if (!s->early) {
        rc_wsframe_init(&s->frame);
        if (compressed)
            rc_wsframe_allow_compressed(&s->frame);
    } else if (!compressed) {
        s->frame.rsv1_ok = 0; /* from the next frame on (before_watch let it through) */
    }
    s->conn = conn;
    s->watched = 1;
    if (!s->early)
        return 0;
    s->early = 0;
    /* the early frames: a rule broken (gw_wsguard_early_error was to be
     * asked first), or the budget they take */
    int code = rc_wsframe_feed(&s->frame, NULL, 0);
    if (code == 0)
        code = charged(s);
    s->pending = (uint16_t)code;
    return code;
}

int gw_wsguard_message(int fd, uint32_t *id)
{
    struct slot *s = slot_of(fd);
    if (!s || !s->watched)
        return -1;
    return rc_wsframe_message_open(&s->frame, id);
}

void gw_wsguard_unwatch(int fd)
{
    struct slot *s = slot_of(fd);
    if (s)
        stop(s);
}
