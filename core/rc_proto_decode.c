/* rc_proto_decode.c - client messages of PROTOCOL.md into struct rc_request.
 *
 * One message first goes through the strict JSON gate (rc_json_gate.h): size
 * (too_large), UTF-8, strict JSON, "is an object", no key given twice. Then
 * the "id" is taken first, so that every later failure can still be echoed
 * to the right caller, then "op", which picks a row of the op table; the
 * row's handler reads the fields that op defines. Fields the protocol does
 * not define are ignored; a defined field that is present must be exactly
 * right, or the whole message is refused with RC_E_BAD_REQUEST and a message
 * naming the field. Nothing here keeps state between calls.
 */
#include "rc_proto.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID_MAX 256    /* longest string id, in bytes, we agree to echo */
#define OP_ECHO_MAX 32 /* how much of an unknown op the error message repeats */
#define LABEL_MAX 64  /* "fields.<name>" and the like */

#define XSTR(x) STR(x)
#define STR(x) #x

/* ---- names ------------------------------------------------------------- */

/* A kind of name: its check, and the rule as the error message states it. */
struct name_rule {
    int (*valid)(const char *s, size_t len);
    size_t max; /* capacity of the destination, without the NUL */
    const char *rule;
};

static int period_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-';
}

/* "current", "previous" or a period id ("2026-W47", "2026-11-21T13", "-1");
 * the board's period spec decides later whether the id exists. */
static int period_valid(const char *s, size_t len)
{
    if (len == 0 || len > RC_PERIOD_SEL_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!period_char((unsigned char)s[i]))
            return 0;
    return 1;
}

/* Subscription ids are minted by the server ("s1"); the client only echoes
 * them, so printable ASCII without spaces is all we need to accept. */
static int sub_valid(const char *s, size_t len)
{
    return len <= RC_SUB_MAX && rc_req_valid(s, len);
}

static const struct name_rule BOARD_RULE = {
    rc_board_name_valid, RC_BOARD_MAX, "1.." XSTR(RC_BOARD_MAX) " characters of [A-Za-z0-9_.:-]"};
static const struct name_rule MEMBER_RULE = {
    rc_member_name_valid, RC_MEMBER_MAX,
    "1.." XSTR(RC_MEMBER_MAX) " characters of [A-Za-z0-9_.:@-]"};
static const struct name_rule REQ_RULE = {
    rc_req_valid, RC_REQ_MAX, "1.." XSTR(RC_REQ_MAX) " printable ASCII characters without spaces"};
static const struct name_rule PERIOD_RULE = {
    period_valid, RC_PERIOD_SEL_MAX, "1.." XSTR(RC_PERIOD_SEL_MAX) " characters of [A-Za-z0-9-]"};
static const struct name_rule SUB_RULE = {
    sub_valid, RC_SUB_MAX, "1.." XSTR(RC_SUB_MAX) " printable ASCII characters without spaces"};

/* ---- fields ------------------------------------------------------------ */

/* Looks key up in obj (case-sensitive). Sets *item to it, or NULL when
 * absent. A key given twice is refused: which copy wins is undefined in JSON,
 * and a proxy in front of us might have read the other one (the gate refuses
 * it first; this keeps field() safe on any tree). The item is borrowed from
 * obj. label names the field in messages ("view.top"). */
static int field(const cJSON *obj, const char *key, const char *label, const cJSON **item,
                 struct rc_error *err)
{
    const cJSON *found = NULL;

    for (const cJSON *c = obj->child; c; c = c->next) {
        if (!c->string || strcmp(c->string, key) != 0)
            continue;
        if (found) {
            *item = NULL;
            return rc_error_set(err, RC_E_BAD_REQUEST, "duplicate field %s", label);
        }
        found = c;
    }
    *item = found;
    return 0;
}

/* field() for a field the op requires. */
static int need(const cJSON *obj, const char *key, const char *label, const cJSON **item,
                struct rc_error *err)
{
    int rc = field(obj, key, label, item, err);
    if (rc < 0)
        return rc;
    if (!*item)
        return rc_error_set(err, RC_E_BAD_REQUEST, "missing field %s", label);
    return 0;
}

