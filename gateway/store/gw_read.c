/* gw_read.c - board reads through lua/read.lua (the call and its reply:
 * gw_read_call.c) into windows joined with profiles (store/gw_join); a
 * sharded board's read is handed to gw_read_shard.c. */
#include "store/gw_read.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <hiredis/hiredis.h>

#include "store/gw_join.h"
#include "store/gw_read_int.h"
#include "store/gw_store.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_codec.h"
#include "rc_event.h"
#include "rc_keys.h"
#include "rc_places.h"
#include "rc_read_args.h"

struct pending {
    const struct gw_store *s;
    const struct rc_board *b;
    gw_read_cb *cb;
    void *privdata;
    struct gw_window *w;
    /* kept for a fall back to the archive */
    char board[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    struct gw_read_spec spec;
    char member[RC_MEMBER_MAX + 1];
    char *members;                 /* MEMBERS: our copy of the list */
};

static void finish(struct pending *p, int code)
{
    struct gw_window *w = p->w;
    if (code) {
        gw_window_free(w);
        w = NULL;
    }
    p->cb(code, w, p->privdata);
    free(p->members);
    free(p);
}

static void on_joined(struct gw_window *w, void *privdata)
{
    (void)w;
    finish(privdata, 0);
}

/* read.lua's reply -> window (rows decoded for board b; with places when
 * places). */
static int parse_window(const struct rc_board *b, const redisReply *r, int places, struct gw_window *w)
{
    struct rc_read_head head;
    struct rc_read_places pl = {0};
    struct rc_read_row *rows;
    size_t n;
    int rc = places ? gw_read_call_reply_places(r, &head, &pl, &rows, &n) : gw_read_call_reply(r, &head, &rows, &n);
    if (rc)
        return rc;
    gw_window_set_head(w, &head);
    rc = gw_window_set_rows(b, w, rows, n);
    if (!rc && places)
        rc = gw_window_fill_places(b, w, pl.above, pl.next_tied);
    free(rows);
    return rc;
}

/* A members reply -> window: each row with its own rank, place and tied. */
static int parse_members(const struct rc_board *b, const redisReply *r, int places, int roster, struct gw_window *w)
{
    struct rc_reply_item *items = NULL;
    struct rc_read_mrow *mrows = NULL;
    struct rc_read_row *rows = NULL;
    struct rc_read_head head;
    size_t n = 0;
    int rc = RC_E_INTERNAL;
    if (!r)
        return RC_E_UNAVAILABLE;
    if (r->type != REDIS_REPLY_ARRAY)
        return RC_E_INTERNAL;
    size_t cap = r->elements / 5 + 1;
    items = malloc((r->elements ? r->elements : 1) * sizeof *items);
    mrows = malloc(cap * sizeof *mrows);
    rows = malloc(cap * sizeof *rows);
    if (!items || !mrows || !rows || gw_script_reply_items(r, items, r->elements) != r->elements ||
        (roster ? rc_read_args_roster_parse(items, r->elements, &head, &w->found, mrows, cap, &n)
                : rc_read_args_members_parse(items, r->elements, &head, mrows, cap, &n)))
        goto cleanup;
    gw_window_set_head(w, &head);
    w->first_rank = 0;
    for (size_t i = 0; i < n; i++)
        rows[i] = (struct rc_read_row){mrows[i].member, mrows[i].c};
    if ((rc = gw_window_set_rows(b, w, rows, n)) != 0)
        goto cleanup;
    for (size_t i = 0; i < n; i++) {
        w->rows[i].rank = mrows[i].rank;
        w->rows[i].place = places ? mrows[i].place : 0;
        w->rows[i].tied = places ? mrows[i].tied : 0;
    }
cleanup:
    free(items);
    free(mrows);
    free(rows);
    return rc;
}

static void on_read(redisReply *reply, void *privdata)
{
    struct pending *p = privdata;
    if (p->spec.kind == GW_READ_MEMBERS) {
        int rc = parse_members(p->b, reply, p->spec.places, p->spec.best > 0, p->w);
        if (rc) {
            finish(p, rc);
            return;
        }
        /* a past period whose keys have expired: the archive has the ranks
         * it closed with (it copies the list) */
        if (gw_read_past_and_gone(p->s, p->b, p->period, p->w) &&
            gw_read_past_try_archive(p->s, p->b, p->board, p->period, &p->spec, p->w, p->cb, p->privdata) == 0) {
            free(p->members);
            free(p);
            return;
        }
        gw_join_profiles(p->s->profiles, p->w, on_joined, p);
        return;
    }
    int rc = parse_window(p->b, reply, p->spec.places && p->spec.kind != GW_READ_RANK, p->w);
    if (rc) {
        finish(p, rc);
        return;
    }
    /* a past period whose keys have expired: the archive has it */
    if (gw_read_past_and_gone(p->s, p->b, p->period, p->w) &&
        gw_read_past_try_archive(p->s, p->b, p->board, p->period, &p->spec, p->w, p->cb, p->privdata) == 0) {
        free(p);
        return;
    }
    gw_join_profiles(p->s->profiles, p->w, on_joined, p);
}

int gw_read(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
            const struct gw_read_spec *spec, gw_read_cb *cb, void *privdata)
{
    if (b->shards > 1)
        return gw_read_shard_read(s, b, board, period, spec, cb, privdata);
    struct rc_read_req req = {.first = spec->first, .count = spec->count, .member = spec->member,
                              .radius = spec->radius, .places = spec->places && spec->kind != GW_READ_RANK,
                              .tie_unit = rc_places_unit(b), .live = spec->live};
    switch (spec->kind) {
    case GW_READ_RANGE:
        req.kind = RC_READ_RANGE;
        break;
    case GW_READ_AROUND:
        req.kind = RC_READ_AROUND;
        break;
    case GW_READ_RANK:
        req.kind = RC_READ_RANK;
        break;
    case GW_READ_MEMBERS:
        req.kind = spec->best > 0 ? RC_READ_ROSTER : RC_READ_MEMBERS;
        req.places = spec->places;
        req.members = spec->members;
        req.nmembers = spec->nmembers;
        req.best = spec->best;
        if (!spec->members || !spec->nmembers || !spec->members_len)
            return RC_E_BAD_REQUEST;
        break;
    default:
        return RC_E_INTERNAL;
    }
    struct pending *p = calloc(1, sizeof *p);
    if (!p || !(p->w = calloc(1, sizeof *p->w))) {
        free(p);
        return RC_E_INTERNAL;
    }
    p->s = s;
    p->b = b;
    p->cb = cb;
    p->privdata = privdata;
    snprintf(p->board, sizeof p->board, "%s", board);
    snprintf(p->period, sizeof p->period, "%s", period);
    p->spec = *spec;
    if (spec->member) {
        snprintf(p->member, sizeof p->member, "%s", spec->member);
        p->spec.member = p->member;
    }
    if (spec->kind == GW_READ_MEMBERS) {
        if (!(p->members = malloc(spec->members_len))) {
            free(p->w);
            free(p);
            return RC_E_INTERNAL;
        }
        memcpy(p->members, spec->members, spec->members_len);
        p->spec.members = p->members;
        if (req.kind == RC_READ_ROSTER) {
            /* one argument, the names joined by spaces (no name has one) */
            for (uint32_t i = 0; i + 1 < spec->members_len; i++)
                if (!p->members[i])
                    p->members[i] = ' ';
            req.joined = p->members;
            p->spec.members = NULL; /* (not a packed list now; nothing after the call reads it) */
        }
    }
    int rc = gw_read_call(s, b, board, period, &req, on_read, p);
    if (rc) {
        free(p->w);
        free(p->members);
        free(p);
    }
    return rc;
}

/* ---- change events and the log ------------------------------------------ */

struct log_pending {
    gw_read_log_cb *cb;
    void *privdata;
};

static void on_log(redisReply *r, void *privdata)
{
    struct log_pending *p = privdata;
    struct rc_read_head head;
    struct rc_reply_item items[RC_READ_HEAD];
    for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < RC_READ_HEAD && i < r->elements; i++) {
        const redisReply *e = r->element[i];
        items[i] = (struct rc_reply_item){e->type == REDIS_REPLY_INTEGER, e->integer,
                                          e->type == REDIS_REPLY_STRING && strlen(e->str) == e->len ? e->str : NULL};
    }
    if (!r || r->type != REDIS_REPLY_ARRAY || rc_read_args_head_parse(items, r->elements, &head) != 0) {
        const struct rc_freeze none = {0};
        p->cb(r ? RC_E_INTERNAL : RC_E_UNAVAILABLE, 0, 0, "", &none, NULL, 0, p->privdata);
        free(p);
        return;
    }
    size_t n = r->elements - RC_READ_HEAD, k = 0;
    struct rc_event *evs = calloc(n ? n : 1, sizeof *evs);
    if (!evs) {
        const struct rc_freeze none = {0};
        p->cb(RC_E_INTERNAL, 0, 0, "", &none, NULL, 0, p->privdata);
        free(p);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const redisReply *e = r->element[RC_READ_HEAD + i];
        if (e->type == REDIS_REPLY_STRING && rc_event_parse(e->str, e->len, &evs[k]) == 0)
            k++;
    }
    p->cb(0, head.seq, head.total, head.epoch, &head.freeze, evs, k, p->privdata);
    free(evs);
    free(p);
}

int gw_read_log(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period, int live,
                gw_read_log_cb *cb, void *privdata)
{
    return gw_read_log_after(s, b, board, period, live, 0, 0, cb, privdata);
}

int gw_read_log_after(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                      int live, int64_t after, int64_t max, gw_read_log_cb *cb, void *privdata)
{
    const struct rc_read_req req = {.kind = RC_READ_LOG, .live = live, .first = after, .count = max};
    struct log_pending *p = malloc(sizeof *p);
    if (!p)
        return RC_E_INTERNAL;
    p->cb = cb;
    p->privdata = privdata;
    int rc = gw_read_call(s, b, board, period, &req, on_log, p);
    if (rc)
        free(p);
    return rc;
}
