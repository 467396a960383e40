/* gw_fault.h - test-only faults that break the gateway's promises on
 * purpose, so that the chaos checker (tests/chaos/checker.js) is shown to
 * catch each broken promise (tests/chaos/selftest.test.js). Like
 * fanout/gw_feed_fault.h: read from the environment only when [server]
 * test_clock = on (a setting for tests, never on in production), logged as
 * a warning when in force; without it every call answers 0. */
#ifndef GW_FAULT_H
#define GW_FAULT_H

/* 1 when this write (counted per process) is to be acked at once with a
 * made-up result and its script never run (RANKCAST_TEST_ACK_EARLY=K: every
 * Kth write): an ack sent before, and without, the script's reply. */
int gw_fault_ack_early(int test_clock);
/* 1 when this delta (one with rows, counted per process) is to lose its first
 * row (RANKCAST_TEST_DROP_DELTA_ROW=K: every Kth). */
int gw_fault_drop_delta_row(int test_clock);
/* 1 when feeds forward an event past a gap instead of filling it from the
 * change log first (RANKCAST_TEST_NO_GAP_FILL=1: the old, wrong rule). */
int gw_fault_no_gap_fill(int test_clock);
/* ms by which the reply of each view's window read is held before it is
 * used (RANKCAST_TEST_SLOW_VIEW_READ=MS): a read stays out long enough for
 * a test to change what it read on purpose (tests/e2e/roster_race.test.js);
 * 0 when not in force. Breaks no promise by itself. */
long gw_fault_slow_view_read_ms(int test_clock);
/* 1 for the Nth window read of this process only (1-based, counted when
 * its reply comes back; RANKCAST_TEST_FAIL_VIEW_READ=N): its reply is taken
 * for "Redis unreachable", as when the slot's primary is paused while the
 * read is out. Breaks no promise by itself. */
int gw_fault_fail_view_read(int test_clock);
/* ms each tick of the fan-out takes at least, the loop held meanwhile
 * (RANKCAST_TEST_SLOW_TICK_MS=MS): the long loop turns of a gateway busy
 * with thousands of views, for tests/e2e/redis_backlog.test.js; 0 when not
 * in force. Breaks no promise by itself. */
long gw_fault_slow_tick_ms(int test_clock);
/* Calls fn(a, b, c) on loop ms from now (for the slow reads above); -1 when
 * it cannot (out of memory): then call it at once. */
int gw_fault_later(void *loop, long ms, void (*fn)(void *, void *, int), void *a, void *b, int c);

#endif
