/* rc_ackbatch.h - sharing WAITs between writes (ack_replicas).
 *
 * WAIT n ms on a Redis connection blocks that client until n replicas have
 * every write the client sent before it, or ms pass, and answers how many
 * did. One WAIT therefore acknowledges all earlier writes of its connection,
 * and a second WAIT behind it only waits in turn (Redis runs a blocked
 * client's next commands after it unblocks). So a connection has at most one
 * WAIT in flight: a write sent before it joins its batch, a write sent after
 * it waits here ("pending") and the next WAIT, sent when the one in flight
 * answers, covers them all. Every write in a batch gets that batch's WAIT
 * answer, never a later one's.
 *
 * Pure bookkeeping (no I/O, time passed in): the caller sends the WAIT with
 * the parameters rc_ackbatch_start gives, and answers the items it returns.
 */
#ifndef RC_ACKBATCH_H
#define RC_ACKBATCH_H

#include <stdint.h>

struct rc_ackbatch_item {
    struct rc_ackbatch_item *next;
    int replicas;       /* asked for (>= 1) */
    int64_t timeout_ms; /* WAIT's timeout for it (>= 0) */
};

struct rc_ackbatch {
    struct rc_ackbatch_item *pending, **tail;   /* answered writes, no WAIT yet, in order */
    struct rc_ackbatch_item *inflight, **itail; /* the writes the WAIT in flight covers */
    int busy;                                   /* a WAIT is in flight */
    int wait_replicas;                          /* what it asks */
    int64_t wait_timeout_ms;
    uint64_t busy_until; /* when it times out at the latest (ms) */
    uint64_t sent;       /* writes sent on the connection so far (rc_ackbatch_sent) */
    uint64_t wait_seq;   /* the WAIT in flight was sent after write number wait_seq */
};

void rc_ackbatch_init(struct rc_ackbatch *b);

/* A write that will want a WAIT is sent on the connection: its number,
 * to give rc_ackbatch_add with its answer. */
uint64_t rc_ackbatch_sent(struct rc_ackbatch *b);

/* The write numbered seq was answered. Sent before the WAIT in flight (its
 * answer came first, Redis runs a connection's commands in order), it is
 * covered by that WAIT (when it asks no more than the WAIT does): it joins
 * that batch. Else it waits for the next WAIT. Returns 1 when no WAIT is in
 * flight (call rc_ackbatch_start now), 0 otherwise. */
int rc_ackbatch_add(struct rc_ackbatch *b, struct rc_ackbatch_item *item, uint64_t seq);

/* Makes every pending item the batch of a new WAIT in flight and returns 1:
 * send WAIT *replicas *timeout_ms, the largest of the batch's (a count of
 * replicas is true whatever each asked). 0 (nothing changed) when none is
 * pending or a WAIT is in flight already. */
int rc_ackbatch_start(struct rc_ackbatch *b, uint64_t now_ms, int *replicas, int64_t *timeout_ms);

/* The WAIT in flight answered, or could not be sent: none in flight now.
 * Returns its batch (in order), each to be answered with that answer. */
struct rc_ackbatch_item *rc_ackbatch_done(struct rc_ackbatch *b);

/* The connection is gone: nothing can cover the pending items any more.
 * Returns them (in order) and empties the pending list. */
struct rc_ackbatch_item *rc_ackbatch_take_pending(struct rc_ackbatch *b);

/* How much later than usual a reply sent on the connection at now_ms may
 * come because the WAIT in flight blocks it: 0 when none is in flight. */
uint64_t rc_ackbatch_delay(const struct rc_ackbatch *b, uint64_t now_ms);

#endif
