/* rc_vtrack.h - whether a change event can have changed a window that the
 * gateway read from Redis (an around view, a page deeper than the mirror),
 * so that such a view reads again only when its rows may differ (issue 23:
 * a change far from a view costs it nothing).
 *
 * A tracker knows the window's rows through version `seq` (the read's seq,
 * then each event judged unchanged). Change events come in seq order with
 * the member's old and new 1-based ranks (rc_event: old_rank, rank). The
 * rows at ranks [min(old, new), max(old, new)] are all a move changes (the
 * member's own row and the rows it passed, each shifted by one); rows
 * outside that span keep their member and score. So an event leaves the
 * window's rows as they were when:
 *   - its seq follows the tracker's exactly (no event missed),
 *   - the member was on the board before and after (total unchanged: every
 *     message carries total, and a join or leave shifts every rank below),
 *   - the span misses the window's ranks, and for an around view the member
 *     is not the view's own (whose rank the window is centred on).
 * An around view's centre moves with the events it did not see change
 * nothing (a member passing its centre would have met the window), so the
 * tracker keeps the centre's rank; an absent member (empty window) stays
 * absent until an event names it (which changes total or is its own).
 * Shared places depend on every row above (how many have better points)
 * and on the row after the window (a tie across its end): such a window
 * counts from rank 1 to one row past its end.
 *
 * A member list (PROTOCOL v1.2) is a set of ranks: the listed members
 * that are on the board (entries, sorted by rank; the caller keeps the
 * array). Its rows are not a run of ranks, so a move does more than reach
 * them or not: it shifts by one every listed rank inside its span
 * (rc_vtrack_members_event). From the event alone (the member's old and
 * new rank and composite) the tracker then knows every listed member's
 * rank and composite exactly: a move of an unlisted member (+1 for the
 * listed ranks it passed going up, -1 going down), its join (+1 for the
 * listed ranks from its rank down, total + 1) or leave (-1 below it, total
 * - 1), and a listed member's own move or leave (its entry's rank and
 * composite, or the entry gone). It cannot know a listed member that joins
 * (its row needs a read: profile), nor anything with shared places (a
 * place depends on the points around), and reads then.
 *
 * Anything else (a gap, a join or leave, a reset, a new epoch, an event
 * without ranks) is RC_VTRACK_CHANGED: the caller reads again, and the
 * tracker forgets until the next read (rc_vtrack_read). Never a guess.
 *
 * Pure: no I/O.
 */
#ifndef RC_VTRACK_H
#define RC_VTRACK_H

#include <stddef.h>
#include <stdint.h>

struct rc_vtrack {
    int ok;              /* 1: the rows are known through seq */
    int64_t seq;
    int around;          /* 1: ranks around `pos`, else the page [first, last] */
    int places;          /* shared places: ranks from 1, one row past the end */
    int64_t first, last; /* page: ranks shown, 1-based inclusive */
    int64_t pos;         /* around: the member's rank at seq, 0 while not on the board */
    int64_t radius;
    struct rc_vtrack_entry *ent; /* member list: its listed members on the board, by rank (the caller's) */
    size_t nent;
    int64_t total;        /* member list: members on the board at seq */
    int members;          /* 1: a member list */
    int cut;              /* member list: entries are its best by rank only; more listed
                             members are on the board below them (rc_vtrack_members_cut) */
    /* member list: a bit per band of `band` ranks (the last band open-ended)
     * set where an entry is, or was since the bits were last made exact: a
     * move whose ranks meet no set bit passes no entry, judged SAME without
     * a look at the entries (issue 26: most moves of a busy board miss most
     * lists, and every list judges every move) */
    uint64_t near[4];
    int64_t band;
    int near_stale;       /* member list: near[] not made since a run moved the entries (rc_vtrack_members_moved) */
};

/* A listed member on the board, as the tracker knows it at its seq. */
struct rc_vtrack_entry {
    int64_t rank;
    double c;             /* its composite */
    size_t row;           /* the caller's: which row of the read it is */
};

