/* rc_expiry.h - how long a period's keys live: a finished period stays
 * readable for `keep` more periods (DESIGN.md, Periodic boards). */
#ifndef RC_EXPIRY_H
#define RC_EXPIRY_H

#include <stdint.h>

#include "rc_layout.h"
#include "rc_period.h"

/* Milliseconds from now_ms until the end of the period `b->keep` periods
 * after p (at least 1), or 0 for all-time boards. Returns 0, or
 * RC_E_OUT_OF_RANGE (err filled) past the supported calendar. */
int rc_expiry_period_ttl_ms(const struct rc_board *b, const struct rc_period *p, int64_t now_ms, int64_t *ttl_ms,
                     struct rc_error *err);

/* The archive's walk over the finished periods of board b (docs/periods.md,
 * "Missed periods"). At now_ms the periods that are over (for grace_ms) and
 * may still hold data in Redis are the b->keep periods before the one
 * containing now_ms - grace_ms. *next is where the walk stands (has_next 0:
 * not started); it is moved to the oldest of those periods when it lies
 * outside them (a first start, the clock moved back, or every gateway down
 * for longer than keep periods). Returns 1 when *next is over and due, 0 when
 * the walk is caught up (*next is not over yet), or RC_E_OUT_OF_RANGE past
 * the supported calendar. */
int rc_expiry_archive_walk(const struct rc_board *b, int64_t now_ms, int64_t grace_ms, int has_next, struct rc_period *next);

/* 1 when the keys of period p (of board b) still live at now_ms: p ended
 * fewer than b->keep periods ago (or has not ended); else 0. */
int rc_expiry_period_kept(const struct rc_board *b, const struct rc_period *p, int64_t now_ms);

#endif
