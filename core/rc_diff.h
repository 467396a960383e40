/* rc_diff.h - the window delta of PROTOCOL.md ("Applying a delta to a window").
 *
 * A window is a contiguous run of ranks (top N, or a page) held by the client as
 * a list ordered by rank. Given the old and new contents, rc_diff_window_diff finds a
 * small delta: `rows` to (re)insert and `removed` members, such that the
 * PROTOCOL rule (remove every member named in removed and rows; insert each row
 * in ascending rank at rank - first_rank; cut to the window length) turns the old
 * list into the new one.
 *
 * Members that keep their relative order and their score are left out of the
 * delta: a single member moving inside a top 10 yields one row.
 */
#ifndef RC_DIFF_H
#define RC_DIFF_H

#include <stddef.h>

struct rc_wrow {
    const char *member; /* borrowed, NUL-terminated */
    double key;         /* the stored (composite) score; a change means resend */
};

struct rc_diff {
    size_t *rows;       /* indexes into the new window, ascending */
    size_t nrows;
    size_t *removed;    /* indexes into the old window of members not in new */
    size_t nremoved;
};

/* Computes the delta from old[0..nold) to new_[0..nnew). Members must be
 * unique within each window. Allocates out->rows and out->removed (free with
 * rc_diff_free). Returns 0 or RC_E_INTERNAL on allocation failure. */
int rc_diff_window_diff(const struct rc_wrow *old, size_t nold, const struct rc_wrow *new_, size_t nnew,
                   struct rc_diff *out);

void rc_diff_free(struct rc_diff *d);

/* The same diff over rows of any struct that holds a member (const char *
 * or char *) and a key (double): the caller's rows are read in place, at
 * rows + i * stride + member_at / key_at, so no window is copied into
 * rc_wrow first (core/rc_delta.c diffs struct rc_row this way). */
struct rc_diff_side {
    const void *rows;
    size_t n;
    size_t stride;
    size_t member_at;
    size_t key_at;
};

/* Scratch memory kept between diffs: one block, grown when a diff needs
 * more, so a caller that keeps it allocates nothing per diff once it is
 * large enough. Zero it to start; rc_diff_scratch_free releases it. */
struct rc_diff_scratch {
    void *buf;
    size_t cap;
};

void rc_diff_scratch_free(struct rc_diff_scratch *s);

/* The result of rc_diff_run, borrowed from the scratch until its next use. */
struct rc_diff_view {
    const size_t *rows;     /* as struct rc_diff */
    size_t nrows;
    const size_t *removed;
    size_t nremoved;
    const size_t *from;     /* from[j]: the old index of new row j, SIZE_MAX when it is new */
};

/* rc_diff_window_diff on sides old and new_, its arrays in s. Returns 0, or
 * RC_E_INTERNAL (allocation failure, a NULL member, a member twice in one
 * window); *out is then empty. */
int rc_diff_run(const struct rc_diff_side *old, const struct rc_diff_side *new_, struct rc_diff_scratch *s,
                struct rc_diff_view *out);

/* Applies a delta by PROTOCOL.md's rule, in place.
 * win: array of capacity `cap` holding *n rows; window_len: the view's length
 * (N of top N, L of a page); first_rank: rank of win[0] (1 for top N, O+1 for a
 * page). rows[i] goes to position rows_rank[i] - first_rank. removed: member
 * names. Member strings are borrowed (the window keeps the pointers it is given,
 * so they must outlive it). Returns 0, or RC_E_BAD_REQUEST when a row's rank
 * falls outside what the rule allows, cap is too small, or two rows share a
 * member or a rank (win is then unchanged); RC_E_INTERNAL if scratch memory
 * cannot be allocated. */
int rc_diff_window_apply(struct rc_wrow *win, size_t *n, size_t cap, size_t window_len, long first_rank,
                    const struct rc_wrow *rows, const long *rows_rank, size_t nrows,
                    const char *const *removed, size_t nremoved);

#endif
