/* gw_tlsread.h - the frame guard (serve/gw_wsguard.h) and the request-line
 * tap (serve/gw_rawreq.h) on TLS connections: gw_tlsread.c interposes
 * SSL_read(), through which libwebsockets 4.1 reads every TLS connection,
 * and hands the decrypted bytes to both. */
#ifndef GW_TLSREAD_H
#define GW_TLSREAD_H

/* Finds OpenSSL's own SSL_read, SSL_write and SSL_get_fd. Returns 0, or
 * RC_E_INTERNAL when they cannot be found (then SSL_read fails every call:
 * a TLS listener must not start unguarded). Call once at start, before
 * lws reads any TLS connection; also what links this file in. */
int gw_tlsread_setup(void);

#endif