/* Copies the string item into dst[0..rule->max] after checking it against
 * rule. */
static int copy_name(const cJSON *item, const char *label, const struct name_rule *rule,
                     char *dst, struct rc_error *err)
{
    size_t len;

    if (!cJSON_IsString(item) || !item->valuestring)
        return rc_error_set(err, RC_E_BAD_REQUEST, "%s must be a string", label);
    len = strlen(item->valuestring);
    if (len > rule->max || !rule->valid(item->valuestring, len))
        return rc_error_set(err, RC_E_BAD_REQUEST, "%s must be %s", label, rule->rule);
    memcpy(dst, item->valuestring, len + 1);
    return 0;
}

/* Reads obj[key] as a name of the given rule into dst. An absent optional
 * name leaves dst as it is (the caller zeroed it: ""). */
static int read_name(const cJSON *obj, const char *key, const char *label, int required,
                     const struct name_rule *rule, char *dst, struct rc_error *err)
{
    const cJSON *item;
    int rc = required ? need(obj, key, label, &item, err) : field(obj, key, label, &item, err);

    if (rc < 0 || !item)
        return rc;
    return copy_name(item, label, rule, dst, err);
}

/* The item as an integer that JavaScript clients read exactly: finite,
 * within +-(2^53 - 1) and integral. The range test comes before the cast so
 * the cast is always defined. */
static int as_int(const cJSON *item, const char *label, int64_t *v, struct rc_error *err)
{
    double d;

    if (!cJSON_IsNumber(item))
        return rc_error_set(err, RC_E_BAD_REQUEST, "%s must be an integer", label);
    d = item->valuedouble;
    if (!isfinite(d))
        return rc_error_set(err, RC_E_BAD_REQUEST, "%s must be a finite number", label);
    if (d > (double)RC_SAFE_INT_MAX || d < -(double)RC_SAFE_INT_MAX)
        return rc_error_set(err, RC_E_BAD_REQUEST, "%s is beyond ±%lld", label,
                            (long long)RC_SAFE_INT_MAX);
    if (d != (double)(int64_t)d)
        return rc_error_set(err, RC_E_BAD_REQUEST, "%s must be an integer", label);
    *v = (int64_t)d;
    return 0;
}

/* Reads obj[key] as an integer in lo..hi. An absent optional field leaves
 * *v untouched, so callers preset the default. */
static int read_int(const cJSON *obj, const char *key, const char *label, int required,
                    int64_t lo, int64_t hi, int64_t *v, struct rc_error *err)
{
    const cJSON *item;
    int64_t x;
    int rc = required ? need(obj, key, label, &item, err) : field(obj, key, label, &item, err);

    if (rc < 0 || !item)
        return rc;
    if ((rc = as_int(item, label, &x, err)) < 0)
        return rc;
    if (x < lo || x > hi)
        return rc_error_set(err, RC_E_BAD_REQUEST, "%s must be %" PRId64 "..%" PRId64, label,
                            lo, hi);
    *v = x;
    return 0;
}

/* Reads a required object-valued field. */
static int need_object(const cJSON *obj, const char *key, const cJSON **item,
                       struct rc_error *err)
{
    int rc = need(obj, key, key, item, err);
    if (rc < 0)
        return rc;
    if (!cJSON_IsObject(*item))
        return rc_error_set(err, RC_E_BAD_REQUEST, "%s must be an object", key);
    return 0;
}

/* ---- id and op --------------------------------------------------------- */

/* The id as JSON text in a malloc'd buffer. Numbers are printed so they
 * read back as exactly the same double (cJSON's own printer settles for a
 * near one), integers without an exponent. */
static char *id_text(const cJSON *item)
{
    if (cJSON_IsNumber(item)) {
        char buf[RC_NUMBER_TEXT_MAX];
        rc_number_text(item->valuedouble, buf, sizeof buf);
        return strdup(buf);
    }
    /* cJSON's printer allocates with malloc unless someone installed other
     * hooks; the project never does, so rc_request_free can free() this. */
    return cJSON_PrintUnformatted(item);
}

