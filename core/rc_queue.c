/* rc_queue.c - queued writes: the enqueue call, the entry read back, the
 * script's answer (see rc_queue.h). */
#include "rc_queue.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rc_conf.h"
#include "rc_err.h"
#include "rc_names.h"

int rc_queue_key(char *out, size_t cap, const char *board, const char *suffix)
{
    return rc_keys_board(out, cap, board, "", suffix, NULL);
}

static int write_op(enum rc_op op)
{
    return op == RC_OP_INCR || op == RC_OP_SET || op == RC_OP_BEST || op == RC_OP_SUBMIT;
}

int rc_queue_enqueue_build(const struct rc_board *b, const struct rc_request *r, int64_t now_ms,
                           struct rc_queue_enqueue *out, struct rc_error *err)
{
    struct rc_write_args check;
    struct rc_period none;
    unsigned n = 0;
    int rc;

    memset(&none, 0, sizeof none);
    if (!write_op(r->op))
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s is not a write", rc_proto_op_name(r->op));
    /* the same gates as a direct write, before anything is queued */
    if ((rc = rc_write_args_build(b, r, &none, now_ms, 0, &check, err)) != 0)
        return rc;
    if (rc_queue_key(out->keys[0], RC_KEY_MAX, r->board, "in") ||
        rc_keys_board(out->keys[1], RC_KEY_MAX, r->board, "", "req", r->req[0] ? r->req : NULL) ||
        rc_keys_board(out->keys[2], RC_KEY_MAX, r->board, "", "blocked", NULL))
        return rc_err_set(err, RC_E_INTERNAL, "key name too long");
    out->nkeys = RC_QUEUE_NKEYS;

    snprintf(out->num[0], RC_WRITE_ARG_LEN, "%u", b->queue.max);
    snprintf(out->num[1], RC_WRITE_ARG_LEN, "%" PRId64, b->idempotency_ms / 1000);
    snprintf(out->num[2], RC_WRITE_ARG_LEN, "%" PRId64, r->value);
    snprintf(out->num[3], RC_WRITE_ARG_LEN, "%" PRId64, now_ms);
    out->argv[n++] = out->num[0];
    out->argv[n++] = r->req;
    out->argv[n++] = out->num[1];
    out->argv[n++] = RC_QUEUE_GROUP;
    out->argv[n++] = r->member;
    out->argv[n++] = "0"; /* records may be made: rc_queue_enqueue_no_new_record says otherwise */
    /* the entry: field/value pairs */
    out->argv[n++] = "op";
    out->argv[n++] = rc_proto_op_name(r->op);
    out->argv[n++] = "m";
    out->argv[n++] = r->member;
    out->argv[n++] = "at";
    out->argv[n++] = out->num[3];
    if (r->op != RC_OP_SUBMIT) {
        out->argv[n++] = "v";
        out->argv[n++] = out->num[2];
    }
    if (r->req[0]) {
        out->argv[n++] = "req";
        out->argv[n++] = r->req;
    }
    for (unsigned i = 0; r->op == RC_OP_SUBMIT && i < r->nfields && i < RC_MAX_FIELDS; i++) {
        snprintf(out->fname[i], sizeof out->fname[i], "f:%s", r->fields[i].name);
        snprintf(out->fval[i], RC_WRITE_ARG_LEN, "%" PRId64, r->fields[i].value);
        out->argv[n++] = out->fname[i];
        out->argv[n++] = out->fval[i];
    }
    out->nargv = n;
    return 0;
}

void rc_queue_enqueue_no_new_record(struct rc_queue_enqueue *a)
{
    a->argv[5] = "1"; /* ARGV[6] of lua/enqueue.lua */
}

static int copy_str(char *dst, size_t cap, const char *s)
{
    if (!s)
        return -1;
    size_t len = strlen(s);
    if (len >= cap)
        return -1;
    memcpy(dst, s, len + 1);
    return 0;
}

