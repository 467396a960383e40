/* gw_window.c - the window of rows a read gives (gw_read.h): freeing and
 * copying it, decoding its composite scores, and turning it into encoder rows.
 * Apart from gw_read.c so that both read paths (Redis, store/gw_read.c; the
 * archive, store/gw_archive_read.c) use it without calling each other. */
#include "store/gw_read.h"

#include <stdlib.h>
#include <string.h>

#include "rc_codec.h"
#include "rc_score.h"
#include "store/gw_profile.h"

void gw_window_free(struct gw_window *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n; i++) {
        free(w->rows[i].member);
        gw_profile_unref(w->rows[i].profile);
    }
    free(w->rows);
    free(w);
}

int gw_window_copy(struct gw_window *dst, const struct gw_window *src)
{
    *dst = *src;
    dst->rows = calloc(src->n ? src->n : 1, sizeof *dst->rows);
    if (!dst->rows)
        return -1;
    for (size_t i = 0; i < src->n; i++) {
        dst->rows[i] = src->rows[i];
        dst->rows[i].member = strdup(src->rows[i].member);
        gw_profile_ref(dst->rows[i].profile);
        if (!dst->rows[i].member) {
            dst->n = i + 1;
            return -1;
        }
    }
    return 0;
}

/* Kept for its callers (fan-out); the decoding itself is core/rc_score. */
void gw_decode_score(const struct rc_board *b, double c, double *score, int64_t *fields, unsigned *nfields)
{
    rc_score_decode(&b->layout, b->decay.kind, c, score, fields, nfields);
}

void gw_window_out_rows(const struct gw_window *w, const struct rc_board *b, struct rc_out_row *out,
                        struct rc_field_value *fv)
{
    for (size_t i = 0; i < w->n; i++) {
        const struct gw_row *r = &w->rows[i];
        struct rc_field_value *f = fv + i * RC_MAX_FIELDS;
        for (unsigned k = 0; k < r->nfields; k++) {
            memcpy(f[k].name, b->layout.fields[k].name, sizeof f[k].name);
            f[k].value = r->fields[k];
        }
        out[i] = (struct rc_out_row){
            .rank = w->first_rank + (int64_t)i,
            .member = r->member,
            .score = r->score,
            .fields = r->nfields ? f : NULL,
            .nfields = r->nfields,
            .profile = r->profile ? r->profile->kv : NULL,
            .nprofile = r->profile ? r->profile->n : 0,
            .place = r->place,
            .tied = r->tied,
        };
    }
}
