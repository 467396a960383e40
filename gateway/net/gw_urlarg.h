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

/* The same for a header (lws token index): length, ABSENT or TOO_LONG. */
int gw_header(struct lws *wsi, int token, char *buf, size_t len);

#endif
