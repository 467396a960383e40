/* gw_msg.c - refcounted payloads (see gw_msg.h). */
#include "net/gw_msg.h"

#include <stdlib.h>
#include <string.h>

#include "rc_deflate.h"

struct gw_msg *gw_msg_new(const char *text, size_t len)
{
    struct gw_msg *m = malloc(sizeof *m + GW_MSG_PRE + len + 1);
    if (!m)
        return NULL;
    m->refs = 1;
    m->len = len;
    m->z = NULL;
    m->z_tried = 0;
    m->z_stored = 0;
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

struct gw_msg *gw_msg_compressed(struct gw_msg *m, struct rc_deflater *d, size_t min)
{
    if (m->z_tried)
        return m->z;
    m->z_tried = 1;
    /* Room for the stored form, the longest it gets. */
    size_t cap = rc_deflate_stored_len(m->len);
    struct gw_msg *z = malloc(sizeof *z + GW_MSG_PRE + cap + 1);
    if (!z)
        return NULL;
    size_t n = 0;
    z->z_stored = 0;
    if (d && m->len >= min)
        n = rc_deflate_message(d, gw_msg_payload(m), m->len, gw_msg_payload(z), m->len);
    if (n == 0) {
        n = rc_deflate_stored(gw_msg_payload(m), m->len, gw_msg_payload(z), cap);
        z->z_stored = 1;
    }
    z->refs = 1;
    z->len = n;
    z->z = NULL;
    z->z_tried = 1;
    z->buf[GW_MSG_PRE + n] = '\0';
    m->z = z;
    return z;
}

void gw_msg_ref(struct gw_msg *m)
{
    m->refs++;
}

void gw_msg_unref(struct gw_msg *m)
{
    if (m && --m->refs == 0) {
        gw_msg_unref(m->z);
        free(m);
    }
}
