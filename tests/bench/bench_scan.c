/* bench_scan.c - top-level fields of a server message (see bench_scan.h). */
#include "bench_scan.h"

#include <string.h>

/* The first byte of the value of qkey, or NULL. */
static const char *find_key(const char *js, size_t len, const char *qkey)
{
    size_t kl = strlen(qkey);
    const char *e = js + len;
    for (const char *q = js; q + kl <= e; q++) {
        q = memchr(q, '"', (size_t)(e - q));
        if (!q || q + kl > e)
            return NULL;
        if (memcmp(q, qkey, kl) == 0) {
            const char *p = q + kl;
            while (p < e && (*p == ' ' || *p == ':'))
                p++;
            return p < e ? p : NULL;
        }
    }
    return NULL;
}

int bench_scan_int(const char *js, size_t len, const char *qkey, int64_t *out)
{
    const char *p = find_key(js, len, qkey), *e = js + len;
    if (!p)
        return -1;
    int neg = *p == '-';
    if (neg)
        p++;
    if (p >= e || *p < '0' || *p > '9')
        return -1;
    int64_t v = 0;
    while (p < e && *p >= '0' && *p <= '9')
        v = v * 10 + (*p++ - '0');
    *out = neg ? -v : v;
    return 0;
}

int bench_scan_str(const char *js, size_t len, const char *qkey, char *out, size_t cap)
{
    const char *p = find_key(js, len, qkey), *e = js + len;
    if (!p || *p != '"')
        return -1;
    p++;
    size_t n = 0;
    while (p < e && *p != '"' && n + 1 < cap)
        out[n++] = *p++;
    out[n] = '\0';
    return p < e && *p == '"' ? 0 : -1;
}
