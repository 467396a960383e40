/* gw_read_at_member.c - a sharded board (docs/sharded.md) at a past time,
 * about one member (docs/history.md, "Sharded boards"): the window around
 * it (AROUND) or its score and rank at many times (POINTS). Two rounds, and
 * each shard is read once, so every shard shows one state of its own:
 *   1. the member's shard: read.lua moment "around" (the member's composite
 *      at the time, its rank in the shard and its neighbours there) or
 *      "points" (its composite and rank in the shard at each time);
 *   2. every other shard at the same times: "near" (the members ahead of
 *      the member's composite by the merged order's rule, core/rc_shard.h,
 *      and the rows radius either side of them) or "counts" (the members
 *      ahead at each time).
 * The window is merged as the present's (gw_read_merge_around); a rank is
 * the rank in the member's shard plus the other shards' counts. A shard
 * that no longer holds the time makes the read out_of_range; when it is
 * the member's shard, round 2 still goes out (with no bounds), so that
 * oldest is every shard's, as for a top view. */
#include "store/gw_read_at.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "store/gw_join.h"
#include "store/gw_read_int.h"
#include "store/gw_store.h"
#include "redis/gw_script.h"
#include "rc_err.h"
#include "rc_shard.h"

struct member_at;

struct one {
    struct member_at *all;
    unsigned index;
};

