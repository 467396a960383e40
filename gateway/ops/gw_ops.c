/* gw_ops.c - writes, rank lookups and one-off reads (see gw_ops.h). */
#include "ops/gw_ops.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw_app.h"
#include "jobs/gw_ckpt.h"
#include "base/gw_fault.h"
#include "ops/gw_idem.h"
#include "ops/gw_instances.h"
#include "ops/gw_write_shard.h"
#include "store/gw_read.h"
#include "redis/gw_redis.h"
#include "redis/gw_write.h"
#include "redis/gw_enqueue.h"
#include <hiredis/hiredis.h>

#include "rc_keys.h"
#include "rc_members.h"
#include "rc_auth.h"
#include "rc_conf.h"
#include "rc_period.h"
#include "rc_jwt.h"

char *gw_ops_error(struct gw_app *app, const char *id_json, int code, const char *message)
{
    gw_metrics_error(&app->metrics, code);
    return rc_proto_encode_error(id_json, code, message);
}

int gw_ops_resolve(struct gw_app *app, const struct rc_request *r, const struct rc_board **decl,
                  struct rc_period *p, struct rc_error *err)
{
    *decl = rc_conf_board_find(app->conf, r->board);
    if (!*decl)
        return rc_err_set(err, RC_E_UNKNOWN_BOARD, "no board is declared for '%s'", r->board);
    if (rc_period_select(&(*decl)->period, r->period[0] ? r->period : NULL, gw_now_ms(app), p) == 0)
        return 0;
    if ((*decl)->period.kind == RC_PERIOD_NONE) /* (the kind's name, "none", would say nothing) */
        return rc_err_set(err, RC_E_BAD_REQUEST, "board %s has no periods: leave period out", r->board);
    return rc_err_set(err, RC_E_BAD_REQUEST, "period '%s' is not a %s period of board %s", r->period,
                      rc_period_kind_name((*decl)->period.kind), r->board);
}

/* A credential that matches an API key is that key. Otherwise, when tokens
 * are accepted and it has a JWT's shape, it is verified as a token. The key
 * lookup runs first and in full either way (constant time). */
void gw_ops_identify(struct gw_app *app, const char *value, size_t len, int bearer, struct gw_caller *who)
{
    struct rc_error err = {0, ""};
    gw_caller_release(who);
    who->key = NULL;
    who->bad_token = 0;
    who->why[0] = '\0';
    if (!value || !len)
        return;
    if (bearer) {
        if (len < 7 || strncasecmp(value, "Bearer ", 7) != 0) {
            who->bad_token = 1;
            return;
        }
        value += 7;
        len -= 7;
    }
    who->key = rc_auth_find(&app->conf->auth, value, len);
    who->bad_token = who->key == NULL;
    if (who->key || !rc_jwt_shaped(value, len))
        return;
    if (!gw_jwt_enabled(&app->jwt)) {
        snprintf(who->why, sizeof who->why, "tokens (JWT) are not accepted here: no jwt_secret or jwt_public_key");
        return;
    }
    struct rc_token *t = malloc(sizeof *t);
    if (!t) {
        snprintf(who->why, sizeof who->why, "out of memory checking the token");
        return;
    }
    if (gw_jwt_verify(&app->jwt, value, len, gw_now_ms(app), t, &err) != 0) {
        snprintf(who->why, sizeof who->why, "%s", err.msg);
        free(t);
        return;
    }
    who->token = t;
    who->key = &t->key;
    who->bad_token = 0;
}

void gw_ops_who(const struct gw_caller *who, char *out, size_t cap)
{
    if (who->token)
        snprintf(out, cap, "jwt%s%s", who->token->sub[0] ? ":" : "", who->token->sub);
    else
        snprintf(out, cap, "%s", who->key ? who->key->name : "?");
}

int gw_ops_caller_expired(struct gw_app *app, const struct gw_caller *who)
{
    return who->token && rc_jwt_expired(who->token, gw_now_ms(app), app->jwt.skew_ms);
}

