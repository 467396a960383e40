/* rc_hostport.c - one job: HOST:PORT splitting for --listen and --redis. */
#include "rc_hostport.h"

#include <stdlib.h>
#include <string.h>

#include "rc_err.h"

int rc_split_hostport(const char *s, char *host, size_t cap, int *port)
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
