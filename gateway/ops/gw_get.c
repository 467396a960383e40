/* gw_get.c - get at a moment and rank history (see gw_get.h): the checks
 * that need no Redis state, then one store/gw_read_at read. */
#include "ops/gw_get.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "ops/gw_roster.h"
#include "ops/gw_roster_at.h"
#include "store/gw_read_at.h"
#include "rc_auth.h"
#include "rc_conf.h"
#include "rc_members.h"
#include "rc_period.h"
#include "rc_shard.h"

struct get_call {
    struct gw_app *app;
    gw_op_done *done;
    void *privdata;
    char *id_json;
    const struct rc_board *decl;
    char board[RC_BOARD_MAX + 1];
    char member[RC_MEMBER_MAX + 1];
    struct rc_period period;
    int audience;               /* not the caster's live read: a freeze holds */
    int by_time;                /* the moment is a time (or history's points) */
    char *members;              /* a member list's names (owned), for its absent */
    uint32_t nmembers;
    int64_t roster_total;       /* a roster at a moment: the team's member count then; -1: none */
    int by_time_target;         /* (a roster: the moment asked, for its members' read) */
    char team[RC_MEMBER_MAX + 1]; /* a roster: its team, each row's "team" then */
    int64_t target;
};

static void call_free(struct get_call *c)
{
    free(c->id_json);
    free(c->members);
    free(c);
}

/* The answer to a moment no longer held or not yet come; NULL when res is OK. */
static char *refusal(struct get_call *c, const struct gw_read_at_result *res, int *code)
{
    char msg[160];
    /* a finished period with no seq: its keys expired (or it was never
     * written): no moment of it is held but the empty start */
    int gone = c->decl->period.kind != RC_PERIOD_NONE && c->period.end_ms <= gw_now_ms(c->app) &&
               res->head.seq == 0 && (res->status == RC_MOMENT_BEYOND || c->by_time);
    if (gone) {
        *code = RC_E_OUT_OF_RANGE;
        gw_metrics_error(&c->app->metrics, *code);
        snprintf(msg, sizeof msg, "period %.32s is over and its history is no longer held: read it without at",
                 c->period.id);
        return rc_proto_at_encode_gone(c->id_json, msg, 0);
    }
    if (res->status == RC_MOMENT_BEYOND) {
        *code = RC_E_BAD_REQUEST;
        snprintf(msg, sizeof msg, "at.seq is past board %s's present seq %" PRId64, c->board, res->head.seq);
        return gw_ops_error(c->app, c->id_json, *code, msg);
    }
    if (res->status == RC_MOMENT_GONE) {
        *code = RC_E_OUT_OF_RANGE;
        gw_metrics_error(&c->app->metrics, *code);
        if (c->decl->shards > 1 && res->has_oldest_time == 1)
            snprintf(msg, sizeof msg, "board %s's history no longer holds that moment: the earliest time it can "
                     "show is %" PRId64, c->board, res->oldest_time);
        else
            snprintf(msg, sizeof msg, "board %s's history no longer holds that moment: the oldest seq it can show "
                     "is %" PRId64, c->board, res->oldest);
        return rc_proto_at_encode_gone_time(c->id_json, msg, res->oldest, res->has_oldest_time == 1,
                                            res->oldest_time);
    }
    return NULL;
}

static void on_read(int code, struct gw_read_at_result *res, void *privdata)
{
    struct get_call *c = privdata;
    char *json = NULL;
    if (code) {
        json = gw_ops_error(c->app, c->id_json, code, code == RC_E_UNAVAILABLE ? "Redis is unreachable" : "read failed");
    } else if (!(json = refusal(c, res, &code))) {
        /* the audience of a frozen board sees no moment past the frozen
         * one (the script stopped there): the answer says it is frozen */
        int frozen = c->audience && res->head.freeze.frozen;
        struct rc_snapshot_msg m = {
            .id_json = c->id_json,
            .board = c->board,
            .period = c->decl->period.kind == RC_PERIOD_NONE ? NULL : c->period.id,
            .seq = res->at_seq,
            .total = res->w->total,
            .rows = gw_window_rows_out(res->w, c->decl),
            .more = {.epoch = res->head.epoch, .frozen = frozen, .freeze_seq = res->head.freeze.seq},
            .has_at = 1,
            .at_seq = res->at_seq,
            .has_at_time = res->has_at_time,
            .at_time = res->at_time,
        };
        const char *absent[RC_MEMBERS_MAX];
        if (c->roster_total >= 0) { /* its best 200 then, total the team's member count then */
            gw_window_truncate(res->w, c->nmembers ? RC_MEMBERS_MAX : 0);
            for (size_t i = 0; i < res->w->n; i++)
                res->w->rows[i].team = c->team; /* (on the team then: that is why it is a row) */
            m.rows = gw_window_rows_out(res->w, c->decl);
            m.total = c->roster_total;
        }
        size_t room = res->w->n < RC_MEMBERS_MAX ? RC_MEMBERS_MAX - res->w->n : 0;
        long na = c->members && c->nmembers && room
                      ? rc_members_absent_max(c->members, c->nmembers, res->w->rows, res->w->n, absent, room)
                      : 0;
        m.has_absent = c->members != NULL || c->roster_total >= 0;
        m.absent = absent;
        m.nabsent = na > 0 ? (size_t)na : 0;
        if (na < 0 || !(json = rc_proto_rows_snapshot(&m)))
            json = gw_ops_error(c->app, c->id_json, code = RC_E_INTERNAL, "out of memory");
    }
    if (res && res->w)
        gw_window_free(res->w);
    c->done(c->privdata, code, json);
    call_free(c);
}

