/* rc_rate.h - the rate gate of a view with "max_rate": R (PROTOCOL v1.1,
 * "Update rate per view"). Pure: the time (monotonic microseconds) is passed
 * in.
 *
 * A gated view sends at most one message every rc_rate_interval_us(R): a
 * change that comes sooner is held (coalesced with any later ones into one
 * message from what the viewers hold) and goes out when the interval since
 * the last send has passed (the trailing edge), so the viewers end in the
 * true state at most one interval after the last change, plus the time until
 * the fan-out next looks (its tick).
 */
#ifndef RC_RATE_H
#define RC_RATE_H

#include <stdint.h>

#define RC_RATE_MIN 1  /* messages per second */
#define RC_RATE_MAX 50

struct rc_rate_gate {
    unsigned rate;   /* messages per second; 0: no gate */
    int sent;        /* something went out already */
    int64_t last_us; /* when it did */
};

/* The least time between two sends at `rate` per second, rounded up so that
 * no second ever holds more than `rate` sends; 0 when rate is 0. */
int64_t rc_rate_interval_us(unsigned rate);

/* The earliest time a gate may send again: last send + interval (or any time,
 * INT64_MIN, when ungated or nothing was sent yet). */
int64_t rc_rate_next_us(const struct rc_rate_gate *g);

/* 1 when g may send at now_us, else 0 (hold it until rc_rate_next_us). */
int rc_rate_may_send(const struct rc_rate_gate *g, int64_t now_us);

/* Records a send at now_us. */
void rc_rate_sent(struct rc_rate_gate *g, int64_t now_us);

#endif
