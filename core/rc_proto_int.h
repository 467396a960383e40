/* rc_proto_int.h - internal to the request decoder's files (rc_proto_decode.c,
 * rc_proto_field.c, rc_proto_op.c): field readers, name rules and the op
 * table's row; and to the encoders' (rc_proto_encode.c, rc_proto_rows.c):
 * the rule of a cursor's text. Callers include rc_proto.h only; rc_proto__*
 * is internal. */
#ifndef RC_PROTO_INT_H
#define RC_PROTO_INT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "rc_proto.h"

/* 1 when cursor (a sharded feed's position, core/rc_shard.h) is text a
 * message may carry as it is: digits, a-f, ':' and '.', shorter than
 * RC_SHARD_CURSOR_MAX, not empty. */
int rc_proto__cursor_ok(const char *cursor);

#define LABEL_MAX 64  /* "fields.<name>" and the like */

#define XSTR(x) STR(x)
#define STR(x) #x

/* A kind of name: its check, and the rule as the error message states it. */
struct rc_proto__name_rule {
    int (*valid)(const char *s, size_t len);
    size_t max; /* capacity of the destination, without the NUL */
    const char *rule;
};

/* rc_proto_field.c: the kinds of names, and the field readers. Each returns
 * 0 or RC_E_BAD_REQUEST with err naming the field; items are borrowed. */
extern const struct rc_proto__name_rule rc_proto__board_rule;
extern const struct rc_proto__name_rule rc_proto__member_rule;
extern const struct rc_proto__name_rule rc_proto__req_rule;
extern const struct rc_proto__name_rule rc_proto__period_rule;
extern const struct rc_proto__name_rule rc_proto__sub_rule;

int rc_proto__field(const cJSON *obj, const char *key, const char *label, const cJSON **item,
                    struct rc_error *err);
int rc_proto__need(const cJSON *obj, const char *key, const char *label, const cJSON **item,
                   struct rc_error *err);
int rc_proto__copy_name(const cJSON *item, const char *label, const struct rc_proto__name_rule *rule,
                        char *dst, struct rc_error *err);
/* op team's "team": an id (member name rules) into out->team, or null ("").
 * rc_proto_op.c; the REST body shares it (rc_proto_decode.c). */
int rc_proto__decode_team_field(const cJSON *msg, struct rc_request *out, struct rc_error *err);
int rc_proto__read_name(const cJSON *obj, const char *key, const char *label, int required,
                        const struct rc_proto__name_rule *rule, char *dst, struct rc_error *err);
int rc_proto__as_int(const cJSON *item, const char *label, int64_t *v, struct rc_error *err);
int rc_proto__read_int(const cJSON *obj, const char *key, const char *label, int required,
                       int64_t lo, int64_t hi, int64_t *v, struct rc_error *err);
/* reveal's "steps" (1 when absent). */
int rc_proto__decode_steps(const cJSON *msg, int64_t *steps, struct rc_error *err);
int rc_proto__need_object(const cJSON *obj, const char *key, const cJSON **item,
                          struct rc_error *err);

/* Flags of an op table row. */
#define OPF_BOARD (1u << 0) /* names a board: "board" (or the REST path) */
#define OPF_WRITE (1u << 1) /* a write: takes "req", allowed in a REST body */

/* rc_proto_op.c: a row of the op table: the wire name, and the handler for
 * the fields that are the op's own (board and req are read by the
 * dispatcher, from the flags). */
struct rc_proto__op_row {
    const char *name;
    enum rc_op op;
    unsigned flags;
    int (*decode)(const cJSON *msg, struct rc_request *out, struct rc_error *err);
};

/* rc_proto_at.c: the fields of get's "at" and of op history (PROTOCOL v1.2). */
int rc_proto_at_decode(const cJSON *msg, struct rc_request *out, struct rc_error *err);
int rc_proto_at_decode_history(const cJSON *msg, struct rc_request *out, struct rc_error *err);
/* subscribe's "replay": {"from": {"seq"|"time"}, "speed"?} (absent: nothing). */
int rc_proto_at_decode_replay(const cJSON *msg, struct rc_request *out, struct rc_error *err);

/* The row of op `name`, or NULL. */
const struct rc_proto__op_row *rc_proto__op_lookup(const char *name);

/* The op's own fields, then "req" for writes. out->op and, when the op
 * names one, out->board are already set. */
int rc_proto__decode_op_fields(const cJSON *msg, const struct rc_proto__op_row *row, struct rc_request *out,
                               struct rc_error *err);

#endif
