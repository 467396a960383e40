/* rc_write_args.c - request -> lua/write.lua call, and its reply -> result. */
#include "rc_write_args.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_codec.h"
#include "rc_conf.h"
#include "rc_expiry.h"
#include "rc_decay.h"
#include "rc_team_args.h"

static const char *put_num(struct rc_write_args *a, unsigned i, int64_t v)
{
    snprintf(a->num[i], RC_WRITE_ARG_LEN, "%" PRId64, v);
    return a->num[i];
}

static unsigned op_flag(enum rc_op op)
{
    switch (op) {
    case RC_OP_INCR: return RC_OPF_INCR;
    case RC_OP_SET: return RC_OPF_SET;
    case RC_OP_BEST: return RC_OPF_BEST;
    case RC_OP_SUBMIT: return RC_OPF_SUBMIT;
    default: return 0;
    }
}

/* Puts the request's fields into the board's declared order; "" marks a field
 * the request leaves as stored. Checks names and ranges first. */
static int order_fields(const struct rc_board *b, const struct rc_request *r, int given[RC_MAX_FIELDS],
                        int64_t vals[RC_MAX_FIELDS], struct rc_error *err)
{
    const struct rc_layout *l = &b->layout;
    memset(given, 0, sizeof(int) * RC_MAX_FIELDS);
    if (r->nfields == 0)
        return rc_err_set(err, RC_E_BAD_REQUEST, "fields must name at least one field");
    for (unsigned i = 0; i < r->nfields; i++) {
        unsigned k = 0;
        while (k < l->nfields && strcmp(l->fields[k].name, r->fields[i].name) != 0)
            k++;
        if (k == l->nfields)
            return rc_err_set(err, RC_E_BAD_REQUEST, "board %s has no field '%s'", r->board,
                                r->fields[i].name);
        int64_t max = (int64_t)(((uint64_t)1 << l->fields[k].bits) - 1);
        if (r->fields[i].value < 0 || r->fields[i].value > max)
            return rc_err_set(err, RC_E_OUT_OF_RANGE, "field %s must be 0..%" PRId64 ", got %" PRId64,
                                l->fields[k].name, max, r->fields[i].value);
        given[k] = 1;
        vals[k] = r->fields[i].value;
    }
    return 0;
}

int rc_write_args_build(const struct rc_board *b, const struct rc_request *r, const struct rc_period *p,
                        int64_t now_ms, int sharded, struct rc_write_args *out, struct rc_error *err)
{
    return rc_write_args_build_as(b, r, p, now_ms, sharded, r->board, out, err);
}

int rc_write_args_build_as(const struct rc_board *b, const struct rc_request *r, const struct rc_period *p,
                           int64_t now_ms, int sharded, const char *store, struct rc_write_args *out,
                           struct rc_error *err)
{
    const struct rc_layout *l = &b->layout;
    unsigned flag = op_flag(r->op);
    int given[RC_MAX_FIELDS];
    int64_t vals[RC_MAX_FIELDS];
    int rc;