/* Sets out->id_json from msg's "id" (any JSON scalar). Runs before every
 * other field check so that their errors can be echoed with the id. */
static int decode_id(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    const cJSON *item;
    int rc = field(msg, "id", "id", &item, err);

    if (rc < 0 || !item)
        return rc;
    if (cJSON_IsObject(item) || cJSON_IsArray(item))
        return rc_error_set(err, RC_E_BAD_REQUEST, "id must be a JSON scalar");
    if (cJSON_IsNumber(item) && !isfinite(item->valuedouble))
        return rc_error_set(err, RC_E_BAD_REQUEST, "id must be a finite number");
    if (cJSON_IsString(item) && (!item->valuestring || strlen(item->valuestring) > ID_MAX))
        return rc_error_set(err, RC_E_BAD_REQUEST, "id must be at most %d bytes", ID_MAX);
    out->id_json = id_text(item);
    if (!out->id_json)
        return rc_error_set(err, RC_E_INTERNAL, "out of memory");
    return 0;
}

/* Reads "op" as a string into *name (borrowed from msg). */
static int read_op_name(const cJSON *msg, const char **name, struct rc_error *err)
{
    const cJSON *item;
    int rc = need(msg, "op", "op", &item, err);

    if (rc < 0)
        return rc;
    if (!cJSON_IsString(item) || !item->valuestring)
        return rc_error_set(err, RC_E_BAD_REQUEST, "op must be a string");
    *name = item->valuestring;
    return 0;
}

/* "unknown op '...'" repeating at most OP_ECHO_MAX bytes of the op, with
 * anything but printable ASCII replaced, so the message stays short and
 * harmless in logs as well as in the JSON error reply. */
static int unknown_op(const char *name, struct rc_error *err)
{
    char echo[OP_ECHO_MAX + 4];
    size_t n = 0;

    for (; name[n] && n < OP_ECHO_MAX; n++) {
        unsigned char c = (unsigned char)name[n];
        echo[n] = (c >= 0x20 && c < 0x7f && c != '\'') ? (char)c : '?';
    }
    echo[n] = '\0';
    if (name[n])
        memcpy(echo + n, "...", 4);
    return rc_error_set(err, RC_E_BAD_REQUEST, "unknown op '%s'", echo);
}

/* ---- views ------------------------------------------------------------- */

static int view_top(const cJSON *v, struct rc_view *view, struct rc_error *err)
{
    int64_t n = 0;
    int rc = read_int(v, "top", "view.top", 1, 1, RC_VIEW_MAX_ROWS, &n, err);

    if (rc < 0)
        return rc;
    view->kind = RC_VIEW_TOP;
    view->offset = 0;
    view->limit = (uint32_t)n;
    return 0;
}

static int view_page(const cJSON *v, struct rc_view *view, struct rc_error *err)
{
    int64_t off = 0, lim = 0;
    int rc;

    if ((rc = read_int(v, "offset", "view.offset", 1, 0, INT32_MAX, &off, err)) < 0 ||
        (rc = read_int(v, "limit", "view.limit", 1, 1, RC_VIEW_MAX_ROWS, &lim, err)) < 0)
        return rc;
    view->kind = RC_VIEW_PAGE;
    view->offset = (uint32_t)off;
    view->limit = (uint32_t)lim;
    return 0;
}

static int view_around(const cJSON *v, struct rc_view *view, struct rc_error *err)
{
    int64_t radius = 5;
    int rc;

    if ((rc = read_name(v, "around", "view.around", 1, &MEMBER_RULE, view->around, err)) < 0 ||
        (rc = read_int(v, "radius", "view.radius", 0, 0, RC_VIEW_MAX_RADIUS, &radius, err)) < 0)
        return rc;
    view->kind = RC_VIEW_AROUND;
    view->radius = (uint32_t)radius;
    return 0;
}

