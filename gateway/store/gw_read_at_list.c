/* gw_read_at_list.c - a member list (PROTOCOL v1.2) of a sharded board
 * (docs/sharded.md) at a past time (docs/history.md, "Sharded boards"):
 * each listed member's score and board-wide rank then. Two rounds:
 *   1. every shard holding listed members: read.lua moment "list" of its
 *      members by time: each one's composite then and its rank in the
 *      shard, and the seq the shard shows;
 *   2. every shard: "counts" of its members ahead of each listed member of
 *      the other shards (by the merged order's tie rule, core/rc_shard.h).
 *      A shard read in round 1 is read again at the seq it showed there
 *      (by seq, not time: the same state, whatever was written since);
 *      the others by time.
 * A member's rank is its rank in its shard plus the other shards' counts;
 * seq and total are summed as in any sharded read. A shard that no longer
 * holds the time makes the read out_of_range with every shard's oldest. */
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
#include "rc_members.h"
#include "rc_shard.h"

struct list_at;

struct one {
    struct list_at *all;
    unsigned index;
};

/* A listed member (name borrowed from list_at's names). */
struct listed {
    const char *name;
    unsigned shard;
    int has;          /* on the board then */
    double c;
    int64_t rank;
};

struct list_at {
    const struct gw_store *s;
    const struct rc_board *b;
    char board[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    int64_t time;
    char *names;                       /* the names asked, back to back (owned) */
    size_t names_len;
    struct listed *m;                  /* (owned) */
    uint32_t n;
    unsigned nshards, pending;
    int round2, code, deep, sending;
    int in1[RC_SHARDS_MAX];            /* read in round 1: read again at its seq */
    struct one one[RC_SHARDS_MAX];
    struct gw_shard_part parts[RC_SHARDS_MAX]; /* each shard's seq and total then (no rows) */
    gw_read_at_cb *cb;
    void *privdata;
    struct gw_read_at_result res;
};

static void all_free(struct list_at *l)
{
    free(l->names);
    free(l->m);
    free(l);
}

static void on_joined(struct gw_window *w, void *privdata)
{
    struct list_at *l = privdata;
    l->res.w = w;
    l->cb(0, &l->res, l->privdata); /* the window is the callback's */
    all_free(l);
}

/* Shard j's seq and member count at target t of reply r. */
static int take_head(struct list_at *l, unsigned j, const struct rc_moment_reply *r,
                     const struct rc_moment_target *t)
{
    size_t from = rc_moment_args_after(r, t->seq);
    struct rc_moment_in in = {.desc = l->b->layout.order == RC_ORDER_DESC, .total = r->head.total,
                              .changes = r->changes + from, .nchanges = r->nchanges - from};
    struct gw_shard_part *p = &l->parts[j];
    p->head = r->head;
    p->head.seq = t->seq;
    if (t->has_at && (!l->res.has_at_time || t->at > l->res.at_time)) {
        l->res.has_at_time = 1; /* the latest change shown, of any shard */
        l->res.at_time = t->at;
    }
    return rc_moment_total(&in, &p->head.total);
}

/* Round 1: shard j's listed members, in the order they were asked. */
static int take_list(struct list_at *l, unsigned j, const struct rc_moment_reply *r)
{
    int desc = l->b->layout.order == RC_ORDER_DESC;
    const struct rc_moment_target *t = &r->targets[0];
    size_t from = rc_moment_args_after(r, t->seq), k = 0;
    int rc = take_head(l, j, r, t);
    for (uint32_t i = 0; !rc && i < l->n; i++) {
        struct listed *m = &l->m[i];
        if (m->shard != j)
            continue;
        if (k >= r->nlisted)
            return RC_E_INTERNAL;
        const struct rc_moment_target *x = &r->listed[k++];
        m->has = x->has_c;
        m->c = x->c;
        if (m->has)
            m->rank = rc_moment_rank(desc, m->name, x->c, x->ahead, r->changes + from, r->nchanges - from);
    }
    return rc || k != r->nlisted ? RC_E_INTERNAL : 0;
}

/* The members of other shards than j on the board then, as bounds for j
 * (none: one empty bound, which counts 0). Returns how many. */
static size_t bounds_for(const struct list_at *l, unsigned j, struct rc_moment_bound *out)
{
    size_t n = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        const struct listed *m = &l->m[i];
        if (m->shard == j || !m->has || l->res.status != RC_MOMENT_OK)
            continue;
        /* the merged order: a lower shard's equal composites are ahead */
        out[n++] = (struct rc_moment_bound){.has = 1, .c = m->c,
                                            .inclusive = rc_shard_count_inclusive(j, m->shard) == 1};
    }
    if (n == 0)
        out[n++] = (struct rc_moment_bound){0};
    return n;
}