static void on_history(int code, struct gw_read_at_result *res, void *privdata)
{
    struct get_call *c = privdata;
    char *json = NULL;
    if (code) {
        json = gw_ops_error(c->app, c->id_json, code, code == RC_E_UNAVAILABLE ? "Redis is unreachable" : "read failed");
    } else if (!(json = refusal(c, res, &code))) {
        int64_t frozen = c->audience && res->head.freeze.frozen ? res->head.freeze.seq : 0;
        json = rc_proto_at_encode_history(c->id_json, c->board, c->member,
                                          c->decl->period.kind == RC_PERIOD_NONE ? NULL : c->period.id,
                                          res->points, res->npoints, frozen);
        if (!json)
            json = gw_ops_error(c->app, c->id_json, code = RC_E_INTERNAL, "out of memory");
    }
    c->done(c->privdata, code, json);
    call_free(c);
}

/* Authorizes and resolves r, and refuses what no board kind can answer
 * yet. Returns 0 with *out allocated, or the code with err filled. */
static int start(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, int64_t newest_ms,
                 struct get_call **out, struct rc_error *err)
{
    struct get_call *c = calloc(1, sizeof *c);
    if (!c)
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    c->roster_total = -1;
    /* reading past a freeze is the caster's: admin scope, as "live" on subscribe */
    int code = gw_ops_authorize(app, who, r->view.live ? RC_SCOPE_ADMIN : RC_SCOPE_READ, r->board, err);
    if (!code)
        code = gw_ops_resolve(app, r, &c->decl, &c->period, err);
    if (!code && c->decl->shards > 1) {
        if (r->at_kind == RC_AT_SEQ)
            code = rc_err_set(err, RC_E_BAD_REQUEST, "a sharded board's seq names no single state (each shard "
                                "counts its own): name the moment by at.time");
        else if (r->op != RC_OP_HISTORY && r->view.kind != RC_VIEW_AROUND && r->view.kind != RC_VIEW_MEMBERS &&
                 (int64_t)r->view.offset + r->view.limit > RC_SHARD_READ_MAX)
            code = rc_err_set(err, RC_E_BAD_REQUEST, "a page of a sharded board must end within rank %d",
                                RC_SHARD_READ_MAX);
    }
    if (!code && c->decl->decay.kind != RC_DECAY_NONE)
        code = rc_err_set(err, RC_E_BAD_REQUEST, "a decaying board keeps no history: it is rebuilt, not changed");
    if (!code && r->view.places)
        code = rc_err_set(err, RC_E_BAD_REQUEST, "places = shared is not served at a past moment yet");
    if (!code && newest_ms > gw_now_ms(app))
        code = rc_err_set(err, RC_E_BAD_REQUEST, "the time asked (%" PRId64 ") is past the present", newest_ms);
    if (code) {
        free(c);
        return code;
    }
    c->app = app;
    c->audience = !r->view.live;
    c->by_time = r->at_kind == RC_AT_TIME || r->op == RC_OP_HISTORY;
    c->id_json = r->id_json ? strdup(r->id_json) : NULL;
    memcpy(c->board, r->board, sizeof c->board);
    memcpy(c->member, r->member, sizeof c->member);
    *out = c;
    return 0;
}

/* A roster at a moment: its members then are known; read them as a member
 * list at that moment (an empty team: the board's head alone). */
static void on_roster(int code, int gone, int64_t oldest, const char *members, uint32_t n, uint32_t len,
                      void *privdata)
{
    struct get_call *c = privdata;
    char msg[200];
    if (!code && gone) {
        code = RC_E_OUT_OF_RANGE;
        gw_metrics_error(&c->app->metrics, code);
        snprintf(msg, sizeof msg, "board %s's team membership history does not reach that moment: the oldest seq "
                 "a roster can show is %" PRId64, c->board, oldest);
        c->done(c->privdata, code, rc_proto_at_encode_gone(c->id_json, msg, oldest));
        call_free(c);
        return;
    }
    int64_t target = c->target;
    struct rc_moment_req req = {.by_time = c->by_time_target, .audience = c->audience, .targets = &target,
                                .ntargets = 1, .view = RC_MOMENT_RANGE, .first = 0, .count = 1};
    c->roster_total = n;
    if (!code && n) {
        req.view = RC_MOMENT_LIST;
        req.members = members;
        req.nmembers = n;
        if (!(c->members = malloc(len)))
            code = RC_E_INTERNAL;
        else
            memcpy(c->members, members, len);
        c->nmembers = n;
    }
    if (!code && (code = gw_read_at(&c->app->store, c->decl, c->board, c->period.id, &req, on_read, c)) == 0)
        return;
    c->done(c->privdata, code, gw_ops_error(c->app, c->id_json, code, code == RC_E_UNAVAILABLE ? "Redis is unreachable"
                                                                                             : "read failed"));
    call_free(c);
}

