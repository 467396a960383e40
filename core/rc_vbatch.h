/* rc_vbatch.h - a run of a board's change events judged once for every
 * member list that stands at the run's start (issue 26: at 5,000 lists of
 * 50 members on a board taking 2,000 writes/s, each list judging each
 * event on its own, rc_vtrack_members_event, was more than half of the
 * gateway's CPU; the cost of an event must not grow with the lists).
 *
 * The rule. Order the board's members by the board's order: composite, then
 * member name byte-wise (Redis's order; reversed on a desc board, as
 * ZRANGE REV: core/rc_shard.h, rc_shard_before). A member's rank is 1 + the
 * members before it. An event changes one member's key from its old
 * (composite, name) to its new one (a join has no old, a leave no new), so
 * for a key k that no event of the run has (a listed member that did not
 * change), the members before k change by
 *     shift(k) = #{events whose new key is before k} - #{events whose old key is before k}
 * over the whole run, in any order (each event adds one before k, takes
 * one away, or both). That needs no member's rank in between, only where
 * each event's keys stand among the members at the run's start: the place
 * p(k) (the members before k then). A listed member X at rank r there has
 * a key before k exactly when p(k) < r (for k not X's own). So one sorted
 * list of the run's places, with each place's count (+1 for a new key, -1
 * for an old one), answers every list's every member's shift with one
 * search: p(k) comes from the event's own rank, less the shift of k by the
 * run's earlier events (an order-statistic count over the run's keys, once
 * per run). A member with events in the run (a mover) stands where its last
 * event put it, shifted by the events after that; it is found among a
 * list's entries by its place at the start (its rank then, less one).
 *
 * A join of a listed member needs a read (its row: profile): the caller
 * checks the run's joins (rc_vbatch.joins) against its list. Lists cut at
 * their best or with shared places, and trackers that do not stand at the
 * run's start, are judged event by event as before (rc_vbatch_apply says
 * so). Exact: the ranks after a run equal what rc_vtrack_members_event
 * reaches event by event (tests/unit/test_vbatch.c, against a brute-force
 * board).
 *
 * Pure: no I/O. */
#ifndef RC_VBATCH_H
#define RC_VBATCH_H

#include <stddef.h>
#include <stdint.h>

#include "rc_vtrack.h"

/* One change event of the run (its member borrowed until the run is made). */
struct rc_vbatch_ev {
    const char *member;
    int has_old, has_new; /* on the board before, after */
    int64_t old_rank, rank; /* 1-based: before (has_old), after (has_new) */
    double old_c, c;        /* composites: before, after */
};

/* A member with events in the run that was on the board at its start. */
struct rc_vbatch_mover {
    int64_t place; /* members before it at the start (its rank then - 1) */
    int64_t rank;  /* at the run's end; 0: it left */
    double c;      /* its composite at the end */
};

struct rc_vbatch {
    int ok;               /* 1: made (else every tracker is judged event by event) */
    int64_t seq0, seq1;   /* the run is the events (seq0, seq1] */
    int64_t dtotal;       /* joins - leaves */
    int64_t *place;       /* sorted distinct places of the run's keys */
    int64_t *before;      /* [npl + 1]: before[t] = the shift of a key after place[t - 1] (sum of the counts of place[0..t)) */
    size_t npl;
    int32_t *movat;       /* [npl]: the mover (index in mov) that stood at place[t], or -1 */
    uint32_t *bucket;     /* [nbucket]: the first t with place[t] >= k << bshift (a list's entry
                             finds its place in a step or two, not a search: issue 26) */
    size_t nbucket;
    unsigned bshift;
    struct rc_vbatch_mover *mov; /* by place */
    size_t nmov;
    const char **joins;   /* members that joined in the run (borrowed from the events) */
    size_t njoins;
    void *scratch;        /* rc_vbatch.c's work arrays, kept between runs */
    size_t cap;           /* events they have room for */
};

/* A batch with nothing made (ok 0). */
void rc_vbatch_init(struct rc_vbatch *b);
void rc_vbatch_free(struct rc_vbatch *b);

/* Makes the run of n events ev[0..n) of versions seq0 + 1 .. seq0 + n on a
 * board of order desc (1: highest first). Returns 0; -1 (ok 0) when an
 * event cannot be judged this way (no member, neither old nor new, a rank
 * below 1, places that contradict the ranks) or out of memory. The events'
 * member names are borrowed until the next make or free. */
int rc_vbatch_make(struct rc_vbatch *b, int desc, int64_t seq0, const struct rc_vbatch_ev *ev, size_t n);

/* Moves member list tracker t from seq0 on to seq1 by the run: every entry
 * at its rank and composite then, entries that left dropped, total by the
 * joins and leaves. The caller checked the run's joins against its list
 * (one of them listed: the list reads, this is not called). Returns
 * RC_VTRACK_SAME (no entry nor total changed), RC_VTRACK_MOVED, or -1 when
 * the run cannot judge t (not made, t not at seq0, forgot, cut, shared
 * places, over RC_VBATCH_ENTRIES_MAX entries): t is untouched then, and
 * judged event by event. */
int rc_vbatch_apply(const struct rc_vbatch *b, struct rc_vtrack *t);

/* Asks the CPU to fetch member list tracker t's entries ahead of an
 * rc_vbatch_apply (a hint: no effect on any result). A board's lists are
 * applied one after another, each list's entries its own allocation, and
 * waiting for them to come from memory was most of the apply (issue 26:
 * at 3,000 lists, the load of each entry took most of rc_vbatch_apply's
 * samples); fetched while the list before is applied, they are there when
 * needed. */
void rc_vbatch_prefetch(const struct rc_vtrack *t);

#define RC_VBATCH_ENTRIES_MAX 256 /* a member list's entries (RC_MEMBERS_MAX is 200) */

#endif
