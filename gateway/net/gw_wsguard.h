/* gw_wsguard.h - RFC 6455 frame rules libwebsockets 4.1 does not enforce,
 * checked on the bytes lws reads from plain (non-TLS) WebSocket sockets: an
 * unmasked client frame, a control frame over 125 bytes or without FIN, a
 * reserved opcode, an RSV bit (RSV1 is allowed where permessage-deflate
 * puts it, on connections that negotiated it), a 64-bit length with its top bit set. Any of
 * them: a close frame 1002, then the connection is closed. gw_wsguard.c
 * says how, and what it does not cover.
 */
#ifndef GW_WSGUARD_H
#define GW_WSGUARD_H

/* Starts checking what is read on fd from now on (a WebSocket that has just
 * been established, plain TCP). Returns 0, or RC_E_INTERNAL when fd is not watched:
 * beyond the table, the table could not be allocated, or lws may already
 * hold part of a frame (the last bytes read were not the end of the
 * handshake). Not watching is always safe. compressed: permessage-deflate
 * was negotiated (RSV1 allowed on the first frame of a data message). */
int gw_wsguard_watch(int fd, int compressed);

/* Stops checking fd (its connection is closing); nothing happens when fd is
 * not watched. Call it before the fd is closed. */
void gw_wsguard_unwatch(int fd);

#endif
