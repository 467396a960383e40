/* gw_clock.c - wall clock with a test offset, and a monotonic clock. */
#include "base/gw_clock.h"

#include <sys/time.h>

#include <uv.h>

int64_t gw_clock_now_ms(const struct gw_clock *c)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000 + (c ? c->offset_ms : 0);
}

int64_t gw_mono_us(void)
{
    return (int64_t)(uv_hrtime() / 1000);
}
