/* gw_members_shard.c - a sharded board's member list followed by composite
 * (gw_members_shard.h; core/rc_vtrack_shard.h): the tracker's side state
 * (each read row's shard and name) and its judgement of a ranked event. */
#include "fanout/gw_members_shard.h"

#include <stdlib.h>
#include <string.h>

#include "fanout/gw_fanout_int.h"
#include "rc_members.h"
#include "rc_shard.h"
#include "rc_vtrack_shard.h"

struct gw_members_shard {
    struct rc_vtrack_shard s;
    unsigned *home;     /* per row of v->mbase: its shard */
    const char **names; /* per row of v->mbase: its member (v->mbase's) */
    int64_t *asof;      /* per row of v->mbase and shard (core/rc_vtrack_shard.h) */
    size_t cap;
};

void gw_members_shard_free(struct gw_view *v)
{
    if (!v->msh)
        return;
    free(v->msh->home);
    free(v->msh->names);
    free(v->msh->asof);
    free(v->msh);
    v->msh = NULL;
}

int gw_members_shard_start(struct gw_view *v, const struct gw_window *w)
{
    const struct gw_window *base = v->mbase;
    unsigned S = v->board->decl->shards;
    rc_vtrack_forget(&v->trk);
    if (!base || !w->listed_seq || !w->shard_seq || w->nshards != S || v->r.spec.places)
        return 0; /* not followed: every event reads */
    if (!v->msh && !(v->msh = calloc(1, sizeof *v->msh)))
        return 0;
    struct gw_members_shard *m = v->msh;
    if (base->n > m->cap) {
        unsigned *h = realloc(m->home, base->n * sizeof *h);
        if (h)
            m->home = h;
        const char **nm = realloc(m->names, base->n * sizeof *nm);
        if (nm)
            m->names = nm;
        int64_t *as = realloc(m->asof, base->n * S * sizeof *as);
        if (as)
            m->asof = as;
        if (!h || !nm || !as)
            return 0;
        m->cap = base->n;
    }
    for (size_t i = 0; i < base->n; i++) {
        m->names[i] = base->rows[i].member;
        m->home[i] = rc_shard_of(base->rows[i].member, S);
    }
    rc_vtrack_shard_members(&v->trk, &m->s, v->board->decl->layout.order == RC_ORDER_DESC, S, w->listed_seq,
                            w->shard_seq, w->total, v->ment, base->n, m->names, m->home, m->asof, 0);
    return v->trk.ok;
}

int gw_members_shard_judge(struct gw_view *v, const struct rc_event *ev, const int64_t *cseq)
{
    const struct rc_view *s = &v->r.spec;
    if (!v->msh || ev->epoch[0] || !ev->member[0]) {
        rc_vtrack_forget(&v->trk); /* a new history, a reset: read */
        return RC_VTRACK_CHANGED;
    }
    return rc_vtrack_shard_event(&v->trk, &v->msh->s, ev->shard, ev->seq,
                                 rc_members_has(s->members, s->nmembers, ev->member), ev->member, ev->has_old,
                                 ev->old_c, ev->has_new, ev->c, ev->rank, cseq);
}

int gw_members_shard_span(struct gw_view *v, const int64_t *rseq, size_t *lo, size_t *hi)
{
    if (!v->msh || !v->trk.ok)
        return 0;
    for (unsigned j = 0; j < v->msh->s.nshards; j++)
        if (rseq[j] > v->msh->s.cur[j]) {
            rc_vtrack_forget(&v->trk); /* events it was not judged against went by: it reads at the next */
            return -1;
        }
    return rc_vtrack_shard_span(&v->trk, lo, hi);
}

void gw_members_shard_skip(struct gw_view *v, const int64_t *rseq)
{
    if (v->msh)
        rc_vtrack_shard_skip(&v->trk, &v->msh->s, rseq);
}

void gw_members_shard_seqs(const struct gw_view *v, struct gw_window *w)
{
    unsigned S = v->board ? v->board->decl->shards : 0;
    if (!v->msh || !S || S != v->msh->s.nshards || !(w->shard_seq = malloc(S * sizeof *w->shard_seq)))
        return;
    rc_vtrack_shard_seqs(&v->msh->s, w->shard_seq);
    w->nshards = S;
}
