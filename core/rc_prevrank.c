/* rc_prevrank.c - a member's rank before a run of changes (rc_prevrank.h). */
#include "rc_prevrank.h"

#include <string.h>

int64_t rc_prevrank(const struct rc_move *moves, size_t n, const char *member, int64_t rank_now)
{
    for (size_t i = 0; i < n; i++) {
        if (moves[i].member[0] == '\0')
            return -1; /* a reset before any move of its own: its rank before is not known */
        if (strcmp(moves[i].member, member) == 0)
            return moves[i].old_rank;
    }
    /* It never moved itself: undo the others' moves, newest first. */
    int64_t r = rank_now;
    for (size_t i = n; i-- > 0;) {
        int64_t o = moves[i].old_rank, nr = moves[i].rank;
        if (nr > 0 && nr < r) {
            /* the mover is above it after the change: was it before? */
            if (!(o > 0 && o < r))
                r--;
        } else if (o > 0 && o <= r) {
            /* below it (or gone) after, above it before */
            r++;
        }
    }
    return r;
}