void gw_get_read(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                 void *privdata)
{
    if (r->at_kind == RC_AT_NONE) {
        /* a roster's members come from the membership first (one HGETALL) */
        if (r->view.kind == RC_VIEW_TEAM)
            gw_roster_read(app, who, r, done, privdata);
        else
            gw_ops_snapshot(app, who, r, done, privdata);
        return;
    }
    struct rc_error err = {0, ""};
    struct get_call *c = NULL;
    int code = start(app, who, r, r->at_kind == RC_AT_TIME ? r->at : 0, &c, &err);
    if (!code && r->view.kind == RC_VIEW_TEAM) {
        /* a roster: who was on the team then first (gw_roster_at.c) */
        c->done = done;
        c->privdata = privdata;
        c->by_time_target = r->at_kind == RC_AT_TIME;
        snprintf(c->team, sizeof c->team, "%s", r->view.around);
        c->target = r->at;
        if (!c->decl->teams[0])
            code = rc_err_set(&err, RC_E_BAD_REQUEST, "a roster needs a board with teams (docs/teams.md)");
        else if ((code = gw_roster_at_members(app, c->decl, c->period.id, r->view.around, c->by_time_target, r->at, on_roster,
                                              c)) == 0)
            return;
        else
            rc_err_set(&err, code, code == RC_E_UNAVAILABLE ? "Redis is unreachable" : "read failed");
        call_free(c);
        done(privdata, code, gw_ops_error(app, r->id_json, code, err.msg));
        return;
    }
    if (!code) {
        c->done = done;
        c->privdata = privdata;
        int64_t target = r->at;
        struct rc_moment_req req = {.by_time = r->at_kind == RC_AT_TIME, .audience = c->audience,
                                    .targets = &target, .ntargets = 1};
        if (r->view.kind == RC_VIEW_MEMBERS) {
            req.view = RC_MOMENT_LIST;
            req.members = r->view.members;
            req.nmembers = r->view.nmembers;
            if (!(c->members = malloc(r->view.members_len ? r->view.members_len : 1)))
                code = RC_E_INTERNAL;
            else
                memcpy(c->members, r->view.members, r->view.members_len);
            c->nmembers = r->view.nmembers;
        } else if (r->view.kind == RC_VIEW_AROUND) {
            req.view = RC_MOMENT_AROUND;
            req.member = r->view.around;
            req.radius = r->view.radius;
        } else {
            req.view = RC_MOMENT_RANGE;
            req.first = r->view.kind == RC_VIEW_PAGE ? r->view.offset : 0;
            req.count = r->view.limit;
        }
        if (!code && (code = gw_read_at(&app->store, c->decl, r->board, c->period.id, &req, on_read, c)) == 0)
            return;
        rc_err_set(&err, code, code == RC_E_UNAVAILABLE ? "Redis is unreachable" : "read failed");
        call_free(c);
    }
    done(privdata, code, gw_ops_error(app, r->id_json, code, err.msg));
}

void gw_get_history(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                    void *privdata)
{
    struct rc_error err = {0, ""};
    struct get_call *c = NULL;
    int64_t *targets = NULL;
    size_t n = 0;
    int code = rc_proto_at_check_history(r, &err);
    if (!code)
        code = start(app, who, r, r->to_ms, &c, &err);
    if (!code) {
        c->done = done;
        c->privdata = privdata;
        n = (size_t)((r->to_ms - r->from_ms) / r->step_ms) + 1;
        if (!(targets = malloc(n * sizeof *targets)))
            code = rc_err_set(&err, RC_E_INTERNAL, "out of memory");
        for (size_t i = 0; targets && i < n; i++)
            targets[i] = r->from_ms + (int64_t)i * r->step_ms;
    }
    if (!code) {
        struct rc_moment_req req = {.by_time = 1, .audience = c->audience, .view = RC_MOMENT_POINTS,
                                    .member = r->member, .targets = targets, .ntargets = n};
        code = gw_read_at(&app->store, c->decl, r->board, c->period.id, &req, on_history, c);
        if (code)
            rc_err_set(&err, code, code == RC_E_UNAVAILABLE ? "Redis is unreachable" : "read failed");
    }
    free(targets);
    if (!code)
        return;
    if (c)
        call_free(c);
    done(privdata, code, gw_ops_error(app, r->id_json, code, err.msg));
}