int rc_queue_result_parse(const struct rc_reply_item *items, size_t n, struct rc_queue_result *res)
{
    memset(res, 0, sizeof *res);
    if (n < 1 || items[0].is_int || !items[0].str)
        return RC_E_INTERNAL;
    const char *s = items[0].str;
    if (strcmp(s, "ok") == 0 || strcmp(s, "full") == 0) {
        res->status = s[0] == 'o' ? RC_QUEUE_OK : RC_QUEUE_FULL;
        if (res->status == RC_QUEUE_OK && (n != 3 || copy_str(res->entry, sizeof res->entry, items[1].str)))
            return RC_E_INTERNAL;
        if (n < 2 || !items[n - 1].is_int)
            return RC_E_INTERNAL;
        res->length = items[n - 1].integer;
        return 0;
    }
    if (strcmp(s, "duplicate") == 0) {
        res->status = RC_QUEUE_DUPLICATE;
        if (n != 3 || copy_str(res->entry, sizeof res->entry, items[1].str) ||
            copy_str(res->member, sizeof res->member, items[2].str))
            return RC_E_INTERNAL;
        return 0;
    }
    if (strcmp(s, "forbidden") == 0 || strcmp(s, "no_record") == 0) {
        res->status = s[0] == 'f' ? RC_QUEUE_FORBIDDEN : RC_QUEUE_NO_RECORD;
        return 0;
    }
    return RC_E_INTERNAL;
}

int rc_queue_id_ms(const char *id, int64_t *ms)
{
    int64_t v = 0;
    const char *p = id;
    if (!id || *p < '0' || *p > '9')
        return RC_E_BAD_REQUEST;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (INT64_MAX - 9) / 10)
            return RC_E_BAD_REQUEST;
        v = v * 10 + (*p - '0');
    }
    if (*p != '-' && *p != '\0')
        return RC_E_BAD_REQUEST;
    *ms = v;
    return 0;
}

static int parse_op(const char *s, enum rc_op *op)
{
    static const enum rc_op ops[] = {RC_OP_INCR, RC_OP_SET, RC_OP_BEST, RC_OP_SUBMIT};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(s, rc_proto_op_name(ops[i])) == 0) {
            *op = ops[i];
            return 0;
        }
    return -1;
}

int rc_queue_entry_parse(const struct rc_board *b, const char *id, const char *const *f, const char *const *v,
                         size_t nf, struct rc_request *out, int64_t *at_ms)
{
    int has_op = 0, has_m = 0, has_at = 0, has_v = 0;
    memset(out, 0, sizeof *out);
    if (copy_str(out->board, sizeof out->board, b->name) || strlen(id) + 2 > RC_REQ_MAX)
        return RC_E_BAD_REQUEST;
    for (size_t i = 0; i < nf; i++) {
        if (!f[i] || !v[i])
            return RC_E_BAD_REQUEST;
        if (strcmp(f[i], "op") == 0) {
            if (parse_op(v[i], &out->op) != 0)
                return RC_E_BAD_REQUEST;
            has_op = 1;
        } else if (strcmp(f[i], "m") == 0) {
            if (!rc_names_member_name_valid(v[i], strlen(v[i])) || copy_str(out->member, sizeof out->member, v[i]))
                return RC_E_BAD_REQUEST;
            has_m = 1;
        } else if (strcmp(f[i], "at") == 0) {
            if (rc_conf_value_parse_int64(v[i], at_ms) != 0)
                return RC_E_BAD_REQUEST;
            has_at = 1;
        } else if (strcmp(f[i], "v") == 0) {
            if (rc_conf_value_parse_int64(v[i], &out->value) != 0)
                return RC_E_BAD_REQUEST;
            has_v = 1;
        } else if (strcmp(f[i], "req") == 0) {
            if (copy_str(out->req, sizeof out->req, v[i]) || !out->req[0])
                return RC_E_BAD_REQUEST;
        } else if (strncmp(f[i], "f:", 2) == 0) {
            struct rc_field_value *fv = &out->fields[out->nfields];
            if (out->nfields >= RC_MAX_FIELDS || copy_str(fv->name, sizeof fv->name, f[i] + 2) ||
                rc_conf_value_parse_int64(v[i], &fv->value) != 0)
                return RC_E_BAD_REQUEST;
            out->nfields++;
        } else {
            return RC_E_BAD_REQUEST;
        }
    }
    if (!has_op || !has_m || !has_at || has_v != (out->op != RC_OP_SUBMIT))
        return RC_E_BAD_REQUEST;
    if (!out->req[0])
        snprintf(out->req, sizeof out->req, "q %s", id); /* a space: no client req has one */
    return 0;
}
