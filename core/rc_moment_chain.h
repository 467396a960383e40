/* rc_moment_chain.h - a moment no base serves within history_undo_max,
 * rebuilt in several bounded calls (docs/history.md, "A moment no base
 * serves within the cap"). Pure.
 *
 * read.lua's moment answers DEEP with a checkpoint C (rc_moment_reply's
 * chain fields) when one moment lies farther than the cap from every base
 * (a gap in the checkpoints, or the newest interval while its copy waits).
 * The changes between C and the moment are then read in calls of at most
 * the cap (kind "changes"), folded to one a member as they come (a member's
 * changes chain: its first old composite and its last new one say all the
 * rebuild needs), then one call reads what the rebuild needs of C (kind
 * "base": a slice sized by the members touched, or the members ahead of
 * composites the fold names). The result is the reply one call would have
 * given (status OK, one target, the changes after it as core/rc_moment.h
 * takes them), so every view rebuilds the same way. C is a copy no write
 * touches and the log only grows at its end, so the calls need not be
 * atomic together: each checks that C and the changes are still this
 * history's, else the chain answers GONE.
 */
#ifndef RC_MOMENT_CHAIN_H
#define RC_MOMENT_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "rc_moment_args.h"

/* One member the changes read so far touched: its composite before the
 * first of them (has_old 0: off the board) and after the last. */
struct rc_moment_chain_fold {
    char *member;              /* owned */
    int has_old, has_new;
    double old_c, c;
    size_t pos;                /* order of reading (the fold keeps the first's old, the last's new) */
};

struct rc_moment_chain {
    int64_t target;            /* the moment's seq */
    int has_at;
    int64_t at;                /* its change's time */
    int64_t base;              /* the checkpoint C */
    int64_t next, end;         /* the changes in (next, end] are still to read */
    struct rc_read_head head;  /* the moment reply's (the audience's seq, the freeze) */
    int64_t oldest;            /* its oldest seq a read shows (the log's, with a chain), and that time */
    int has_oldest_at;
    int64_t oldest_at;
    struct rc_moment_chain_fold *f; /* sorted by member after each fold */
    size_t nf, cap, pos;
};

/* What the rebuild is for (a moment's view, as struct rc_moment_req names
 * it; member and members borrowed). */
struct rc_moment_chain_view {
    enum rc_moment_view view;  /* RANGE, AROUND, LIST, POINTS, COUNTS or NEAR */
    int64_t first, count, radius;
    const struct rc_moment_bound *bounds; /* COUNTS: nbounds (one a target); NEAR: one */
    size_t nbounds;
    size_t ntargets;           /* POINTS: the targets to answer, all at the moment (a sharded read of
                                * several times at one seq); 0 or 1: one */
    const char *member;
    const char *members;       /* LIST: nmembers names back to back */
    uint32_t nmembers;
};

/* One call of read.lua: keys as its own, argv into num, names and comps. */
struct rc_moment_chain_args {
    char keys[RC_READ_NKEYS][RC_KEY_MAX];
    const char *argv[10];
    unsigned nargv;
    char num[4][32];
    char *names, *comps;       /* owned (probes) */
};

/* From a DEEP reply with has_chain. Returns 0 or RC_E_INTERNAL (no chain). */
int rc_moment_chain_init(struct rc_moment_chain *ch, const struct rc_moment_reply *deep);
void rc_moment_chain_free(struct rc_moment_chain *ch);

/* 1 once every change between C and the moment is folded. */
int rc_moment_chain_done(const struct rc_moment_chain *ch);

/* The next "changes" call: at most `most` changes (history_undo_max, at
 * least 1). Returns 0, RC_E_BAD_REQUEST (most < 1) or RC_E_INTERNAL. */
int rc_moment_chain_changes_args(const struct rc_moment_chain *ch, const char *board, const char *period,
                                 enum rc_order order, int64_t most, struct rc_moment_chain_args *a);

/* Folds a "changes" reply items[0..n) in. Returns 0, 1 when the history no
 * longer holds them (*gone: status GONE, oldest and its time; nothing else
 * set) or RC_E_INTERNAL (another shape, changes not the ones asked, out of
 * memory). */
int rc_moment_chain_changes_take(struct rc_moment_chain *ch, const struct rc_reply_item *items, size_t n,
                                 struct rc_moment_reply *gone);

/* The "base" call for view v (once done). Returns 0, RC_E_BAD_REQUEST (a
 * view the chain does not rebuild) or RC_E_INTERNAL. */
int rc_moment_chain_base_args(const struct rc_moment_chain *ch, const char *board, const char *period,
                              enum rc_order order, const struct rc_moment_chain_view *v,
                              struct rc_moment_chain_args *a);

/* The moment's reply from a "base" reply items[0..n) for view v: status OK
 * (head the moment reply's with C's total, one target, the folded changes
 * after it, rows or listed or the target's composite and ahead), or GONE.
 * Members borrowed from ch and items; free with rc_moment_args_reply_free.
 * Returns 0 or RC_E_INTERNAL. */
int rc_moment_chain_base_take(const struct rc_moment_chain *ch, const struct rc_reply_item *items, size_t n,
                              const struct rc_moment_chain_view *v, struct rc_moment_reply *out);

void rc_moment_chain_args_free(struct rc_moment_chain_args *a);

#endif
