/* gw_admin_shard.c - admin operations on a sharded board (gw_admin_shard.h). */
#include "ops/gw_admin_shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "redis/gw_write.h"
#include "store/gw_read.h"
#include "rc_err.h"
#include "rc_shard.h"

struct shard_admin {
    struct gw_app *app;
    const struct rc_board *b;
    gw_admin_shard_cb *cb;
    void *privdata;
    struct rc_request req;        /* op, board, member, req, block: what the builder reads (no owned parts) */
    struct rc_period p;
    int64_t now_ms, ttl_ms;
    uint64_t slot;
    unsigned next;                /* the next shard to send to */
    unsigned last;                /* one past the last shard this op may touch */
    unsigned reset;               /* shards reset so far */
    int64_t seq_sum;
    struct rc_admin_result res;   /* the answer, strings pointing below */
    char member[RC_MEMBER_MAX + 1];
    char detail[RC_ERROR_MSG_MAX];
};

static void fail(struct shard_admin *sa, int code, const char *message)
{
    sa->cb(code, NULL, message, sa->privdata);
    free(sa);
}

static void succeed(struct shard_admin *sa)
{
    sa->cb(0, &sa->res, "", sa->privdata);
    free(sa);
}

static int send_next(struct shard_admin *sa);

/* The board's seq (and a reversal's global rank) after a member's op. */
static void on_merged(int code, struct gw_window *w, void *privdata)
{
    struct shard_admin *sa = privdata;
    if (code) {
        char msg[RC_ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "the %s was applied on the member's shard, but the board's seq could not be read "
                 "after it (%s): send it again to see the answer (a repeat changes nothing)",
                 rc_admin_args_action(sa->req.op), rc_err_code_name(code));
        gw_window_free(w);
        fail(sa, RC_E_UNAVAILABLE, msg);
        return;
    }
    sa->res.seq = w->seq;
    if (sa->req.op == RC_OP_REVERSE)
        sa->res.rank = w->n ? w->first_rank : 0;
    gw_window_free(w);
    succeed(sa);
}

static void keep(struct shard_admin *sa, const struct rc_admin_result *res)
{
    sa->res = *res;
    snprintf(sa->member, sizeof sa->member, "%s", res->member);
    snprintf(sa->detail, sizeof sa->detail, "%s", res->detail);
    sa->res.member = sa->member;
    sa->res.detail = sa->detail;
}

static void on_reply(redisReply *r, void *privdata)
{
    struct shard_admin *sa = privdata;
    struct rc_reply_item items[8];
    struct rc_admin_result res;
    char msg[RC_ERROR_MSG_MAX];
    int is_reset = sa->req.op == RC_OP_RESET;
    if (!r || rc_admin_args_result_parse(items, gw_script_reply_items(r, items, 8), &res) != 0) {
        int code = r ? RC_E_INTERNAL : RC_E_UNAVAILABLE;
        struct rc_error err = {0, ""};
        const char *why = !r ? "Redis connection lost before the operation was answered"
                             : (gw_script_reply_error(&err, RC_E_INTERNAL, "the admin script", r), err.msg);
        if (is_reset) {
            /* the count and the advice first: a long cause is what the cut
             * may take (a cut message is still a whole answer) */
            int n = snprintf(msg, sizeof msg, "%u of %u shards of board %s were reset; send the reset again to finish "
                             "it (%s)", sa->reset, sa->b->shards, sa->req.board, why);
            (void)(n >= (int)sizeof msg);
        } else
            snprintf(msg, sizeof msg, "%s", why);
        fail(sa, code, msg);
        return;
    }
    if (res.status && res.unknown_req && sa->next < sa->last) {
        if (send_next(sa) != 0)
            fail(sa, RC_E_UNAVAILABLE, "Redis is unreachable");
        return;
    }
    keep(sa, &res);
    if (res.status) {
        succeed(sa); /* a refusal, answered as on any board */
        return;
    }
    if (is_reset) {
        sa->reset++;
        sa->seq_sum += res.seq;
        if (sa->next == sa->last) {
            sa->res.seq = sa->seq_sum;
            succeed(sa);
        } else if (send_next(sa) != 0) {
            snprintf(msg, sizeof msg, "Redis is unreachable: %u of %u shards of board %s were reset; send the reset "
                     "again to finish it", sa->reset, sa->b->shards, sa->req.board);
            fail(sa, RC_E_UNAVAILABLE, msg);
        }
        return;
    }
    const char *member = sa->req.op == RC_OP_REVERSE ? sa->member : sa->req.member;
    struct gw_read_spec spec = {.kind = GW_READ_RANK, .member = member, .live = 1};
    int code = gw_read(&sa->app->store, sa->b, sa->req.board, sa->p.id, &spec, on_merged, sa);
    if (code)
        on_merged(code, NULL, sa);
}

/* Sends the op to shard sa->next (and moves on). Returns 0 or an RC_E_*. */
static int send_next(struct shard_admin *sa)
{
    char name[RC_SHARD_NAME_MAX + 1];
    struct rc_admin_args args;
    struct rc_error err = {0, ""};
    struct gw_app *app = sa->app;
    if (!app->redis || rc_shard_name(name, sizeof name, sa->req.board, sa->next) != 0 ||
        rc_admin_args_build_as(sa->b, &sa->req, &sa->p, sa->now_ms, sa->slot, sa->ttl_ms,
                               gw_redis_is_cluster(app->redis) == 1, name, &args, &err) != 0)
        return app->redis ? RC_E_INTERNAL : RC_E_UNAVAILABLE;
    gw_write_new_epoch(args.epoch); /* a reset starts the shard's history over with it */
    args.lens[RC_ADMIN_NKEYS + RC_ADMIN_NARGV - 1] = strlen(args.epoch);
    sa->next++;
    return gw_redis_eval(app->redis, &app->admin_script, RC_ADMIN_NKEYS, RC_ADMIN_NKEYS + RC_ADMIN_NARGV, args.words,
                         args.lens, on_reply, sa);
}

int gw_admin_shard_run(struct gw_app *app, const struct rc_board *b, const struct rc_request *r,
                       const struct rc_period *p, int64_t now_ms, uint64_t slot, int64_t ttl_ms,
                       gw_admin_shard_cb *cb, void *privdata, struct rc_error *err)
{
    struct shard_admin *sa = calloc(1, sizeof *sa);
    if (!sa)
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    sa->app = app;
    sa->b = b;
    sa->cb = cb;
    sa->privdata = privdata;
    sa->req.op = r->op;
    sa->req.block = r->block;
    memcpy(sa->req.board, r->board, sizeof sa->req.board);
    memcpy(sa->req.member, r->member, sizeof sa->req.member);
    memcpy(sa->req.req, r->req, sizeof sa->req.req);
    sa->p = *p;
    sa->now_ms = now_ms;
    sa->slot = slot;
    sa->ttl_ms = ttl_ms;
    if (r->op == RC_OP_REMOVE || r->op == RC_OP_UNBLOCK) {
        sa->next = rc_shard_of(r->member, b->shards);
        sa->last = sa->next + 1;
    } else {
        sa->next = 0;
        sa->last = b->shards;
    }
    int code = send_next(sa);
    if (code) {
        free(sa);
        return rc_err_set(err, code, code == RC_E_UNAVAILABLE ? "Redis is unreachable" : "key name too long");
    }
    return 0;
}