static int view_feed(const cJSON *v, struct rc_view *view, struct rc_error *err)
{
    const cJSON *item;
    int rc = need(v, "feed", "view.feed", &item, err);

    if (rc < 0)
        return rc;
    if (!cJSON_IsTrue(item))
        return rc_error_set(err, RC_E_BAD_REQUEST, "view.feed must be true");
    view->kind = RC_VIEW_FEED;
    return 0;
}

/* The view kinds and the keys that announce each. A view must use the keys
 * of exactly one kind; other keys are ignored like any unknown field. */
static const struct {
    const char *keys[2];
    int (*decode)(const cJSON *v, struct rc_view *view, struct rc_error *err);
} VIEW_KINDS[] = {
    {{"top", NULL}, view_top},
    {{"offset", "limit"}, view_page},
    {{"around", "radius"}, view_around},
    {{"feed", NULL}, view_feed},
};

#define NVIEW_KINDS (sizeof VIEW_KINDS / sizeof VIEW_KINDS[0])

static int decode_view(const cJSON *msg, struct rc_view *view, struct rc_error *err)
{
    const cJSON *v;
    size_t kind = 0, nkinds = 0;
    int rc = need_object(msg, "view", &v, err);

    if (rc < 0)
        return rc;
    for (size_t k = 0; k < NVIEW_KINDS; k++) {
        for (size_t j = 0; j < 2 && VIEW_KINDS[k].keys[j]; j++) {
            if (cJSON_GetObjectItemCaseSensitive(v, VIEW_KINDS[k].keys[j])) {
                kind = k;
                nkinds++;
                break;
            }
        }
    }
    if (nkinds != 1)
        return rc_error_set(err, RC_E_BAD_REQUEST,
                            "view must be one of top, offset/limit, around, feed");
    return VIEW_KINDS[kind].decode(v, view, err);
}

/* ---- per-op handlers --------------------------------------------------- */

/* "since": {"seq": N} asks a feed to resume after N. */
static int decode_since(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    const cJSON *since;
    int rc = field(msg, "since", "since", &since, err);

    if (rc < 0 || !since)
        return rc;
    if (!cJSON_IsObject(since))
        return rc_error_set(err, RC_E_BAD_REQUEST, "since must be an object");
    if ((rc = read_int(since, "seq", "since.seq", 1, 0, RC_SAFE_INT_MAX, &out->since_seq,
                       err)) < 0)
        return rc;
    out->has_since = 1;
    return 0;
}

static int decode_subscribe(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    int rc;

    if ((rc = decode_view(msg, &out->view, err)) < 0 ||
        (rc = read_name(msg, "period", "period", 0, &PERIOD_RULE, out->period, err)) < 0)
        return rc;
    return decode_since(msg, out, err);
}

static int decode_unsubscribe(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    return read_name(msg, "sub", "sub", 1, &SUB_RULE, out->sub, err);
}

static int decode_member(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    return read_name(msg, "member", "member", 1, &MEMBER_RULE, out->member, err);
}

/* incr, set and best: the member and one safe integer under key. */
static int decode_points(const cJSON *msg, const char *key, struct rc_request *out,
                         struct rc_error *err)
{
    int rc = decode_member(msg, out, err);
    if (rc < 0)
        return rc;
    return read_int(msg, key, key, 1, -RC_SAFE_INT_MAX, RC_SAFE_INT_MAX, &out->value, err);
}

static int decode_incr(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    return decode_points(msg, "delta", out, err);
}

static int decode_set_best(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    return decode_points(msg, "value", out, err);
}

