/* rc_feedgap.h - what a feed viewer of a board (not sharded: see rc_shard.h
 * for those) does with a change event, and how a gap is filled. A feed never
 * skips a seq without a `reset` snapshot: an event past the viewer's next
 * seq means one was lost on the way (a publish lost in a failover, a
 * subscribe that came after a write), and the viewer is filled from the
 * board's change log before that event goes out (docs/gateway.md, "Feed
 * gaps"). Pure.
 */
#ifndef RC_FEEDGAP_H
#define RC_FEEDGAP_H

#include <stddef.h>
#include <stdint.h>

enum rc_feedgap_step {
    RC_FEEDGAP_SKIP,    /* already given (seq <= cursor, same history) */
    RC_FEEDGAP_DELIVER, /* the next seq (or a reset event): send it */
    RC_FEEDGAP_BEGIN,   /* the first event of the history that began on the board the viewer holds
                           (epoch ""): send it naming its epoch */
    RC_FEEDGAP_OVER,    /* a history other than the viewer's: a reset snapshot, then the event */
    RC_FEEDGAP_FILL     /* seqs were skipped: hold it (and what follows), fill from the log first */
};

/* The step for an event (seq, ev_epoch: the epoch it names, "" when it names
 * none; is_reset: an admin reset's event) reaching a viewer that was last
 * given `cursor` in history held_epoch. */
enum rc_feedgap_step rc_feedgap_step(int64_t cursor, const char *held_epoch, int64_t seq, const char *ev_epoch,
                                     int is_reset);

enum rc_feedgap_fill {
    RC_FEEDGAP_REPLAY,  /* the log continues the viewer's history from cursor + 1: replay it, no snapshot */
    RC_FEEDGAP_RESET    /* it does not (trimmed past the gap, another history): a reset snapshot */
};

/* How to fill a viewer at `cursor` in held_epoch from a log read: the board
 * at log_seq in log_epoch, its oldest kept event first_seq (n events kept)
 * naming first_epoch ("" when it names none). */
enum rc_feedgap_fill rc_feedgap_fill(int64_t cursor, const char *held_epoch, int64_t log_seq, const char *log_epoch,
                                     size_t n, int64_t first_seq, const char *first_epoch);

/* 1 when a board's feeds are due their check against the log: an event
 * reached them (due) and none since for quiet_us (heard_us: the last's
 * time; now_us: the clock, same base). A lost event that was the board's
 * last shows no gap; this is how a quiet board notices it. */
int rc_feedgap_quiet_due(int due, int64_t heard_us, int64_t now_us, int64_t quiet_us);

#endif
