/* gw_board.c - the fan-out's boards and views: found through the registry
 * (core/rc_registry: which viewers share a view), created and freed here,
 * put on the tick's work list, and each board's ring of recent events.
 *
 * Cost. Anyone may open boards (every match:N of a template is one), so what
 * a board costs is bounded and paid only for what it uses: live boards are
 * at most max_boards (one more is answered rate_limited, or takes the place
 * of a board watched from one address only, and declared boards or keyed
 * viewers' may go past it: gw_hold.c); a board with no
 * events holds no event ring (it grows with the events, up to
 * GW_FO_RING_EVENTS); boards and views are found through hash tables keyed
 * with a secret, and lists are doubly linked, so opening, closing and each
 * event cost O(1) per board whatever the number of boards.
 *
 * The same for views (issue 23): a board files each view by what it shows
 * (mirror views in an index by rank, read views and feeds in a list each)
 * and keeps a due list of those the tick must look at, so filing, unfiling
 * and marking a view cost O(log) of the rank span, not O(views of the board).
 */
#include <uv.h>

#include "fanout/gw_fanout_int.h"
#include "fanout/gw_members_shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "rc_keys.h"
#include "redis/gw_redis.h"

struct gw_board *gw_board_find(struct gw_fanout *f, const char *name, const char *period)
{
    struct rc_reg_board *rb = rc_registry_board_find(&f->reg, name, period);
    return rb ? GW_FO_CONTAINER(rb, struct gw_board, r) : NULL;
}

/* Puts b on the work list of the next tick (once). */
void gw_board_wake(struct gw_board *b)
{
    struct gw_fanout *f = b->f;
    if (b->dead || b->wlist)
        return;
    b->wprev = NULL;
    b->wnext = f->work;
    if (f->work)
        f->work->wprev = b;
    f->work = b;
    b->wlist = &f->work;
}

void gw_board_work_remove(struct gw_board *b)
{
    if (!b->wlist)
        return;
    if (b->wprev)
        b->wprev->wnext = b->wnext;
    else
        *b->wlist = b->wnext;
    if (b->wnext)
        b->wnext->wprev = b->wprev;
    b->wnext = b->wprev = NULL;
    b->wlist = NULL;
}

void gw_board_view_due(struct gw_view *v)
{
    struct gw_board *b = v->board;
    if (!b || v->dead)
        return;
    if (!v->dlist) {
        v->dprev = NULL;
        v->dnext = b->due;
        if (b->due)
            b->due->dprev = v;
        b->due = v;
        v->dlist = &b->due;
    }
    gw_board_wake(b);
}

void gw_board_view_undue(struct gw_view *v)
{
    if (!v->dlist)
        return;
    if (v->dprev)
        v->dprev->dnext = v->dnext;
    else
        *v->dlist = v->dnext;
    if (v->dnext)
        v->dnext->dprev = v->dprev;
    v->dnext = v->dprev = NULL;
    v->dlist = NULL;
}

/* ---- the first-answer queue (gw_first.c works through it) -------------- */

void gw_board_first_queue(struct gw_fanout *f, struct gw_sub *s)
{
    f->app->metrics.first_deferred++;
    s->queued = 1;
    s->view->first_queued++;
    s->qnext = NULL;
    s->qprev = f->first_tail;
    if (f->first_tail)
        f->first_tail->qnext = s;
    else
        f->first_head = s;
    f->first_tail = s;
}

void gw_board_first_unqueue(struct gw_fanout *f, struct gw_sub *s)
{
    if (!s->queued)
        return;
    if (s->qprev)
        s->qprev->qnext = s->qnext;
    else
        f->first_head = s->qnext;
    if (s->qnext)
        s->qnext->qprev = s->qprev;
    else
        f->first_tail = s->qprev;
    s->qnext = s->qprev = NULL;
    s->queued = 0;
    s->view->first_queued--;
}

