/* gw_msg.h - a refcounted outgoing WebSocket payload with LWS_PRE headroom.
 * A delta is encoded once per view and the same gw_msg is queued to every
 * viewer of that view; it is freed when the last queue lets go.
 *
 * Compression (permessage-deflate) follows the same sharing: the first
 * connection that negotiated it and sends m compresses m once
 * (gw_msg_compressed); the result is kept with m and every other such
 * connection sends the same bytes. A message under the threshold, or one
 * compression would not shorten, is kept in DEFLATE stored blocks instead
 * (6 bytes more, no compression work): it still goes out as a compressed
 * message, because libwebsockets 4.1's client loops forever on an
 * uncompressed frame once the extension is on (docs/gateway.md). */
#ifndef GW_MSG_H
#define GW_MSG_H

#include <stddef.h>

struct rc_deflater;

struct gw_msg {
    unsigned refs;
    size_t len;            /* payload bytes, excluding headroom */
    struct gw_msg *z;      /* the permessage-deflate payload (owned), once made; NULL: not (yet) */
    int z_tried;           /* z was made (or failed for memory: send plain) */
    int z_stored;          /* (in z) stored blocks, not compressed */
    unsigned char buf[];   /* GW_MSG_PRE bytes of headroom, then the payload, then NUL */
};

/* LWS_PRE of libwebsockets 4.1 (checked against the header in serve/gw_ws.c,
 * so that net/ needs no lws header). */
#define GW_MSG_PRE 16

/* A new message holding a copy of text[0..len), refs = 1. NULL on OOM. */
struct gw_msg *gw_msg_new(const char *text, size_t len);

/* Takes ownership of a malloc'd NUL-terminated JSON text (from the rc_encode_*
 * functions), frees it, and returns a message (refs = 1) or NULL. NULL in,
 * NULL out. */
struct gw_msg *gw_msg_take(char *json);

static inline unsigned char *gw_msg_payload(struct gw_msg *m)
{
    return m->buf + GW_MSG_PRE;
}

/* m's payload as one permessage-deflate message (core/rc_deflate), made at
 * the first call and kept with m: compressed when m has at least min bytes
 * and compression shortens it, else in stored blocks (z->z_stored). NULL on
 * OOM (then send m uncompressed). */
struct gw_msg *gw_msg_compressed(struct gw_msg *m, struct rc_deflater *d, size_t min);

void gw_msg_ref(struct gw_msg *m);
void gw_msg_unref(struct gw_msg *m);

#endif
