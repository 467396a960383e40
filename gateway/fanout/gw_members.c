/* gw_members.c - a member list's next window without a read: the rows of
 * its last read (v->mbase) at the ranks and composites its tracker
 * followed from the change events since (gw_reads.c, core/rc_vtrack.h),
 * handed to gw_view_update like a read's window (the delta rule is
 * core/rc_delta's, rc_delta_make_members_by_id). Only the scores of members
 * whose composite changed are decoded again; members and profiles are the
 * read's, borrowed (the window holds its base), not copied: issue 26, at
 * 5,000 lists a copy of every member name and a profile reference per row
 * per tick, and the diff by name, were most of the gateway's CPU. Each row
 * says which row of the read it is, so two windows of one read are diffed
 * by that (gw_view.c). */
#include "fanout/gw_fanout_int.h"
#include "fanout/gw_members_shard.h"

#include <stdlib.h>
#include <string.h>

void gw_members_build(struct gw_view *v)
{
    struct gw_board *b = v->board;
    v->mmoved = 0;
    if (!b || v->dead || !v->trk.ok || !v->mbase)
        return;
    struct gw_window *base = v->mbase;
    size_t *row_id;
    struct gw_window *w = gw_window_borrowing(base, v->trk.nent, &row_id);
    if (!w) {
        gw_board_view_set_dirty(v); /* out of memory: a read says it */
        return;
    }
    w->seq = v->trk.seq;
    w->total = v->trk.total;
    gw_members_shard_seqs(v, w); /* (a sharded board's: the shards' seqs the entries stand at) */
    for (size_t i = 0; i < v->trk.nent; i++) {
        const struct rc_vtrack_entry *e = &v->trk.ent[i];
        struct rc_row *r = &w->rows[i];
        *r = base->rows[e->row]; /* (member and profile borrowed from base: w holds it) */
        r->rank = e->rank;
        if (r->c != e->c) {
            r->c = e->c;
            gw_window_decode_score(b->decl, e->c, &r->score, r->fields, &r->nfields);
        }
        row_id[i] = e->row;
    }
    w->n = v->trk.nent;
    gw_view_update(v->f, v, w);
}
