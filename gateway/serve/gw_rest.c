/* gw_rest.c - the REST handlers, one per route of gw_http_routes.c: the
 * board list and member profiles answered here (/healthz and /metrics:
 * gw_rest_status.c); scores,
 * snapshots, ranks and admin actions turned into a struct rc_request and
 * handed to the ops layer, which answers through gw_http_req_on_op_done. */
#include "serve/gw_rest.h"

#include <uv.h>
#include <libwebsockets.h>


#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_group.h"
#include "base/gw_metrics.h"
#include "fanout/gw_fanout.h"
#include "jobs/gw_queue.h"
#include "ops/gw_admin.h"
#include "ops/gw_freeze.h"
#include "ops/gw_get.h"
#include "ops/gw_stats.h"
#include "serve/gw_peers.h"
#include "redis/gw_redis.h"
#include "serve/gw_http_req.h"
#include "store/gw_profile.h"
#include "rc_hostport.h"
#include "rc_json_gate.h"
#include "rc_keys.h"
#include "rc_names.h"

void gw_rest_boards(struct gw_http_req *q, const struct gw_rest_target *t)
{
    (void)t;
    static const char *const ops[] = {"incr", "set", "best", "submit"};
    static const char *const decays[] = {"none", "buckets", "scale"};
    cJSON *root = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(root, "boards");
    for (size_t i = 0; i < q->app->conf->nboards; i++) {
        const struct rc_board *b = &q->app->conf->boards[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(list, o);
        cJSON_AddStringToObject(o, "name", b->name);
        cJSON_AddBoolToObject(o, "template", b->is_template);
        cJSON_AddStringToObject(o, "order", b->layout.order == RC_ORDER_DESC ? "desc" : "asc");
        cJSON_AddStringToObject(o, "period", rc_period_kind_name(b->period.kind));
        cJSON *a = cJSON_AddArrayToObject(o, "ops");
        for (unsigned k = 0; k < 4; k++)
            if (b->ops & (1u << k))
                cJSON_AddItemToArray(a, cJSON_CreateString(ops[k]));
        cJSON *f = cJSON_AddArrayToObject(o, "fields");
        for (unsigned k = 0; k < b->layout.nfields; k++)
            cJSON_AddItemToArray(f, cJSON_CreateString(b->layout.fields[k].name));
        cJSON_AddStringToObject(o, "decay", decays[b->decay.kind]);
        cJSON_AddStringToObject(o, "write_mode", b->queue.mode == RC_WRITE_QUEUED ? "queued" : "direct");
        cJSON_AddNumberToObject(o, "shards", b->shards); /* 1: not split (docs/sharded.md) */
        if (!b->layout.nfields && b->decay.kind == RC_DECAY_NONE) {
            cJSON_AddNumberToObject(o, "points_min", (double)b->layout.points_min);
            cJSON_AddNumberToObject(o, "points_max", (double)b->layout.points_max);
        }
        /* team boards (docs/teams.md): which feeds which, for pages */
        if (b->teams[0])
            cJSON_AddStringToObject(o, "teams", b->teams);
        if (b->team_of[0])
            cJSON_AddStringToObject(o, "team_of", b->team_of);
    }
    char *json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    gw_http_req_respond_json(q, json ? 0 : RC_E_INTERNAL, json);
}

static void on_profile_read(redisReply *reply, void *privdata)
{
    struct gw_http_req *q = privdata;
    if (!reply || reply->type != REDIS_REPLY_ARRAY) {
        gw_http_req_respond_error(q, reply ? RC_E_INTERNAL : RC_E_UNAVAILABLE, reply ? "profile read failed" : "Redis is unreachable");
    } else {
        cJSON *o = cJSON_CreateObject();
        for (size_t i = 0; i + 1 < reply->elements; i += 2)
            cJSON_AddStringToObject(o, reply->element[i]->str, reply->element[i + 1]->str);
        char *json = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        gw_http_req_respond_json(q, 0, json);
    }
    gw_http_req_unref(q);
}

static void on_profile_written(redisReply *reply, void *privdata)
{
    struct gw_http_req *q = privdata;
    if (!reply || reply->type != REDIS_REPLY_INTEGER)
        gw_http_req_respond_error(q, reply ? RC_E_INTERNAL : RC_E_UNAVAILABLE, reply ? "profile write failed" : "Redis is unreachable");
    else
        gw_http_req_respond_json(q, 0, strdup(q->body));
    gw_http_req_unref(q);
}

void gw_rest_profile_get(struct gw_http_req *q, const struct gw_rest_target *t)
{
    const char *member = t->member;
    char key[RC_KEY_MAX];
    if (!q->app->redis || rc_keys_profile(key, sizeof key, member)) {
        gw_http_req_respond_error(q, RC_E_UNAVAILABLE, "Redis is unreachable");
        return;
    }
    const char *argv[] = {"HGETALL", key};
    q->refs++;
    if (gw_redis_command(q->app->redis, key, strlen(key), 2, argv, NULL, on_profile_read, q) != 0) {
        q->refs--;
        gw_http_req_respond_error(q, RC_E_UNAVAILABLE, "Redis is unreachable");
    }
}

void gw_rest_profile_put(struct gw_http_req *q, const struct gw_rest_target *t)
{
    const char *member = t->member;
    struct rc_kv kv[GW_PROFILE_MAX_FIELDS];
    unsigned n = 0;
    struct rc_error gate = {0, ""};
    cJSON *o = NULL;
    /* the same strict gate as a WebSocket message: "a\u0000b" must not be
     * stored as "a", nor a duplicate key as whichever copy cJSON kept */
    if (rc_json_gate_parse_strict(q->body ? q->body : "", q->body_len, &o, &gate) < 0) {
        gw_http_req_respond_error(q, gate.code, gate.msg);
        return;
    }
    const cJSON *it;
    const char *bad = NULL;
    cJSON_ArrayForEach(it, o) {
        if (bad)
            break;
        if (n == GW_PROFILE_MAX_FIELDS)
            bad = "at most 16 profile fields";
        else if (!rc_names_field_name_valid(it->string, strlen(it->string)))
            bad = "profile field names are 1..32 of [a-z0-9_], starting with a letter";
        else if (!cJSON_IsString(it) || strlen(it->valuestring) > GW_PROFILE_MAX_VALUE)
            bad = "profile values must be strings of at most 256 bytes";
        else
            kv[n++] = (struct rc_kv){it->string, it->valuestring};
    }
    char key[RC_KEY_MAX];
    if (bad || rc_keys_profile(key, sizeof key, member)) {
        gw_http_req_respond_error(q, RC_E_BAD_REQUEST, bad ? bad : "member name too long");
    } else {
        /* Replace, atomically: lua/profile_set.lua (DEL + HSET of the one key;
         * a script, not MULTI, so a cluster redirect can resend it whole). */
        const char *argv[1 + 2 * GW_PROFILE_MAX_FIELDS];
        size_t lens[1 + 2 * GW_PROFILE_MAX_FIELDS];
        argv[0] = key;
        for (unsigned i = 0; i < n; i++) {
            argv[1 + 2 * i] = kv[i].key;
            argv[2 + 2 * i] = kv[i].value;
        }
        for (unsigned i = 0; i < 1 + 2 * n; i++)
            lens[i] = strlen(argv[i]);
        q->refs++;
        int rc = q->app->redis ? gw_redis_eval(q->app->redis, &q->app->profile_script, 1, 1 + 2 * (int)n, argv, lens,
                                               on_profile_written, q)
                               : RC_E_UNAVAILABLE;
        if (rc != 0) {
            q->refs--;
            gw_http_req_respond_error(q, RC_E_UNAVAILABLE, "Redis is unreachable: nothing was written");
        } else {
            gw_profile_put(q->app->profiles, member, kv, n);
            gw_fanout_profile_changed(q->app->fanout);
            /* keep the canonical body for the answer */
            char *canon = cJSON_PrintUnformatted(o);
            if (canon) {
                free(q->body);
                q->body = canon;
            }
        }
    }
    cJSON_Delete(o);
}

/* Hands r to op, which answers q through gw_http_req_on_op_done (one reference). */
static void to_op(struct gw_http_req *q, const struct rc_request *r,
                  void (*op)(struct gw_app *, const struct gw_caller *, const struct rc_request *, gw_op_done *, void *))
{
    q->refs++;
    op(q->app, &q->who, r, gw_http_req_on_op_done, q);
}

void gw_rest_write(struct gw_http_req *q, const struct gw_rest_target *t)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    int code = rc_proto_decode_write_body(t->board, q->body ? q->body : "", q->body_len, &r, &err);
    if (code)
        gw_http_req_respond_error(q, code, err.msg);
    else
        to_op(q, &r, gw_ops_write);
    rc_proto_decode_free(&r);
}

