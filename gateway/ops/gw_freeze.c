/* gw_freeze.c - freeze, reveal and the freeze state through lua/freeze.lua
 * (gw_freeze.h). */
#include "ops/gw_freeze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "ops/gw_admin.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_auth.h"
#include "rc_conf.h"
#include "rc_freeze.h"

struct freeze_call {
    struct gw_app *app;
    gw_op_done *done;
    void *privdata;
    enum rc_op op;            /* RC_OP_FREEZE, RC_OP_REVEAL, or RC_OP_PING for the state */
    char *id_json;
    char who[RC_JWT_SUB_MAX + 8];
    char board[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    int periodic;
    int64_t at;
};

static void on_freeze(redisReply *r, void *privdata)
{
    struct freeze_call *c = privdata;
    struct gw_app *app = c->app;
    struct rc_reply_item items[8];
    struct rc_freeze_result res;
    const char *period = c->periodic ? c->period : NULL;
    char *json;
    int code = 0;
    if (!r) {
        code = RC_E_UNAVAILABLE;
        json = gw_ops_error(app, c->id_json, code, "Redis connection lost before the operation was answered");
    } else if (rc_freeze_result_parse(items, gw_script_reply_items(r, items, 8), &res) != 0) {
        struct rc_error err = {0, ""};
        code = gw_script_reply_error(&err, RC_E_INTERNAL, "the freeze script", r);
        json = gw_ops_error(app, c->id_json, code, err.msg);
    } else {
        const struct rc_freeze *f = &res.state;
        if (c->op == RC_OP_FREEZE)
            json = rc_proto_encode_frozen(c->id_json, c->board, period, f->seq);
        else if (c->op == RC_OP_REVEAL)
            json = rc_proto_encode_revealed(c->id_json, c->board, period, f->frozen ? f->shown : res.seq,
                                      rc_freeze_pending(f, res.seq), f->frozen, f->seq, res.skipped);
        else
            json = rc_proto_encode_freeze_state(c->board, period, f->frozen, f->seq, f->shown, res.seq);
        if (c->op != RC_OP_PING && res.changed) {
            gw_admin_audit(app, c->who, c->op, c->board, c->period, NULL, NULL, 0, c->at);
            gw_log_info("admin %s by %s on %s%s%s: %s %lld, %lld pending", c->op == RC_OP_FREEZE ? "freeze" : "reveal",
                        c->who, c->board, c->period[0] ? "|" : "", c->period, f->frozen ? "shown" : "unfrozen at",
                        (long long)(f->frozen ? f->shown : res.seq), (long long)rc_freeze_pending(f, res.seq));
        }
        if (!json) {
            code = RC_E_INTERNAL;
            json = gw_ops_error(app, c->id_json, code, "out of memory");
        }
    }
    c->done(c->privdata, code, json);
    free(c->id_json);
    free(c);
}

static void start(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, enum rc_op op,
                  gw_op_done *done, void *privdata)
{
    const struct rc_board *b = NULL;
    struct rc_period p = {0};
    struct rc_error err = {0, ""};
    int code = gw_ops_authorize(app, who, RC_SCOPE_ADMIN, r->board, &err);
    if (!code)
        code = gw_ops_resolve(app, r, &b, &p, &err);
    if (!code && b->decay.kind != RC_DECAY_NONE)
        code = rc_err_set(&err, RC_E_BAD_REQUEST,
                            "freeze and reveal do not apply to a decaying board (decay = %s): its standings are %s "
                            "outside its change log, so a reveal could not replay them",
                            b->decay.kind == RC_DECAY_BUCKETS ? "buckets" : "scale",
                            b->decay.kind == RC_DECAY_BUCKETS ? "rebuilt" : "rescaled");
    if (!code && b->shards > 1)
        code = rc_err_set(&err, RC_E_BAD_REQUEST,
                            "freeze is not supported on sharded boards: board %s is split into %u shards (shards = "
                            "%u), and a freeze copies one set (docs/sharded.md)", r->board, b->shards, b->shards);
    struct freeze_call *c = code ? NULL : calloc(1, sizeof *c);
    if (!code && !c)
        code = rc_err_set(&err, RC_E_INTERNAL, "out of memory");
    struct rc_freeze_args args;
    enum rc_freeze_action action = op == RC_OP_FREEZE   ? RC_FREEZE_DO_FREEZE
                                   : op == RC_OP_REVEAL ? RC_FREEZE_DO_REVEAL
                                                        : RC_FREEZE_DO_STATE;
    if (!code && rc_freeze_args_build(r->board, p.id, action, r->steps == RC_STEPS_ALL ? RC_FREEZE_STEPS_ALL : r->steps,
                                      app->redis && gw_redis_is_cluster(app->redis) == 1, &args) != 0)
        code = rc_err_set(&err, RC_E_BAD_REQUEST, "steps must be a whole number from 1, or \"all\"");
    if (code) {
        free(c);
        done(privdata, code, gw_ops_error(app, r->id_json, code, err.msg));
        return;
    }
    c->app = app;
    c->done = done;
    c->privdata = privdata;
    c->op = op;
    c->id_json = r->id_json ? strdup(r->id_json) : NULL;
    c->periodic = b->period.kind != RC_PERIOD_NONE;
    c->at = gw_now_ms(app);
    gw_ops_who(who, c->who, sizeof c->who);
    snprintf(c->board, sizeof c->board, "%s", r->board);
    snprintf(c->period, sizeof c->period, "%s", p.id);
    if (!app->redis || gw_redis_eval(app->redis, &app->freeze_script, RC_FREEZE_NKEYS,
                                     RC_FREEZE_NKEYS + RC_FREEZE_NARGV, args.words, args.lens, on_freeze, c) != 0) {
        done(privdata, RC_E_UNAVAILABLE, gw_ops_error(app, r->id_json, RC_E_UNAVAILABLE, "Redis is unreachable"));
        free(c->id_json);
        free(c);
    }
}

void gw_freeze_op(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                  void *privdata)
{
    start(app, who, r, r->op, done, privdata);
}

void gw_freeze_op_state(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r,
                        gw_op_done *done, void *privdata)
{
    start(app, who, r, RC_OP_PING, done, privdata);
}
