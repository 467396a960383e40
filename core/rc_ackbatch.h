/* rc_ackbatch.h - sharing WAITs between writes (ack_replicas).
 *
 * WAIT n ms on a Redis connection blocks that client until n replicas have
 * every write the client sent before it, or ms pass, and answers how many
 * did. One WAIT therefore acknowledges all earlier writes of its connection,
 * and a second WAIT behind it only waits in turn (Redis runs a blocked
 * client's next commands after it unblocks). So a connection has at most one
 * WAIT in flight: writes answered meanwhile wait here ("pending") and the
 * next WAIT, sent when the one in flight answers, covers them all. Every
 * write in a batch gets that batch's WAIT answer, never a later one's.
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
    struct rc_ackbatch_item *pending, **tail; /* answered writes, no WAIT yet, in order */
    int busy;                                 /* a WAIT is in flight */
    uint64_t busy_until;                      /* when that WAIT times out at the latest (ms) */
};

void rc_ackbatch_init(struct rc_ackbatch *b);

/* A write was answered: item waits for a WAIT. Returns 1 when no WAIT is in
 * flight (call rc_ackbatch_start now), 0 when the one in flight answers
 * first (then rc_ackbatch_done, and start again). */
int rc_ackbatch_add(struct rc_ackbatch *b, struct rc_ackbatch_item *item);

/* Takes every pending item as one batch (in order, the list returned) and
 * marks a WAIT in flight: send WAIT *replicas *timeout_ms, the largest of
 * the batch's (a count of replicas is true whatever each asked). NULL (and
 * nothing marked) when none is pending or a WAIT is in flight already. */
struct rc_ackbatch_item *rc_ackbatch_start(struct rc_ackbatch *b, uint64_t now_ms, int *replicas,
                                           int64_t *timeout_ms);

/* The WAIT in flight answered, or could not be sent: none in flight now.
 * Returns 1 when items are pending (start the next WAIT). */
int rc_ackbatch_done(struct rc_ackbatch *b);

/* The connection is gone: nothing can cover the pending items any more.
 * Returns them (in order) and empties b; a WAIT in flight stays marked
 * until rc_ackbatch_done. */
struct rc_ackbatch_item *rc_ackbatch_take_pending(struct rc_ackbatch *b);

/* How much later than usual a reply sent on the connection at now_ms may
 * come because the WAIT in flight blocks it: 0 when none is in flight. */
uint64_t rc_ackbatch_delay(const struct rc_ackbatch *b, uint64_t now_ms);

#endif