/* PUT .../members/{m}/team with {"team": ID|null} (docs/teams.md). */
void gw_rest_team(struct gw_http_req *q, const struct gw_rest_target *t)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    int code = rc_proto_decode_team_body(t->board, t->member, q->body ? q->body : "", q->body_len, &r, &err);
    if (code)
        gw_http_req_respond_error(q, code, err.msg);
    else
        to_op(q, &r, gw_ops_write);
    rc_proto_decode_free(&r);
}

void gw_rest_snapshot(struct gw_http_req *q, const struct gw_rest_target *t)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    struct rc_query qs = gw_http_query(q);
    memset(&r, 0, sizeof r);
    snprintf(r.board, sizeof r.board, "%s", t->board);
    if (rc_query_view(&qs, &r, &err)) {
        gw_http_req_respond_error(q, err.code, err.msg);
        rc_proto_decode_free(&r);
        return;
    }
    /* the present or a moment (?at_seq= / ?at=) of any view, rosters included */
    to_op(q, &r, gw_get_read);
    rc_proto_decode_free(&r); /* (a member list's names: the read copies them) */
}

/* ?period= (at most RC_PERIOD_SEL_MAX: rc_query_check saw to it) into r,
 * unless r has one already (from a body). */
static void query_period(struct gw_http_req *q, struct rc_request *r)
{
    struct rc_query qs = gw_http_query(q);
    const char *period = rc_query_get(&qs, "period");
    if (period && !r->period[0])
        snprintf(r->period, sizeof r->period, "%.*s", RC_PERIOD_SEL_MAX, period);
}

