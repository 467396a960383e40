/* gw_read_at.c - a board at past moments (see gw_read_at.h). The script
 * hands back a slice of the present set and the changes after the moment;
 * core/rc_moment undoes them. Not counted by the read gate: its rows are
 * bounded by the margin of the changes undone (docs/history.md, "Cost"). A
 * moment past history_undo_max from both its bases is read in bounded
 * calls instead (store/gw_read_at_chain.c). */
#include "store/gw_read_at.h"

#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "store/gw_join.h"
#include "store/gw_profile.h"
#include "store/gw_read_at_chain.h"
#include "store/gw_store.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_err.h"
#include "rc_members.h"
#include "rc_score.h"

struct at_call {
    const struct gw_store *s;
    const struct rc_board *b;
    enum rc_moment_view view;
    char member[RC_MEMBER_MAX + 1];
    char board[RC_BOARD_MAX + 8];  /* (a shard's name "B#i" too) */
    char period[RC_PERIOD_ID_MAX];
    int64_t first, count, radius;
    int64_t *targets;
    size_t ntargets;
    char *members;              /* LIST: the names asked, back to back (owned) */
    uint32_t nmembers;
    gw_read_at_cb *cb;
    void *privdata;
    struct gw_read_at_result res;
    /* POINTS: segmented (docs/history.md, "Rank history at any span"):
     * each call answers the newest of the targets left, the next asks for
     * the rest below the oldest seq shown so far */
    struct rc_moment_req req;   /* the request again, its targets and member ours */
    size_t left;                /* targets[0..left) not answered yet */
    int64_t below;
    int calls;
};

static int send_call(struct at_call *c);

static void call_free(struct at_call *c)
{
    free(c->targets);
    free(c->members);
    free(c);
}

static void finish(struct at_call *c, int code)
{
    c->cb(code, code ? NULL : &c->res, c->privdata); /* no window here: errors, BEYOND, GONE, POINTS */
    free(c->res.points);
    call_free(c);
}

static void on_joined(struct gw_window *w, void *privdata)
{
    struct at_call *c = privdata;
    c->res.w = NULL;
    c->cb(0, &(struct gw_read_at_result){.status = c->res.status, .oldest = c->res.oldest, .head = c->res.head,
                                          .at_seq = c->res.at_seq, .has_at_time = c->res.has_at_time,
                                          .at_time = c->res.at_time, .w = w},
          c->privdata);
    call_free(c);
}

/* The window at the target from the reply: 0 or RC_E_INTERNAL. */
static int rebuild_window(struct at_call *c, const struct rc_moment_reply *r)
{
    const struct rc_moment_target *t = &r->targets[0];
    size_t from = rc_moment_args_after(r, t->seq);
    struct rc_moment_in in = {.desc = c->b->layout.order == RC_ORDER_DESC, .slice = r->rows, .nslice = r->nrows,
                              .lo = r->lo, .total = r->head.total, .changes = r->changes + from,
                              .nchanges = r->nchanges - from};
    struct rc_moment_out out;
    int rc = c->view == RC_MOMENT_RANGE ? rc_moment_range(&in, c->first, c->count, &out)
                                        : rc_moment_around(&in, c->member, c->radius, &out);
    if (rc)
        return rc;
    struct gw_window *w = calloc(1, sizeof *w);
    struct rc_read_row *rows = malloc((out.n ? out.n : 1) * sizeof *rows);
    if (!w || !rows) {
        free(w);
        free(rows);
        rc_moment_out_free(&out);
        return RC_E_INTERNAL;
    }
    for (size_t i = 0; i < out.n; i++)
        rows[i] = (struct rc_read_row){out.rows[i].member, out.rows[i].c};
    gw_window_set_head(w, &r->head);
    w->seq = t->seq;
    w->total = out.total;
    w->first_rank = out.first_rank;
    rc = gw_window_set_rows(c->b, w, rows, out.n);
    free(rows);
    rc_moment_out_free(&out);
    if (rc) {
        gw_window_free(w);
        return rc;
    }
    c->res.w = w;
    return 0;
}

