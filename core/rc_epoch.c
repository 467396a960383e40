/* rc_epoch.c - epoch ids (see rc_epoch.h). */
#include "rc_epoch.h"

int rc_epoch_valid(const char *s, size_t len)
{
    if (!s || len > RC_EPOCH_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            return 0;
    }
    return 1;
}

void rc_epoch_hex(char *out, const unsigned char *bytes)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < RC_EPOCH_RANDOM_BYTES; i++) {
        out[2 * i] = hex[bytes[i] >> 4];
        out[2 * i + 1] = hex[bytes[i] & 15];
    }
    out[2 * RC_EPOCH_RANDOM_BYTES] = '\0';
}