int gw_board_first_share_left(const struct gw_fanout *f)
{
    return f->first_rows < GW_FO_FIRST_ROWS_PER_TURN && f->first_us < GW_FO_FIRST_US_PER_TURN;
}

int gw_board_first_may_cut(struct gw_fanout *f, struct gw_view *v)
{
    if (gw_board_first_share_left(f) || !f->first_on) {
        f->first_rows += (size_t)v->r.spec.limit + 1;
        return 1;
    }
    for (struct gw_sub *s = v->subs; s; s = s->vnext)
        if (s->pending && !s->queued)
            gw_board_first_queue(f, s);
    return 0;
}

void gw_board_view_set_dirty(struct gw_view *v)
{
    v->dirty = 1;
    gw_board_view_due(v);
}

/* A change to the board: its views read from Redis (around views, pages
 * past the mirror) read again on the next tick; mirror views follow the
 * mirror, feeds their events. */
void gw_board_mark_reads_dirty(struct gw_board *b)
{
    for (struct gw_view *v = b->reads; v; v = v->knext) {
        /* (the audience of a frozen board sees no live change) */
        if (!gw_board_view_held(v))
            gw_board_view_set_dirty(v);
    }
}

int gw_board_view_mirror_shaped(const struct gw_view *v)
{
    return (v->r.spec.kind == RC_VIEW_TOP || v->r.spec.kind == RC_VIEW_PAGE) &&
           (uint64_t)v->r.spec.offset + v->r.spec.limit <= GW_FO_MIRROR_MAX_ROWS;
}

/* The list of b's that v goes in when it is not a mirror view. */
static struct gw_view **kind_list(struct gw_board *b, const struct gw_view *v)
{
    return v->r.spec.kind == RC_VIEW_FEED ? &b->feeds : &b->reads;
}

/* Files v on b (v->board): a mirror view in the index by the ranks it shows
 * (with shared places from rank 1 to one row past its end: a tie above or
 * across its end moves its places), any other in its list. */
static void view_file(struct gw_board *b, struct gw_view *v)
{
    if (gw_board_view_mirror_shaped(v)) {
        size_t end = (size_t)v->r.spec.offset + v->r.spec.limit + (v->r.spec.places ? 1 : 0);
        if (rc_vindex_add(&b->vix, &v->ix, v->r.spec.places ? 0 : (size_t)v->r.spec.offset, end) != 0)
            b->vix_lost = 1; /* out of memory: its refreshes walk every view */
        return;
    }
    rc_vtrack_forget(&v->trk); /* (a read view: in the read index once read, gw_reads.c) */
    b->nreads += v->r.spec.kind == RC_VIEW_FEED ? 0 : 1;
    struct gw_view **head = kind_list(b, v);
    v->kprev = NULL;
    v->knext = *head;
    if (*head)
        (*head)->kprev = v;
    *head = v;
}

static void view_unfile(struct gw_board *b, struct gw_view *v)
{
    gw_board_view_undue(v);
    if (gw_board_view_mirror_shaped(v)) {
        rc_vindex_remove(&b->vix, &v->ix);
        return;
    }
    rc_vindex_remove(&b->rix, &v->ix); /* (a read view's place in the read index, if any) */
    b->nrfiled -= v->rfiled ? 1 : 0;
    v->rfiled = 0;
    b->nlazy -= v->rlazy ? 1 : 0;
    v->rlazy = 0;
    b->nreads -= v->r.spec.kind == RC_VIEW_FEED ? 0 : 1;
    if (v->kprev)
        v->kprev->knext = v->knext;
    else
        *kind_list(b, v) = v->knext;
    if (v->knext)
        v->knext->kprev = v->kprev;
    v->knext = v->kprev = NULL;
}

void gw_board_view_refile(struct gw_view *v, struct gw_board *nb)
{
    view_unfile(v->board, v);
    v->board = nb;
    view_file(nb, v);
}

void gw_board_set_stale(struct gw_board *b)
{
    b->stale = 1;
    gw_board_wake(b);
}

