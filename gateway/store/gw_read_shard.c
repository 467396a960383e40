/* gw_read_shard.c - the read of a sharded board (docs/sharded.md, "Reads"):
 * rounds of lua/read.lua calls, one per shard "B#i" and all in flight at
 * once, whose answers gw_read_merge.c turns into the one window an
 * unsharded board's read gives (gw_read's contract: cb exactly once).
 *
 *   RANGE   one round: each shard's first first+count+1 rows (count 0:
 *           each shard's head, a `counts` without pairs).
 *   RANK    the member's shard (`rank`), then a `counts` on every other
 *           shard (the rows ahead of its composite).
 *   AROUND  the member's shard (`rank`), then its rows around the member
 *           (`range`) and a `near` on every other shard; with places and
 *           a window not starting at rank 1, one more `counts` on every
 *           shard: the members with strictly better points than the first
 *           row (read.lua's `above`).
 *
 * A round's failure is kept until its last answer, then the read fails with
 * it. A member that moved between the rounds of an around read (a write in
 * between) starts the read over, at most GW_SHARD_RETRIES times. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "store/gw_join.h"
#include "store/gw_read_int.h"
#include "store/gw_store.h"
#include "redis/gw_script.h"
#include "rc_err.h"
#include "rc_places.h"
#include "rc_shard.h"

#define GW_SHARD_RETRIES 3

enum step {
    ST_ROWS,   /* RANGE: every shard's top rows */
    ST_HOME,   /* RANK, AROUND: the member's shard */
    ST_OTHERS, /* RANK: counts; AROUND: home rows and near */
    ST_ABOVE,  /* AROUND with places: counts above the first row */
};

struct sread;

struct slot {
    struct sread *sr;
    unsigned j;
    enum rc_read_kind kind; /* what shard j was asked in this round */
};

