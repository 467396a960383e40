/* rc_ksmatch.h - whether a board's sorted set was changed outside the
 * scripts: keyspace "zadd" notifications counted against the scripts'
 * change events (docs/gateway.md, "Changes made outside the script").
 * Pure: the fan-out tells it what it heard and when its tick runs.
 *
 * The write script's own ZADD shows as a "zadd" notification just before
 * its change event, on the same connection and in order, and nothing comes
 * between the two (the script runs alone). So in a stream of writes the
 * count of zadds no event matched yet (pending) goes 1, 0, 1, 0, ... and is
 * 0 after every event; a ZADD made outside leaves it at 1 or more for good.
 *
 * A tick may run between the reads of that connection, after a zadd and
 * before its event (the event is in the next read): under load, when the
 * connection has more than one read waiting, at about every other tick. A
 * zadd pending at a tick is therefore no proof by itself: it is one made
 * outside when pending has not been back to 0 by the next tick (the zadd
 * went a whole tick without its event). Counting "pending at two ticks in a
 * row" instead (different zadds each time) takes a busy board's own writes
 * for changes made outside, and then every view read from Redis reads
 * again (issue 26: member lists read Redis per tick at 2,000 writes/s).
 */
#ifndef RC_KSMATCH_H
#define RC_KSMATCH_H

struct rc_ksmatch {
    int pending; /* "zadd"s heard that no change event has matched yet */
    int waited;  /* pending was > 0 at the last tick */
    int cleared; /* pending was back to 0 at some moment since the last tick */
};

/* What a tick learns (rc_ksmatch_tick). */
enum rc_ksmatch_verdict {
    RC_KSMATCH_NONE = 0, /* nothing pending */
    RC_KSMATCH_WAIT,     /* a zadd waits for its event: no verdict before the next tick */
    RC_KSMATCH_OUTSIDE   /* a zadd went a whole tick without its event: made outside the scripts */
};

/* A "zadd" notification on the board's set. */
void rc_ksmatch_zadd(struct rc_ksmatch *k);

/* A script's change event of the board: matches the oldest pending zadd
 * (an event with none pending matches nothing). */
void rc_ksmatch_event(struct rc_ksmatch *k);

/* Everything announced so far is accounted for (a read of the board that
 * reflects it, a resync): nothing pending. */
void rc_ksmatch_clear(struct rc_ksmatch *k);

/* 1 while a zadd waits for its event. */
int rc_ksmatch_pending(const struct rc_ksmatch *k);

/* The tick's verdict. RC_KSMATCH_OUTSIDE also clears what was pending
 * (the caller reads the board again, which reflects it). */
enum rc_ksmatch_verdict rc_ksmatch_tick(struct rc_ksmatch *k);

#endif
