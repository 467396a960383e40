/* gw_rank_shard.c - global ranks for the change events of a sharded board
 * (docs/sharded.md, "Feeds"). A shard's event carries the member's rank in
 * that shard; its rank on the whole board adds, for every other shard j,
 * the members of j ahead of it (core/rc_shard.h: composites better than, or
 * for a lower j equal to, its own). One `counts` read per other shard
 * answers a whole batch of events at once (store/gw_read.h,
 * gw_read_call_counts), so the cost is S small script calls per batch, whatever
 * the batch holds. The old rank (prev_rank) is counted the same way from
 * the old composite.
 *
 * The counts are read when the events are in hand, not at the instant of
 * each write: under concurrent writes to other shards a rank reflects their
 * state a few milliseconds later. */
#include "fanout/gw_fanout_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "rc_shard.h"

struct shard_job {
    struct gw_shard_resolve *r;
    unsigned shard;
    size_t n;
    size_t *ev;      /* per bound: the event it is for */
    int *is_old;     /* ... and whether it is the old composite */
};

struct gw_shard_resolve {
    struct gw_board *b;          /* a reference while in flight */
    struct rc_event *events;     /* owned; their ranks are made global in place */
    size_t n;
    unsigned waiting;            /* shard reads out */
    int code;                    /* the first failure */
    int64_t *add_new, *add_old;  /* per event: the other shards' counts */
    int64_t *cseq;               /* per event and shard (i * S + j): the seq its new composite was counted at */
    gw_shard_resolve_cb *cb;
    void *privdata;
};

static void finish(struct gw_shard_resolve *r)
{
    if (!r->code) {
        for (size_t i = 0; i < r->n; i++) {
            struct rc_event *ev = &r->events[i];
            if (ev->has_new && ev->rank > 0)
                ev->rank += r->add_new[i];
            if (ev->has_old && ev->old_rank > 0)
                ev->old_rank += r->add_old[i];
        }
    }
    struct gw_board *b = r->b;
    r->cb(r->code, r->events, r->n, r->code ? NULL : r->cseq, r->privdata);
    free(r->events);
    free(r->add_new);
    free(r->add_old);
    free(r->cseq);
    free(r);
    gw_board_unref(b);
}

static void on_counts(int code, const struct rc_read_head *head, const int64_t *counts, size_t n, void *privdata)
{
    struct shard_job *j = privdata;
    struct gw_shard_resolve *r = j->r;
    if (code && !r->code)
        r->code = code;
    if (!code && n != j->n && !r->code)
        r->code = RC_E_INTERNAL;
    if (!r->code) {
        for (size_t k = 0; k < n; k++) {
            if (j->is_old[k]) {
                r->add_old[j->ev[k]] += counts[k];
            } else {
                r->add_new[j->ev[k]] += counts[k];
                r->cseq[j->ev[k] * r->b->decl->shards + j->shard] = head->seq; /* (member lists: gw_members_shard.h) */
            }
        }
    }
    free(j->ev);
    free(j->is_old);
    free(j);
    if (--r->waiting == 0)
        finish(r);
}

#define COUNTS_PER_CALL RC_READ_COUNTS_MAX /* bounds per `counts` call (core/rc_read_args.h) */

/* Sends the counts reads of shard `shard` (one per COUNTS_PER_CALL bounds)
 * for every event of another shard; r->waiting counts each. Returns 0 or an
 * RC_E_* (the reads already sent still come back). */
static int send_shard(struct gw_shard_resolve *r, unsigned shard)
{
    const struct gw_board *b = r->b;
    char name[RC_SHARD_NAME_MAX + 1];
    if (rc_shard_name(name, sizeof name, b->r.name, shard) != 0)
        return RC_E_INTERNAL;
    size_t i = 0;
    int first = 1;
    while (i < r->n || first) {
        double bounds[COUNTS_PER_CALL];
        int incl[COUNTS_PER_CALL];
        struct shard_job *j = calloc(1, sizeof *j);
        if (j) {
            j->ev = malloc(COUNTS_PER_CALL * sizeof *j->ev);
            j->is_old = malloc(COUNTS_PER_CALL * sizeof *j->is_old);
        }
        if (!j || !j->ev || !j->is_old) {
            if (j) {
                free(j->ev);
                free(j->is_old);
            }
            free(j);
            return RC_E_INTERNAL;
        }
        size_t m = 0;
        for (; i < r->n && m + 2 <= COUNTS_PER_CALL; i++) {
            const struct rc_event *ev = &r->events[i];
            if (ev->shard == shard || !ev->member[0])
                continue;
            int inc = rc_shard_count_inclusive(shard, ev->shard);
            if (ev->has_new && ev->rank > 0) {
                bounds[m] = ev->c;
                incl[m] = inc;
                j->ev[m] = i;
                j->is_old[m++] = 0;
            }
            if (ev->has_old && ev->old_rank > 0) {
                bounds[m] = ev->old_c;
                incl[m] = inc;
                j->ev[m] = i;
                j->is_old[m++] = 1;
            }
        }
        first = 0;
        if (m == 0) {
            free(j->ev);
            free(j->is_old);
            free(j);
            continue;
        }
        j->r = r;
        j->shard = shard;
        j->n = m;
        int rc = gw_read_call_counts(&b->f->app->store, b->decl, name, b->r.period, bounds, incl, m, on_counts, j);
        if (rc) {
            free(j->ev);
            free(j->is_old);
            free(j);
            return rc;
        }
        r->waiting++;
    }
    return 0;
}

int gw_rank_shard_resolve(struct gw_board *b, struct rc_event *events, size_t n, gw_shard_resolve_cb *cb,
                        void *privdata)
{
    unsigned shards = b->decl->shards;
    struct gw_shard_resolve *r = calloc(1, sizeof *r);
    if (!r)
        return RC_E_INTERNAL;
    r->add_new = calloc(n + 1, sizeof *r->add_new);
    r->add_old = calloc(n + 1, sizeof *r->add_old);
    r->cseq = malloc((n * shards + 1) * sizeof *r->cseq);
    if (!r->add_new || !r->add_old || !r->cseq) {
        free(r->add_new);
        free(r->add_old);
        free(r->cseq);
        free(r);
        return RC_E_INTERNAL;
    }
    for (size_t i = 0; i < n * shards; i++)
        r->cseq[i] = -1;
    r->b = b;
    r->events = events;
    r->n = n;
    r->cb = cb;
    r->privdata = privdata;
    b->refs++;
    r->waiting = 1; /* held while the reads go out */
    for (unsigned j = 0; j < shards; j++) {
        int rc = send_shard(r, j);
        if (rc) {
            if (!r->code)
                r->code = rc;
            break;
        }
    }
    if (--r->waiting == 0)
        finish(r);
    return 0;
}