/* The listed members on the board at the target, each with its rank then,
 * in rank order (a window as a live member list's): 0 or RC_E_INTERNAL. */
static int rebuild_list(struct at_call *c, const struct rc_moment_reply *r)
{
    const struct rc_moment_target *t = &r->targets[0];
    size_t from = rc_moment_args_after(r, t->seq);
    int desc = c->b->layout.order == RC_ORDER_DESC;
    struct rc_moment_in in = {.desc = desc, .total = r->head.total, .changes = r->changes + from,
                              .nchanges = r->nchanges - from};
    struct gw_window *w = calloc(1, sizeof *w);
    struct rc_read_row *rows = malloc((c->nmembers + 1) * sizeof *rows);
    int64_t *ranks = malloc((c->nmembers + 1) * sizeof *ranks);
    int rc = !w || !rows || !ranks || r->nlisted != c->nmembers ? RC_E_INTERNAL : 0;
    if (!rc) {
        gw_window_set_head(w, &r->head); /* (its total is the present's: set below) */
        rc = rc_moment_total(&in, &w->total);
    }
    size_t n = 0;
    const char *m = c->members;
    struct rc_moment_row *mr = rc ? NULL : malloc((c->nmembers + 1) * sizeof *mr);
    int64_t *ahead = rc ? NULL : malloc((c->nmembers + 1) * sizeof *ahead);
    if (!rc && (!mr || !ahead))
        rc = RC_E_INTERNAL;
    for (uint32_t i = 0; !rc && i < c->nmembers; i++, m += strlen(m) + 1) {
        const struct rc_moment_target *l = &r->listed[i];
        if (!l->has_c)
            continue;
        rows[n] = (struct rc_read_row){m, l->c};
        mr[n] = (struct rc_moment_row){m, l->c};
        ahead[n++] = l->ahead;
    }
    /* all at once: a roster lists thousands (rc_moment_ranks) */
    if (!rc)
        rc = rc_moment_ranks(desc, mr, ahead, n, in.changes, in.nchanges, ranks);
    free(mr);
    free(ahead);
    if (!rc) {
        w->seq = t->seq;
        w->first_rank = 0;
        rc = gw_window_set_ranked_rows(c->b, w, rows, ranks, n);
    }
    free(rows);
    free(ranks);
    if (rc) {
        if (w)
            gw_window_free(w);
        return rc;
    }
    c->res.w = w;
    return 0;
}

/* The score and rank of the targets the reply answers, the newest of
 * those left (targets are ascending): 0 or RC_E_INTERNAL. */
static int rebuild_points(struct at_call *c, const struct rc_moment_reply *r)
{
    if (!c->res.points && !(c->res.points = calloc(c->ntargets, sizeof *c->res.points)))
        return RC_E_INTERNAL;
    if (r->ntargets < 1 || r->ntargets > c->left)
        return RC_E_INTERNAL; /* (each call answers one target at least: no endless loop) */
    int desc = c->b->layout.order == RC_ORDER_DESC;
    size_t first = c->left - r->ntargets;
    for (size_t k = 0; k < r->ntargets; k++) {
        const struct rc_moment_target *t = &r->targets[k];
        size_t i = first + k;
        struct rc_history_point *p = &c->res.points[i];
        p->at = c->targets[i];
        p->seq = t->seq;
        p->present = t->has_c;
        if (k == 0 || t->seq < c->below)
            c->below = t->seq;
        if (!t->has_c)
            continue;
        size_t from = rc_moment_args_point_after(r, t);
        int64_t fields[RC_MAX_FIELDS];
        unsigned nf = 0;
        gw_window_decode_score(c->b, t->c, &p->score, fields, &nf);
        p->rank = rc_moment_rank(desc, c->member, t->c, t->ahead, r->changes + from, r->nchanges - from);
    }
    c->left = first;
    c->res.npoints = c->ntargets;
    return 0;
}

/* Takes reply r (borrowed: its members are copied out) for c: the result,
 * or the next segment's call. c is done with (freed) unless a call is out. */