/* The i-th oldest of the board's recent events (i < ring_len). */
const struct rc_event *gw_board_ring_at(const struct gw_board *b, size_t i)
{
    return &b->ring[(b->ring_head + i) % b->ring_cap];
}

/* Keeps ev as the board's newest recent event. The ring starts at
 * GW_FO_RING_FIRST events with the board's first event and doubles as it fills,
 * up to GW_FO_RING_EVENTS (GW_FO_RING_FROZEN while the board is frozen); then
 * the oldest goes. (Out of memory: it stops growing and drops the oldest
 * earlier, as a full ring does.) */
void gw_board_ring_push(struct gw_board *b, const struct rc_event *ev)
{
    size_t max = b->freeze_was.frozen ? GW_FO_RING_FROZEN : GW_FO_RING_EVENTS;
    if (b->ring_len == b->ring_cap && b->ring_cap > max)
        gw_board_ring_shrink(b, max); /* thawed, and the hidden changes long revealed */
    if (b->ring_len == b->ring_cap && b->ring_cap < max) {
        size_t cap = b->ring_cap ? b->ring_cap * 2 : GW_FO_RING_FIRST;
        struct rc_event *r = malloc((cap < max ? cap : max) * sizeof *r);
        if (r) {
            for (size_t i = 0; i < b->ring_len; i++)
                r[i] = *gw_board_ring_at(b, i);
            free(b->ring);
            b->ring = r;
            b->ring_cap = cap < max ? cap : max;
            b->ring_head = 0;
        }
    }
    if (!b->ring_cap)
        return;
    if (b->ring_len == b->ring_cap) {
        b->ring[b->ring_head] = *ev;
        b->ring_head = (b->ring_head + 1) % b->ring_cap;
    } else {
        b->ring[(b->ring_head + b->ring_len) % b->ring_cap] = *ev;
        b->ring_len++;
    }
}

void gw_board_ring_shrink(struct gw_board *b, size_t n)
{
    if (b->ring_cap <= n)
        return;
    struct rc_event *r = malloc(n * sizeof *r);
    if (!r)
        return; /* keeps the bigger ring */
    size_t keep = b->ring_len < n ? b->ring_len : n;
    for (size_t i = 0; i < keep; i++)
        r[i] = *gw_board_ring_at(b, b->ring_len - keep + i);
    free(b->ring);
    b->ring = r;
    b->ring_cap = n;
    b->ring_len = keep;
    b->ring_head = 0;
}

/* A read or an event says the board's history is `epoch`: the ring's events
 * of another history are dropped (a feed must never replay them into this
 * one). The first word on a new board is taken as is: the events that raced
 * it belong to it. */
void gw_board_follow_epoch(struct gw_board *b, const char *epoch)
{
    if (b->epoch_known && strcmp(b->epoch, epoch) == 0)
        return;
    if (b->epoch_known) {
        b->ring_len = 0;
        b->ring_head = 0;
        b->rix_seq = -1; /* (seqs of another history: the next event walks every read view) */
        for (unsigned j = 0; b->sh && j < RC_SHARDS_MAX; j++)
            b->sh->rseq[j] = -1;
    }
    b->epoch_known = 1;
    snprintf(b->epoch, sizeof b->epoch, "%s", epoch);
}

/* Which of a read and an event is newer (a read answers over the command
 * connection, events come over the subscription: either can come first). A
 * read that names another epoch than the board's is older than the ring
 * when the ring's first event began the board's history (it carries that
 * epoch) at the read's seq + 1: the read saw the board just before that
 * history began (the empty board after a DEL of the set or a Redis that
 * came back empty, or the history that ended), so its epoch is not
 * followed: the ring is kept and its first event carries the reader into
 * the new history. Any other read is followed (gw_board_follow_epoch).
 * Returns 1 when the read's epoch was followed, 0 when it predates. */
