/* rc_vtrack_shard.h - a member list (PROTOCOL v1.2) on a sharded board
 * (docs/sharded.md) followed from its shards' change events, so that its
 * viewers' rows move without a read per list per tick (issue 26).
 *
 * It keeps the list's state in the plain list tracker's struct rc_vtrack
 * (entries by rank, total, ok; core/rc_vtrack.h: the windows are built from
 * it as on a plain board, gateway/fanout/gw_members.c) and differs only in
 * how an event moves the entries. A sharded board's events carry the
 * member's composite before and after, but their ranks are made global by
 * a read made later (gateway/fanout/gw_rank_shard.c), so this tracker does
 * not use ranks at all: a listed member L's rank is 1 + the members ahead
 * of it in the merged order (core/rc_shard.h, rc_shard_before: composite,
 * then the lower shard, then Redis's order inside a shard), and an event of
 * another member X changes it by [X ahead of L after] - [X ahead of L
 * before], judged from X's old and new composite and L's own. That holds
 * whatever order the shards' events come in, as long as each shard's come
 * in its seq order with none missed.
 *
 * The read it starts from (gateway/store/gw_read_mshard.c) is two rounds:
 * each shard holding listed members gives their composites and ranks in
 * the shard at its seq listed_seq[j], then every shard counts the members
 * ahead of each of them at its seq counted_seq[j] >= listed_seq[j] (writes
 * go on in between). So a listed member of shard h is known through
 * listed_seq[h] on its own shard and through counted_seq[j] on every other
 * (total too). An event of shard j numbered seq is then applied to the
 * entries of shard j when seq > listed_seq[j] (every event after cur[j]),
 * and to the others' and total only when seq > counted_seq[j] (the counts
 * already hold it). After quiet every rank is exact.
 *
 * Each entry keeps, per shard j, the seq through which its rank holds
 * shard j (asof): at the read, listed_seq[j] for its own shard and
 * counted_seq[j] for the others. An event of shard j numbered seq moves an
 * entry only when seq > its asof[j]. A listed member's own move takes the
 * event's global rank (its rank in its shard at seq, plus every other
 * shard's count at its new composite, read at count_seq[j]: the ranking of
 * the event, gateway/fanout/gw_rank_shard.c) and asof = count_seq (seq on
 * its own shard): the later events of shard j cross it only past
 * count_seq[j]. That needs count_seq[j] >= cur[j] (a count older than the
 * events already judged would miss some; the gateway reads counts after
 * the events before them arrived, so it holds). A listed member's leave
 * drops its entry.
 *
 * It cannot follow (RC_VTRACK_CHANGED: the caller reads, the tracker
 * forgets until the next read), never guessing: a listed member that joins
 * (its row needs its profile), a listed member's move without count seqs
 * (count_seq NULL: replayed from the ring) or with one older than cur, a
 * gap in a shard's seqs, an event without a member (reset) or starting a
 * history (the caller checks the epoch), a shard out of range, and shared
 * places (a place depends on the points around).
 *
 * Pure: no I/O. */
#ifndef RC_VTRACK_SHARD_H
#define RC_VTRACK_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "rc_shard.h"
#include "rc_vindex.h"
#include "rc_vtrack.h"

struct rc_vtrack_shard {
    unsigned nshards;
    int desc;                          /* the board sorts most first */
    int64_t cur[RC_SHARDS_MAX];        /* shard j's events through cur[j] judged */
    int64_t counted[RC_SHARDS_MAX];    /* the counts and total hold shard j through counted[j] */
    const char *const *names;          /* per read row (entry.row): the member (the caller's) */
    const unsigned *home;              /* per read row: its shard (the caller's) */
    int64_t *asof;                     /* per read row, nshards each: row * nshards + j (the caller's) */
};

