/* rc_delta.h - what a window view sends when its window changes: the delta
 * rule of PROTOCOL.md ("Applying a delta to a window", and v1.1 "Where a
 * member came from") decided in one place, pure.
 *
 * Given the window the viewers hold (old), the new one, and the board's
 * change events in between (for prev_rank), rc_delta_make says:
 * - which rows of the new window to send: those core/rc_diff.h's smallest
 *   delta needs, and also rows whose profile, shared place or tied changed
 *   (a row resent at its own rank replaces itself under the delta rule);
 * - each sent row's prev_rank: its rank in old when it was there (as the
 *   viewers hold it), else its rank before the events (core/rc_prevrank.h),
 *   0 when it was not on the board;
 * - the members to remove (old rows whose member is not in new);
 * - whether there is nothing to tell (no rows, no removed, same total: the
 *   caller adds what the window does not hold, such as a freeze's news);
 * - or RC_DELTA_UNKNOWN when a row came from outside the window and the
 *   events cannot tell from where (the caller sends a snapshot, always a
 *   correct answer).
 *
 * Rows are read in place (core/rc_row.h) and everything the rule needs lives
 * in a scratch the caller keeps from one delta to the next, so a delta
 * allocates nothing once the scratch has grown to the view's size.
 */
#ifndef RC_DELTA_H
#define RC_DELTA_H

#include <stddef.h>
#include <stdint.h>

#include "rc_diff.h"
#include "rc_prevrank.h"
#include "rc_row.h"

#define RC_DELTA_UNKNOWN 1 /* rc_delta_make: prev_rank cannot be told, send a snapshot */

/* A window as the rule sees it; rows borrowed. */
struct rc_delta_window {
    const struct rc_row *rows;
    size_t n;
    int64_t first_rank; /* rank of rows[0] */
    int64_t total;      /* members on the board */
};

/* Kept by the caller between deltas; zero it to start, free it with
 * rc_delta_scratch_free. */
struct rc_delta_scratch {
    struct rc_diff_scratch diff;
    void *buf;            /* the sent rows' indexes and prev_ranks */
    size_t cap;
    struct rc_move *moves; /* rc_delta_moves_room */
    size_t moves_cap;
    void *ids;             /* rc_delta_make_members_by_id: its match of rows by id */
    size_t ids_cap;
};

void rc_delta_scratch_free(struct rc_delta_scratch *s);

/* Room for n moves in s (kept for the next call), for a moves source to
 * fill; NULL when out of memory (or n is 0). */
struct rc_move *rc_delta_moves_room(struct rc_delta_scratch *s, size_t n);

/* The events between old and new, asked for only when a sent row came from
 * outside old (most deltas never need them): fills *moves (in seq order;
 * may point into rc_delta_moves_room(s, ...)) and *n. Returns 0, or nonzero
 * when it cannot give them all (rc_delta_make then says RC_DELTA_UNKNOWN). */
typedef int rc_delta_moves_fn(void *ctx, struct rc_delta_scratch *s, const struct rc_move **moves, size_t *n);

/* The delta; arrays borrowed from the scratch until its next use. */
struct rc_delta {
    const size_t *rows;       /* indexes into new's rows, ascending */
    const int64_t *prev_rank; /* prev_rank[k] for rows[k]; 0: was not on the board */
    size_t nrows;
    const size_t *removed;    /* indexes into old's rows of members not in new */
    size_t nremoved;
    int nothing;              /* no rows, none removed, same total */
};

/* The delta from old to new_ (see the banner) into *out. Members must be
 * unique within each window. Returns 0, RC_DELTA_UNKNOWN, or RC_E_INTERNAL
 * (out of memory, or a window that breaks the contract); *out is filled only
 * on 0. */
int rc_delta_make(const struct rc_delta_window *old, const struct rc_delta_window *new_, rc_delta_moves_fn *moves,
                  void *ctx, struct rc_delta_scratch *s, struct rc_delta *out);

/* The delta of a member list (PROTOCOL v1.2 "Member lists"): rows are
 * applied by member, not by position, and each row holds its own rank
 * (rc_row.rank). Sent: every row of new_ whose member was not in old (its
 * prev_rank 0: it was not on the board), or whose rank, stored score,
 * place, tied or profile changed (prev_rank: its rank in old, as the
 * viewers hold it), so a listed member shifted by others' writes is sent
 * too; removed: old's members not in new_. It never needs the board's
 * events: each listed member's rank before is in old. Returns 0 or
 * RC_E_INTERNAL; *out as rc_delta_make's. */
int rc_delta_make_members(const struct rc_delta_window *old, const struct rc_delta_window *new_,
                          struct rc_delta_scratch *s, struct rc_delta *out);

/* rc_delta_make_members for two windows whose rows came from one read (a
 * member list's windows built from its last read and the ranks its events
 * moved, gateway/fanout/gw_members.c): old_id[i] and new_id[j] say which of
 * the read's nid rows each row is, so rows are matched by id instead of by
 * member name (no sort, no string compare: issue 26, a list's diff by name
 * was the gateway's largest cost at 5,000 lists). The rule and *out are
 * rc_delta_make_members's, as if matched by name: rows of one id must hold
 * one member. Returns 0, or RC_E_INTERNAL (an id not below nid or twice in
 * one window, or out of memory; *out then unset). */
int rc_delta_make_members_by_id(const struct rc_delta_window *old, const size_t *old_id,
                                const struct rc_delta_window *new_, const size_t *new_id, size_t nid,
                                struct rc_delta_scratch *s, struct rc_delta *out);

/* 1 when viewers holding a would be shown nothing new by b: the same
 * first_rank, total and rows (member, stored score, profile content, place,
 * tied). */
int rc_delta_windows_equal(const struct rc_delta_window *a, const struct rc_delta_window *b);

#endif
