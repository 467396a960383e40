/* gw_clock.h - the process's clocks: the one wall-clock read of the gateway
 * (with a test offset) and a monotonic clock for durations.
 *
 * Everything above base/ gets "now" from here (or as a parameter); core/ never
 * reads a clock. */
#ifndef GW_CLOCK_H
#define GW_CLOCK_H

#include <stdint.h>

struct gw_clock {
    int64_t offset_ms; /* added to the wall clock (set by the test clock endpoint only) */
};

/* The time the gateway believes it is: wall clock (ms since the epoch) plus
 * c->offset_ms. Borrows c. */
int64_t gw_clock_now_ms(const struct gw_clock *c);

/* A monotonic clock in microseconds, for measuring durations. */
int64_t gw_mono_us(void);

#endif