/* Results of rc_vtrack_event. */
enum rc_vtrack_result {
    RC_VTRACK_OLD = 0,  /* seq <= the tracker's: the read already reflects it */
    RC_VTRACK_SAME,     /* the window's rows are unchanged (the tracker moved on to seq) */
    RC_VTRACK_CHANGED,  /* may have changed (or not known): read again */
    RC_VTRACK_MOVED     /* member list: entries changed, and are exact at seq (no read needed) */
};

/* A page of `limit` ranks from rank offset + 1, read at seq. */
void rc_vtrack_page(struct rc_vtrack *t, int64_t seq, int64_t offset, int64_t limit, int places);

/* An around view of radius R read at seq, whose member was at rank pos
 * (1-based; 0 when not on the board). */
void rc_vtrack_around(struct rc_vtrack *t, int64_t seq, int64_t pos, int64_t radius, int places);

/* A member list read at seq (total members on the board) whose listed
 * members on the board are ent[0..n) (ascending ranks; the caller's array,
 * changed in place by events until the next read or forget). */
void rc_vtrack_members(struct rc_vtrack *t, int64_t seq, int64_t total, struct rc_vtrack_entry *ent, size_t n,
                       int places);

/* The member list just read (rc_vtrack_members) holds only the best of its
 * listed members on the board (a big team's roster, docs/teams.md): a
 * listed member outside the entries that passes the deepest one, and an
 * entry that falls to the deepest rank or leaves, read again. */
void rc_vtrack_members_cut(struct rc_vtrack *t);

/* A run of events judged at once moved member list t on to seq
 * (core/rc_vbatch.h): its entries, changed in place, are now the first n,
 * total members on the board. */
void rc_vtrack_members_moved(struct rc_vtrack *t, int64_t seq, int64_t total, size_t n);

/* Judges change event seq for a member list: the member (listed: it is
 * listed, needed when !has_old or the tracker is cut) was at old_rank (has_old) and is at
 * rank with composite c (has_new). Returns an enum rc_vtrack_result:
 * SAME (no listed row changed), MOVED (entries now as at seq: some rank,
 * composite or entry changed; an entry that left is dropped), CHANGED (read
 * again; the tracker forgets) or OLD. */
int rc_vtrack_members_event(struct rc_vtrack *t, int64_t seq, int listed, int has_old, int64_t old_rank,
                            int has_new, int64_t rank, double c);
/* The ranks [*lo, *hi] (1-based, inclusive) whose change can change the
 * window (with shared places from rank 1 to one row past its end), as
 * rc_vtrack_event judges them: an event that keeps total and whose span
 * [min(old, new), max(old, new)] misses them is RC_VTRACK_SAME. Returns 1,
 * or 0 when no such event can change it (an around view whose member is
 * not on the board, a member list none of whose members is on it) or the
 * tracker forgot. A member list's ranks move with the events it is told
 * (rc_vtrack_members_event): ask again after each. Lets a caller index its windows
 * by these ranks and judge an event only against those it reaches
 * (gateway/fanout/gw_reads.c). */
int rc_vtrack_ranks(const struct rc_vtrack *t, int64_t *lo, int64_t *hi);

/* The caller's index (by rc_vtrack_ranks) judged every event through seq,
 * each in seq order and keeping total, and none reached these ranks: the
 * tracker moves on to seq as if each had been RC_VTRACK_SAME (a no-op when
 * it forgot or is past seq already). */
void rc_vtrack_skip(struct rc_vtrack *t, int64_t seq);

/* Forgets: every event is RC_VTRACK_CHANGED until the next read. */
void rc_vtrack_forget(struct rc_vtrack *t);

/* Judges the change event of version seq: the member (is_self: it is the
 * around view's own member) was at old_rank before (has_old) and is at rank
 * after (has_new), ranks 1-based (a member list: CHANGED; see
 * rc_vtrack_members_event). Returns an enum rc_vtrack_result; on
 * RC_VTRACK_CHANGED the tracker forgets. */
int rc_vtrack_event(struct rc_vtrack *t, int64_t seq, int is_self, int has_old, int64_t old_rank, int has_new,
                    int64_t rank);

#endif
