/* gw_fdslots.h - a table of one slot per possible fd, for the files that
 * watch sockets from below lws' reads (serve/gw_wsguard.c, serve/gw_rawreq.c).
 * Each keeps its own table and calls this once (pthread_once) to make it. */
#ifndef GW_FDSLOTS_H
#define GW_FDSLOTS_H

#include <pthread.h>
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

/* Defines, in the file that uses it, its own table of slot_type and
 * `static slot_type *slot_of(int fd)`: fd's slot, the table made at the
 * first call (pthread_once: whichever thread reads first), or NULL for an
 * fd past the table (or when it could not be made). */
#define GW_FDSLOTS_DEFINE(slot_type)                                                                               \
    static slot_type *slots;                                                                                       \
    static size_t nslots;                                                                                          \
    static pthread_once_t slots_once = PTHREAD_ONCE_INIT;                                                          \
    static void slots_alloc(void)                                                                                  \
    {                                                                                                              \
        slots = gw_fdslots_alloc(sizeof *slots, &nslots);                                                          \
    }                                                                                                              \
    static slot_type *slot_of(int fd)                                                                              \
    {                                                                                                              \
        pthread_once(&slots_once, slots_alloc);                                                                    \
        return fd >= 0 && (size_t)fd < nslots ? &slots[fd] : NULL;                                                 \
    }

#endif
