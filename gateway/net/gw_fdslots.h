/* gw_fdslots.h - a table of one slot per possible fd, for the files that
 * watch sockets from below lws' reads (net/gw_wsguard.c, net/gw_rawreq.c).
 * Each keeps its own table and calls this once (pthread_once) to make it. */
#ifndef GW_FDSLOTS_H
#define GW_FDSLOTS_H

#include <stddef.h>

/* Above max_conns = auto's cap (gw_server.c); higher fds get no slot and
 * are not watched. */
#define GW_FDSLOTS_MAX (1u << 20)

/* Allocates a zeroed table of slot_size-byte slots, one per fd below the
 * RLIMIT_NOFILE soft limit (65536 when unknown, at most GW_FDSLOTS_MAX):
 * calloc, so pages untouched stay unmapped. Returns it (the caller owns it
 * for the process' life) and its slot count in *count, or NULL and 0 when
 * out of memory. */
void *gw_fdslots_alloc(size_t slot_size, size_t *count);

#endif
