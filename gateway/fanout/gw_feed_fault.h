/* gw_feed_fault.h - test-only faults for feeds (see gw_feed_fault.c): never
 * in force without [server] test_clock = on. */
#ifndef GW_FEED_FAULT_H
#define GW_FEED_FAULT_H

#include <stdint.h>

struct gw_app;

/* 1 when the change event of `board` just received must be thrown away
 * (RANKCAST_TEST_DROP_EVENTS), else 0. Counts it. */
int gw_feed_fault_drop(const struct gw_app *app, const char *board);
/* How long a feed's log read reply is held back (RANKCAST_TEST_FEED_LOG_DELAY_MS), 0: not. */
int64_t gw_feed_fault_delay_ms(const struct gw_app *app);
/* 1 when the feed log read whose reply just came back must be taken for a
 * failed one (RANKCAST_TEST_FAIL_FEED_LOG), else 0. Counts it. */
int gw_feed_fault_fail_log(const struct gw_app *app);

#endif
