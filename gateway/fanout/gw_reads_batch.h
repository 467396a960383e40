/* gw_reads_batch.h - the lazy member lists of an unsharded board caught up
 * by one run of the ring's events judged once for all of them
 * (core/rc_vbatch.h; issue 26: each list judging each event on its own was
 * more than half of the gateway's CPU at 5,000 lists and 2,000 writes/s).
 * Internal to fanout/ (below gw_reads.c, which calls it). */
#ifndef GW_READS_BATCH_H
#define GW_READS_BATCH_H

struct gw_board;
struct gw_view;
struct rc_vbatch;

/* The run of b's ring events since its lazy lists last caught up
 * (b->lazy_seq), made once for the catch-up under way; NULL when there is
 * none that can be judged so (too few lists for it to pay, an event that starts a history or resets,
 * a gap, a decaying board, out of memory): every list is judged event by
 * event then. Valid until the next call (f->vbatch). */
const struct rc_vbatch *gw_reads_batch_make(struct gw_board *b);

/* Moves lazy member list v (not dirty, not out) on by run vb: the run's
 * joins are checked against its list (a listed member's arrival reads it),
 * the spared events counted, and v made due when its entries moved, as
 * each event judged alone would. Returns 0, or -1 when the run cannot
 * judge v (v untouched: the caller judges it event by event). */
int gw_reads_batch_judge(struct gw_view *v, const struct rc_vbatch *vb);

/* The catch-up of b's lazy lists is done: the next run starts at the
 * ring's newest event. */
void gw_reads_batch_done(struct gw_board *b);

#endif
