/* rc_httpstrict.h - the HTTP/1.1 request rules a proxy in front and the
 * gateway must read the same way (RFC 9112), checked before any route:
 * a Content-Length that is one plain decimal number, and a request target
 * whose path has no %2F inside a segment and no segment that is exactly
 * "." or ".." once decoded (docs/security.md, "Strict HTTP").
 *
 * libwebsockets 4.1 decodes %XX in the path and folds "/./" and "/../"
 * before any callback sees it (so ".../laps%2F..%2Fmatch:1/..." reaches
 * the routes as ".../match:1/..."), so the path rule runs on the raw bytes
 * of the request line, fed as they are read (gateway/serve/gw_rawreq.c), in
 * pieces split anywhere.
 *
 * Pure: no I/O, no allocation. A zeroed struct rc_httpstrict_path is a
 * checker at the start of a request.
 */
#ifndef RC_HTTPSTRICT_H
#define RC_HTTPSTRICT_H

#include <stddef.h>
#include <stdint.h>

/* Content-Length's value (OWS around it allowed): 1..18 ASCII digits, no
 * sign, no list, nothing else. Returns 0 with *out set, or -1. */
int rc_httpstrict_content_length(const char *s, size_t len, uint64_t *out);

/* What the request line's path held, as far as it was fed. */
enum rc_httpstrict_verdict {
    RC_HTTPSTRICT_UNKNOWN = 0,       /* the path has not ended yet (or nothing was fed) */
    RC_HTTPSTRICT_OK = 1,
    RC_HTTPSTRICT_ENCODED_SLASH = 2, /* %2F (or %2f) inside a segment */
    RC_HTTPSTRICT_DOT_SEGMENT = 3,   /* a segment that is "." or ".." once decoded */
};

struct rc_httpstrict_path {
    uint8_t phase; /* method, path, query, done (rc_httpstrict.c) */
    uint8_t pct;   /* 0, or 1..2: inside a %XX escape, after that many characters */
    uint8_t hi;    /* the escape's first hex digit */
    uint8_t seg;   /* the current segment so far: empty, ".", "..", anything else */
    uint8_t found; /* the first rule broken: an rc_httpstrict_verdict, 0 none */
};

/* Starts p at the first byte of a request (the same as zeroing it). */
void rc_httpstrict_path_init(struct rc_httpstrict_path *p);

/* Feeds n raw bytes read from the socket. Bytes past the request line's
 * target are ignored (cheap: one comparison per call once it ended). */
void rc_httpstrict_path_feed(struct rc_httpstrict_path *p, const unsigned char *buf, size_t n);

/* The verdict so far: RC_HTTPSTRICT_UNKNOWN until the target's path has
 * ended (at '?', '#', a space or the end of the line). */
enum rc_httpstrict_verdict rc_httpstrict_path_verdict(const struct rc_httpstrict_path *p);

#endif
