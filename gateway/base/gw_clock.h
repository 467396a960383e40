/* gw_clock.h - the process's clocks: the one wall-clock read of the gateway
 * (with a test offset) and a monotonic clock for durations.
 *
 * Everything above base/ gets "now" from here (or as a parameter); core/ never
 * reads a clock. In a worker group the test offset is the group's: one word
 * in the shared region (base/gw_group.h), so the test clock endpoint moves
 * every worker's clock at once, whichever worker took the request. */
#ifndef GW_CLOCK_H
#define GW_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>

struct gw_clock {
    int64_t offset_ms;       /* added to the wall clock (set by the test clock endpoint only) */
    _Atomic int64_t *shared; /* a worker group's offset, used instead of offset_ms (NULL: one process) */
};

/* The time the gateway believes it is: wall clock (ms since the epoch) plus
 * the test offset. Borrows c. */
int64_t gw_clock_now_ms(const struct gw_clock *c);

/* The test offset, and setting it (the group's, with a group). */
int64_t gw_clock_offset_ms(const struct gw_clock *c);
void gw_clock_set_offset_ms(struct gw_clock *c, int64_t ms);

/* A monotonic clock in microseconds, for measuring durations. */
int64_t gw_clock_mono_us(void);

/* The time of the max_rate gates (core/rc_rate.h): the monotonic clock plus
 * the test offset, so that with [server] test_clock = on a test holds a
 * rate-limited view for as long as it likes (clock moved back) or releases
 * it (moved forward) whatever the machine's speed; without the test clock,
 * the monotonic clock. Borrows c. */
int64_t gw_clock_gate_us(const struct gw_clock *c);

#endif