    if (b->team_of[0] && (flag || r->op == RC_OP_TEAM))
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "board %s is the team board of %s: it takes no writes (a team's points are the sum "
                            "of its members' points on %s)", r->board, b->team_of, b->team_of);
    if (r->op == RC_OP_TEAM && !b->teams[0])
        return rc_err_set(err, RC_E_BAD_REQUEST, "board %s has no team board (no teams = in its config)",
                            r->board);
    if (r->op == RC_OP_TEAM)
        flag = b->ops; /* membership, not points: any write op's board takes it */
    if (!flag)
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s is not a write", rc_proto_op_name(r->op));
    if (!(b->ops & flag))
        return rc_err_set(err, RC_E_BAD_REQUEST, "op %s is not allowed on board %s", rc_proto_op_name(r->op),
                            r->board);
    if (b->decay.kind == RC_DECAY_BUCKETS && r->op != RC_OP_INCR)
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "board %s is a hot board: only incr applies (its scores are weighted sums "
                            "of recent increments)", r->board);
    if (l->nfields && (rc = order_fields(b, r, given, vals, err)))
        return rc;
    if (!l->nfields && (r->op == RC_OP_SET || r->op == RC_OP_BEST) &&
        (r->value < l->points_min || r->value > l->points_max))
        return rc_err_set(err, RC_E_OUT_OF_RANGE,
                            "score %" PRId64 " is outside this board's range %" PRId64 "..%" PRId64,
                            r->value, l->points_min, l->points_max);

    int64_t ttl_ms;
    if ((rc = rc_expiry_period_ttl_ms(b, p, now_ms, &ttl_ms, err)) != 0)
        return rc;

    uint64_t slot;
    int64_t base = b->period.kind == RC_PERIOD_NONE ? l->tb_base_ms : p->start_ms;
    if (rc_codec_tb_slot(l, base, now_ms, &slot))
        return rc_err_set(err, RC_E_OUT_OF_RANGE,
                            "time %" PRId64 " is outside board %s's tie-break horizon", now_ms, r->board);

    static const char *const keys[] = {"z", "seq", "log", "req", "f", "ch"};
    const char *args[] = {NULL, NULL, NULL, r->req, r->member, NULL};
    out->nkeys = 6;
    for (unsigned i = 0; i < 6; i++)
        if (rc_keys_board(out->keys[i], RC_KEY_MAX, store, p->id, keys[i], args[i]))
            return rc_err_set(err, RC_E_INTERNAL, "key name too long");
    int64_t bucket_ttl_ms = 0;
    if (b->decay.kind == RC_DECAY_BUCKETS) {
        /* hot board: the write lands in the bucket of now (rc_decay.h) */
        int64_t index;
        if (rc_decay_bucket_of(&b->decay, now_ms, &index) ||
            rc_decay_key(out->keys[6], RC_KEY_MAX, store, RC_DK_BUCKET, index))
            return rc_err_set(err, RC_E_INTERNAL, "no bucket for board %s", r->board);
        bucket_ttl_ms = rc_decay_bucket_ttl_ms(&b->decay);
    } else {
        memcpy(out->keys[6], out->keys[0], RC_KEY_MAX); /* unused: KEYS must still be 9 */
    }
    /* The period's own blocklist (its tag: one slot with the write), seeded
     * from the board's blocklist rc:{B|}:blocked on a period's first write;
     * boards without periods have only the one (lua/write.lua, lua/admin.lua). */
    if (rc_keys_board(out->keys[7], RC_KEY_MAX, store, p->id, "blocked", NULL))
        return rc_err_set(err, RC_E_INTERNAL, "key name too long");
    out->seed_from[0] = '\0';
    if (p->id[0] && rc_keys_board(out->seed_from, RC_KEY_MAX, store, "", "blocked", NULL))
        return rc_err_set(err, RC_E_INTERNAL, "key name too long");
    if (rc_keys_board(out->keys[8], RC_KEY_MAX, store, p->id, "epoch", NULL))
        return rc_err_set(err, RC_E_INTERNAL, "key name too long");
    /* tiebreak = arrival: the per-value arrival counters (lua/write.lua,
     * "Arrival order"); passed on every board so KEYS keep one shape */
    if (rc_keys_board(out->keys[9], RC_KEY_MAX, store, p->id, "arr", NULL))
        return rc_err_set(err, RC_E_INTERNAL, "key name too long");
    out->nkeys = RC_WRITE_NKEYS_PLAIN;
    if (b->teams[0]) {
        /* team board T's keys live in this board's tag (rc_keys.h); so
         * does the membership: the period's own (rc_team_args.h) */
        static const char *const tkeys[] = {"z", "seq", "log", "ch", "epoch"};
        if (rc_team_args_tm_key(out->keys[10], RC_KEY_MAX, store, p->id, "tm"))
            return rc_err_set(err, RC_E_INTERNAL, "key name too long");
        for (unsigned i = 0; i < 5; i++)
            if (rc_keys_board(out->keys[11 + i], RC_KEY_MAX, b->teams, p->id, tkeys[i], NULL))
                return rc_err_set(err, RC_E_INTERNAL, "key name too long");
        if (rc_team_args_tm_key(out->keys[16], RC_KEY_MAX, store, p->id, "tml")) /* the membership's log */
            return rc_err_set(err, RC_E_INTERNAL, "key name too long");
        out->nkeys = RC_WRITE_NKEYS;
    }

    unsigned n = 0;
    out->argv[n++] = rc_proto_op_name(r->op);
    out->argv[n++] = r->member;
    if (r->op == RC_OP_TEAM)
        out->argv[n] = r->team;
    else
        out->argv[n] = l->nfields ? "" : put_num(out, n, r->value);
    n++;
    out->argv[n] = put_num(out, n, now_ms);
    n++;
    if (l->tiebreak == RC_TB_ARRIVAL) {
        out->argv[n++] = "arrival"; /* the script takes the value's next arrival */
    } else {
        out->argv[n] = put_num(out, n, (int64_t)slot);
        n++;
    }
    out->argv[n] = put_num(out, n, (int64_t)1 << l->tb_bits);
    n++;
    out->argv[n++] = l->order == RC_ORDER_DESC ? "desc" : "asc";
    out->argv[n] = put_num(out, n, l->points_min);
    n++;
    out->argv[n] = put_num(out, n, l->points_max);
    n++;
    out->argv[n++] = r->req;
    out->argv[n] = put_num(out, n, b->idempotency_ms / 1000);
    n++;
    out->argv[n] = put_num(out, n, rc_conf_board_log_keep(b));
    n++;
    out->argv[n++] = b->submit_mode == RC_SUBMIT_BEST ? "best" : "replace";
    out->argv[n] = put_num(out, n, ttl_ms);
    n++;
    out->argv[n] = put_num(out, n, l->nfields);
    n++;
    for (unsigned k = 0; k < l->nfields; k++) {
        out->argv[n++] = l->fields[k].name;
        out->argv[n] = put_num(out, n, l->fields[k].bits);
        n++;
        out->argv[n++] = l->fields[k].ascending ? "1" : "0";
        if (given[k]) {
            out->argv[n] = put_num(out, n, vals[k]);
            n++;
        } else {
            out->argv[n++] = "";
        }
    }
    out->argv[n] = put_num(out, n, bucket_ttl_ms);
    n++;
    out->argv[n++] = sharded ? "SPUBLISH" : "PUBLISH";
    out->argv[n++] = p->id[0] ? "1" : "0"; /* the period's blocklist must be seeded */
    out->epoch[0] = '\0';
    out->argv[n++] = out->epoch;
    out->no_new_record_at = n;
    out->argv[n++] = "0"; /* records may be made: rc_write_args_no_new_record says otherwise */
    out->nargv = n;
    return 0;
}

