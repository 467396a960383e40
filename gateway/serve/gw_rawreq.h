/* gw_rawreq.h - the raw bytes of each accepted socket's request line, as
 * they were read (before libwebsockets decodes and folds the path), checked
 * with core/rc_httpstrict for what a proxy and lws could read differently:
 * %2F inside a path segment, a "." or ".." segment (docs/security.md,
 * "Strict HTTP"). gw_rawreq.c says how it sees the bytes, and what it does
 * not cover.
 */
#ifndef GW_RAWREQ_H
#define GW_RAWREQ_H

#include <stddef.h>

#include "rc_httpstrict.h"

/* A socket was just accepted on fd (LWS_CALLBACK_FILTER_NETWORK_CONNECTION,
 * before lws reads from it): its request line starts with the next byte. */
void gw_rawreq_reset(int fd);

/* Bytes just read (plaintext) on fd: fed to its checker while its request
 * line has not ended (recvfrom() does this for plain sockets;
 * serve/gw_tlsread.c for what SSL_read() decrypts). Borrows buf. */
void gw_rawreq_feed(int fd, const void *buf, size_t n);

/* What fd's request line held. RC_HTTPSTRICT_UNKNOWN when its bytes were
 * not seen (read neither with recvfrom() nor SSL_read()), or fd is beyond
 * the table: the caller then cannot tell, and lets the request pass. */
enum rc_httpstrict_verdict gw_rawreq_verdict(int fd);

#endif