int gw_board_follow_read(struct gw_board *b, const char *epoch, int64_t seq)
{
    const struct rc_event *first = b->ring_len ? gw_board_ring_at(b, 0) : NULL;
    if (b->epoch_known && strcmp(b->epoch, epoch) != 0 && first && first->seq == seq + 1 &&
        strcmp(first->epoch, b->epoch) == 0)
        return 0;
    gw_board_follow_epoch(b, epoch);
    return 1;
}

/* The board's change channel is wanted while the board lives here: on a
 * cluster that is what SSUBSCRIBEs it on its node (redis/gw_redis.h). */
static void want_one(struct gw_fanout *f, const char *name, const char *period, int want)
{
    char ch[RC_KEY_MAX];
    if (rc_keys_board(ch, sizeof ch, name, period, "ch", NULL) != 0)
        return;
    if (want)
        gw_redis_channel_add(f->app->redis, ch);
    else
        gw_redis_channel_remove(f->app->redis, ch);
}

/* (A sharded board: each of its shards' channels, docs/sharded.md.) */
static void want_channel(struct gw_fanout *f, const struct gw_board *b, int want)
{
    if (!f->app->redis)
        return;
    if (b->decl->shards <= 1) {
        want_one(f, b->r.name, b->r.period, want);
        return;
    }
    for (unsigned i = 0; i < b->decl->shards; i++) {
        char name[RC_SHARD_NAME_MAX + 1];
        if (rc_shard_name(name, sizeof name, b->r.name, i) == 0)
            want_one(f, name, b->r.period, want);
    }
}

/* The live board `name` in `period`, created (without views) when missing.
 * NULL when out of memory, or *over_cap = 1 when creating it would take the
 * live boards past max_boards (only when enforce_cap: a rollover moving
 * existing viewers on is not refused). */
struct gw_board *gw_board_get(struct gw_fanout *f, const struct rc_board *decl, const char *name,
                                  const char *period, int enforce_cap, int *over_cap)
{
    struct gw_board *b = gw_board_find(f, name, period);
    if (b)
        return b;
    if (enforce_cap && rc_registry_nboards(&f->reg) >= f->app->conf->max_boards) {
        *over_cap = 1;
        return NULL;
    }
    b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->f = f;
    b->decl = decl;
    rc_vindex_init(&b->vix);
    rc_vindex_init(&b->rix);
    b->rix_seq = -1;
    if (decl->shards > 1 && !(b->sh = calloc(1, sizeof *b->sh))) {
        free(b);
        return NULL;
    }
    for (unsigned j = 0; b->sh && j < RC_SHARDS_MAX; j++)
        b->sh->rseq[j] = -1;
    rc_mirror_init_sharded(&b->mirror, decl->layout.order, decl->shards);
    if (rc_registry_board_add(&f->reg, &b->r, name, period) != 0) {
        rc_mirror_free(&b->mirror);
        free(b->sh);
        free(b);
        return NULL;
    }
    if (gw_vcount_attach(f, b) != 0) {
        rc_registry_board_remove(&f->reg, &b->r);
        rc_mirror_free(&b->mirror);
        free(b->sh);
        free(b);
        return NULL;
    }
    b->next = f->all;
    if (f->all)
        f->all->prev = b;
    f->all = b;
    want_channel(f, b, 1);
    if (decl->period.kind != RC_PERIOD_NONE) {
        /* its views may have to move on when its period ends */
        struct rc_period cur;
        if (rc_period_at(&decl->period, gw_now_ms(f->app), &cur) != 0)
            f->rollover_at = 0;
        else if (cur.end_ms < f->rollover_at)
            f->rollover_at = cur.end_ms;
    }
    return b;
}

/* A board without views leaves the table, the list and the work list at
 * once (O(1)); its memory goes when the last reload or fetch in flight is
 * back. */