void rc_write_args_no_new_record(struct rc_write_args *a)
{
    a->argv[a->no_new_record_at] = "1";
}

static int item_str(const struct rc_reply_item *it, const char **s)
{
    if (it->is_int || !it->str)
        return RC_E_INTERNAL;
    *s = it->str;
    return 0;
}

int rc_write_args_result_parse(const struct rc_board *b, const struct rc_reply_item *items, size_t n,
                          struct rc_write_result *res)
{
    const char *status, *s;
    memset(res, 0, sizeof *res);
    res->replicas = -1;
    if (n < 1 || item_str(&items[0], &status))
        return RC_E_INTERNAL;
    if (n == 1 && strcmp(status, "unseeded") == 0) {
        res->status = RC_E_UNAVAILABLE;
        res->unseeded = 1;
        snprintf(res->message, sizeof res->message, "the period's blocklist is not seeded yet: nothing was written");
        return 0;
    }
    if (n == 1 && strcmp(status, "team_unseeded") == 0) {
        res->status = RC_E_UNAVAILABLE;
        res->team_unseeded = 1;
        snprintf(res->message, sizeof res->message,
                 "the period's team membership is not seeded yet: nothing was written");
        return 0;
    }
    if (n == 1 && strcmp(status, "no_record") == 0) {
        res->status = RC_E_RATE_LIMITED;
        res->no_record = 1;
        snprintf(res->message, sizeof res->message,
                 "the writer may make no new idempotency record and this req has none: nothing was written");
        return 0;
    }
    if (n < 2)
        return RC_E_INTERNAL;
    if (strcmp(status, "out_of_range") == 0 || strcmp(status, "bad_request") == 0 ||
        strcmp(status, "forbidden") == 0) {
        res->status = status[0] == 'o' ? RC_E_OUT_OF_RANGE : status[0] == 'f' ? RC_E_FORBIDDEN : RC_E_BAD_REQUEST;
        if (item_str(&items[1], &s))
            return RC_E_INTERNAL;
        snprintf(res->message, sizeof res->message, "%s", s);
        return 0;
    }
    if (n == 5 && strcmp(status, "teamed") == 0) {
        /* op team: { "teamed", team, seq, team seq, changed } (lua/write.lua, "Teams") */
        if (item_str(&items[1], &s) || strlen(s) > RC_MEMBER_MAX || !items[2].is_int || !items[3].is_int ||
            !items[4].is_int)
            return RC_E_INTERNAL;
        res->teamed = 1;
        res->has_team = *s != '\0';
        snprintf(res->team, sizeof res->team, "%s", s);
        res->seq = items[2].integer;
        res->team_seq = items[3].integer;
        res->changed = items[4].integer != 0;
        return 0;
    }
    if (n == 11) {
        /* a board with teams: the member's team after the write */
        if (item_str(&items[8], &s) || strlen(s) > RC_MEMBER_MAX || !items[10].is_int)
            return RC_E_INTERNAL;
        res->teams_board = 1;
        res->has_team = *s != '\0';
        snprintf(res->team, sizeof res->team, "%s", s);
        res->team_rank = items[10].integer;
        if (item_str(&items[9], &s))
            return RC_E_INTERNAL;
        if (*s) {
            char *tend;
            double c = strtod(s, &tend);
            if (*tend != '\0')
                return RC_E_INTERNAL;
            res->has_team_score = 1;
            res->team_score = c;
        }
        n = 8;
    }
    if (n != 8 || (strcmp(status, "ok") != 0 && strcmp(status, "duplicate") != 0))
        return RC_E_INTERNAL;
    if (!items[2].is_int || !items[3].is_int || !items[5].is_int || !items[7].is_int)
        return RC_E_INTERNAL;
    res->duplicate = status[0] == 'd';
    res->rank = items[2].integer;
    res->seq = items[3].integer;
    res->old_rank = items[5].integer;
    res->changed = items[7].integer != 0;
    if (item_str(&items[6], &s) || strlen(s) > RC_MEMBER_MAX)
        return RC_E_INTERNAL;
    snprintf(res->member, sizeof res->member, "%s", s);
    if (item_str(&items[4], &s))
        return RC_E_INTERNAL;
    if (*s == '\0')
        return 0; /* member absent (a duplicate whose member was removed since) */
    char *end;
    res->composite = strtod(s, &end);
    if (*end != '\0')
        return RC_E_INTERNAL;
    res->has_score = 1;
    uint64_t slot;
    if (b->layout.nfields) {
        res->nfields = b->layout.nfields;
        /* A value written out of band may not decode; report the raw score then. */
        if (rc_codec_decode_fields(&b->layout, res->composite, res->fields, &slot) == 0)
            res->score = (double)res->fields[0];
        else
            res->score = res->composite;
    } else {
        int64_t pts;
        res->score = rc_codec_decode_points(&b->layout, res->composite, &pts, &slot) == 0 ? (double)pts
                                                                                  : res->composite;
    }
    return 0;
}
