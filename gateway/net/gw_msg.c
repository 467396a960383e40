/* gw_msg.c - refcounted payloads (see gw_msg.h). */
#include <uv.h>
#include <libwebsockets.h>

#include "net/gw_msg.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(GW_MSG_PRE >= LWS_PRE, "GW_MSG_PRE must cover libwebsockets' LWS_PRE");

struct gw_msg *gw_msg_new(const char *text, size_t len)
{
    struct gw_msg *m = malloc(sizeof *m + GW_MSG_PRE + len + 1);
    if (!m)
        return NULL;
    m->refs = 1;
    m->len = len;
    memcpy(m->buf + GW_MSG_PRE, text, len);
    m->buf[GW_MSG_PRE + len] = '\0';
    return m;
}

struct gw_msg *gw_msg_take(char *json)
{
    if (!json)
        return NULL;
    struct gw_msg *m = gw_msg_new(json, strlen(json));
    free(json);
    return m;
}

void gw_msg_ref(struct gw_msg *m)
{
    m->refs++;
}

void gw_msg_unref(struct gw_msg *m)
{
    if (m && --m->refs == 0)
        free(m);
}