void gw_board_maybe_free(struct gw_fanout *f, struct gw_board *b)
{
    if (gw_fo_first_view(b))
        return;
    if (!b->dead) {
        rc_registry_board_remove(&f->reg, &b->r);
        if (b->prev)
            b->prev->next = b->next;
        else
            f->all = b->next;
        if (b->next)
            b->next->prev = b->prev;
        gw_board_work_remove(b);
        want_channel(f, b, 0);
        gw_vcount_detach(f, b);
        b->dead = 1;
    }
    if (b->refs == 0) {
        rc_vindex_free(&b->vix); /* (empty by now: its views were unfiled) */
        rc_vindex_free(&b->rix);
        rc_mirror_free(&b->mirror);
        gw_rowteam_free(b->rt);
        free(b->raced); /* a sharded board's events that raced a reload (gw_mirror.c) */
        if (b->sh) /* a sharded board's events waiting for ranks (gw_feed_shard.c) */
            free(b->sh->spend);
        free(b->sh);
        free(b->ring);
        free(b);
    }
}

void gw_board_unref(struct gw_board *b)
{
    b->refs--;
    if (b->dead)
        gw_board_maybe_free(b->f, b);
}

/* The view of board b with spec and follows, shared with the viewers
 * already on it, or a new one (refs = 1, no viewers). NULL on OOM. */
struct gw_view *gw_board_view_get(struct gw_fanout *f, struct gw_board *b, const struct rc_view *spec, int follows)
{
    struct rc_reg_view *rv = rc_registry_view_find(&f->reg, &b->r, spec, follows);
    if (rv)
        return GW_FO_CONTAINER(rv, struct gw_view, r);
    struct gw_view *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    struct rc_view own = *spec; /* a member list: the view's own copy of its names */
    if (spec->kind == RC_VIEW_MEMBERS) {
        if (!spec->members_len || !(own.members = malloc(spec->members_len))) {
            free(v);
            return NULL;
        }
        memcpy(own.members, spec->members, spec->members_len);
    }
    v->f = f;
    v->board = b;
    v->refs = 1;
    v->gate.rate = spec->max_rate;
    /* Out of memory for the table, it is served all the same, just not
     * found by a later subscribe to the same view (which makes its own). */
    (void)rc_registry_view_add(&f->reg, &v->r, &b->r, &own, follows);
    view_file(b, v);
    return v;
}

void gw_board_view_unref(struct gw_view *v)
{
    if (--v->refs == 0) {
        gw_window_free(v->last);
        gw_window_free(v->held);
        free(v->r.spec.members);
        free(v->roster);
        gw_window_free(v->mbase);
        free(v->ment);
        gw_members_shard_free(v);
        free(v);
    }
}

/* Takes a view without viewers off its board (it is freed when its reads
 * are back) and returns that board, which the caller resizes or frees. */
struct gw_board *gw_board_view_detach(struct gw_fanout *f, struct gw_view *v)
{
    struct gw_board *b = v->board;
    view_unfile(b, v);
    rc_registry_view_remove(&f->reg, &v->r);
    v->dead = 1;
    v->board = NULL;
    gw_board_view_unref(v);
    return b;
}

int gw_board_view_held(const struct gw_view *v)
{
    return !v->r.spec.live && v->board && v->board->freeze_was.frozen;
}

/* The mirror follows the live board: an audience view of a frozen board is
 * read from Redis (the frozen copy) instead. (A sharded board's mirror is
 * of the merged order, fed by every shard's events: docs/sharded.md.) */
int gw_board_view_uses_mirror(const struct gw_view *v)
{
    return gw_board_view_mirror_shaped(v) && !gw_board_view_held(v);
}

void gw_board_heard_freeze(struct gw_board *b, const struct rc_freeze *fr)
{
    if (!rc_freeze_newer(&b->freeze, fr))
        return;
    b->freeze = *fr;
    b->freeze_due = !rc_freeze_same(&b->freeze, &b->freeze_was);
    if (b->freeze_due)
        gw_board_wake(b);
}
