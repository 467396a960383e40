/* gw_read_at_span.c - a sharded board's `history` over any span
 * (docs/history.md, "Rank history at any span"). A sharded read at many
 * times (gw_read_at_member) reads each shard from one base, so a span
 * longer than history_undo_max on some shard is refused DEEP. Here the
 * points are read in chunks, newest first: a chunk refused DEEP is halved
 * and read again (a chunk of one point refused is the answer: that moment
 * is out of reach), a chunk answered moves on to the older points with
 * twice its size. Each chunk is a whole two-round read, so every point is
 * what a `get` at its time shows; a refusal by the log (GONE) ends it at
 * once. */
#include "store/gw_read_at.h"

#include <stdlib.h>
#include <string.h>

#include "rc_err.h"

struct span_call {
    const struct gw_store *s;
    const struct rc_board *b;
    char board[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    char member[RC_MEMBER_MAX + 1];
    struct rc_moment_req req;         /* the request, its member and targets ours */
    int64_t *targets;                 /* ascending (owned) */
    size_t n;
    size_t hi, size;                  /* the chunk read: targets[hi - size .. hi) (from 0 when shorter) */
    int answered;                     /* a chunk was answered: head is its */
    struct rc_read_head head;
    struct rc_history_point *points;  /* one a target (owned) */
    gw_read_at_cb *cb;
    void *privdata;
};

static void span_free(struct span_call *c)
{
    free(c->targets);
    free(c->points);
    free(c);
}

static size_t chunk_lo(const struct span_call *c)
{
    return c->hi > c->size ? c->hi - c->size : 0;
}

static void on_chunk(int code, struct gw_read_at_result *res, void *privdata);

static int send_chunk(struct span_call *c)
{
    size_t lo = chunk_lo(c);
    struct rc_moment_req req = c->req;
    req.targets = c->targets + lo;
    req.ntargets = c->hi - lo;
    return gw_read_at_member(c->s, c->b, c->board, c->period, &req, on_chunk, c);
}

static void on_chunk(int code, struct gw_read_at_result *res, void *privdata)
{
    struct span_call *c = privdata;
    size_t lo = chunk_lo(c);
    if (!code && res->status != RC_MOMENT_OK && res->deep && c->hi - lo > 1) {
        c->size = (c->hi - lo) / 2; /* too long a span for one base: half of it */
        if ((code = send_chunk(c)) == 0)
            return;
    } else if (!code && res->status == RC_MOMENT_OK) {
        if (res->npoints != c->hi - lo) {
            code = RC_E_INTERNAL;
        } else {
            memcpy(c->points + lo, res->points, res->npoints * sizeof *c->points);
            if (!c->answered)
                c->head = res->head; /* (the newest chunk's: the present the history was asked at) */
            c->answered = 1;
            c->hi = lo;
            if (c->hi > 0) {
                c->size *= 2;
                if ((code = send_chunk(c)) == 0)
                    return;
            } else {
                struct gw_read_at_result all = *res;
                all.head = c->head;
                all.points = c->points;
                all.npoints = c->n;
                c->cb(0, &all, c->privdata);
                span_free(c);
                return;
            }
        }
    }
    c->cb(code, code ? NULL : res, c->privdata); /* an error, or the refusal that ends it */
    span_free(c);
}

int gw_read_at_span(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                    const struct rc_moment_req *req, gw_read_at_cb *cb, void *privdata)
{
    if (req->view != RC_MOMENT_POINTS || !req->by_time || !req->member || req->ntargets < 1 ||
        req->ntargets > RC_MOMENT_TARGETS_MAX)
        return RC_E_BAD_REQUEST;
    for (size_t i = 1; i < req->ntargets; i++)
        if (req->targets[i] < req->targets[i - 1])
            return RC_E_BAD_REQUEST; /* (chunks take the targets ascending) */
    struct span_call *c = calloc(1, sizeof *c);
    if (!c)
        return RC_E_INTERNAL;
    *c = (struct span_call){.s = s, .b = b, .req = *req, .n = req->ntargets, .hi = req->ntargets,
                            .size = req->ntargets, .cb = cb, .privdata = privdata};
    c->targets = malloc(c->n * sizeof *c->targets);
    c->points = calloc(c->n, sizeof *c->points);
    if (!c->targets || !c->points) {
        span_free(c);
        return RC_E_INTERNAL;
    }
    memcpy(c->targets, req->targets, c->n * sizeof *c->targets);
    snprintf(c->board, sizeof c->board, "%s", board);
    snprintf(c->period, sizeof c->period, "%s", period ? period : "");
    snprintf(c->member, sizeof c->member, "%s", req->member);
    c->req.member = c->member;
    int rc = send_chunk(c);
    if (rc)
        span_free(c);
    return rc;
}
