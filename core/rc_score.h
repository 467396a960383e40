/* rc_score.h - what a viewer is shown for a stored composite: the score (and
 * the fields of a multi-field board) decoded from the exact layout
 * (rc_codec.h). Pure; shared by every read path. */
#ifndef RC_SCORE_H
#define RC_SCORE_H

#include <stdint.h>

#include "rc_layout.h"

/* Decodes composite c of a board with layout l and decay kind decay:
 *  - multi-field: fields[0..l->nfields) and *nfields = l->nfields, *score =
 *    fields[0]; a value that does not decode (written out of band) is shown
 *    as stored (*score = c, *nfields = 0) and RC_E_BAD_REQUEST is returned;
 *  - decayed boards and boards without tie-break bits: *score = c;
 *  - otherwise the points, without the tie-break slot (floor-decoded).
 * fields needs room for RC_MAX_FIELDS. Returns 0 or RC_E_BAD_REQUEST. */
int rc_score_decode(const struct rc_layout *l, enum rc_decay decay, double c, double *score, int64_t *fields,
                    unsigned *nfields);

#endif