struct member_at {
    const struct gw_store *s;
    const struct rc_board *b;
    char board[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    enum rc_moment_view view;          /* AROUND or POINTS */
    char member[RC_MEMBER_MAX + 1];
    int64_t radius;
    int64_t *targets;                  /* the times asked (owned) */
    size_t ntargets;
    unsigned nshards, home, pending;
    int round2, code, deep;
    int sending;                       /* inside round2's loop: an answer does not end the round */
    int present;                       /* AROUND: the member was on the board then */
    size_t at;                         /* AROUND: the member's row in parts[home] */
    int64_t before;                    /* AROUND: its shard's members ahead of that part's first row */
    struct rc_moment_bound *bounds;    /* the member's composite at each time (owned; has 0: absent) */
    struct rc_history_point *points;   /* POINTS (owned) */
    struct one one[RC_SHARDS_MAX];
    struct gw_shard_part parts[RC_SHARDS_MAX];
    gw_read_at_cb *cb;
    void *privdata;
    struct gw_read_at_result res;
};

static void all_free(struct member_at *m)
{
    for (unsigned i = 0; i < m->nshards; i++)
        gw_read_merge_part_clear(&m->parts[i]);
    free(m->targets);
    free(m->bounds);
    free(m->points);
    free(m);
}

static void on_joined(struct gw_window *w, void *privdata)
{
    struct member_at *m = privdata;
    m->res.w = w;
    m->cb(0, &m->res, m->privdata); /* the window is the callback's */
    all_free(m);
}

static void latest_at(struct member_at *m, const struct rc_moment_target *t)
{
    if (t->has_at && (!m->res.has_at_time || t->at > m->res.at_time)) {
        m->res.has_at_time = 1; /* the latest change shown, of any shard */
        m->res.at_time = t->at;
    }
}

/* The in-put of core/rc_moment for the changes of r after target t. */
static struct rc_moment_in moment_in(const struct member_at *m, const struct rc_moment_reply *r,
                                     const struct rc_moment_target *t)
{
    size_t from = rc_moment_args_after(r, t->seq);
    return (struct rc_moment_in){.desc = m->b->layout.order == RC_ORDER_DESC, .slice = r->rows, .nslice = r->nrows,
                                 .lo = r->lo, .total = r->head.total, .changes = r->changes + from,
                                 .nchanges = r->nchanges - from};
}

static int set_part(struct gw_shard_part *p, const struct rc_moment_reply *r, int64_t seq, int64_t total,
                    const struct rc_moment_out *out)
{
    struct rc_read_row *rows = malloc((out->n ? out->n : 1) * sizeof *rows);
    if (!rows)
        return RC_E_INTERNAL;
    for (size_t k = 0; k < out->n; k++)
        rows[k] = (struct rc_read_row){out->rows[k].member, out->rows[k].c};
    int rc = gw_read_merge_part_set_rows(p, rows, out->n);
    free(rows);
    p->head = r->head;
    p->head.seq = seq;
    p->head.total = total;
    return rc;
}

/* Round 1: the member's shard. */
static int take_home(struct member_at *m, const struct rc_moment_reply *r)
{
    int desc = m->b->layout.order == RC_ORDER_DESC;
    if (r->ntargets != m->ntargets)
        return RC_E_INTERNAL;
    if (m->view == RC_MOMENT_POINTS) {
        for (size_t i = 0; i < m->ntargets; i++) {
            const struct rc_moment_target *t = &r->targets[i];
            struct rc_history_point *p = &m->points[i];
            struct rc_moment_in in = moment_in(m, r, t);
            int64_t fields[RC_MAX_FIELDS];
            unsigned nf = 0;
            p->at = m->targets[i];
            p->seq = t->seq;
            p->present = t->has_c;
            if (!t->has_c)
                continue;
            gw_window_decode_score(m->b, t->c, &p->score, fields, &nf);
            p->rank = rc_moment_rank(desc, m->member, t->c, t->ahead, in.changes, in.nchanges);
            m->bounds[i] = (struct rc_moment_bound){.has = 1, .c = t->c};
        }
        return 0;
    }
    const struct rc_moment_target *t = &r->targets[0];
    struct rc_moment_in in = moment_in(m, r, t);
    struct rc_moment_out out;
    int rc = rc_moment_around(&in, m->member, m->radius, &out);
    if (rc)
        return rc;
    latest_at(m, t);
    for (size_t k = 0; k < out.n; k++)
        if (strcmp(out.rows[k].member, m->member) == 0) {
            m->present = 1;
            m->at = k;
            m->before = out.first_rank - 1;
            m->bounds[0] = (struct rc_moment_bound){.has = 1, .c = out.rows[k].c};
        }
    rc = set_part(&m->parts[m->home], r, t->seq, out.total, &out);
    rc_moment_out_free(&out);
    return rc;
}

/* Round 2: shard j, another one. */
static int take_other(struct member_at *m, unsigned j, const struct rc_moment_reply *r)
{
    int desc = m->b->layout.order == RC_ORDER_DESC, incl = rc_shard_count_inclusive(j, m->home) == 1;
    if (r->ntargets != m->ntargets)
        return RC_E_INTERNAL;
    if (m->view == RC_MOMENT_POINTS) {
        for (size_t i = 0; i < m->ntargets; i++) {
            const struct rc_moment_target *t = &r->targets[i];
            struct rc_moment_in in = moment_in(m, r, t);
            m->points[i].seq += t->seq; /* a sharded seq is the sum of the shards' */
            if (m->points[i].present)
                m->points[i].rank += rc_moment_ahead(desc, m->bounds[i].c, incl, t->ahead, in.changes, in.nchanges);
        }
        return 0;
    }
    const struct rc_moment_target *t = &r->targets[0];
    struct rc_moment_in in = moment_in(m, r, t);
    struct rc_moment_out out = {0};
    int rc;
    latest_at(m, t);
    if (!m->present) {
        /* the member was not on the board: the shard's seq and size then */
        rc = rc_moment_total(&in, &out.total);
        return rc ? rc : set_part(&m->parts[j], r, t->seq, out.total, &out);
    }
    int64_t ahead = 0;
    if ((rc = rc_moment_near(&in, m->bounds[0].c, incl, t->ahead, m->radius, &out, &ahead)) != 0)
        return rc;
    rc = set_part(&m->parts[j], r, t->seq, out.total, &out);
    m->parts[j].count = ahead;
    m->parts[j].na = (size_t)(ahead - (out.first_rank - 1));
    rc_moment_out_free(&out);
    return rc;
}

static void settle(struct member_at *m)
{
    if (m->code || m->res.status != RC_MOMENT_OK) {
        if (!m->code && m->deep && m->s->undo_refused)
            (*m->s->undo_refused)++; /* one refusal a read, however many shards */
        m->res.deep = m->deep;
        m->cb(m->code, m->code ? NULL : &m->res, m->privdata);
        all_free(m);
        return;
    }
    if (m->view == RC_MOMENT_POINTS) {
        m->res.points = m->points;
        m->res.npoints = m->ntargets;
        m->cb(0, &m->res, m->privdata);
        all_free(m);
        return;
    }
    struct gw_window *w = calloc(1, sizeof *w);
    int rc = w ? 0 : RC_E_INTERNAL, next_tied = 0;
    if (!rc && m->present) {
        rc = gw_read_merge_around(m->b, m->parts, m->nshards, m->home, m->at, m->before, m->radius, w, &next_tied);
    } else if (!rc) {
        gw_read_merge_head(w, m->parts, m->nshards); /* absent: no rows, first_rank 0 */
        rc = gw_window_set_rows(m->b, w, NULL, 0);
    }
    if (rc) {
        gw_window_free(w);
        m->cb(rc, NULL, m->privdata);
        all_free(m);
        return;
    }
    m->res.at_seq = w->seq; /* the sum of the shards' seqs shown */
    memcpy(m->res.head.epoch, w->epoch, sizeof m->res.head.epoch);
    gw_join_profiles(m->s->profiles, w, on_joined, m);
}

static void round2(struct member_at *m);

static void on_reply(redisReply *reply, void *privdata)
{
    struct one *o = privdata;
    struct member_at *m = o->all;
    struct rc_moment_reply r;
    int home = o->index == m->home && !m->round2;
    enum rc_moment_view view = home ? m->view
                               : m->view == RC_MOMENT_AROUND && m->present ? RC_MOMENT_NEAR : RC_MOMENT_COUNTS;
    int code = gw_read_at_shard_take(reply, view, 1, &m->res, &m->deep, &r);
    if (!code && r.status == RC_MOMENT_OK && !m->code && m->res.status == RC_MOMENT_OK)
        code = home ? take_home(m, &r) : take_other(m, o->index, &r);
    if (code && !m->code)
        m->code = code;
    rc_moment_args_reply_free(&r);
    if (--m->pending || m->sending)
        return;
    if (m->round2 || m->code || m->nshards < 2)
        settle(m);
    else
        round2(m);
}

/* Every other shard at the same times: near or counts about the member's
 * composites (none where it was absent, or when its shard refused). */
static void round2(struct member_at *m)
{
    struct rc_moment_bound *bounds = malloc(m->ntargets * sizeof *bounds);
    int near = m->view == RC_MOMENT_AROUND && m->present && m->res.status == RC_MOMENT_OK;
    struct rc_moment_req req = {.by_time = 1, .view = near ? RC_MOMENT_NEAR : RC_MOMENT_COUNTS,
                                .radius = m->radius, .bounds = bounds, .targets = m->targets,
                                .ntargets = m->ntargets};
    int rc = bounds ? 0 : RC_E_INTERNAL;
    m->round2 = 1;
    m->sending = 1;
    for (unsigned j = 0; !rc && j < m->nshards; j++) {
        if (j == m->home)
            continue;
        /* the merged order: a lower shard's equal composites are ahead */
        int incl = rc_shard_count_inclusive(j, m->home) == 1;
        for (size_t i = 0; i < m->ntargets; i++) {
            bounds[i] = m->res.status == RC_MOMENT_OK ? m->bounds[i] : (struct rc_moment_bound){0};
            bounds[i].inclusive = incl;
        }
        m->one[j] = (struct one){m, j};
        m->pending++; /* before the call: an answer may not come later than it */
        if ((rc = gw_read_at_shard_send(m->s, m->b, m->board, m->period, j, &req, on_reply, &m->one[j])) != 0)
            m->pending--; /* the calls sent answer later: the last one settles with the code */
    }
    free(bounds);
    m->sending = 0;
    if (rc && !m->code)
        m->code = rc;
    if (m->pending == 0)
        settle(m); /* every answer in (or none sent) */
}

int gw_read_at_member(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                      const struct rc_moment_req *req, gw_read_at_cb *cb, void *privdata)
{
    if (!req->by_time || !req->member || !req->member[0] || req->ntargets < 1 ||
        req->ntargets > RC_MOMENT_TARGETS_MAX || b->shards > RC_SHARDS_MAX ||
        !(req->view == RC_MOMENT_POINTS || (req->view == RC_MOMENT_AROUND && req->ntargets == 1)))
        return RC_E_BAD_REQUEST;
    if (!s->redis)
        return RC_E_UNAVAILABLE;
    struct member_at *m = calloc(1, sizeof *m);
    if (!m)
        return RC_E_INTERNAL;
    *m = (struct member_at){.s = s, .b = b, .view = req->view, .radius = req->radius, .ntargets = req->ntargets,
                            .nshards = b->shards, .home = rc_shard_of(req->member, b->shards), .cb = cb,
                            .privdata = privdata};
    snprintf(m->board, sizeof m->board, "%s", board);
    snprintf(m->period, sizeof m->period, "%s", period ? period : "");
    snprintf(m->member, sizeof m->member, "%s", req->member);
    m->targets = malloc(req->ntargets * sizeof *m->targets);
    m->bounds = calloc(req->ntargets, sizeof *m->bounds);
    m->points = req->view == RC_MOMENT_POINTS ? calloc(req->ntargets, sizeof *m->points) : NULL;
    if (!m->targets || !m->bounds || (req->view == RC_MOMENT_POINTS && !m->points)) {
        all_free(m);
        return RC_E_INTERNAL;
    }
    memcpy(m->targets, req->targets, req->ntargets * sizeof *m->targets);
    struct rc_moment_req one = *req;
    one.audience = 0; /* a sharded board is never frozen */
    m->one[m->home] = (struct one){m, m->home};
    m->pending = 1;
    int rc = gw_read_at_shard_send(s, b, m->board, m->period, m->home, &one, on_reply, &m->one[m->home]);
    if (rc)
        all_free(m);
    return rc;
}
