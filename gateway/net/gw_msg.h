/* gw_msg.h - a refcounted outgoing WebSocket payload with LWS_PRE headroom.
 * A delta is encoded once per view and the same gw_msg is queued to every
 * viewer of that view; it is freed when the last queue lets go. */
#ifndef GW_MSG_H
#define GW_MSG_H

#include <stddef.h>

struct gw_msg {
    unsigned refs;
    size_t len;            /* payload bytes, excluding headroom */
    unsigned char buf[];   /* GW_MSG_PRE bytes of headroom, then the payload, then NUL */
};

/* LWS_PRE of libwebsockets 4.1 (checked against the header in gw_msg.c). */
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

void gw_msg_ref(struct gw_msg *m);
void gw_msg_unref(struct gw_msg *m);

#endif
