/* rc_slot.c - key slots and cluster error replies (rc_slot.h). */
#include "rc_slot.h"

#include <string.h>

static unsigned crc16(const char *buf, size_t len)
{
    unsigned crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (unsigned)(unsigned char)buf[i] << 8;
        for (int j = 0; j < 8; j++)
            crc = (crc & 0x8000) ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
    return crc;
}

unsigned rc_slot_of_key(const char *key, size_t len)
{
    const char *open = memchr(key, '{', len);
    if (open) {
        size_t rest = len - (size_t)(open - key) - 1;
        const char *close = memchr(open + 1, '}', rest);
        if (close && close > open + 1)
            return crc16(open + 1, (size_t)(close - open - 1)) % RC_SLOTS;
    }
    return crc16(key, len) % RC_SLOTS;
}

static int starts_with(const char *s, size_t len, const char *word)
{
    size_t n = strlen(word);
    return len >= n && memcmp(s, word, n) == 0 && (len == n || s[n] == ' ');
}

enum rc_redis_err rc_slot_classify_error(const char *err, size_t len)
{
    static const struct {
        const char *word;
        enum rc_redis_err kind;
    } table[] = {
        {"MOVED", RC_REDIS_ERR_MOVED},
        {"ASK", RC_REDIS_ERR_ASK},
        {"TRYAGAIN", RC_REDIS_ERR_TRYAGAIN},
        {"CLUSTERDOWN", RC_REDIS_ERR_CLUSTERDOWN},
        {"MASTERDOWN", RC_REDIS_ERR_MASTERDOWN},
        {"LOADING", RC_REDIS_ERR_LOADING},
        {"NOSCRIPT", RC_REDIS_ERR_NOSCRIPT},
        {"READONLY", RC_REDIS_ERR_READONLY},
    };
    if (!err)
        return RC_REDIS_ERR_OTHER;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (starts_with(err, len, table[i].word))
            return table[i].kind;
    return RC_REDIS_ERR_OTHER;
}

/* Digits in s[0..len) as a number at most max; -1 when empty, not all
 * digits or too big. */
static long number(const char *s, size_t len, long max)
{
    long v = 0;
    if (len == 0 || len > 6)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v <= max ? v : -1;
}

int rc_slot_parse_redirect(const char *err, size_t len, struct rc_redirect *out)
{
    enum rc_redis_err kind = rc_slot_classify_error(err, len);
    if (kind != RC_REDIS_ERR_MOVED && kind != RC_REDIS_ERR_ASK)
        return -1;
    size_t i = kind == RC_REDIS_ERR_MOVED ? 6 : 4; /* past "MOVED " / "ASK " */
    const char *sp = i < len ? memchr(err + i, ' ', len - i) : NULL;
    if (!sp)
        return -1;
    long slot = number(err + i, (size_t)(sp - err) - i, RC_SLOTS - 1);
    const char *ep = sp + 1, *end = err + len;
    if (slot < 0 || ep >= end || memchr(ep, ' ', (size_t)(end - ep)))
        return -1;
    const char *colon = NULL;
    for (const char *p = ep; p < end; p++)
        if (*p == ':')
            colon = p;
    if (!colon)
        return -1;
    long port = number(colon + 1, (size_t)(end - colon - 1), 65535);
    const char *host = ep;
    size_t hlen = (size_t)(colon - ep);
    if (hlen >= 2 && host[0] == '[' && host[hlen - 1] == ']') {
        host++;
        hlen -= 2;
    }
    if (port < 1 || hlen > RC_REDIRECT_HOST_MAX)
        return -1;
    out->kind = kind;
    out->slot = (unsigned)slot;
    memcpy(out->host, host, hlen);
    out->host[hlen] = '\0';
    out->port = (int)port;
    return 0;
}

int rc_slot_range_ok(long long start, long long end, long long port)
{
    return start >= 0 && end >= start && end < RC_SLOTS && port > 0 && port <= 65535;
}

const char *rc_slot_map_host(const char *host, const char *asked)
{
    return host[0] && strcmp(host, "?") != 0 ? host : asked;
}
