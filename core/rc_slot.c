#include "rc_slot.h"
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
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
unsigned rc_key_slot(const char *key, size_t len)
{
    size_t s, e;
    for (s = 0; s < len; s++) if (key[s] == '{') break;
    if (s < len) { for (e = s + 1; e < len; e++) if (key[e] == '}') break;
        if (e < len && e != s + 1) return crc16(key + s + 1, e - s - 1) & 16383; }
    return crc16(key, len) & 16383;
}
enum rc_redis_err rc_classify_error(const char *err, size_t len)
{
    static const struct { const char *w; enum rc_redis_err k; } t[] = {{"MOVED ", RC_REDIS_ERR_MOVED}, {"ASK ", RC_REDIS_ERR_ASK}, {"TRYAGAIN", RC_REDIS_ERR_TRYAGAIN}, {"CLUSTERDOWN", RC_REDIS_ERR_CLUSTERDOWN}, {"MASTERDOWN", RC_REDIS_ERR_MASTERDOWN}, {"LOADING", RC_REDIS_ERR_LOADING}, {"NOSCRIPT", RC_REDIS_ERR_NOSCRIPT}, {"READONLY", RC_REDIS_ERR_READONLY}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) if (len >= strlen(t[i].w) && strncmp(err, t[i].w, strlen(t[i].w)) == 0) return t[i].k;
    return RC_REDIS_ERR_OTHER;
}
int rc_parse_redirect(const char *err, size_t len, struct rc_redirect *out)
{
    char kind[8], hp[250]; unsigned slot; (void)len;
    if (sscanf(err, "%7s %u %249s", kind, &slot, hp) != 3) return -1;
    char *c = strrchr(hp, ':'); if (!c) return -1; *c = 0;
    out->kind = strcmp(kind, "MOVED") == 0 ? RC_REDIS_ERR_MOVED : RC_REDIS_ERR_ASK; out->slot = slot;
    snprintf(out->host, sizeof out->host, "%s", hp); out->port = atoi(c + 1); return 0;
}
