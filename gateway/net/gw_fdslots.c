/* gw_fdslots.c - the per-fd slot table (gw_fdslots.h), sized once from
 * the fd limit so that any socket lws accepts has a slot. */
#include "net/gw_fdslots.h"

#include <stdlib.h>
#include <sys/resource.h>

void *gw_fdslots_alloc(size_t slot_size, size_t *count)
{
    struct rlimit rl;
    size_t n = 65536;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        n = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > GW_FDSLOTS_MAX ? GW_FDSLOTS_MAX : (size_t)rl.rlim_cur;
    void *t = calloc(n, slot_size);
    *count = t ? n : 0;
    return t;
}
