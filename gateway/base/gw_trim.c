/* gw_trim.c - malloc_trim when a burst of memory was freed (see gw_trim.h). */
#include "base/gw_trim.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
static size_t free_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.fordblks; /* free in the heap, whether its pages are resident or not */
}
#define HAVE_TRIM 1
#endif

int gw_trim_maybe(struct gw_trim *t, int64_t now_ms)
{
#ifdef HAVE_TRIM
    if (t->checked_ms && now_ms - t->checked_ms < GW_TRIM_EVERY_MS)
        return 0;
    t->checked_ms = now_ms;
    size_t now = free_bytes();
    if (t->trims == 0 && t->low == 0)
        t->low = now; /* the first look */
    if (now < t->low)
        t->low = now; /* reused: what is free now is the new floor */
    if (now - t->low < GW_TRIM_BYTES)
        return 0;
    malloc_trim(0);
    t->trims++;
    /* Trimmed pages stay in malloc's free lists (only unmapped), so the
     * free count barely moves: the floor starts from here again. */
    t->low = free_bytes();
    return 1;
#else
    (void)t;
    (void)now_ms;
    return 0;
#endif
}