/* Appends one "name": value pair of a submit to out->fields. */
static int decode_field_value(const cJSON *item, struct rc_request *out, struct rc_error *err)
{
    const char *name = item->string ? item->string : "";
    size_t len = strlen(name);
    struct rc_field_value *f = &out->fields[out->nfields];
    char label[LABEL_MAX];
    int rc;

    if (!rc_field_name_valid(name, len))
        return rc_error_set(err, RC_E_BAD_REQUEST,
                            "fields: names must be 1.." XSTR(RC_FIELD_NAME_MAX)
                            " characters of [a-z0-9_], starting with a letter");
    for (unsigned i = 0; i < out->nfields; i++)
        if (strcmp(out->fields[i].name, name) == 0)
            return rc_error_set(err, RC_E_BAD_REQUEST, "fields: duplicate name '%s'", name);
    snprintf(label, sizeof label, "fields.%s", name);
    if ((rc = as_int(item, label, &f->value, err)) < 0)
        return rc;
    memcpy(f->name, name, len + 1);
    out->nfields++;
    return 0;
}

static int decode_submit(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    const cJSON *fields;
    int count = 0, rc;

    if ((rc = decode_member(msg, out, err)) < 0 ||
        (rc = need_object(msg, "fields", &fields, err)) < 0)
        return rc;
    for (const cJSON *c = fields->child; c && count <= RC_MAX_FIELDS; c = c->next)
        count++;
    if (count < 1 || count > RC_MAX_FIELDS)
        return rc_error_set(err, RC_E_BAD_REQUEST, "fields must have 1..%d entries",
                            RC_MAX_FIELDS);
    for (const cJSON *c = fields->child; c; c = c->next)
        if ((rc = decode_field_value(c, out, err)) < 0)
            return rc;
    return 0;
}

static int decode_rank(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    int rc = decode_member(msg, out, err);
    if (rc < 0)
        return rc;
    return read_name(msg, "period", "period", 0, &PERIOD_RULE, out->period, err);
}

static int decode_ping(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    (void)msg;
    (void)out;
    (void)err;
    return 0;
}

/* remove: member, optional "block": true|false, optional period. */
static int decode_remove(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    int rc = decode_rank(msg, out, err); /* member + period, the same fields */
    if (rc < 0)
        return rc;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(msg, "block");
    if (b && !cJSON_IsBool(b))
        return rc_error_set(err, RC_E_BAD_REQUEST, "block must be true or false");
    out->block = cJSON_IsTrue(b);
    return 0;
}

static int decode_unblock(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    return decode_member(msg, out, err);
}

/* reverse: the req of the write to take back (required), optional period. */
static int decode_reverse(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    int rc = read_name(msg, "req", "req", 1, &REQ_RULE, out->req, err);
    if (rc < 0)
        return rc;
    return read_name(msg, "period", "period", 0, &PERIOD_RULE, out->period, err);
}

static int decode_reset(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    return read_name(msg, "period", "period", 0, &PERIOD_RULE, out->period, err);
}

/* Flags of an op table row. */
#define OPF_BOARD (1u << 0) /* names a board: "board" (or the REST path) */
#define OPF_WRITE (1u << 1) /* a write: takes "req", allowed in a REST body */

/* Every op: its wire name, and the handler for the fields that are its own
 * (board and req are read by the dispatcher, from the flags). Kept in
 * enum rc_op order. */
static const struct op_row {
    const char *name;
    enum rc_op op;
    unsigned flags;
    int (*decode)(const cJSON *msg, struct rc_request *out, struct rc_error *err);
} OPS[] = {
    {"subscribe", RC_OP_SUBSCRIBE, OPF_BOARD, decode_subscribe},
    {"unsubscribe", RC_OP_UNSUBSCRIBE, 0, decode_unsubscribe},
    {"incr", RC_OP_INCR, OPF_BOARD | OPF_WRITE, decode_incr},
    {"set", RC_OP_SET, OPF_BOARD | OPF_WRITE, decode_set_best},
    {"best", RC_OP_BEST, OPF_BOARD | OPF_WRITE, decode_set_best},
    {"submit", RC_OP_SUBMIT, OPF_BOARD | OPF_WRITE, decode_submit},
    {"rank", RC_OP_RANK, OPF_BOARD, decode_rank},
    {"ping", RC_OP_PING, 0, decode_ping},
    {"remove", RC_OP_REMOVE, OPF_BOARD, decode_remove},
    {"unblock", RC_OP_UNBLOCK, OPF_BOARD, decode_unblock},
    {"reverse", RC_OP_REVERSE, OPF_BOARD, decode_reverse},
    {"reset", RC_OP_RESET, OPF_BOARD, decode_reset},
};

