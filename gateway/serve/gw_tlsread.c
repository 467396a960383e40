/* gw_tlsread.c - SSL_read() below lws, so that TLS connections meet the
 * frame guard and the frame budgets (gw_tlsread.h).
 *
 * Why: serve/gw_wsguard.c checks RFC 6455 frames and counts continuation,
 * ping and pong frames on the bytes recv() returns. With TLS (tls_cert)
 * those bytes are ciphertext, and OpenSSL reads them with read() anyway:
 * a TLS connection flooding empty continuation frames or pings was charged
 * nothing and held a core. libwebsockets 4.1 reads every TLS connection
 * with SSL_read() (lws_ssl_capable_read), and nothing between it and lws'
 * frame parser is a callback the gateway gets.
 *
 * How: as gw_wsguard.c does for recv(), this file defines SSL_read(): the
 * executable's definition comes first in symbol lookup, so lws' calls (and
 * libcurl's, for webhooks: their fds are never watched, nothing changes for
 * them) land here. It calls OpenSSL's own SSL_read (found once with
 * dlsym(RTLD_NEXT)) and hands what it decrypted to gw_wsguard_feed with the
 * session's fd, and to serve/gw_rawreq.c's request-line checker (the
 * raw-path rules of "Strict HTTP" need the bytes before lws decodes them,
 * which with TLS only SSL_read has). On a violation or a connection past its frame budget it
 * writes the close frame through the session (best effort: should lws hold
 * a partial write, OpenSSL may refuse it; only the violating client is
 * affected) and returns 0 with one error on OpenSSL's queue, which
 * SSL_get_error reports as SSL_ERROR_SSL: lws closes the connection without
 * parsing any byte of that read, as with recv()'s end of file.
 *
 * Cost: one call through a pointer and the guard's slot lookup per
 * SSL_read, the same as recv() pays on plain sockets.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include "serve/gw_tlsread.h"
#include "serve/gw_rawreq.h"
#include "serve/gw_wsguard.h"
#include "rc_err.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

typedef int (*ssl_read_fn)(SSL *ssl, void *buf, int num);
typedef int (*ssl_write_fn)(SSL *ssl, const void *buf, int num);
typedef int (*ssl_get_fd_fn)(const SSL *ssl);

static ssl_read_fn real_read;
static ssl_write_fn real_write;
static ssl_get_fd_fn real_get_fd;
static pthread_once_t found_once = PTHREAD_ONCE_INIT;

/* dlsym returns an object pointer; POSIX guarantees it converts to a
 * function pointer, C does not: copy the bits. */
static void *find(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

static void find_all(void)
{
    void *r = find("SSL_read"), *w = find("SSL_write"), *g = find("SSL_get_fd");
    if (!r || !w || !g)
        return;
    *(void **)&real_read = r;
    *(void **)&real_write = w;
    *(void **)&real_get_fd = g;
}

int gw_tlsread_setup(void)
{
    pthread_once(&found_once, find_all);
    return real_read ? 0 : RC_E_INTERNAL;
}

/* Interposes OpenSSL's SSL_read() for the whole process (see the banner). */
int SSL_read(SSL *ssl, void *buf, int num)
{
    pthread_once(&found_once, find_all);
    if (!real_read) {
        errno = ENOSYS;
        return -1;
    }
    int n = real_read(ssl, buf, num);
    if (n <= 0)
        return n;
    int saved = errno;
    int fd = real_get_fd(ssl);
    gw_rawreq_feed(fd, buf, (size_t)n); /* the raw-path rules (docs/security.md, "Strict HTTP") */
    int code = gw_wsguard_feed(fd, buf, (size_t)n);
    if (code == 0) {
        errno = saved;
        return n;
    }
    unsigned char f[4];
    gw_wsguard_close_frame(f, code);
    (void)real_write(ssl, f, sizeof f);
    /* One error of ours on the queue makes SSL_get_error say SSL_ERROR_SSL
     * whatever the write left behind (a blocked write would otherwise read
     * as SSL_ERROR_WANT_WRITE, and lws would keep the connection): lws
     * closes it as unusable, without a TLS shutdown. */
    ERR_clear_error();
    ERR_raise(ERR_LIB_SSL, SSL_R_PROTOCOL_IS_SHUTDOWN);
    errno = saved;
    return 0;
}
