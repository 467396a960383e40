/* rc_codec.h - exact encode/decode of scores to and from the composite double.
 * See rc_layout.h for the layout. No function here clamps: a value outside the
 * layout is reported as RC_E_OUT_OF_RANGE. */
#ifndef RC_CODEC_H
#define RC_CODEC_H

#include <stdint.h>

#include "rc_layout.h"

/* The tie-break slot for a write at now_ms on a board whose slot 0 starts at
 * base_ms (the period start for periodic boards, tb_base_ms otherwise).
 * earliest: on a desc board an earlier slot must rank higher, so the slot is
 * stored reversed (max - s); latest the other way round; asc boards mirror it.
 * none: always 0. arrival: 0 here (the write script takes the value's next
 * arrival index in Redis, see lua/write.lua). RC_E_OUT_OF_RANGE when now_ms is outside the horizon. */
int rc_codec_tb_slot(const struct rc_layout *l, int64_t base_ms, int64_t now_ms, uint64_t *slot);

/* points + slot -> composite. RC_E_OUT_OF_RANGE outside points_min..max. */
int rc_codec_encode_points(const struct rc_layout *l, int64_t points, uint64_t slot, double *composite,
                     struct rc_error *err);

/* composite -> points + slot. RC_E_OUT_OF_RANGE when composite is not an
 * integer a board of this layout could hold (e.g. written out of band). */
int rc_codec_decode_points(const struct rc_layout *l, double composite, int64_t *points, uint64_t *slot);

/* Multi-field values (in declared order) + slot -> composite. */
int rc_codec_encode_fields(const struct rc_layout *l, const int64_t *values, uint64_t slot,
                     double *composite, struct rc_error *err);
int rc_codec_decode_fields(const struct rc_layout *l, double composite, int64_t *values, uint64_t *slot);

/* The instant (ms) a slot stands for, the inverse of rc_codec_tb_slot at resolution
 * granularity: base_ms + s * resolution. */
int64_t rc_codec_tb_slot_time(const struct rc_layout *l, int64_t base_ms, uint64_t slot);

/* <0 when composite a ranks before b on this board, >0 after, 0 equal. */
int rc_codec_composite_cmp(const struct rc_layout *l, double a, double b);

#endif