#define NOPS (sizeof OPS / sizeof OPS[0])

static const struct op_row *op_lookup(const char *name)
{
    for (size_t i = 0; i < NOPS; i++)
        if (strcmp(OPS[i].name, name) == 0)
            return &OPS[i];
    return NULL;
}

/* The op's own fields, then "req" for writes. out->op and, when the op
 * names one, out->board are already set. */
static int decode_op_fields(const cJSON *msg, const struct op_row *row, struct rc_request *out,
                            struct rc_error *err)
{
    int rc = row->decode(msg, out, err);
    if (rc < 0 || !(row->flags & OPF_WRITE))
        return rc;
    return read_name(msg, "req", "req", 0, &REQ_RULE, out->req, err);
}

/* ---- public ------------------------------------------------------------ */

/* Borrows text; fills *out, which owns id_json afterwards (see rc_proto.h:
 * the caller always calls rc_request_free, on failure too). */
int rc_request_decode(const char *text, size_t len, struct rc_request *out, struct rc_error *err)
{
    const struct op_row *row;
    const char *name = NULL;
    cJSON *msg = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = rc_json_parse_strict(text, len, &msg, err)) < 0)
        return rc;
    if ((rc = decode_id(msg, out, err)) < 0 || (rc = read_op_name(msg, &name, err)) < 0)
        goto cleanup;
    if (!(row = op_lookup(name))) {
        rc = unknown_op(name, err);
        goto cleanup;
    }
    out->op = row->op;
    if ((row->flags & OPF_BOARD) &&
        (rc = read_name(msg, "board", "board", 1, &BOARD_RULE, out->board, err)) < 0)
        goto cleanup;
    rc = decode_op_fields(msg, row, out, err);

cleanup:
    cJSON_Delete(msg);
    return rc;
}

/* The REST write body: board borrowed from the URL path, op restricted to
 * the writes. "id" is not part of a REST body and is ignored like any
 * unknown field, so out->id_json stays NULL. */
int rc_request_decode_write_body(const char *board, const char *text, size_t len,
                                 struct rc_request *out, struct rc_error *err)
{
    const struct op_row *row;
    const char *name = NULL;
    cJSON *msg = NULL;
    size_t blen = board ? strlen(board) : 0;
    int rc;

    memset(out, 0, sizeof *out);
    if (blen > RC_BOARD_MAX || !rc_board_name_valid(board, blen))
        return rc_error_set(err, RC_E_BAD_REQUEST, "board must be %s", BOARD_RULE.rule);
    memcpy(out->board, board, blen + 1);
    if ((rc = rc_json_parse_strict(text, len, &msg, err)) < 0)
        return rc;
    if ((rc = read_op_name(msg, &name, err)) < 0)
        goto cleanup;
    row = op_lookup(name);
    if (!row || !(row->flags & OPF_WRITE)) {
        rc = rc_error_set(err, RC_E_BAD_REQUEST, "op must be one of incr, set, best, submit");
        goto cleanup;
    }
    out->op = row->op;
    rc = decode_op_fields(msg, row, out, err);

cleanup:
    cJSON_Delete(msg);
    return rc;
}

/* Frees what the request owns; safe on a zeroed or already freed request. */
void rc_request_free(struct rc_request *r)
{
    if (!r)
        return;
    free(r->id_json);
    r->id_json = NULL;
}

int rc_op_parse(const char *name)
{
    const struct op_row *row = name ? op_lookup(name) : NULL;
    return row ? (int)row->op : -1;
}

const char *rc_op_name(enum rc_op op)
{
    for (size_t i = 0; i < NOPS; i++)
        if (OPS[i].op == op)
            return OPS[i].name;
    return "unknown";
}