/* Starts t (a member list: rc_vtrack_members's fields) and s from a read:
 * listed_seq[j] (-1: shard j holds no listed member on the board and was
 * not read for rows) and counted_seq[j] each shard's seq in the two rounds,
 * total the board's members at counted_seq, ent[0..n) the listed members on
 * the board by global rank (the caller's, changed in place), names and
 * home indexed by ent[i].row, asof room for (rows) x nshards (filled
 * here). t->seq is the sum of counted_seq. t is not
 * ok (every event CHANGED) for a bad vector (listed_seq > counted_seq,
 * nshards out of range) or places. */
void rc_vtrack_shard_members(struct rc_vtrack *t, struct rc_vtrack_shard *s, int desc, unsigned nshards,
                             const int64_t *listed_seq, const int64_t *counted_seq, int64_t total,
                             struct rc_vtrack_entry *ent, size_t n, const char *const *names, const unsigned *home,
                             int64_t *asof, int places);

/* Judges change event seq of shard `shard`: member (listed: it is one of
 * the list's names) was on the board with composite old_c (has_old) and is
 * with c (has_new), at global rank `rank` counted on shard j at
 * count_seq[j] (j != shard; NULL: not known). Returns an enum rc_vtrack_result: OLD (seq already
 * judged), SAME (no listed rank and not total changed; t->seq moved on),
 * MOVED (entries, still sorted by rank, and total exact as of the shards'
 * seqs rc_vtrack_shard_seqs gives) or CHANGED (read again; t forgets). */
int rc_vtrack_shard_event(struct rc_vtrack *t, struct rc_vtrack_shard *s, unsigned shard, int64_t seq, int listed,
                          const char *member, int has_old, double old_c, int has_new, double c, int64_t rank,
                          const int64_t *count_seq);

/* Each shard's seq the entries stand at (max of cur and counted) into
 * out[0..nshards); their sum is t->seq. */
void rc_vtrack_shard_seqs(const struct rc_vtrack_shard *s, int64_t *out);

/* ---- filing lists by composite (gateway/fanout/gw_reads.c) ----
 *
 * A move of member X (on the board before and after, total kept) from
 * composite a to b changes a listed rank only when the listed member's
 * composite lies in [min(a, b), max(a, b)] (ahead() compares composites
 * first; shard and member decide only on equal ones): outside it, X is
 * ahead of the entry both before and after, or behind it both times, and
 * rc_vtrack_shard_event judges the move RC_VTRACK_SAME. So lists can sit in
 * an index (core/rc_vindex) by the span of their entries' composites, and a
 * move visit only the lists whose span it reaches. Composites, not global
 * ranks: a sharded event's global rank is counted later, at other seqs than
 * the list's entries stand at, so spans of ranks would need slack to stay
 * exact; composites are the event's own and the entries' (issue 26). */

/* Composite c's position in an rc_vindex: non-decreasing in c (so a
 * composite inside [a, b] has its position inside [pos(a), pos(b)]), in
 * [0, RC_VINDEX_SPAN). Relative, like a double: the sign, the power of two
 * and the next 8 bits (composites of |c| < 1 share the middle position), so
 * that spans of a few points apart fall apart at any magnitude. */
size_t rc_vtrack_shard_pos(double c);

/* The positions [*lo, *hi] (inclusive) of the entries' composites, lowest
 * to highest. Returns 1, or 0 when no move can change the list (no entry:
 * only joins and leaves can) or t forgot. Ask again after every event t is
 * told: a listed member's own move changes its composite. */
int rc_vtrack_shard_span(const struct rc_vtrack *t, size_t *lo, size_t *hi);

/* The caller's index judged every event of shard j through seq[j] (< 0:
 * none), each a move in that shard's order, and none reached t's span: t
 * moves on as if each had been RC_VTRACK_SAME (shard j's events through
 * seq[j] judged, t->seq as rc_vtrack_shard_seqs sums). A no-op when t
 * forgot, or for a shard it is past already. */
void rc_vtrack_shard_skip(struct rc_vtrack *t, struct rc_vtrack_shard *s, const int64_t *seq);

#endif
