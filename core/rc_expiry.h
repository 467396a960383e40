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
int rc_period_ttl_ms(const struct rc_board *b, const struct rc_period *p, int64_t now_ms, int64_t *ttl_ms,
                     struct rc_error *err);

#endif
