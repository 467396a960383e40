/* rc_admin_args.c - lua/admin.lua's call and reply (rc_admin_args.h). */
#include "rc_admin_args.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rc_admin_args_action(enum rc_op op)
{
    switch (op) {
    case RC_OP_REMOVE: return "remove";
    case RC_OP_UNBLOCK: return "unblock";
    case RC_OP_REVERSE: return "reverse";
    case RC_OP_FREEZE: return "freeze";
    case RC_OP_REVEAL: return "reveal";
    default: return "reset";
    }
}

int rc_admin_args_build(const struct rc_board *b, const struct rc_request *r, const struct rc_period *p,
                        int64_t now_ms, uint64_t slot, int64_t ttl_ms, int sharded, struct rc_admin_args *out,
                        struct rc_error *err)
{
    return rc_admin_args_build_as(b, r, p, now_ms, slot, ttl_ms, sharded, r->board, out, err);
}

int rc_admin_args_build_as(const struct rc_board *b, const struct rc_request *r, const struct rc_period *p,
                           int64_t now_ms, uint64_t slot, int64_t ttl_ms, int sharded, const char *store,
                           struct rc_admin_args *out, struct rc_error *err)
{
    char rev[RC_REQ_MAX + 16];
    const char *id = p->id;
    snprintf(rev, sizeof rev, "%s:reversed", r->req);
    char(*k)[RC_KEY_MAX] = out->keys;
    int bad = rc_keys_board(k[0], RC_KEY_MAX, store, id, "z", NULL) ||
              rc_keys_board(k[1], RC_KEY_MAX, store, id, "seq", NULL) ||
              rc_keys_board(k[2], RC_KEY_MAX, store, id, "log", NULL) ||
              rc_keys_board(k[3], RC_KEY_MAX, store, id, "ch", NULL) ||
              rc_keys_board(k[4], RC_KEY_MAX, store, id, "blocked", NULL) ||
              (r->op == RC_OP_REVERSE ? rc_keys_board(k[5], RC_KEY_MAX, store, id, "req", r->req)
                                      : rc_keys_board(k[5], RC_KEY_MAX, store, id, "f", r->member[0] ? r->member : "-")) ||
              rc_keys_board(k[6], RC_KEY_MAX, store, id, "req", rev) ||
              rc_keys_board(k[7], RC_KEY_MAX, store, id, "epoch", NULL) ||
              rc_keys_board(k[8], RC_KEY_MAX, store, id, "arr", NULL) ||
              rc_keys_board(k[9], RC_KEY_MAX, store, id, "frz", NULL) ||
              rc_keys_board(k[10], RC_KEY_MAX, store, id, "fz", NULL);
    if (bad)
        return rc_err_set(err, RC_E_INTERNAL, "key name too long");
    snprintf(out->num[0], 32, "%" PRId64, now_ms);
    snprintf(out->num[1], 32, "%" PRIu64, slot);
    snprintf(out->num[2], 32, "%" PRId64, (int64_t)1 << b->layout.tb_bits);
    snprintf(out->num[3], 32, "%" PRId64, b->layout.points_min);
    snprintf(out->num[4], 32, "%" PRId64, b->layout.points_max);
    snprintf(out->num[5], 32, "%" PRId64, ttl_ms);
    snprintf(out->num[6], 32, "%u", rc_conf_board_log_keep(b));
    const char *words[RC_ADMIN_NKEYS + RC_ADMIN_NARGV] = {
        k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8], k[9], k[10],
        rc_admin_args_action(r->op), r->member, r->op == RC_OP_REMOVE && r->block ? "1" : "0", out->num[0],
        b->layout.order == RC_ORDER_DESC ? "desc" : "asc",
        b->layout.tiebreak == RC_TB_ARRIVAL ? "arrival" : out->num[1], out->num[2], out->num[3], out->num[4],
        out->num[6], out->num[5], sharded ? "SPUBLISH" : "PUBLISH", out->epoch};
    out->epoch[0] = '\0';
    for (size_t i = 0; i < RC_ADMIN_NKEYS + RC_ADMIN_NARGV; i++) {
        out->words[i] = words[i];
        out->lens[i] = strlen(words[i]);
    }
    return 0;
}

int rc_admin_args_result_parse(const struct rc_reply_item *items, size_t n, struct rc_admin_result *res)
{
    memset(res, 0, sizeof *res);
    if (n != 6 || !items[0].str || items[0].is_int || !items[1].is_int || !items[2].str || items[2].is_int ||
        !items[3].str || items[3].is_int)
        return RC_E_INTERNAL;
    const char *status = items[0].str;
    res->seq = items[1].integer;
    res->member = items[2].str;
    res->score = strtod(items[3].str, NULL);
    res->rank = items[4].is_int ? items[4].integer : 0;
    res->detail = "";
    res->duplicate = strcmp(status, "duplicate") == 0;
    res->unknown_req = strcmp(status, "unknown_req") == 0;
    if (strcmp(status, "ok") != 0 && !res->duplicate) {
        res->status = strcmp(status, "out_of_range") == 0 ? RC_E_OUT_OF_RANGE : RC_E_BAD_REQUEST;
        if (items[5].str && !items[5].is_int)
            res->detail = items[5].str;
    }
    return 0;
}