int gw_ops_authorize(struct gw_app *app, const struct gw_caller *who, unsigned scope, const char *board,
                    struct rc_error *err)
{
    const struct rc_conf *c = app->conf;
    if (who->bad_token && who->why[0])
        return rc_err_set(err, RC_E_UNAUTHORIZED, "%s", who->why);
    if (gw_ops_caller_expired(app, who))
        return rc_err_set(err, RC_E_UNAUTHORIZED, "the token expired: present a fresh one (on WebSocket: "
                                                    "{\"op\":\"auth\",\"token\":JWT})");
    int rc = rc_auth_check(&c->auth, who->key, who->bad_token, scope, board, err);
    if (rc || scope != RC_SCOPE_WRITE)
        return rc;
    int64_t now = gw_now_ms(app);
    if (who->conn_bucket && !rc_auth_bucket_take(who->conn_bucket, c->conn_write_rate, c->conn_write_burst, now))
        return rc_err_set(err, RC_E_RATE_LIMITED, "too many writes on this connection (conn_write_rate %u/s)",
                            c->conn_write_rate);
    /* Tokens are in no table: they have no per-key bucket (conn_write_rate
     * and the address limits still apply). */
    struct rc_bucket *kb = who->key && !who->token ? &app->key_buckets[who->key - c->auth.keys] : NULL;
    if (kb && !rc_auth_bucket_take(kb, c->key_write_rate, c->key_write_burst, now))
        return rc_err_set(err, RC_E_RATE_LIMITED, "too many writes for key '%s' (key_write_rate %u/s)",
                            who->key->name, c->key_write_rate);
    return 0;
}

/* ---- writes ----------------------------------------------------------------- */

struct write_call {
    struct gw_app *app;
    gw_op_done *done;
    void *privdata;
    char *id_json;
    char board[RC_BOARD_MAX + 1];
    enum rc_op op;
    int64_t started_us;
    char who[RC_JWT_SUB_MAX + 8];  /* "jwt:SUB" for a token write (audited), else "" */
    char period[RC_PERIOD_ID_MAX];
    char req[RC_REQ_MAX + 1];
    char member[RC_MEMBER_MAX + 1]; /* queued boards: the member the ack names */
    struct gw_idem_hold idem;       /* the writer's place for the record this write makes */
    char *capped;                   /* at the writer's cap: the refusal for a req without a record */
};

static void write_call_free(struct write_call *w)
{
    free(w->capped);
    free(w->id_json);
    free(w);
}

/* The write's idempotency record: kept when it was made, or may have been
 * (the answer was lost), else given back (ops/gw_idem.h). */
static void settle_idem(struct write_call *w, int made, int code)
{
    if (made || code == RC_E_UNAVAILABLE)
        gw_idem_keep(w->app->idem, &w->idem);
    else
        gw_idem_give_back(w->app->idem, &w->idem);
}

/* A write made with a token goes to the audit stream (rc:audit, as admin
 * actions do) with the token's sub: tokens are handed out (overlays, tools,
 * other services), so what each one wrote stays traceable. API-key writes
 * are not audited (their volume is the board's). Fire and forget on the
 * command connection; never holds a secret. */
static void audit_write(struct write_call *w, const struct rc_write_result *res)
{
    char seq[32], at[32];
    if (!w->app->redis)
        return;
    snprintf(seq, sizeof seq, "%" PRId64, res->seq);
    snprintf(at, sizeof at, "%" PRId64, gw_now_ms(w->app));
    const char *argv[] = {"XADD", GW_AUDIT_KEY, "MAXLEN", "~", "100000", "*", "who", w->who, "op", rc_proto_op_name(w->op),
                          "board", w->board, "period", w->period, "member", res->member, "req", w->req, "seq", seq,
                          "at", at};
    gw_redis_command(w->app->redis, GW_AUDIT_KEY, strlen(GW_AUDIT_KEY), (int)(sizeof argv / sizeof argv[0]), argv,
                     NULL, NULL, NULL);
}

