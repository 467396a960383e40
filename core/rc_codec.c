/* rc_codec.c - exact score <-> composite conversion (layout in rc_layout.h).
 *
 * All arithmetic is on 64-bit integers; a double is produced or consumed only
 * at the edges, and only for integers within 2^53, where the conversion is
 * exact. Nothing is clamped: values outside the layout are RC_E_OUT_OF_RANGE.
 */
#include "rc_codec.h"

#include <inttypes.h>
#include <math.h>

static uint64_t slot_max(const struct rc_layout *l)
{
    return l->tb_bits ? (((uint64_t)1 << l->tb_bits) - 1) : 0;
}

/* Whether earlier time slots must produce larger composites. On a desc board
 * larger ranks higher, so "earliest" flips the slot; on asc boards the reverse. */
static int slot_reversed(const struct rc_layout *l)
{
    int earliest = l->tiebreak == RC_TB_EARLIEST || l->tiebreak == RC_TB_ARRIVAL;
    return l->order == RC_ORDER_DESC ? earliest : !earliest;
}

int rc_codec_tb_slot(const struct rc_layout *l, int64_t base_ms, int64_t now_ms, uint64_t *slot)
{
    *slot = 0;
    if (l->tiebreak == RC_TB_NONE || l->tiebreak == RC_TB_ARRIVAL)
        return 0; /* arrival: lua/write.lua counts the slot, time plays no part */
    if (now_ms < base_ms || now_ms - base_ms >= l->tb_horizon_ms)
        return RC_E_OUT_OF_RANGE;
    uint64_t s = (uint64_t)((now_ms - base_ms) / l->tb_resolution_ms);
    if (s > slot_max(l))
        return RC_E_OUT_OF_RANGE;
    *slot = slot_reversed(l) ? slot_max(l) - s : s;
    return 0;
}

int64_t rc_codec_tb_slot_time(const struct rc_layout *l, int64_t base_ms, uint64_t slot)
{
    if (l->tiebreak == RC_TB_NONE || l->tiebreak == RC_TB_ARRIVAL)
        return base_ms; /* an arrival slot stands for no instant */
    uint64_t s = slot_reversed(l) ? slot_max(l) - slot : slot;
    return base_ms + (int64_t)s * l->tb_resolution_ms;
}

int rc_codec_encode_points(const struct rc_layout *l, int64_t points, uint64_t slot, double *composite,
                     struct rc_error *err)
{
    if (points < l->points_min || points > l->points_max)
        return rc_err_set(err, RC_E_OUT_OF_RANGE,
                            "score %" PRId64 " is outside this board's range %" PRId64 "..%" PRId64,
                            points, l->points_min, l->points_max);
    if (slot > slot_max(l))
        return rc_err_set(err, RC_E_OUT_OF_RANGE, "tie-break slot outside the horizon");
    int64_t v = points * ((int64_t)1 << l->tb_bits) + (int64_t)slot;
    *composite = (double)v;
    return 0;
}

/* Converts a stored double back to an integer when it is one within 2^53. */
static int composite_int(double composite, int64_t *v)
{
    if (!isfinite(composite) || composite != floor(composite) || fabs(composite) > (double)RC_SAFE_INT_MAX)
        return RC_E_OUT_OF_RANGE;
    *v = (int64_t)composite;
    return 0;
}

int rc_codec_decode_points(const struct rc_layout *l, double composite, int64_t *points, uint64_t *slot)
{
    int64_t v;
    if (composite_int(composite, &v))
        return RC_E_OUT_OF_RANGE;
    int64_t scale = (int64_t)1 << l->tb_bits;
    /* floor division: -1 with a 4-bit slot is points -1, slot 15 */
    int64_t p = v >= 0 ? v / scale : -((-v + scale - 1) / scale);
    *points = p;
    *slot = (uint64_t)(v - p * scale);
    if (p < l->points_min || p > l->points_max)
        return RC_E_OUT_OF_RANGE;
    return 0;
}

int rc_codec_encode_fields(const struct rc_layout *l, const int64_t *values, uint64_t slot,
                     double *composite, struct rc_error *err)
{
    uint64_t acc = 0;
    for (unsigned i = 0; i < l->nfields; i++) {
        const struct rc_field_spec *f = &l->fields[i];
        int64_t max = (int64_t)(((uint64_t)1 << f->bits) - 1);
        if (values[i] < 0 || values[i] > max)
            return rc_err_set(err, RC_E_OUT_OF_RANGE, "field %s must be 0..%" PRId64 ", got %" PRId64,
                                f->name, max, values[i]);
        /* Higher composite ranks first; an ascending field stores its complement. */
        uint64_t enc = (uint64_t)(f->ascending ? max - values[i] : values[i]);
        acc = (acc << f->bits) | enc;
    }
    if (slot > slot_max(l))
        return rc_err_set(err, RC_E_OUT_OF_RANGE, "tie-break slot outside the horizon");
    acc = (acc << l->tb_bits) | slot;
    *composite = (double)acc;
    return 0;
}

int rc_codec_decode_fields(const struct rc_layout *l, double composite, int64_t *values, uint64_t *slot)
{
    int64_t v;
    if (composite_int(composite, &v) || v < 0)
        return RC_E_OUT_OF_RANGE;
    uint64_t acc = (uint64_t)v;
    *slot = acc & slot_max(l);
    acc >>= l->tb_bits;
    for (unsigned k = l->nfields; k-- > 0;) {
        const struct rc_field_spec *f = &l->fields[k];
        uint64_t max = ((uint64_t)1 << f->bits) - 1;
        uint64_t enc = acc & max;
        values[k] = (int64_t)(f->ascending ? max - enc : enc);
        acc >>= f->bits;
    }
    return acc ? RC_E_OUT_OF_RANGE : 0;
}

int rc_codec_composite_cmp(const struct rc_layout *l, double a, double b)
{
    if (a == b)
        return 0;
    int a_higher = a > b;
    if (l->order == RC_ORDER_DESC)
        return a_higher ? -1 : 1;
    return a_higher ? 1 : -1;
}
