/* gw_reads.h - when the read views (around views, deep pages, member lists,
 * rosters) read Redis again: the change events they can judge spare the
 * read (gw_reads.c; the lists' shared run of events: gw_reads_batch.h). */
#ifndef GW_READS_H
#define GW_READS_H

#include <stdint.h>

struct gw_board;
struct gw_view;
struct gw_window;
struct rc_event;

/* Change event ev of (unsharded) board b, pushed to its ring: the read
 * views it can have changed read again on the next tick, the others not. */
void gw_reads_event(struct gw_board *b, const struct rc_event *ev);
/* Sharded boards (gw_members_shard.h): a ranked event to the lists that
 * follow events; a message heard: every other read view reads. */
void gw_reads_shard_event(struct gw_board *b, const struct rc_event *ev, const int64_t *cseq);
void gw_reads_shard_heard(struct gw_board *b);
/* A read of v came back with window w: v's tracker starts from it and
 * judges the ring's events newer than it (v is set dirty when one can
 * have changed it). Call before w is handed on. */
void gw_reads_track(struct gw_view *v, const struct gw_window *w);
/* A read of v failed: the events skipped while it was out are judged
 * against the tracker of its read before. */
void gw_reads_failed(struct gw_view *v);
/* b's member lists judge the events they have not judged yet, from the
 * ring (before the tick looks at its views). */
void gw_reads_catch_up(struct gw_board *b);
#endif
