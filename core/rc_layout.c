/* rc_layout.c - checks that a board's score layout fits a double exactly.
 *
 * A Redis score is a double; integers are exact up to 2^53. We keep every
 * composite within the JavaScript safe range, |x| <= 2^53 - 1, so what Redis
 * stores, what the gateway decodes and what a browser reads are the same
 * integer. A layout that cannot promise that is refused at load time.
 */
#include "rc_layout.h"

#include <inttypes.h>
#include <stdio.h>

unsigned rc_layout_bits_for(uint64_t n)
{
    unsigned b = 0;
    while (b < 64 && ((uint64_t)1 << b) < n)
        b++;
    return b;
}

static const char *fmt_span(int64_t ms, char *buf, size_t cap)
{
    static const struct { int64_t ms; const char *unit; } units[] = {
        {7LL * 86400000, "w"}, {86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}, {1, "ms"}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (ms % units[i].ms == 0) {
            snprintf(buf, cap, "%" PRId64 "%s", ms / units[i].ms, units[i].unit);
            return buf;
        }
    }
    snprintf(buf, cap, "%" PRId64 "ms", ms);
    return buf;
}

static int finish_tiebreak(struct rc_layout *l, struct rc_error *err)
{
    l->tb_bits = 0;
    if (l->tiebreak == RC_TB_NONE)
        return 0;
    if (l->tiebreak == RC_TB_ARRIVAL) {
        /* counted, not timed: no resolution, no horizon */
        if (l->tb_arrival_bits < 1 || l->tb_arrival_bits >= RC_COMPOSITE_BITS)
            return rc_err_set(err, RC_E_BAD_REQUEST, "tiebreak_bits must be 1..52, got %u",
                                l->tb_arrival_bits);
        if (l->nfields)
            return rc_err_set(err, RC_E_BAD_REQUEST,
                                "tiebreak = arrival applies only to single-field boards (the arrival "
                                "counters are kept per points value)");
        l->tb_bits = l->tb_arrival_bits;
        return 0;
    }
    if (l->tb_resolution_ms <= 0)
        return rc_err_set(err, RC_E_BAD_REQUEST, "tiebreak_resolution must be positive");
    if (l->tb_horizon_ms <= 0)
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "tie-break needs a horizon: set tiebreak_horizon (and tiebreak_base) "
                            "or a period, or tiebreak = none");
    uint64_t slots = (uint64_t)((l->tb_horizon_ms + l->tb_resolution_ms - 1) / l->tb_resolution_ms);
    l->tb_bits = rc_layout_bits_for(slots);
    if (l->tb_bits >= RC_COMPOSITE_BITS) {
        char r[32], h[32];
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "score layout does not fit in 53 bits: the tie-break alone needs %u bits "
                            "(%s resolution over %s)",
                            l->tb_bits, fmt_span(l->tb_resolution_ms, r, sizeof r),
                            fmt_span(l->tb_horizon_ms, h, sizeof h));
    }
    return 0;
}

static int finish_fields(struct rc_layout *l, int has_min, int has_max, struct rc_error *err)
{
    char r[32], h[32];
    if (has_min || has_max)
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "points_min/points_max do not apply to multi-field boards (fields set bits)");
    if (l->order != RC_ORDER_DESC)
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "multi-field boards rank by their fields' directions: leave order = desc");
    l->field_bits = 0;
    for (unsigned i = 0; i < l->nfields; i++) {
        if (l->fields[i].bits < 1 || l->fields[i].bits > 52)
            return rc_err_set(err, RC_E_BAD_REQUEST, "field %s: bits must be 1..52",
                                l->fields[i].name);
        l->field_bits += l->fields[i].bits;
    }
    if (l->field_bits + l->tb_bits > RC_COMPOSITE_BITS) {
        if (l->tb_bits)
            return rc_err_set(err, RC_E_BAD_REQUEST,
                                "score layout does not fit in 53 bits: fields need %u bits and the "
                                "tie-break %u bits (%s resolution over %s)",
                                l->field_bits, l->tb_bits, fmt_span(l->tb_resolution_ms, r, sizeof r),
                                fmt_span(l->tb_horizon_ms, h, sizeof h));
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "score layout does not fit in 53 bits: fields need %u bits", l->field_bits);
    }
    /* A full 53-bit unsigned composite would reach 2^53 - 1 exactly: still safe. */
    return 0;
}

int rc_layout_finish(struct rc_layout *l, int has_min, int has_max, struct rc_error *err)
{
    int rc = finish_tiebreak(l, err);
    if (rc)
        return rc;
    if (l->nfields > RC_MAX_FIELDS)
        return rc_err_set(err, RC_E_BAD_REQUEST, "at most %d fields", RC_MAX_FIELDS);
    if (l->nfields)
        return finish_fields(l, has_min, has_max, err);

    l->field_bits = 0;
    /* |points| <= 2^(53-T) - 1 keeps points * 2^T + (2^T - 1) <= 2^53 - 1. */
    int64_t lim = (int64_t)(((uint64_t)1 << (RC_COMPOSITE_BITS - l->tb_bits)) - 1);
    if (!has_max)
        l->points_max = lim;
    if (!has_min)
        l->points_min = -lim;
    if (l->points_min > l->points_max)
        return rc_err_set(err, RC_E_BAD_REQUEST, "points_min %" PRId64 " exceeds points_max %" PRId64,
                            l->points_min, l->points_max);
    if (l->points_max > lim || l->points_min < -lim) {
        char r[32], h[32];
        if (l->tiebreak == RC_TB_ARRIVAL)
            return rc_err_set(err, RC_E_BAD_REQUEST,
                                "score layout does not fit in 53 bits: with a %u-bit arrival tie-break "
                                "(tiebreak_bits) points must stay within -%" PRId64 "..%" PRId64
                                ", but %" PRId64 "..%" PRId64 " was asked",
                                l->tb_bits, lim, lim, l->points_min, l->points_max);
        if (l->tb_bits)
            return rc_err_set(err, RC_E_BAD_REQUEST,
                                "score layout does not fit in 53 bits: with a %u-bit tie-break "
                                "(%s resolution over %s) points must stay within -%" PRId64
                                "..%" PRId64 ", but %" PRId64 "..%" PRId64 " was asked",
                                l->tb_bits, fmt_span(l->tb_resolution_ms, r, sizeof r),
                                fmt_span(l->tb_horizon_ms, h, sizeof h), lim, lim, l->points_min,
                                l->points_max);
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "score layout does not fit in 53 bits: points must stay within -%" PRId64
                            "..%" PRId64 ", but %" PRId64 "..%" PRId64 " was asked",
                            lim, lim, l->points_min, l->points_max);
    }
    return 0;
}
