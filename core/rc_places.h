/* rc_places.h - shared places (docs/protocol.md, "Shared places"): the
 * competition rank (1, 2, 2, 4) of each row of a window, where members with
 * equal points share a place, and whether a row shares it ("tied").
 *
 * Equal points means equal composites once the tie-break slot is dropped
 * (docs/score-layout.md: composite = points * 2^T + slot), so on multi-field
 * boards equal fields; on decaying boards (weighted sums, maybe fractional)
 * equal scores. That "tie key" is floor(c / unit) with unit = 2^T, or c
 * itself when unit is 0.
 *
 * A row's place is 1 + the members with a strictly better key. A window
 * needs two facts from outside itself: how many members rank strictly better
 * than its first row's key ("above": a window that starts inside a tie shows
 * the tie's first place), and whether the member right after its last row
 * shares that row's key ("tied" across the window's end). Redis answers both
 * with one ZCOUNT and one row (lua/read.lua); the mirror, which holds the top
 * rows from rank 1, answers them itself (rc_places_mirror).
 *
 * Pure: no I/O.
 */
#ifndef RC_PLACES_H
#define RC_PLACES_H

#include <stddef.h>
#include <stdint.h>

#include "rc_layout.h"
#include "rc_mirror.h"

/* The unit ties are judged in for board b: 2^T, or 0 on decaying boards
 * (equal score). */
double rc_places_unit(const struct rc_board *b);

/* The tie key of composite c under unit (see above). */
double rc_places_key(double unit, double c);

/* Fills place[0..n) and tied[0..n) for the window of rows with composites
 * c[0..n) in rank order: first_rank is the rank of c[0], above the members
 * of the whole board with a strictly better key than c[0]'s (at most
 * first_rank - 1), next_tied 1 when the member ranked right after c[n-1]
 * has its key. A row is tied when some other member of the board shares its
 * key: inside the window, above it (the first key, when above < first_rank
 * - 1) or after it (the last key, when next_tied). */
void rc_places_fill(double unit, const double *c, size_t n, int64_t first_rank, int64_t above, int next_tied,
                    int64_t *place, unsigned char *tied);

/* The same for the window of ranks offset+1 .. offset+n of mirror m (which
 * holds ranks 1..m->len): above is found by walking back from the window's
 * first row while keys are equal (bounded by the mirror's rows, no board
 * scan). Returns 0, or RC_E_UNAVAILABLE when the mirror does not hold the
 * window or the row after it while the board has one (the caller must then
 * keep one more row: rc_mirror_set_want(offset + n + 1)). */
int rc_places_mirror(const struct rc_mirror *m, double unit, size_t offset, size_t n, int64_t *place,
                     unsigned char *tied);

#endif
