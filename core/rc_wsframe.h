/* rc_wsframe.h - an incremental checker of the client-to-server WebSocket
 * frame stream (RFC 6455, section 5), for the rules libwebsockets 4.1 does
 * not enforce itself (gateway/gw_wsguard.c says why it exists).
 *
 * Fed the raw bytes read from a socket, in pieces split anywhere, it follows
 * frame headers byte by byte and skips payloads by count: it never looks at a
 * payload byte. The first violation is a protocol error (close code 1002):
 *   - the mask bit clear (every client frame is masked, 5.1);
 *   - a control frame (opcode & 8) with a payload over 125 bytes, or without
 *     FIN (5.5);
 *   - a reserved opcode, 3-7 or 11-15 (5.2);
 *   - any RSV bit set (no extension is ever negotiated here);
 *   - a 64-bit length with its most significant bit set (5.2).
 * After a violation the checker stays failed: every later feed returns 1002.
 *
 * Pure: no I/O, no allocation. A zeroed struct is a checker at the start of
 * a frame.
 */
#ifndef RC_WSFRAME_H
#define RC_WSFRAME_H

#include <stddef.h>
#include <stdint.h>

#define RC_WSFRAME_PROTOCOL_ERROR 1002

struct rc_wsframe {
    uint64_t len;    /* the payload length as read so far, then what is left of the payload */
    uint8_t state;   /* where in the frame the next byte falls (rc_wsframe.c) */
    uint8_t left;    /* header bytes left in the current part: extended length or mask key */
    uint8_t control; /* the current frame is a control frame */
};

/* Starts s at a frame boundary (the same as zeroing it). */
void rc_wsframe_init(struct rc_wsframe *s);

/* Feeds the next n bytes of the stream (p borrowed, only headers are read).
 * Returns 0 while the stream is well-formed, RC_WSFRAME_PROTOCOL_ERROR (1002,
 * the close code to send) at the first violation and after it. */
int rc_wsframe_feed(struct rc_wsframe *s, const unsigned char *p, size_t n);

#endif