/* Round 2: shard j's counts ahead of the other shards' members. */
static int take_counts(struct list_at *l, unsigned j, const struct rc_moment_reply *r)
{
    int desc = l->b->layout.order == RC_ORDER_DESC;
    int rc = r->ntargets ? 0 : RC_E_INTERNAL;
    if (!rc && !l->in1[j])
        rc = take_head(l, j, r, &r->targets[0]);
    size_t k = 0;
    for (uint32_t i = 0; !rc && i < l->n; i++) {
        struct listed *m = &l->m[i];
        if (m->shard == j || !m->has)
            continue;
        if (k >= r->ntargets)
            return RC_E_INTERNAL;
        const struct rc_moment_target *t = &r->targets[k++];
        size_t from = rc_moment_args_after(r, t->seq);
        m->rank += rc_moment_ahead(desc, m->c, rc_shard_count_inclusive(j, m->shard) == 1, t->ahead,
                                   r->changes + from, r->nchanges - from);
    }
    return rc;
}

static void settle(struct list_at *l)
{
    if (l->code || l->res.status != RC_MOMENT_OK) {
        if (!l->code && l->deep && l->s->undo_refused)
            (*l->s->undo_refused)++; /* one refusal a read, however many shards */
        l->cb(l->code, l->code ? NULL : &l->res, l->privdata);
        all_free(l);
        return;
    }
    struct gw_window *w = calloc(1, sizeof *w);
    struct rc_read_row *rows = malloc((l->n + 1) * sizeof *rows);
    int64_t *ranks = malloc((l->n + 1) * sizeof *ranks);
    int rc = w && rows && ranks ? 0 : RC_E_INTERNAL;
    size_t n = 0;
    for (uint32_t i = 0; !rc && i < l->n; i++)
        if (l->m[i].has) {
            rows[n] = (struct rc_read_row){l->m[i].name, l->m[i].c};
            ranks[n++] = l->m[i].rank;
        }
    if (!rc) {
        gw_read_merge_head(w, l->parts, l->nshards); /* seq and total summed, first_rank 0 */
        rc = gw_window_set_ranked_rows(l->b, w, rows, ranks, n);
    }
    free(rows);
    free(ranks);
    if (rc) {
        if (w)
            gw_window_free(w);
        l->cb(rc, NULL, l->privdata);
        all_free(l);
        return;
    }
    l->res.at_seq = w->seq; /* the sum of the shards' seqs shown */
    memcpy(l->res.head.epoch, w->epoch, sizeof l->res.head.epoch);
    gw_join_profiles(l->s->profiles, w, on_joined, l);
}

static void round2(struct list_at *l);

static void after_round(struct list_at *l)
{
    if (l->round2 || l->code)
        settle(l);
    else
        round2(l);
}

static void on_reply(redisReply *reply, void *privdata)
{
    struct one *o = privdata;
    struct list_at *l = o->all;
    struct rc_moment_reply r;
    /* (a shard read in both rounds adds its seq once) */
    int code = gw_read_at_shard_take(reply, l->round2 ? RC_MOMENT_COUNTS : RC_MOMENT_LIST,
                                     !l->round2 || !l->in1[o->index], &l->res, &l->deep, &r);
    if (!code && r.status == RC_MOMENT_OK && !l->code && l->res.status == RC_MOMENT_OK)
        code = l->round2 ? take_counts(l, o->index, &r) : take_list(l, o->index, &r);
    if (code && !l->code)
        l->code = code;
    rc_moment_args_reply_free(&r);
    if (--l->pending || l->sending)
        return;
    after_round(l);
}

/* Sends round 1 or 2 to every shard it goes to (*sent: how many calls went
 * out); the last answer moves on. Returns 0 or the code of the first call
 * that could not be sent. */
