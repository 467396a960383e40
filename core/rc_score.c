/* rc_score.c - a stored composite to the score a viewer sees (rc_score.h). */
#include "rc_score.h"

#include "rc_codec.h"
#include "rc_err.h"

int rc_score_decode(const struct rc_layout *l, enum rc_decay decay, double c, double *score, int64_t *fields,
                    unsigned *nfields)
{
    uint64_t slot;
    *nfields = 0;
    if (l->nfields) {
        if (rc_codec_decode_fields(l, c, fields, &slot) != 0) {
            *score = c; /* written out of band: show what is stored */
            return RC_E_BAD_REQUEST;
        }
        *nfields = l->nfields;
        *score = (double)fields[0];
        return 0;
    }
    if (decay != RC_DECAY_NONE || l->tb_bits == 0) {
        *score = c; /* no packing: the stored score is the score */
        return 0;
    }
    int64_t pts;
    rc_codec_decode_points(l, c, &pts, &slot);
    *score = (double)pts; /* floor-decoded even when out of range */
    return 0;
}
