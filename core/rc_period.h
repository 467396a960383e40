/* rc_period.h - period ids and boundaries for periodic boards.
 *
 * Pure calendar arithmetic: time is always passed in as milliseconds since the
 * Unix epoch (UTC). A period spec carries a fixed UTC offset that decides where
 * local days (and so weeks, months, years) start.
 *
 * Period ids (the P in key tag {B|P}) are:
 *   hour   "2026-11-21T13"   (local hour)
 *   day    "2026-11-21"
 *   week   "2026-W47"        (ISO 8601: Monday first, week-year aware)
 *   month  "2026-11"
 *   year   "2026"
 *   custom decimal period index, floor((t - base) / length), e.g. "42" or "-1"
 *   none   ""                (all-time boards)
 */
#ifndef RC_PERIOD_H
#define RC_PERIOD_H

#include <stdint.h>

enum rc_period_kind {
    RC_PERIOD_NONE = 0,
    RC_PERIOD_HOUR,
    RC_PERIOD_DAY,
    RC_PERIOD_WEEK,
    RC_PERIOD_MONTH,
    RC_PERIOD_YEAR,
    RC_PERIOD_CUSTOM
};

struct rc_period_spec {
    enum rc_period_kind kind;
    int32_t utc_offset_s; /* -14h..+14h; ignored by CUSTOM */
    int64_t base_ms;      /* CUSTOM only: start of period index 0 */
    int64_t length_ms;    /* CUSTOM only: > 0 */
};

#define RC_PERIOD_ID_MAX 24 /* including the NUL */

struct rc_period {
    int64_t start_ms;            /* first instant inside the period (UTC ms) */
    int64_t end_ms;              /* first instant after it */
    char id[RC_PERIOD_ID_MAX];   /* canonical id, see above */
};

/* The period containing instant t_ms. Returns 0, or RC_E_OUT_OF_RANGE when the
 * date falls outside years 1..9999 (or index overflow for CUSTOM). */
int rc_period_at(const struct rc_period_spec *spec, int64_t t_ms, struct rc_period *out);

/* The period just before / after p (p must come from this spec). */
int rc_period_prev(const struct rc_period_spec *spec, const struct rc_period *p, struct rc_period *out);
int rc_period_next(const struct rc_period_spec *spec, const struct rc_period *p, struct rc_period *out);

/* Parses an explicit id of this spec's kind into its period. Rejects (with
 * RC_E_BAD_REQUEST) ids of another kind, non-canonical forms ("2026-1-5"),
 * impossible dates ("2026-02-30") and weeks the year does not have
 * ("2021-W53"). */
int rc_period_parse(const struct rc_period_spec *spec, const char *id, struct rc_period *out);

/* Resolves a client's period selector: NULL or "" or "current" -> the period at
 * now_ms; "previous" -> the one before it; anything else -> rc_period_parse. */
int rc_period_select(const struct rc_period_spec *spec, const char *selector, int64_t now_ms,
                     struct rc_period *out);

/* The longest any period of this spec can last (month: 31 days, year: 366
 * days, custom: length). 0 for NONE. Used as the default tie-break horizon. */
int64_t rc_period_max_length_ms(const struct rc_period_spec *spec);

/* "hour", "day", ... -> kind; returns 0 or RC_E_BAD_REQUEST. "none" is NONE. */
int rc_period_kind_parse(const char *name, enum rc_period_kind *out);
const char *rc_period_kind_name(enum rc_period_kind kind);

/* Civil-date helpers, exposed for the config parser and tests.
 * days_from_civil: proleptic Gregorian date -> days since 1970-01-01. */
int64_t rc_period_days_from_civil(int64_t y, unsigned m, unsigned d);
void rc_period_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

#endif