static void on_written(int code, const struct rc_write_result *res, const struct rc_error *err, void *privdata)
{
    struct write_call *w = privdata;
    struct gw_app *app = w->app;
    char *json;
    gw_metrics_rtt(&app->metrics, gw_clock_mono_us() - w->started_us);
    settle_idem(w, code == 0 && res->status == 0 && !res->duplicate, code);
    if (code == 0 && res->status == 0)
        gw_ckpt_heard(app, w->board); /* its checkpoints may be due (a cluster may not tell us) */
    if (code == 0 && res->status != 0) {
        code = res->status;
        json = gw_ops_error(app, w->id_json, code, res->no_record && w->capped ? w->capped : res->message);
    } else if (code) {
        json = gw_ops_error(app, w->id_json, code, err->msg);
    } else if (res->teamed) {
        struct rc_teamed_msg m = {w->id_json, w->board, w->member, res->team, res->seq, res->team_seq};
        if (w->who[0] && res->changed)
            audit_write(w, res);
        json = rc_proto_encode_teamed(&m);
    } else {
        struct rc_field_value fv[RC_MAX_FIELDS];
        const struct rc_board *decl = rc_conf_board_find(app->conf, w->board);
        for (unsigned k = 0; k < res->nfields && decl; k++) {
            memcpy(fv[k].name, decl->layout.fields[k].name, sizeof fv[k].name);
            fv[k].value = res->fields[k];
        }
        if (res->duplicate)
            app->metrics.duplicates++;
        else
            app->metrics.writes[w->op - RC_OP_INCR]++;
        if (w->who[0] && !res->duplicate)
            audit_write(w, res);
        int replicas = app->conf->ack_replicas > 0 ? (res->replicas < 0 ? 0 : res->replicas) : -1;
        struct rc_ack_msg m = {
            .id_json = w->id_json,
            .board = w->board,
            .member = res->member,
            .score = res->score,
            .rank = res->rank,
            .seq = res->seq,
            .duplicate = res->duplicate,
            .fields = res->nfields ? fv : NULL,
            .nfields = res->nfields,
            .replicas = replicas,
            /* a sharded board's write whose global rank could not be read after it (ops/gw_write_shard.h) */
            .unranked = res->rank_unknown,
            .teams_board = res->teams_board,
            .team = res->team,
            .has_team_score = res->has_team_score,
            .team_score = res->team_score,
            .team_rank = res->team_rank,
        };
        json = rc_proto_encode_ack(&m);
    }
    w->done(w->privdata, code, json);
    write_call_free(w);
}

/* A queued board's write (docs/queued.md): the ack says queued, with the
 * entry id; score, rank and seq come when it is applied. */
static void on_queued(int code, const struct rc_queue_result *res, int replicas, const struct rc_error *err,
                      void *privdata)
{
    struct write_call *w = privdata;
    struct gw_app *app = w->app;
    char *json;
    gw_metrics_rtt(&app->metrics, gw_clock_mono_us() - w->started_us);
    settle_idem(w, code == 0 && res->status == RC_QUEUE_OK, code);
    if (code) {
        json = gw_ops_error(app, w->id_json, code, err->msg);
    } else if (res->status == RC_QUEUE_FULL) {
        code = RC_E_RATE_LIMITED;
        char msg[160];
        snprintf(msg, sizeof msg, "board %s's write queue is full (%lld unapplied, queue_max): nothing was queued, "
                 "retry later", w->board, (long long)res->length);
        app->metrics.queue_full++;
        json = gw_ops_error(app, w->id_json, code, msg);
    } else if (res->status == RC_QUEUE_FORBIDDEN) {
        code = RC_E_FORBIDDEN;
        json = gw_ops_error(app, w->id_json, code, "this member is blocked on this board: nothing was queued");
    } else if (res->status == RC_QUEUE_NO_RECORD) {
        code = RC_E_RATE_LIMITED;
        json = gw_ops_error(app, w->id_json, code, w->capped ? w->capped : "idempotency_max_per_key: nothing was written");
    } else {
        int dup = res->status == RC_QUEUE_DUPLICATE;
        if (dup)
            app->metrics.duplicates++;
        else
            app->metrics.writes_queued++;
        struct rc_ack_msg m = {
            .id_json = w->id_json,
            .board = w->board,
            .member = dup ? res->member : w->member,
            .duplicate = dup,
            .replicas = app->conf->ack_replicas > 0 ? (replicas < 0 ? 0 : replicas) : -1,
            .queued_entry = res->entry,
        };
        json = rc_proto_encode_ack(&m);
    }
    w->done(w->privdata, code, json);
    write_call_free(w);
}

