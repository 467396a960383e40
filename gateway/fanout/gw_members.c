/* gw_members.c - a member list's next window without a read: the rows of
 * its last read (v->mbase) at the ranks and composites its tracker
 * followed from the change events since (gw_reads.c, core/rc_vtrack.h),
 * handed to gw_view_update like a read's window (the delta rule is
 * core/rc_delta's, rc_delta_make_members). Only the scores of members whose
 * composite changed are decoded again; profiles are the read's. */
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
    const struct gw_window *base = v->mbase;
    struct gw_window *w = calloc(1, sizeof *w);
    if (w) {
        *w = *base;
        w->rows = NULL;
        w->n = 0;
        w->members = NULL;
        w->shard_seq = NULL;
        w->listed_seq = NULL;
        w->nshards = 0;
        w->rows = calloc(v->trk.nent ? v->trk.nent : 1, sizeof *w->rows);
    }
    if (!w || !w->rows) {
        gw_window_free(w);
        gw_board_view_set_dirty(v); /* out of memory: a read says it */
        return;
    }
    w->seq = v->trk.seq;
    w->total = v->trk.total;
    gw_members_shard_seqs(v, w); /* (a sharded board's: the shards' seqs the entries stand at) */
    for (size_t i = 0; i < v->trk.nent; i++) {
        const struct rc_vtrack_entry *e = &v->trk.ent[i];
        struct rc_row *r = &w->rows[w->n];
        *r = base->rows[e->row];
        r->rank = e->rank;
        if (r->c != e->c) {
            r->c = e->c;
            gw_window_decode_score(b->decl, e->c, &r->score, r->fields, &r->nfields);
        }
        if (!(r->member = strdup(base->rows[e->row].member))) {
            gw_window_free(w);
            gw_board_view_set_dirty(v);
            return;
        }
        gw_profile_ref(r->profile);
        w->n++;
    }
    gw_view_update(v->f, v, w);
}
