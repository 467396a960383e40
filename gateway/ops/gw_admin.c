/* gw_admin.c - admin operations through lua/admin.lua, audited. */
#include "ops/gw_admin.h"
#include "ops/gw_teams.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "ops/gw_admin_shard.h"
#include "ops/gw_blocklist.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "redis/gw_write.h"
#include "rc_admin_args.h"
#include "rc_auth.h"
#include "rc_codec.h"
#include "rc_conf.h"
#include "rc_keys.h"
#include "rc_expiry.h"

#define AUDIT_KEY "rc:audit"
#define AUDIT_MAX "100000" /* the stream keeps about the last 100,000 actions */

struct admin_call {
    struct gw_app *app;
    gw_op_done *done;
    void *privdata;
    enum rc_op op;
    char *id_json;
    char who[RC_JWT_SUB_MAX + 8];  /* key name, or "jwt:SUB" for a token */
    char board[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    char member[RC_MEMBER_MAX + 1];
    char req[RC_REQ_MAX + 1];
    int block;
    int64_t at;
    const struct rc_board *b;
    struct rc_period p;
    char *json;         /* the answer, held while gw_blocklist_spread runs */
};

static void admin_call_free(struct admin_call *a)
{
    free(a->id_json);
    free(a->json);
    free(a);
}

/* The board's and the next period's blocklists followed the block or
 * unblock (periodic boards, ops/gw_blocklist.h): the answer goes out now. */
static void on_spread(int code, void *privdata)
{
    struct admin_call *a = privdata;
    if (code) {
        free(a->json);
        a->json = gw_ops_error(a->app, a->id_json, code,
                              a->op == RC_OP_UNBLOCK
                                  ? "Redis became unreachable while the unblock reached later periods: send it again"
                                  : "Redis became unreachable while the block reached later periods: send it again");
    }
    a->done(a->privdata, code, a->json);
    a->json = NULL;
    admin_call_free(a);
}

void gw_admin_audit(struct gw_app *app, const char *who, enum rc_op op, const char *board, const char *period,
                    const char *member, const char *req, int block, int64_t at_ms)
{
    char at[32], blk[4];
    if (!app->redis)
        return;
    snprintf(at, sizeof at, "%" PRId64, at_ms);
    snprintf(blk, sizeof blk, "%d", block);
    const char *argv[] = {"XADD", AUDIT_KEY, "MAXLEN", "~", AUDIT_MAX, "*", "who", who, "op",
                          rc_admin_args_action(op), "board", board, "period", period, "member", member ? member : "",
                          "req", req ? req : "", "block", blk, "at", at};
    gw_redis_command(app->redis, AUDIT_KEY, strlen(AUDIT_KEY), (int)(sizeof argv / sizeof argv[0]), argv, NULL,
                     NULL, NULL);
}

static void audit(struct admin_call *a, const char *member)
{
    gw_admin_audit(a->app, a->who, a->op, a->board, a->period, member, a->req, a->block, a->at);
}

/* The team board followed the source's remove, reverse or reset
 * (ops/gw_teams.h): the answer goes out now. */
static void on_teams(int code, void *privdata)
{
    struct admin_call *a = privdata;
    if (code) {
        free(a->json);
        a->json = gw_ops_error(a->app, a->id_json, code,
                              "the operation was applied, but its team board could not be updated: run "
                              "rankcast teams rebuild for this board");
    }
    a->done(a->privdata, code, a->json);
    a->json = NULL;
    admin_call_free(a);
}

/* Answers the operation: res is the script's answer for the board (code
 * 0), or code and message say why not. */
static void answer(struct admin_call *a, int code, const struct rc_admin_result *res, const char *message)
{
    struct gw_app *app = a->app;
    char *json;
    if (code) {
        json = gw_ops_error(app, a->id_json, code, message);
    } else if (res->status) {
        code = res->status;
        json = gw_ops_error(app, a->id_json, code, res->detail);
    } else {
        const char *member = res->member;
        if (!res->duplicate)
            audit(a, member[0] ? member : NULL);
        switch (a->op) {
        case RC_OP_REMOVE:
            json = rc_proto_encode_admin(a->id_json, "removed", a->board, a->member, res->seq, 0, 0, 0, NULL, a->block);
            break;
        case RC_OP_UNBLOCK:
            json = rc_proto_encode_admin(a->id_json, "unblocked", a->board, a->member, res->seq, 0, 0, 0, NULL, 0);
            break;
        case RC_OP_REVERSE:
            json = rc_proto_encode_admin(a->id_json, "reversed", a->board, member, res->seq, 1, res->score, res->rank,
                                   a->req, -1);
            break;
        default:
            json = rc_proto_encode_admin(a->id_json, "board_reset", a->board, NULL, res->seq, 0, 0, 0, NULL, -1);
            break;
        }
        gw_log_info("admin %s by %s on %s%s%s %s", rc_admin_args_action(a->op), a->who, a->board, a->period[0] ? "|" : "",
                    a->period, member);
        /* a source board's teams follow what its members' points did
         * (docs/teams.md): the answer waits for the team board */
        if (json && a->b->teams[0] && a->op != RC_OP_UNBLOCK && !res->duplicate) {
            a->json = json;
            if (gw_teams_sync(app, a->b, &a->p, a->op == RC_OP_RESET, on_teams, a) == 0)
                return;
            a->json = NULL;
            free(json);
            code = RC_E_UNAVAILABLE;
            json = gw_ops_error(app, a->id_json, code, "Redis is unreachable: the team board was not updated");
        }
        int spread = a->p.id[0] && (a->op == RC_OP_UNBLOCK || (a->op == RC_OP_REMOVE && a->block));
        if (spread && json) {
            a->json = json;
            if (gw_blocklist_spread(app->redis, a->b, a->board, &a->p, a->at, a->member, a->op == RC_OP_REMOVE,
                                    on_spread, a) == 0)
                return;
            a->json = NULL;
            free(json);
            code = RC_E_UNAVAILABLE;
            json = gw_ops_error(app, a->id_json, code, "Redis is unreachable: later periods were not updated");
        }
    }
    a->done(a->privdata, code, json);
    admin_call_free(a);
}

static void on_admin(redisReply *r, void *privdata)
{
    struct admin_call *a = privdata;
    struct rc_reply_item items[8];
    struct rc_admin_result res;
    if (!r)
        answer(a, RC_E_UNAVAILABLE, NULL, "Redis connection lost before the operation was answered");
    else if (rc_admin_args_result_parse(items, gw_script_reply_items(r, items, 8), &res)) {
        struct rc_error err = {0, ""};
        answer(a, gw_script_reply_error(&err, RC_E_INTERNAL, "the admin script", r), NULL, err.msg);
    }
    else
        answer(a, 0, &res, "");
}

/* A sharded board's operation, answered for the whole board (ops/gw_admin_shard.h). */
static void on_sharded(int code, const struct rc_admin_result *res, const char *message, void *privdata)
{
    answer(privdata, code, res, message);
}

void gw_admin_op(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                 void *privdata)
{
    const struct rc_board *b = NULL;
    struct rc_period p = {0};
    struct rc_error err = {0, ""};
    int code = gw_ops_authorize(app, who, RC_SCOPE_ADMIN, r->board, &err);
    if (!code)
        code = gw_ops_resolve(app, r, &b, &p, &err);
    if (!code && b->team_of[0])
        code = rc_err_set(&err, RC_E_BAD_REQUEST, "board %s is the team board of %s: admin ops apply to %s, and "
                            "its teams follow", r->board, b->team_of, b->team_of);
    if (!code && r->op == RC_OP_REVERSE && (b->layout.nfields || b->decay.kind != RC_DECAY_NONE))
        code = rc_err_set(&err, RC_E_BAD_REQUEST, "reverse applies to single-field boards without decay");
    int64_t now = gw_now_ms(app), ttl = 0;
    uint64_t slot = 0;
    if (!code)
        code = rc_expiry_period_ttl_ms(b, &p, now, &ttl, &err);
    int64_t base = !b ? 0 : b->period.kind == RC_PERIOD_NONE ? b->layout.tb_base_ms : p.start_ms;
    if (!code && r->op == RC_OP_REVERSE && rc_codec_tb_slot(&b->layout, base, now, &slot))
        code = rc_err_set(&err, RC_E_OUT_OF_RANGE, "now is outside board %s's tie-break horizon", r->board);
    struct admin_call *a = code ? NULL : calloc(1, sizeof *a);
    if (!code && !a)
        code = rc_err_set(&err, RC_E_INTERNAL, "out of memory");
    if (code) {
        done(privdata, code, gw_ops_error(app, r->id_json, code, err.msg));
        return;
    }
    a->app = app;
    a->done = done;
    a->privdata = privdata;
    a->op = r->op;
    a->id_json = r->id_json ? strdup(r->id_json) : NULL;
    a->block = r->op == RC_OP_REMOVE && r->block;
    a->at = now;
    gw_ops_who(who, a->who, sizeof a->who);
    snprintf(a->board, sizeof a->board, "%s", r->board);
    snprintf(a->period, sizeof a->period, "%s", p.id);
    snprintf(a->member, sizeof a->member, "%s", r->member);
    snprintf(a->req, sizeof a->req, "%s", r->req);
    a->b = b;
    a->p = p;

    if (b->shards > 1) {
        if ((code = gw_admin_shard_run(app, b, r, &p, now, slot, ttl, on_sharded, a, &err)) != 0) {
            done(privdata, code, gw_ops_error(app, r->id_json, code, err.msg));
            free(a->id_json);
            free(a);
        }
        return;
    }
    struct rc_admin_args args;
    int bad = rc_admin_args_build(b, r, &p, now, slot, ttl, app->redis && gw_redis_is_cluster(app->redis) == 1, &args, &err) != 0;
    if (!bad) {
        gw_write_new_epoch(args.epoch); /* a reset starts the board's history over with it */
        args.lens[RC_ADMIN_NKEYS + RC_ADMIN_NARGV - 1] = strlen(args.epoch);
    }
    if (bad || !app->redis || gw_redis_eval(app->redis, &app->admin_script, RC_ADMIN_NKEYS, RC_ADMIN_NKEYS + RC_ADMIN_NARGV, args.words, args.lens, on_admin, a) != 0) {
        code = bad ? RC_E_INTERNAL : RC_E_UNAVAILABLE;
        done(privdata, code, gw_ops_error(app, r->id_json, code, bad ? "key name too long" : "Redis is unreachable"));
        free(a->id_json);
        free(a);
    }
}
