/* rc_prevrank.h - where a member stood before a run of changes (PROTOCOL.md
 * v1.1, "Where a member came from": prev_rank on delta rows).
 *
 * A view delivered the board as of seq S0 and is about to deliver it as of
 * S1. The changes in between are known as moves, one per change event in
 * seq order: the member that moved, its rank before the change (0: not on
 * the board) and after it (0: it left). For a member now at rank r1:
 * - one that moved itself stood, just before its first move, at that move's
 *   old rank (0 when it was new);
 * - one that did not move only shifted as others passed it, and walking the
 *   moves backwards from r1 gives its rank at S0 exactly: a mover that went
 *   from below it (or from outside the board) to above it pushed it down by
 *   one, a mover that went from above it to below it (or off the board)
 *   pulled it up by one.
 * Ranks are positions (unique, 1-based), as the write script reports them.
 * Pure: no I/O.
 */
#ifndef RC_PREVRANK_H
#define RC_PREVRANK_H

#include <stddef.h>
#include <stdint.h>

struct rc_move {
    const char *member; /* borrowed; "" for a change that moves no one member (a reset) */
    int64_t old_rank;   /* before the change, 0 when not on the board */
    int64_t rank;       /* after it, 0 when the member left */
};

/* The rank member had before moves[0] (moves[0..n) in seq order), given its
 * rank now (after moves[n-1]); 0 when it was not on the board; -1 when the
 * moves cannot tell: a reset (member "") comes before the member's own first
 * move, and a reset carries no member's rank (the caller then sends a
 * snapshot instead of a delta). */
int64_t rc_prevrank(const struct rc_move *moves, size_t n, const char *member, int64_t rank_now);

#endif
