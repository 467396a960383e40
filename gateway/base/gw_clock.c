/* gw_clock.c - wall clock with a test offset (the group's with workers),
 * and a monotonic clock. */
#include "base/gw_clock.h"

#include <sys/time.h>

#include <uv.h>

int64_t gw_clock_offset_ms(const struct gw_clock *c)
{
    if (!c)
        return 0;
    return c->shared ? atomic_load_explicit(c->shared, memory_order_relaxed) : c->offset_ms;
}

void gw_clock_set_offset_ms(struct gw_clock *c, int64_t ms)
{
    if (c->shared)
        atomic_store_explicit(c->shared, ms, memory_order_relaxed);
    else
        c->offset_ms = ms;
}

int64_t gw_clock_now_ms(const struct gw_clock *c)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000 + gw_clock_offset_ms(c);
}

int64_t gw_clock_mono_us(void)
{
    return (int64_t)(uv_hrtime() / 1000);
}

int64_t gw_clock_gate_us(const struct gw_clock *c)
{
    return gw_clock_mono_us() + gw_clock_offset_ms(c) * 1000;
}
