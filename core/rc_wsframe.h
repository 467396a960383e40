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
 *   - any RSV bit set, except RSV1 on the first frame of a text or binary
 *     message once permessage-deflate was negotiated (RFC 7692, 6.1: never
 *     on a continuation or control frame; rc_wsframe_allow_compressed);
 *   - a 64-bit length with its most significant bit set (5.2).
 * After a violation the checker stays failed: every later feed returns 1002.
 *
 * It also counts what costs the server work without being a request
 * (docs/security.md, "Frames"): continuation, ping and pong frames, each
 * counted at its first byte, and tells whether a data message is still
 * unfinished: a fragmented one before its final continuation, or any data
 * frame whose header or payload has not all been read
 * (gateway/serve/gw_ws_frames.c charges the counts to the read budgets and
 * times the message).
 *
 * Pure: no I/O, no allocation. A zeroed struct is a checker at the start of
 * a frame.
 */
#ifndef RC_WSFRAME_H
#define RC_WSFRAME_H

#include <stddef.h>
#include <stdint.h>

#define RC_WSFRAME_PROTOCOL_ERROR 1002

/* The kinds of frame counted (rc_wsframe_take_counts). */
enum rc_wsframe_kind {
    RC_WSFRAME_CONT = 0, /* continuation (opcode 0) */
    RC_WSFRAME_PING = 1,
    RC_WSFRAME_PONG = 2,
    RC_WSFRAME_KINDS = 3,
};

struct rc_wsframe {
    uint32_t counts[RC_WSFRAME_KINDS]; /* frames begun since the last take, by kind */
    uint32_t messages; /* data messages begun (text or binary frames) */
    uint8_t in_message; /* the last one was fragmented and has not had its final continuation */
    uint64_t len;    /* the payload length as read so far, then what is left of the payload */
    uint8_t state;   /* where in the frame the next byte falls (rc_wsframe.c) */
    uint8_t left;    /* header bytes left in the current part: extended length or mask key */
    uint8_t control; /* the current frame is a control frame */
    uint8_t rsv1_ok; /* permessage-deflate negotiated: RSV1 allowed where RFC 7692 puts it */
};

/* The longest server frame header: byte 0, byte 1, 8 bytes of length. */
#define RC_WSFRAME_HEADER_MAX 10

/* Starts s at a frame boundary (the same as zeroing it). */
void rc_wsframe_init(struct rc_wsframe *s);

/* Lets RSV1 ("compressed") through on the first frame of a data message
 * (opcode 1 or 2): permessage-deflate was negotiated on this connection.
 * Call after rc_wsframe_init. */
void rc_wsframe_allow_compressed(struct rc_wsframe *s);

/* Writes the header of one unfragmented, unmasked server text frame of len
 * payload bytes into out (RSV1 set when compressed: the payload is a
 * permessage-deflate message) and returns its length: 2, 4 or 10 bytes. */
size_t rc_wsframe_text_header(unsigned char out[RC_WSFRAME_HEADER_MAX], uint64_t len, int compressed);

/* Feeds the next n bytes of the stream (p borrowed, only headers are read).
 * Returns 0 while the stream is well-formed, RC_WSFRAME_PROTOCOL_ERROR (1002,
 * the close code to send) at the first violation and after it. */
int rc_wsframe_feed(struct rc_wsframe *s, const unsigned char *p, size_t n);

/* Copies the frames counted since the last call (or init) into out, by
 * enum rc_wsframe_kind, and starts counting again from zero. */
void rc_wsframe_take_counts(struct rc_wsframe *s, uint32_t out[RC_WSFRAME_KINDS]);

/* 1 while a data message has begun and not ended: fragmented and before
 * its final continuation, or inside a data frame (its header or payload not
 * all read); else 0. *id (when not NULL) gets the number of the last data
 * message begun, counting from 1: a new message is a new number. */
int rc_wsframe_message_open(const struct rc_wsframe *s, uint32_t *id);

#endif
