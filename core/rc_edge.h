/* rc_edge.h - the leading edge of the fan-out's tick (issue 13). Pure: the
 * time (monotonic microseconds) and the tick count are passed in.
 *
 * The fan-out coalesces a board's changes and sends them on a tick. A change
 * that finds the board quiet (nothing went out for it for at least a tick)
 * need not wait for the tick: it goes out at once, the leading edge. The
 * changes after it within that tick period coalesce as before and go out
 * with a later tick: the tick that closes the period the leading edge went
 * out in passes the board over, so no viewer gets more than one message per
 * tick period from a view, and never two less than a tick apart because of
 * the edge.
 *
 * Tick periods are numbered by the ticks run so far: period n is the time
 * after the n-th tick and up to the (n+1)-th. A board's views also keep
 * their max_rate gate (core/rc_rate.h): the edge only decides when the
 * board is looked at, never lets a gated view send sooner.
 */
#ifndef RC_EDGE_H
#define RC_EDGE_H

#include <stdint.h>

struct rc_edge {
    int sent;             /* the board went out at least once */
    int64_t last_us;      /* when it last did (tick or leading edge) */
    uint64_t edge_period; /* 1 + the tick period of its last leading edge (0: none) */
};

/* 1 when a change at now_us finds the board quiet: it never went out, or
 * last did at least tick_us ago. */
int rc_edge_quiet(const struct rc_edge *e, int64_t now_us, int64_t tick_us);

/* Records that the board went out at its leading edge at now_us, in the
 * period after `ticks` ticks. */
void rc_edge_sent_edge(struct rc_edge *e, int64_t now_us, uint64_t ticks);

/* 1 when the tick that ends the period after `ticks` ticks may look at the
 * board, 0 when the board went out at its leading edge within that period
 * (it waits for the next tick). */
int rc_edge_tick_may_send(const struct rc_edge *e, uint64_t ticks);

/* Records that the tick looked at the board (and sent what it had) at now_us. */
void rc_edge_sent_tick(struct rc_edge *e, int64_t now_us);

#endif
