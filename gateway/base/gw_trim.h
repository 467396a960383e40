/* gw_trim.h - handing freed heap memory back to the system.
 *
 * glibc returns freed memory to the kernel only from the top of the heap
 * (and for blocks it mmapped alone); the memory of thousands of boards,
 * views, windows, read replies and connection buffers freed after a burst
 * sits between live allocations and stays resident for good. So once a
 * second the tick asks malloc how much it holds free, and when that has
 * grown by GW_TRIM_BYTES since the least it held since the last trim, it
 * runs malloc_trim (which releases the free pages inside the heap too). A
 * steady gateway (memory freed and reused at once) never trims; one that
 * just gave back a burst trims once. Without glibc it does nothing. */
#ifndef GW_TRIM_H
#define GW_TRIM_H

#include <stddef.h>
#include <stdint.h>

#define GW_TRIM_BYTES (1u << 20)  /* free memory grown by this much: trim */
#define GW_TRIM_EVERY_MS 1000     /* looked at most this often (mallinfo walks the free lists) */

struct gw_trim {
    int64_t checked_ms;  /* when it last looked (monotonic ms) */
    size_t low;          /* the least free memory seen since the last trim */
    uint64_t trims;      /* malloc_trim calls made */
};

/* Looks (at most every GW_TRIM_EVERY_MS, now_ms monotonic) and trims when
 * due. Returns 1 when it trimmed. */
int gw_trim_maybe(struct gw_trim *t, int64_t now_ms);

#endif