static void take(struct at_call *c, struct rc_moment_reply *r)
{
    int code = 0;
    if (r->status == RC_MOMENT_DEEP) {
        /* past history_undo_max from every base (no checkpoint a chain
         * could start from): answered as a moment no longer held */
        if (c->s->undo_refused)
            (*c->s->undo_refused)++;
        r->status = RC_MOMENT_GONE;
        c->res.deep = 1;
    }
    /* a later segment of another history (a reset between two calls):
     * the earlier points are of a history no longer held */
    if (c->calls > 1 && r->status == RC_MOMENT_OK && strcmp(r->head.epoch, c->res.head.epoch) != 0) {
        r->status = RC_MOMENT_GONE;
        r->oldest = r->head.seq;
        r->has_oldest_at = 0;
    }
    c->res.status = r->status;
    c->res.oldest = r->oldest;
    c->res.has_oldest_time = r->has_oldest_at;
    c->res.oldest_time = r->oldest_at;
    if (c->calls == 1 || r->status != RC_MOMENT_OK)
        c->res.head = r->head; /* (the first call's: the present the history was asked at) */
    if (r->status == RC_MOMENT_OK && c->view != RC_MOMENT_POINTS) {
        c->res.at_seq = r->targets[0].seq;
        c->res.has_at_time = r->targets[0].has_at;
        c->res.at_time = r->targets[0].at;
        code = c->view == RC_MOMENT_LIST ? rebuild_list(c, r) : rebuild_window(c, r);
    } else if (r->status == RC_MOMENT_OK) {
        code = rebuild_points(c, r);
        if (!code && c->left > 0) {
            /* the older targets: another call, from the loop (each is
             * bounded by the cap, and the loop serves others between) */
            if ((code = send_call(c)) != 0)
                finish(c, code);
            return;
        }
    }
    if (!code && c->res.w) {
        /* members are the window's own now: the reply may go */
        gw_join_profiles(c->s->profiles, c->res.w, on_joined, c);
        return;
    }
    finish(c, code);
}

static void on_chain(int code, struct rc_moment_reply *r, void *privdata)
{
    struct at_call *c = privdata;
    if (code)
        finish(c, code);
    else
        take(c, r);
}

/* One moment farther than the cap from every base, with a checkpoint to
 * rebuild it from (r->has_chain): read in bounded calls (store/
 * gw_read_at_chain.c) rather than refused, so out_of_range's oldest_seq
 * stays the oldest moment a read can show. Returns as gw_read_at_chain. */
static int start_chain(struct at_call *c, const struct rc_moment_reply *r)
{
    struct rc_moment_chain_view v = {.view = c->view, .first = c->first, .count = c->count, .radius = c->radius,
                                     .member = c->member, .members = c->members, .nmembers = c->nmembers};
    return gw_read_at_chain(c->s, c->board, c->period, c->b->layout.order, &v, r, on_chain, c);
}

static void on_reply(redisReply *reply, void *privdata)
{
    struct at_call *c = privdata;
    struct rc_reply_item *items = NULL;
    struct rc_moment_reply r;
    memset(&r, 0, sizeof r);
    if (!reply) {
        finish(c, RC_E_UNAVAILABLE);
        return;
    }
    if (reply->type != REDIS_REPLY_ARRAY || !(items = malloc((reply->elements + 1) * sizeof *items)) ||
        gw_script_reply_items(reply, items, reply->elements) != reply->elements ||
        rc_moment_args_parse(items, reply->elements, c->view, &r) != 0) {
        free(items);
        finish(c, RC_E_INTERNAL);
        return;
    }
    int code = r.status == RC_MOMENT_DEEP && r.has_chain ? start_chain(c, &r) : RC_E_BAD_REQUEST;
    if (code == RC_E_BAD_REQUEST)
        take(c, &r); /* (no chain: the reply as it is) */
    else if (code)
        finish(c, code);
    rc_moment_args_reply_free(&r);
    free(items);
}

