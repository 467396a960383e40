/* rc_hostport.c - one job: HOST:PORT splitting for --listen and --redis
 * (one address or a list of seeds). */
#include "rc_hostport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_err.h"

int rc_hostport_split(const char *s, char *host, size_t cap, int *port)
{
    if (strncmp(s, "redis://", 8) == 0)
        s += 8;
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s)
        return RC_E_BAD_REQUEST;
    const char *h = s, *he = colon;
    if (*h == '[' && he[-1] == ']')
        h++, he--;
    if ((size_t)(he - h) >= cap || he == h)
        return RC_E_BAD_REQUEST;
    /* strtol as before: " 80" and "+80" still pass, as they always did. */
    char *end;
    long v = strtol(colon + 1, &end, 10);
    if (*end || v < 1 || v > 65535)
        return RC_E_BAD_REQUEST;
    memcpy(host, h, (size_t)(he - h));
    host[he - h] = '\0';
    *port = (int)v;
    return 0;
}

int rc_hostport_split_seeds(const char *list, struct rc_seed *out, size_t max, size_t *n)
{
    char one[RC_SEED_HOST_MAX + 16];
    *n = 0;
    if (!list)
        return RC_E_BAD_REQUEST;
    const char *p = list;
    for (;;) {
        while (*p == ' ')
            p++;
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len > 0 && p[len - 1] == ' ')
            len--;
        if (len == 0 || len >= sizeof one || *n >= max)
            return RC_E_BAD_REQUEST;
        memcpy(one, p, len);
        one[len] = '\0';
        struct rc_seed s;
        if (rc_hostport_split(one, s.host, sizeof s.host, &s.port) != 0)
            return RC_E_BAD_REQUEST;
        int dup = 0;
        for (size_t i = 0; i < *n; i++)
            dup |= out[i].port == s.port && strcmp(out[i].host, s.host) == 0;
        if (!dup)
            out[(*n)++] = s;
        if (!end)
            return 0;
        p = end + 1;
    }
}

int rc_hostport_format(char *out, size_t cap, const char *host, int port)
{
    return snprintf(out, cap, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
}