/* RANKCAST_TEST_ACK_EARLY (base/gw_fault.h): the write acked at once with a
 * made-up result, its script never run: what an ack sent before the
 * script's reply looks like when that reply is then a failure. */
static void ack_early(struct write_call *w, const struct rc_request *r)
{
    struct rc_write_result res;
    memset(&res, 0, sizeof res);
    memcpy(res.member, r->member, sizeof res.member);
    res.has_score = 1;
    res.rank = 1;
    res.replicas = (int)w->app->conf->ack_replicas;
    on_written(0, &res, NULL, w);
}

void gw_ops_write(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                 void *privdata)
{
    const struct rc_board *decl;
    struct rc_period p;
    struct rc_error err = {0, ""};
    int code = gw_ops_authorize(app, who, RC_SCOPE_WRITE, r->board, &err);
    if (!code)
        code = gw_ops_resolve(app, r, &decl, &p, &err);
    struct write_call *w = code ? NULL : calloc(1, sizeof *w);
    if (!code && !w)
        code = rc_err_set(&err, RC_E_INTERNAL, "out of memory");
    if (!code) {
        w->app = app;
        w->done = done;
        w->privdata = privdata;
        w->id_json = r->id_json ? strdup(r->id_json) : NULL;
        w->op = r->op;
        w->started_us = gw_clock_mono_us();
        memcpy(w->board, r->board, sizeof w->board);
        if (who->token) {
            gw_ops_who(who, w->who, sizeof w->who);
            snprintf(w->period, sizeof w->period, "%s", p.id);
            snprintf(w->req, sizeof w->req, "%s", r->req);
        }
        /* a write with a req makes a record, and so does every queued one
         * (the consumer's "q ENTRY-ID"): the writer's cap first */
        unsigned flags = 0;
        if (r->req[0] || decl->queue.mode == RC_WRITE_QUEUED)
            code = gw_idem_take(app->idem, who, gw_now_ms(app), &w->idem, &err);
        if (code == RC_E_RATE_LIMITED && r->req[0]) {
            /* at the cap, a retry must still learn whether its write
             * happened, and only Redis knows whether the req has its record:
             * sent with no new record, a new req is refused there with
             * nothing written (lua/write.lua, "Idempotency records") */
            if ((w->capped = strdup(err.msg)) != NULL) {
                code = 0;
                flags = GW_WRITE_F_NO_NEW_RECORD;
            }
        }
        if (code) {
            /* refused: past the writer's cap without a req, nothing is sent */
        } else if (decl->queue.mode == RC_WRITE_QUEUED) {
            memcpy(w->member, r->member, sizeof w->member);
            code = gw_enqueue_submit(app->redis, &app->enqueue_script, decl, r, gw_now_ms(app),
                                     (int)app->conf->ack_replicas, app->conf->ack_timeout_ms, flags, on_queued, w,
                                     &err);
        } else if (decl->shards > 1) {
            code = gw_write_shard_submit(app, decl, r, &p, flags, on_written, w, &err);
        } else if (gw_fault_ack_early(app->conf->test_clock)) {
            ack_early(w, r); /* a test's broken build (base/gw_fault.h) */
            return;
        } else {
            memcpy(w->member, r->member, sizeof w->member); /* op team's answer names it */
            code = gw_write_submit_as(app->redis, &app->write_script, decl, r, &p, r->board, gw_now_ms(app),
                                      (int)app->conf->ack_replicas, app->conf->ack_timeout_ms, flags, on_written, w,
                                      &err);
        }
        if (!code) {
            gw_instances_note(app, decl, r->board, &p);
            return;
        }
        gw_idem_give_back(app->idem, &w->idem); /* nothing was sent */
        write_call_free(w);
    }
    done(privdata, code, gw_ops_error(app, r->id_json, code, err.msg));
}

/* ---- reads ------------------------------------------------------------------- */