struct sread {
    const struct gw_store *s;
    const struct rc_board *b;
    gw_read_cb *cb;
    void *privdata;
    char board[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    struct gw_read_spec spec;
    char member[RC_MEMBER_MAX + 1];
    unsigned nshards, home;
    enum step step;
    unsigned waiting; /* calls of this round in flight */
    int sending;      /* inside send_round: an answer does not end the round */
    int code;         /* the round's first failure */
    int tries;
    int64_t rank0;    /* AROUND: the member's 0-based rank in its shard (step 1) */
    double c;         /* RANK, AROUND: the member's composite (step 1) */
    int64_t first;    /* AROUND: index of the home shard's first row read */
    double above_bound;
    int above_incl;
    int64_t above;    /* ST_ABOVE: the sum of the shards' counts */
    int above_next_tied; /* AROUND with places: kept for ST_ABOVE's end */
    struct gw_window *w;
    struct gw_shard_part part[RC_SHARDS_MAX];
    struct slot slot[RC_SHARDS_MAX];
};

const char *gw_read_shard_refusal(const struct rc_board *b, const struct gw_read_spec *spec)
{
    if (b->shards <= 1 || spec->kind != GW_READ_RANGE)
        return NULL;
    if (spec->first < 0 || spec->count < 0)
        return "a page's offset and limit cannot be negative";
    if (spec->first > RC_SHARD_READ_MAX || spec->count > RC_SHARD_READ_MAX - spec->first)
        return "a page of a sharded board must end within rank 10000";
    return NULL;
}

static void finish(struct sread *sr, int code)
{
    for (unsigned j = 0; j < sr->nshards; j++)
        gw_read_merge_part_clear(&sr->part[j]);
    struct gw_window *w = sr->w;
    if (code) {
        gw_window_free(w);
        w = NULL;
    }
    sr->cb(code, w, sr->privdata);
    free(sr);
}

static void on_joined(struct gw_window *w, void *privdata)
{
    (void)w;
    finish(privdata, 0);
}

/* What shard j is asked in the current round into *req (*incl: room for a
 * counts flag, read when req is built); 0 when it sits this round out. */
static int round_req(struct sread *sr, unsigned j, struct rc_read_req *req, int *incl)
{
    const struct gw_read_spec *sp = &sr->spec;
    int home = j == sr->home, present = sr->rank0 >= 0;
    *req = (struct rc_read_req){.member = sr->member, .live = sp->live};
    *incl = rc_shard_count_inclusive(j, sr->home) == 1;
    switch (sr->step) {
    case ST_ROWS:
        if (sp->count == 0) {
            req->kind = RC_READ_COUNTS; /* no rows: just the heads */
            return 1;
        }
        req->kind = RC_READ_RANGE;
        req->count = sp->first + sp->count + 1;
        return 1;
    case ST_HOME:
        req->kind = RC_READ_RANK;
        return home;
    case ST_OTHERS:
        if (sp->kind == GW_READ_AROUND && present && home) {
            req->kind = RC_READ_RANGE;
            req->first = sr->first;
            req->count = sr->rank0 + sp->radius + 2 - sr->first;
            return 1;
        }
        if (sp->kind == GW_READ_AROUND && present) {
            req->kind = RC_READ_NEAR;
            req->bound = sr->c;
            req->inclusive = *incl;
            req->radius = sp->radius;
            return 1;
        }
        /* RANK: the rows ahead of the member; an absent member: the head */
        req->kind = RC_READ_COUNTS;
        req->bounds = &sr->c;
        req->inclusives = incl;
        req->nbounds = sp->kind == GW_READ_RANK && present;
        return !home;
    case ST_ABOVE:
        req->kind = RC_READ_COUNTS;
        req->bounds = &sr->above_bound;
        req->inclusives = &sr->above_incl;
        req->nbounds = 1;
        return 1;
    }
    return 0;
}

static void on_part(redisReply *r, void *privdata);
static void round_done(struct sread *sr);

/* Sends the current round. Returns 0 when at least one call went out (a
 * later one that could not be sent is remembered in sr->code for the end of
 * the round), or the code of the failure when none did. */
static int send_round(struct sread *sr)
{
    char name[RC_SHARD_NAME_MAX + 1];
    unsigned sent = 0;
    sr->code = 0;
    sr->sending = 1;
    for (unsigned j = 0; j < sr->nshards && !sr->code; j++) {
        struct rc_read_req req;
        int incl;
        if (!round_req(sr, j, &req, &incl))
            continue;
        sr->slot[j] = (struct slot){sr, j, req.kind};
        sr->waiting++; /* before the call: an answer may not come later than it */
        int rc = rc_shard_name(name, sizeof name, sr->board, j) ? RC_E_INTERNAL
                 : gw_read_call(sr->s, sr->b, name, sr->period, &req, on_part, &sr->slot[j]);
        if (rc) {
            sr->waiting--;
            sr->code = rc;
        } else {
            sent++;
        }
    }
    sr->sending = 0;
    if (sent == 0)
        return sr->code ? sr->code : RC_E_INTERNAL;
    if (sr->waiting == 0)
        round_done(sr); /* every answer came during the loop (Redis's front never does that) */
    return 0;
}

/* Shard j's answer into part[j] (ST_ABOVE: its count into sr->above). */
static int take_reply(struct sread *sr, const struct slot *sl, const redisReply *r)
{
    struct gw_shard_part *p = &sr->part[sl->j];
    struct rc_read_head head;
    struct rc_read_row *rows = NULL;
    size_t n = 0;
    int rc;
    if (sl->kind == RC_READ_COUNTS) {
        struct rc_reply_item items[RC_READ_HEAD + 1];
        int64_t count = 0;
        size_t want = sr->step == ST_ABOVE || (sr->spec.kind == GW_READ_RANK && sr->rank0 >= 0);
        size_t k = gw_script_reply_items(r, items, RC_READ_HEAD + 1);
        if (!r)
            return RC_E_UNAVAILABLE;
        if (rc_read_args_counts_parse(items, k, want, &head, &count))
            return RC_E_INTERNAL;
        if (sr->step == ST_ABOVE) {
            sr->above += count;
            return 0;
        }
        gw_read_merge_part_clear(p);
        p->head = head;
        p->count = count;
        return 0;
    }
    if (sl->kind == RC_READ_NEAR) {
        struct rc_read_near nr;
        rc = gw_read_call_reply_near(r, &head, &nr, &rows, &n);
        p->count = rc ? 0 : nr.ahead;
        p->na = rc ? 0 : nr.na;
    } else {
        rc = gw_read_call_reply(r, &head, &rows, &n);
    }
    if (!rc && !(rc = gw_read_merge_part_set_rows(p, rows, n)))
        p->head = head;
    free(rows);
    return rc;
}

static void on_part(redisReply *r, void *privdata)
{
    struct slot *sl = privdata;
    struct sread *sr = sl->sr;
    int rc = take_reply(sr, sl, r);
    if (rc && !sr->code)
        sr->code = rc;
    if (--sr->waiting == 0 && !sr->sending)
        round_done(sr);
}

/* Starts the next round; a failure to send any of it ends the read. */
static void next_round(struct sread *sr, enum step step)
{
    sr->step = step;
    int rc = send_round(sr);
    if (rc)
        finish(sr, rc);
}

/* After step 1 (the member's shard): its rank and composite. */
static void home_done(struct sread *sr)
{
    const struct gw_shard_part *h = &sr->part[sr->home];
    sr->rank0 = h->head.first_rank && h->n == 1 ? h->head.first_rank - 1 : -1;
    sr->c = sr->rank0 >= 0 ? h->c[0] : NAN;
    if (sr->spec.kind == GW_READ_AROUND && sr->rank0 >= 0)
        sr->first = sr->rank0 > sr->spec.radius ? sr->rank0 - sr->spec.radius : 0;
    next_round(sr, ST_OTHERS);
}

/* The around read's window from step 2, or a start over when the member
 * moved in between. Returns 1 when the read goes on (a round was sent or
 * it ended). */
static int around_done(struct sread *sr, int *next_tied)
{
    const struct gw_shard_part *h = &sr->part[sr->home];
    size_t at = (size_t)(sr->rank0 - sr->first);
    if (at >= h->n || strcmp(h->member[at], sr->member) != 0 || h->c[at] != sr->c) {
        if (++sr->tries >= GW_SHARD_RETRIES) {
            finish(sr, RC_E_UNAVAILABLE);
            return 1;
        }
        next_round(sr, ST_HOME);
        return 1;
    }
    int rc = gw_read_merge_around(sr->b, sr->part, sr->nshards, sr->home, at, sr->first, sr->spec.radius, sr->w,
                                   next_tied);
    if (rc) {
        finish(sr, rc);
        return 1;
    }
    return 0;
}

static void round_done(struct sread *sr)
{
    const struct gw_read_spec *sp = &sr->spec;
    int rc = 0, next_tied = 0;
    if (sr->code) {
        finish(sr, sr->code);
        return;
    }
    switch (sr->step) {
    case ST_ROWS:
        rc = gw_read_merge_range(sr->b, sr->part, sr->nshards, sp->first, sp->count, sp->places, sr->w);
        break;
    case ST_HOME:
        home_done(sr);
        return;
    case ST_OTHERS:
        if (sp->kind == GW_READ_RANK || sr->rank0 < 0) {
            rc = gw_read_merge_rank(sr->b, sr->part, sr->nshards, sr->home, sr->w);
            break;
        }
        if (around_done(sr, &next_tied))
            return;
        if (sp->places && sr->w->first_rank > 1) {
            sr->above_next_tied = next_tied;
            gw_read_merge_above_bound(sr->b, sr->w->rows[0].c, &sr->above_bound, &sr->above_incl);
            sr->above = 0;
            next_round(sr, ST_ABOVE);
            return;
        }
        if (sp->places)
            rc = gw_window_fill_places(sr->b, sr->w, 0, next_tied);
        break;
    case ST_ABOVE:
        if (sr->above > sr->w->first_rank - 1)
            sr->above = sr->w->first_rank - 1; /* a write in between */
        rc = gw_window_fill_places(sr->b, sr->w, sr->above, sr->above_next_tied);
        break;
    }
    if (rc) {
        finish(sr, rc);
        return;
    }
    /* a past period whose shards' keys have expired: the archive has the
     * merged standings under the board's name */
    if (gw_read_past_and_gone(sr->s, sr->b, sr->period, sr->w) &&
        gw_read_past_try_archive(sr->s, sr->b, sr->board, sr->period, &sr->spec, sr->w, sr->cb, sr->privdata) == 0) {
        sr->w = NULL;
        for (unsigned j = 0; j < sr->nshards; j++)
            gw_read_merge_part_clear(&sr->part[j]);
        free(sr);
        return;
    }
    gw_join_profiles(sr->s->profiles, sr->w, on_joined, sr);
}

int gw_read_shard_read(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                    const struct gw_read_spec *spec, gw_read_cb *cb, void *privdata)
{
    if (spec->kind == GW_READ_MEMBERS)
        return gw_read_mshard_read(s, b, board, period, spec, cb, privdata);
    if (gw_read_shard_refusal(b, spec) || b->shards > RC_SHARDS_MAX ||
        (spec->kind != GW_READ_RANGE && (!spec->member || !spec->member[0] ||
                                         strlen(spec->member) > RC_MEMBER_MAX)) ||
        (spec->kind == GW_READ_AROUND && spec->radius < 0))
        return RC_E_BAD_REQUEST;
    if (spec->kind != GW_READ_RANGE && spec->kind != GW_READ_RANK && spec->kind != GW_READ_AROUND)
        return RC_E_INTERNAL;
    struct sread *sr = calloc(1, sizeof *sr);
    if (!sr || !(sr->w = calloc(1, sizeof *sr->w))) {
        free(sr);
        return RC_E_INTERNAL;
    }
    sr->s = s;
    sr->b = b;
    sr->cb = cb;
    sr->privdata = privdata;
    sr->nshards = b->shards;
    snprintf(sr->board, sizeof sr->board, "%s", board);
    snprintf(sr->period, sizeof sr->period, "%s", period);
    sr->spec = *spec;
    sr->rank0 = -1;
    if (spec->kind != GW_READ_RANGE) {
        snprintf(sr->member, sizeof sr->member, "%s", spec->member);
        sr->spec.member = sr->member;
        sr->home = rc_shard_of(sr->member, sr->nshards);
    }
    sr->step = spec->kind == GW_READ_RANGE ? ST_ROWS : ST_HOME;
    int rc = send_round(sr);
    if (rc) {
        free(sr->w);
        free(sr);
    }
    return rc;
}
