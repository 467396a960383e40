/* rc_httpstrict.c - Content-Length and request-path rules (rc_httpstrict.h). */
#include "rc_httpstrict.h"

#include <string.h>

enum phase { PH_METHOD = 0, PH_PATH, PH_QUERY, PH_DONE };
enum seg { SEG_EMPTY = 0, SEG_DOT, SEG_DOTDOT, SEG_OTHER };

int rc_httpstrict_content_length(const char *s, size_t len, uint64_t *out)
{
    while (len && (*s == ' ' || *s == '\t'))
        s++, len--;
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    if (len == 0 || len > 18) /* 18 digits cannot overflow 64 bits */
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

void rc_httpstrict_path_init(struct rc_httpstrict_path *p)
{
    memset(p, 0, sizeof *p);
}

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static void broke(struct rc_httpstrict_path *p, enum rc_httpstrict_verdict v)
{
    if (!p->found)
        p->found = (uint8_t)v;
}

/* A segment ends (at a literal '/' or the end of the path). */
static void segment_end(struct rc_httpstrict_path *p)
{
    if (p->seg == SEG_DOT || p->seg == SEG_DOTDOT)
        broke(p, RC_HTTPSTRICT_DOT_SEGMENT);
    p->seg = SEG_EMPTY;
}

/* One path character once decoded; encoded: it came from a %XX escape. */
static void path_char(struct rc_httpstrict_path *p, unsigned char c, int encoded)
{
    if (c == '/' && !encoded) {
        segment_end(p);
        return;
    }
    if (c == '/') /* inside a segment: a proxy and lws would split it in different places */
        broke(p, RC_HTTPSTRICT_ENCODED_SLASH);
    if (c == '.')
        p->seg = p->seg == SEG_EMPTY ? SEG_DOT : p->seg == SEG_DOT ? SEG_DOTDOT : SEG_OTHER;
    else
        p->seg = SEG_OTHER;
}

void rc_httpstrict_path_feed(struct rc_httpstrict_path *p, const unsigned char *buf, size_t n)
{
    for (size_t i = 0; i < n && p->phase != PH_DONE; i++) {
        unsigned char c = buf[i];
        int end_of_target = c == ' ' || c == '\r' || c == '\n';
        switch (p->phase) {
        case PH_METHOD:
            if (c == ' ')
                p->phase = PH_PATH;
            break;
        case PH_PATH:
            if (end_of_target || c == '?' || c == '#') {
                /* an unfinished escape is lws' to refuse (it does) */
                p->pct = 0;
                segment_end(p);
                p->phase = end_of_target ? PH_DONE : PH_QUERY;
            } else if (p->pct == 1) {
                int h = hexval(c);
                p->hi = (uint8_t)(h < 0 ? 0 : h);
                p->pct = h < 0 ? 0 : 2;
                if (h < 0)
                    path_char(p, c, 0);
            } else if (p->pct == 2) {
                int lo = hexval(c);
                p->pct = 0;
                path_char(p, lo < 0 ? c : (unsigned char)(p->hi << 4 | lo), lo >= 0);
            } else if (c == '%') {
                p->pct = 1;
            } else {
                path_char(p, c, 0);
            }
            break;
        case PH_QUERY:
            if (end_of_target)
                p->phase = PH_DONE;
            break;
        default:
            break;
        }
    }
}

enum rc_httpstrict_verdict rc_httpstrict_path_verdict(const struct rc_httpstrict_path *p)
{
    if (p->phase < PH_QUERY)
        return RC_HTTPSTRICT_UNKNOWN;
    return p->found ? (enum rc_httpstrict_verdict)p->found : RC_HTTPSTRICT_OK;
}