struct read_call {
    struct gw_app *app;
    gw_op_done *done;
    void *privdata;
    char *id_json;
    const struct rc_board *decl;
    char board[RC_BOARD_MAX + 1];
    char member[RC_MEMBER_MAX + 1];
    struct rc_period period;
    int rank;                    /* 1: answer a rank reply, 0: a snapshot */
    int live;                    /* the live board through a freeze (admin) */
    char *members;               /* a member list's names (owned), for its absent */
    uint32_t nmembers;
    int64_t roster_total;        /* a roster (gw_roster.c): the team's member count; -1: no roster */
};

static void read_call_free(struct read_call *c)
{
    free(c->id_json);
    free(c->members);
    free(c);
}

/* Answers read c with window w (taken) or the error code. */
static void answer_read(struct read_call *c, int code, struct gw_window *w)
{
    struct gw_app *app = c->app;
    char *json = NULL;
    if (code) {
        json = gw_ops_error(app, c->id_json, code, code == RC_E_UNAVAILABLE ? "Redis is unreachable" : "read failed");
    } else if (c->rank) {
        /* a frozen board's audience asks its frozen rank, and is told so */
        struct rc_rank_msg m = {c->id_json, c->member, w->n ? w->rows[0].score : 0, w->n ? w->first_rank : 0,
                                w->total, {.frozen = w->freeze.frozen, .freeze_seq = w->freeze.seq}};
        json = rc_proto_encode_rank(&m);
    } else {
        struct rc_snapshot_msg m = {
            .id_json = c->id_json,
            .board = c->board,
            .period = c->decl->period.kind == RC_PERIOD_NONE ? NULL : c->period.id,
            .seq = w->seq,
            .total = w->total,
            .rows = gw_window_rows_out(w, c->decl),
            .more = {.epoch = w->epoch, .frozen = w->freeze.frozen, .freeze_seq = w->freeze.seq,
                     .live = c->live, .shown = w->freeze.shown},
        };
        const char *absent[RC_MEMBERS_MAX];
        if (c->roster_total >= 0) { /* its best 200, total the team's member count */
            gw_window_truncate(w, RC_MEMBERS_MAX);
            m.rows.n = w->n;
            m.total = c->roster_total;
        }
        size_t room = w->n < RC_MEMBERS_MAX ? RC_MEMBERS_MAX - w->n : 0; /* (a roster's best 200) */
        long na = c->members && c->nmembers && room
                      ? rc_members_absent_max(c->members, c->nmembers, w->rows, w->n, absent, room)
                      : 0;
        m.has_absent = c->members != NULL || c->roster_total >= 0;
        m.absent = absent;
        m.nabsent = na > 0 ? (size_t)na : 0;
        json = na < 0 ? NULL : rc_proto_rows_snapshot(&m);
    }
    if (!json) {
        code = RC_E_INTERNAL;
        json = gw_ops_error(app, c->id_json, code, "out of memory");
    }
    gw_window_free(w);
    c->done(c->privdata, code, json);
    read_call_free(c);
}

/* The rows' teams of a board with teams (docs/teams.md): one HMGET of the
 * membership; the team ids are the reply's, borrowed while the answer is
 * encoded. */
struct teams_call {
    struct read_call *c;
    struct gw_window *w;
};

static void on_teams(redisReply *r, void *privdata)
{
    struct teams_call *k = privdata;
    struct gw_window *w = k->w;
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != w->n) {
        gw_window_free(w);
        answer_read(k->c, r ? RC_E_INTERNAL : RC_E_UNAVAILABLE, NULL);
    } else {
        for (size_t i = 0; i < w->n; i++)
            w->rows[i].team = r->element[i]->type == REDIS_REPLY_STRING ? r->element[i]->str : NULL;
        answer_read(k->c, 0, w);
    }
    free(k);
}

