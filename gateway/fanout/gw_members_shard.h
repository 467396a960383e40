/* gw_members_shard.h - member lists of sharded boards followed from their
 * shards' change events (core/rc_vtrack_shard.h; docs/sharded.md, "Member
 * lists"), so that many lists on one busy sharded board make no Redis read
 * per list per tick. Internal to fanout/ (after gw_reads.c, before
 * gw_members.c in its order).
 *
 * A list's tracker starts from each read (store/gw_read_mshard.c: both
 * rounds' seqs) and follows the board's events once their batch is ranked
 * (gw_feed_shard.c delivers them into the ring in each shard's seq order);
 * events delivered while its read was out are judged from the ring when it
 * is back (gw_reads.c: gw_reads_shard_event, gw_reads_shard_heard). What
 * the tracker cannot follow sets the view dirty (one read, of every shard,
 * merged). A list with shared places, of a frozen board's
 * audience, or whose read saw two seqs in one shard's counts is not
 * followed: it reads at every tick with a change, as before. */
#ifndef GW_MEMBERS_SHARD_H
#define GW_MEMBERS_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "rc_event.h"

struct gw_view;
struct gw_window;

/* Starts member list v's tracker (v->trk over v->ment, whose rows are
 * v->mbase's: the caller set them from window w just read, entries by
 * rank) by composite, or leaves it forgotten (not followed: every event
 * reads). Returns 1 when followed. */
int gw_members_shard_start(struct gw_view *v, const struct gw_window *w);

/* Judges ranked event ev for followed list v, cseq (NULL: not known, as
 * for the ring's events) the seqs of each shard its new composite was
 * counted at (gw_rank_shard.c): an enum rc_vtrack_result (CHANGED: it
 * forgot, the caller reads). */
int gw_members_shard_judge(struct gw_view *v, const struct rc_event *ev, const int64_t *cseq);

/* Where followed list v goes in its board's read index (gw_reads.c), by its
 * entries' composites (core/rc_vtrack_shard.h: a move reaches it only
 * through them): positions [*lo, *hi], 1. 0: no move can change it (not
 * followed, or no listed member on the board). -1: the index judged events
 * (through rseq[j] of each shard j) that v's tracker has not seen: it
 * forgot (reads at the next event). */
int gw_members_shard_span(struct gw_view *v, const int64_t *rseq, size_t *lo, size_t *hi);

/* v, filed, missed the moves the index judged through rseq (none reached
 * its span): its tracker moves on past them, as if each had been SAME. */
void gw_members_shard_skip(struct gw_view *v, const int64_t *rseq);

/* w (a window built from v's entries) gets the shards' seqs they stand at. */
void gw_members_shard_seqs(const struct gw_view *v, struct gw_window *w);

void gw_members_shard_free(struct gw_view *v);

#endif
