/* gw_members.h - the member lists' builds one loop turn makes (gw_members.c):
 * at most [server] list_builds_per_turn; the lists past it wait their turn
 * in a queue, oldest first, that an idle handle works through in the next
 * turns, with the loop's I/O (the writers' requests among it) read between.
 * Part of struct gw_fanout (fanout/gw_fanout_int.h). */
#ifndef GW_MEMBERS_H
#define GW_MEMBERS_H

#include <uv.h>

struct gw_fanout;
struct gw_view;

struct gw_members_turn {
    uv_idle_t idle;
    int on;                      /* idle is open: builds past the turn's share wait */
    unsigned left;               /* builds this turn may still make (renewed after each turn's I/O) */
    struct gw_view *head, *tail; /* lists waiting, oldest first; each holds a reference on its view */
};

/* The next loop turn's share of builds (after each turn's I/O:
 * gw_fanout_tick_edge), and the idle handle started when lists wait. */
void gw_members_kick(struct gw_fanout *f);

struct gw_window;

/* The window w that member list v just read, to show: when v keeps a copy
 * of it to build from (its base, taken from w by gw_reads_track), a window
 * of the same rows borrowing from that copy (w freed), so that the list's
 * next window is diffed from it by row, not by name; else w. */
struct gw_window *gw_members_as_base(struct gw_view *v, struct gw_window *w);

#endif