int gw_read_at(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
               const struct rc_moment_req *req, gw_read_at_cb *cb, void *privdata)
{
    /* a sharded board: the files below share gw_read_at_shard_send, so
     * the choice among them is made here, above them all */
    if (b->shards > 1 && req->by_time && req->view == RC_MOMENT_POINTS)
        return gw_read_at_span(s, b, board, period, req, cb, privdata);
    if (b->shards > 1 && req->by_time && req->view == RC_MOMENT_AROUND)
        return gw_read_at_member(s, b, board, period, req, cb, privdata);
    if (b->shards > 1 && req->by_time && req->view == RC_MOMENT_LIST)
        return gw_read_at_list(s, b, board, period, req, cb, privdata);
    if (b->shards > 1)
        return gw_read_at_shard(s, b, board, period, req, cb, privdata);
    struct rc_moment_args a;
    struct rc_moment_req capped = *req;
    capped.undo_max = s->history_undo_max;
    /* POINTS over a span of any length: in segments (docs/history.md) */
    capped.segmented = req->view == RC_MOMENT_POINTS;
    for (size_t i = 1; capped.segmented && i < req->ntargets; i++)
        if (req->targets[i] < req->targets[i - 1])
            return RC_E_BAD_REQUEST; /* (segments take the targets ascending) */
    int rc = rc_moment_args_build(board, period, b->layout.order, &capped, &a);
    if (rc)
        return rc;
    rc_moment_args_free(&a); /* (checked: send_call builds each call's) */
    struct at_call *c = calloc(1, sizeof *c);
    if (c)
        c->targets = malloc(req->ntargets * sizeof *c->targets);
    if (!c || !c->targets) {
        rc = RC_E_INTERNAL;
        goto out;
    }
    *c = (struct at_call){.s = s, .b = b, .view = req->view, .first = req->first, .count = req->count,
                          .radius = req->radius, .targets = c->targets, .ntargets = req->ntargets, .cb = cb,
                          .privdata = privdata, .req = capped, .left = req->ntargets};
    memcpy(c->targets, req->targets, req->ntargets * sizeof *c->targets);
    if (req->member)
        snprintf(c->member, sizeof c->member, "%s", req->member);
    snprintf(c->board, sizeof c->board, "%s", board);
    snprintf(c->period, sizeof c->period, "%s", period ? period : "");
    c->req.member = c->member;
    c->req.targets = c->targets;
    if (req->view == RC_MOMENT_LIST) {
        /* the reply names no member: the rows take their names from our copy */
        if (!(c->members = rc_members_dup(req->members, req->nmembers, NULL))) {
            rc = RC_E_INTERNAL;
            goto out;
        }
        c->nmembers = req->nmembers;
        c->req.members = c->members;
    }
    rc = send_call(c);
out:
    if (rc && c)
        call_free(c);
    return rc;
}

/* One read.lua call for c->req (a segmented one: for targets[0..left)
 * below c->below). Returns 0 (on_reply runs later) or an RC_E_*. */
static int send_call(struct at_call *c)
{
    struct rc_moment_req req = c->req;
    req.ntargets = c->left;
    req.below = c->calls ? c->below : 0;
    struct rc_moment_args a;
    int rc = rc_moment_args_build(c->board, c->period, c->b->layout.order, &req, &a);
    if (rc)
        return rc;
    const char **words = malloc((RC_READ_NKEYS + a.nargv) * sizeof *words);
    size_t *lens = malloc((RC_READ_NKEYS + a.nargv) * sizeof *lens);
    if (!words || !lens)
        rc = RC_E_INTERNAL;
    else if (!c->s->redis)
        rc = RC_E_UNAVAILABLE;
    if (!rc) {
        unsigned n = gw_script_call_words(a.keys, RC_READ_NKEYS, a.argv, a.nargv, words, lens);
        rc = gw_redis_eval(c->s->redis, c->s->read_script, RC_READ_NKEYS, (int)n, words, lens, on_reply, c);
        rc = rc == RC_E_INTERNAL ? RC_E_INTERNAL : rc ? RC_E_UNAVAILABLE : 0;
    }
    if (!rc)
        c->calls++;
    free(words);
    free(lens);
    rc_moment_args_free(&a);
    return rc;
}
