/* gw_urlarg.h - a request's query arguments, whole or not at all: an
 * argument longer than the caller's buffer is reported as such, never cut
 * or read as absent (an over-long ?token= must not pass as no token). */
#ifndef GW_URLARG_H
#define GW_URLARG_H

#include <stddef.h>

struct lws;

#define GW_URLARG_ABSENT (-1)
#define GW_URLARG_TOO_LONG (-2)

/* Copies the (url-decoded) value of query argument `name` into buf
 * (NUL-terminated) and returns its length, or GW_URLARG_ABSENT, or
 * GW_URLARG_TOO_LONG when it does not fit len - 1 bytes. The first
 * occurrence wins. */
int gw_urlarg(struct lws *wsi, const char *name, char *buf, size_t len);

/* A request's query fragments ("name=value", url-decoded, in order),
 * copied once so the pure mapping (core/rc_query.h) can read them after
 * lws has moved on. */
struct gw_urlargs {
    char **args; /* owned: n pointers into one block */
    size_t n;
};

/* Copies every query fragment of wsi into *out. Returns 0 or RC_E_INTERNAL
 * (out of memory: *out then holds none). Free with gw_urlarg_free. */
int gw_urlarg_copy(struct lws *wsi, struct gw_urlargs *out);
void gw_urlarg_free(struct gw_urlargs *a);

/* The same for a header (lws token index): length, ABSENT or TOO_LONG. */
int gw_urlarg_header(struct lws *wsi, int token, char *buf, size_t len);

#endif