static int send_round(struct list_at *l, unsigned *sent)
{
    struct rc_moment_bound *bounds = malloc((l->n + 1) * sizeof *bounds);
    int64_t *targets = malloc((l->n + 1) * sizeof *targets);
    char *names = malloc(l->names_len + 1);
    int rc = bounds && targets && names ? 0 : RC_E_INTERNAL;
    *sent = 0;
    l->sending = 1;
    for (unsigned j = 0; !rc && j < l->nshards; j++) {
        struct rc_moment_req req = {.by_time = 1, .targets = targets, .ntargets = 1};
        targets[0] = l->time;
        if (!l->round2) {
            /* shard j's listed members, back to back */
            size_t len = 0;
            uint32_t k = 0;
            for (uint32_t i = 0; i < l->n; i++)
                if (l->m[i].shard == j) {
                    size_t ml = strlen(l->m[i].name) + 1;
                    memcpy(names + len, l->m[i].name, ml);
                    len += ml;
                    k++;
                }
            if (!k)
                continue;
            l->in1[j] = 1;
            req.view = RC_MOMENT_LIST;
            req.members = names;
            req.nmembers = k;
        } else {
            if (l->res.status != RC_MOMENT_OK && l->in1[j])
                continue; /* refused already: only the oldest of the shards not read yet is wanted */
            req.view = RC_MOMENT_COUNTS;
            req.bounds = bounds;
            req.ntargets = bounds_for(l, j, bounds);
            req.by_time = !l->in1[j];
            for (size_t i = 0; i < req.ntargets; i++)
                targets[i] = l->in1[j] ? l->parts[j].head.seq : l->time;
        }
        l->one[j] = (struct one){l, j};
        l->pending++; /* before the call: an answer may not come later than it */
        if ((rc = gw_read_at_shard_send(l->s, l->b, l->board, l->period, j, &req, on_reply, &l->one[j])) != 0)
            l->pending--; /* the calls sent answer later: the last one settles with the code */
        else
            (*sent)++;
    }
    l->sending = 0;
    free(bounds);
    free(targets);
    free(names);
    if (rc && !l->code)
        l->code = rc;
    return rc;
}

static void round2(struct list_at *l)
{
    unsigned sent;
    l->round2 = 1;
    send_round(l, &sent);
    if (l->pending == 0)
        settle(l); /* every answer in (or none sent) */
}

int gw_read_at_list(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                    const struct rc_moment_req *req, gw_read_at_cb *cb, void *privdata)
{
    if (!req->by_time || req->view != RC_MOMENT_LIST || req->ntargets != 1 || !req->members || !req->nmembers ||
        req->nmembers > RC_MEMBERS_MAX || b->shards > RC_SHARDS_MAX)
        return RC_E_BAD_REQUEST;
    if (!s->redis)
        return RC_E_UNAVAILABLE;
    struct list_at *l = calloc(1, sizeof *l);
    if (!l)
        return RC_E_INTERNAL;
    *l = (struct list_at){.s = s, .b = b, .time = req->targets[0], .n = req->nmembers, .nshards = b->shards,
                          .cb = cb, .privdata = privdata};
    snprintf(l->board, sizeof l->board, "%s", board);
    snprintf(l->period, sizeof l->period, "%s", period ? period : "");
    size_t len = 0;
    const char *p = req->members;
    for (uint32_t i = 0; i < req->nmembers; i++, p += strlen(p) + 1)
        len += strlen(p) + 1;
    l->names = malloc(len + 1);
    l->m = calloc(req->nmembers, sizeof *l->m);
    if (!l->names || !l->m) {
        all_free(l);
        return RC_E_INTERNAL;
    }
    memcpy(l->names, req->members, len);
    l->names_len = len;
    l->names[len] = '\0';
    p = l->names;
    for (uint32_t i = 0; i < l->n; i++, p += strlen(p) + 1)
        l->m[i] = (struct listed){.name = p, .shard = rc_shard_of(p, b->shards)};
    unsigned sent;
    int rc = send_round(l, &sent);
    if (!sent) {
        /* nothing will answer */
        all_free(l);
        return rc ? rc : RC_E_INTERNAL;
    }
    if (l->pending == 0)
        after_round(l); /* every answer came during the sending */
    return 0; /* a failure after some were sent is settled by the last answer */
}