static void on_read(int code, struct gw_window *w, void *privdata)
{
    struct read_call *c = privdata;
    if (code || c->rank || !c->decl->teams[0] || !w->n || w->n > 100000) {
        answer_read(c, code, w);
        return;
    }
    char key[RC_KEY_MAX];
    const char **argv = malloc((w->n + 2) * sizeof *argv);
    struct teams_call *k = malloc(sizeof *k);
    int rc = !argv || !k || rc_keys_board(key, sizeof key, c->board, c->period.id, "tm", NULL) ? RC_E_INTERNAL : 0;
    if (!rc) {
        argv[0] = "HMGET";
        argv[1] = key;
        for (size_t i = 0; i < w->n; i++)
            argv[2 + i] = w->rows[i].member;
        *k = (struct teams_call){c, w};
        rc = gw_redis_command(c->app->redis, key, strlen(key), (int)w->n + 2, argv, NULL, on_teams, k);
    }
    free(argv);
    if (rc) {
        free(k);
        gw_window_free(w);
        answer_read(c, rc == RC_E_INTERNAL ? RC_E_INTERNAL : RC_E_UNAVAILABLE, NULL);
    }
}

static void start_read(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, int rank,
                       int64_t roster_total, gw_op_done *done, void *privdata)
{
    struct rc_error err = {0, ""};
    struct read_call *c = calloc(1, sizeof *c);
    if (c)
        c->roster_total = roster_total;
    /* the live board through a freeze is the caster's: admin scope */
    int code = c ? gw_ops_authorize(app, who, r->view.live ? RC_SCOPE_ADMIN : RC_SCOPE_READ, r->board, &err)
                 : rc_err_set(&err, RC_E_INTERNAL, "out of memory");
    if (!code)
        code = gw_ops_resolve(app, r, &c->decl, &c->period, &err);
    if (!code) {
        struct gw_read_spec spec = {.places = r->view.places, .live = r->view.live};
        c->live = r->view.live;
        c->app = app;
        c->done = done;
        c->privdata = privdata;
        c->rank = rank;
        c->id_json = r->id_json ? strdup(r->id_json) : NULL;
        memcpy(c->board, r->board, sizeof c->board);
        memcpy(c->member, r->member, sizeof c->member);
        if (rank) {
            spec.kind = GW_READ_RANK;
            spec.member = r->member;
        } else if (r->view.kind == RC_VIEW_AROUND) {
            spec.kind = GW_READ_AROUND;
            spec.member = r->view.around;
            spec.radius = r->view.radius;
        } else if (r->view.kind == RC_VIEW_MEMBERS) {
            spec.kind = GW_READ_MEMBERS;
            spec.members = r->view.members;
            spec.nmembers = r->view.nmembers;
            spec.members_len = r->view.members_len;
            spec.best = c->roster_total >= 0 ? RC_MEMBERS_MAX : 0; /* a roster: its best 200, any team size */
            if (!(c->members = malloc(r->view.members_len)))
                code = rc_err_set(&err, RC_E_INTERNAL, "out of memory");
            else
                memcpy(c->members, r->view.members, r->view.members_len);
            c->nmembers = r->view.nmembers;
        } else if (r->view.kind == RC_VIEW_FEED) {
            code = rc_err_set(&err, RC_E_BAD_REQUEST, "a feed is a subscription, not a read");
        } else {
            spec.kind = GW_READ_RANGE;
            spec.first = r->view.kind == RC_VIEW_PAGE ? r->view.offset : 0;
            spec.count = r->view.limit;
        }
        const char *refused = code ? NULL : gw_read_shard_refusal(c->decl, &spec); /* a sharded board's limits */
        if (refused)
            code = rc_err_set(&err, RC_E_BAD_REQUEST, "%s", refused);
        if (!code && (code = gw_read(&app->store, c->decl, r->board, c->period.id, &spec, on_read, c)) != 0)
            rc_err_set(&err, code, code == RC_E_UNAVAILABLE ? "Redis is unreachable" : "read failed");
        if (!code)
            return;
        free(c->id_json);
        free(c->members);
    }
    free(c);
    done(privdata, code, gw_ops_error(app, r->id_json, code, err.msg));
}

void gw_ops_rank(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                void *privdata)
{
    start_read(app, who, r, 1, -1, done, privdata);
}

void gw_ops_snapshot(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                    void *privdata)
{
    start_read(app, who, r, 0, -1, done, privdata);
}

void gw_ops_snapshot_roster(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r,
                           int64_t team_total, gw_op_done *done, void *privdata)
{
    start_read(app, who, r, 0, team_total, done, privdata);
}