void gw_rest_rank(struct gw_http_req *q, const struct gw_rest_target *t)
{
    struct rc_request r;
    memset(&r, 0, sizeof r);
    snprintf(r.board, sizeof r.board, "%s", t->board);
    snprintf(r.member, sizeof r.member, "%s", t->member);
    query_period(q, &r);
    to_op(q, &r, gw_ops_rank);
}

void gw_rest_history(struct gw_http_req *q, const struct gw_rest_target *t)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    struct rc_query qs = gw_http_query(q);
    memset(&r, 0, sizeof r);
    snprintf(r.board, sizeof r.board, "%s", t->board);
    snprintf(r.member, sizeof r.member, "%s", t->member);
    query_period(q, &r);
    if (rc_query_history(&qs, &r, &err))
        gw_http_req_respond_error(q, err.code, err.msg);
    else
        to_op(q, &r, gw_get_history);
}

void gw_rest_stats(struct gw_http_req *q, const struct gw_rest_target *t)
{
    struct rc_request r;
    memset(&r, 0, sizeof r);
    snprintf(r.board, sizeof r.board, "%s", t->board);
    query_period(q, &r);
    to_op(q, &r, gw_stats_op);
}

/* DELETE .../members/{m} (op RC_OP_REMOVE, ?block=1) or .../blocked/{m}. */
static void admin_member(struct gw_http_req *q, const struct gw_rest_target *t, enum rc_op op)
{
    struct rc_request r;
    struct rc_query qs = gw_http_query(q);
    memset(&r, 0, sizeof r);
    r.op = op;
    snprintf(r.board, sizeof r.board, "%s", t->board);
    snprintf(r.member, sizeof r.member, "%s", t->member);
    r.block = rc_query_block(&qs);
    query_period(q, &r);
    to_op(q, &r, gw_admin_op);
}

/* POST .../reverse, .../reset, .../freeze or .../reveal: the body through
 * the strict gate. */
static void admin_body(struct gw_http_req *q, const struct gw_rest_target *t, enum rc_op op)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    int code = rc_proto_decode_admin_body(op, t->board, q->body, q->body_len, &r, &err);
    if (code) {
        gw_http_req_respond_error(q, code, err.msg);
        return;
    }
    query_period(q, &r);
    to_op(q, &r, op == RC_OP_FREEZE || op == RC_OP_REVEAL ? gw_freeze_op : gw_admin_op);
}

void gw_rest_remove(struct gw_http_req *q, const struct gw_rest_target *t)
{
    admin_member(q, t, RC_OP_REMOVE);
}

void gw_rest_unblock(struct gw_http_req *q, const struct gw_rest_target *t)
{
    admin_member(q, t, RC_OP_UNBLOCK);
}

void gw_rest_reverse(struct gw_http_req *q, const struct gw_rest_target *t)
{
    admin_body(q, t, RC_OP_REVERSE);
}

void gw_rest_reset(struct gw_http_req *q, const struct gw_rest_target *t)
{
    admin_body(q, t, RC_OP_RESET);
}

void gw_rest_freeze(struct gw_http_req *q, const struct gw_rest_target *t)
{
    admin_body(q, t, RC_OP_FREEZE);
}

void gw_rest_reveal(struct gw_http_req *q, const struct gw_rest_target *t)
{
    admin_body(q, t, RC_OP_REVEAL);
}

void gw_rest_freeze_state(struct gw_http_req *q, const struct gw_rest_target *t)
{
    struct rc_request r;
    memset(&r, 0, sizeof r);
    snprintf(r.board, sizeof r.board, "%s", t->board);
    query_period(q, &r);
    to_op(q, &r, gw_freeze_op_state);
}
