/* gw_view_fault.h - a test-only lag of the live views (see gw_view_fault.c):
 * never in force without [server] test_clock = on. */
#ifndef GW_VIEW_FAULT_H
#define GW_VIEW_FAULT_H

struct gw_fanout;
struct gw_view;
struct gw_window;

/* What takes a held window back (gw_view.c's update: passed in, so that
 * this file does not call back into the one that calls it). */
typedef void gw_view_fault_update(struct gw_fanout *f, struct gw_view *v, struct gw_window *w);

/* 1 when w, a fresh window of v, is taken to be handed to update later
 * (RANKCAST_TEST_VIEW_HOLD_MS), else 0. */
int gw_view_fault_hold(struct gw_fanout *f, struct gw_view *v, struct gw_window *w, gw_view_fault_update *update);

#endif
