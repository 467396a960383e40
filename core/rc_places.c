/* rc_places.c - shared places of a window (see rc_places.h). */
#include "rc_places.h"

#include <math.h>
#include <stdlib.h>

#include "rc_err.h"

double rc_places_unit(const struct rc_board *b)
{
    if (b->decay.kind != RC_DECAY_NONE)
        return 0;
    return ldexp(1.0, (int)b->layout.tb_bits);
}

double rc_places_key(double unit, double c)
{
    return unit > 0 ? floor(c / unit) : c;
}

void rc_places_fill(double unit, const double *c, size_t n, int64_t first_rank, int64_t above, int next_tied,
                    int64_t *place, unsigned char *tied)
{
    size_t i = 0;
    while (i < n) {
        double k = rc_places_key(unit, c[i]);
        size_t j = i + 1;
        while (j < n && rc_places_key(unit, c[j]) == k)
            j++;
        /* rows i..j-1 share key k */
        int64_t p = i == 0 ? above + 1 : first_rank + (int64_t)i;
        int others = j - i > 1 || (i == 0 && above < first_rank - 1) || (j == n && next_tied);
        for (size_t r = i; r < j; r++) {
            place[r] = p;
            tied[r] = (unsigned char)(others != 0);
        }
        i = j;
    }
}

int rc_places_mirror(const struct rc_mirror *m, double unit, size_t offset, size_t n, int64_t *place,
                     unsigned char *tied)
{
    if (!m->exact || offset + n > m->len)
        return RC_E_UNAVAILABLE;
    size_t end = offset + n;
    int next_tied = 0;
    if (n && end < m->len)
        next_tied = rc_places_key(unit, m->rows[end].c) == rc_places_key(unit, m->rows[end - 1].c);
    else if (n && (int64_t)end < m->total)
        return RC_E_UNAVAILABLE; /* the row after the window is not held */
    size_t top = offset;
    if (n) {
        double k = rc_places_key(unit, m->rows[offset].c);
        while (top > 0 && rc_places_key(unit, m->rows[top - 1].c) == k)
            top--;
    }
    double *c = malloc((n ? n : 1) * sizeof *c);
    if (!c)
        return RC_E_INTERNAL;
    for (size_t i = 0; i < n; i++)
        c[i] = m->rows[offset + i].c;
    rc_places_fill(unit, c, n, (int64_t)offset + 1, (int64_t)top, next_tied, place, tied);
    free(c);
    return 0;
}
