/* rc_moment.h - a board's standings at a past moment (seq S), rebuilt from
 * the present and the change log (docs/history.md). Pure: no Redis, no
 * clock.
 *
 * The rebuild undoes the present: every change after S names its member's
 * composite before it ("old_c") and after it ("c"), so a member the changes
 * after S touched stood at the "old_c" of its first such change (absent when
 * null), and every other member stands now where it stood at S. The
 * standings at S are then the members the changes left alone, in their
 * present order, merged with the touched members at their old composites.
 *
 * A caller does not hand the whole present board in: only a slice of it
 * (present ranks lo .. lo + n - 1). An untouched member's rank moves by at
 * most K (the members touched) between S and now, so a slice that reaches
 * 2K + 2 ranks past the wanted window on each side (rc_moment_margin)
 * answers it exactly; when it does not, the rebuild says "cannot tell"
 * (RC_E_INTERNAL), never a guess.
 *
 * Order: Redis's order of one sorted set (core/rc_shard.h,
 * rc_shard_before): composite, then member name for equal composites.
 */
#ifndef RC_MOMENT_H
#define RC_MOMENT_H

#include <stddef.h>
#include <stdint.h>

/* A row: a member (borrowed) and its composite. */
struct rc_moment_row {
    const char *member;
    double c;
};

/* One change after S, in seq order (members borrowed). */
struct rc_moment_change {
    const char *member;
    int has_new;   /* 0: the change took the member off the board */
    double c;
    int has_old;   /* 0: the member was not on the board before it */
    double old_c;
};

struct rc_moment_in {
    int desc;                              /* the board's order */
    const struct rc_moment_row *slice;     /* present rows at 0-based ranks lo .. lo + nslice - 1 */
    size_t nslice;
    int64_t lo;
    int64_t total;                         /* present member count */
    const struct rc_moment_change *changes; /* every change after S, oldest first */
    size_t nchanges;
};

/* Rows at S, members borrowed from the input. rows malloc'ed (free with
 * rc_moment_out_free). first_rank: rank of rows[0] (0: an around member
 * absent at S). total: members on the board at S. */
struct rc_moment_out {
    struct rc_moment_row *rows;
    size_t n;
    int64_t first_rank;
    int64_t total;
};

/* Ranks first + 1 .. first + count at S (fewer past the end). Returns 0,
 * or RC_E_INTERNAL (out of memory, or a slice too short to tell). */
int rc_moment_range(const struct rc_moment_in *in, int64_t first, int64_t count, struct rc_moment_out *out);

/* member and up to radius neighbours each side at S; member absent at S:
 * no rows, first_rank 0. Returns as rc_moment_range. */
int rc_moment_around(const struct rc_moment_in *in, const char *member, int64_t radius, struct rc_moment_out *out);

void rc_moment_out_free(struct rc_moment_out *out);

/* *total: the members on the board at S, from in's total and changes (its
 * slice unused: a member list at S needs no window). Returns 0 or
 * RC_E_INTERNAL (out of memory). */
int rc_moment_total(const struct rc_moment_in *in, int64_t *total);

/* The margin a slice needs on each side of the present ranks it is about,
 * for k distinct members touched after S. */
int64_t rc_moment_margin(int64_t k);

/* A member's rank at S from counts: `ahead` the present members ranked
 * before composite c (Redis's order, member name included), where c is the
 * member's composite at S; changes as above. Returns the 1-based rank. */
int64_t rc_moment_rank(int desc, const char *member, double c, int64_t ahead,
                       const struct rc_moment_change *changes, size_t nchanges);

/* The members on the board at S ahead of composite `bound` by composite
 * alone (desc: greater, or equal when inclusive; asc: smaller, or equal
 * when inclusive), from now_ahead, the present count: a sharded board's
 * other shards (core/rc_shard.h, "the merged order"). Each change after S
 * moves the count by its new composite less its old one; a member's
 * changes chain (each one's old_c is the c of the one before, as the
 * scripts log them), so the sum is the member's last composite less its
 * first old one, the rebuild's rule. */
int64_t rc_moment_ahead(int desc, double bound, int inclusive, int64_t now_ahead,
                        const struct rc_moment_change *changes, size_t nchanges);

/* The rows at S nearest to `bound` (as rc_moment_ahead counts them): up to
 * radius ahead of it, then up to radius + 1 behind it, in board order, from
 * a slice reaching rc_moment_margin(k) rows beyond present ranks
 * now_ahead - k - radius .. now_ahead + k + radius (k the members touched
 * after S). *ahead: the members ahead of bound at S; the first
 * *ahead - out->first_rank + 1 rows are ahead of it. Returns as
 * rc_moment_range. */
int rc_moment_near(const struct rc_moment_in *in, double bound, int inclusive, int64_t now_ahead, int64_t radius,
                   struct rc_moment_out *out, int64_t *ahead);
/* rc_moment_rank for n members at once (rows[i]: a member and its composite
 * at S, ahead[i] its count) into ranks[0..n): the changes are collapsed and
 * sorted once, and each rank is two binary searches, not a pass over them
 * (a roster of thousands at a moment, docs/history.md). Returns 0 or
 * RC_E_INTERNAL (out of memory). */
int rc_moment_ranks(int desc, const struct rc_moment_row *rows, const int64_t *ahead, size_t n,
                    const struct rc_moment_change *changes, size_t nchanges, int64_t *ranks);

#endif
