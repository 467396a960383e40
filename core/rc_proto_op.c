/* rc_proto_op.c - one job: the op table and each op's own fields (views,
 * points, submit fields, rank, ping, admin ops), as PROTOCOL.md defines them. */
#include "rc_proto_int.h"
#include "rc_jwt.h"
#include "rc_members.h"
#include "rc_rate.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- views ------------------------------------------------------------- */

static int view_top(const cJSON *v, struct rc_view *view, struct rc_error *err)
{
    int64_t n = 0;
    int rc = rc_proto__read_int(v, "top", "view.top", 1, 1, RC_VIEW_MAX_ROWS, &n, err);

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

    if ((rc = rc_proto__read_int(v, "offset", "view.offset", 1, 0, INT32_MAX, &off, err)) < 0 ||
        (rc = rc_proto__read_int(v, "limit", "view.limit", 1, 1, RC_VIEW_MAX_ROWS, &lim, err)) < 0)
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

    if ((rc = rc_proto__read_name(v, "around", "view.around", 1, &rc_proto__member_rule, view->around, err)) < 0 ||
        (rc = rc_proto__read_int(v, "radius", "view.radius", 0, 0, RC_VIEW_MAX_RADIUS, &radius, err)) < 0)
        return rc;
    view->kind = RC_VIEW_AROUND;
    view->radius = (uint32_t)radius;
    return 0;
}

static int view_feed(const cJSON *v, struct rc_view *view, struct rc_error *err)
{
    const cJSON *item;
    int rc = rc_proto__need(v, "feed", "view.feed", &item, err);

    if (rc < 0)
        return rc;
    if (!cJSON_IsTrue(item))
        return rc_err_set(err, RC_E_BAD_REQUEST, "view.feed must be true");
    view->kind = RC_VIEW_FEED;
    return 0;
}

/* {"members": [M1, ...]}: 1..200 distinct member names (core/rc_members.h),
 * packed into view->members, which the request then owns. */
static int view_members(const cJSON *v, struct rc_view *view, struct rc_error *err)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(v, "members");
    const char *names[RC_MEMBERS_MAX];
    size_t lens[RC_MEMBERS_MAX], n = 0;
    const cJSON *it;
    if (!cJSON_IsArray(arr))
        return rc_err_set(err, RC_E_BAD_REQUEST, "view.members must be an array of member names");
    cJSON_ArrayForEach(it, arr)
    {
        if (n == RC_MEMBERS_MAX)
            return rc_err_set(err, RC_E_BAD_REQUEST, "view.members must list 1..%d members", RC_MEMBERS_MAX);
        if (!cJSON_IsString(it) || !it->valuestring)
            return rc_err_set(err, RC_E_BAD_REQUEST, "view.members[%zu] must be a member name", n);
        names[n] = it->valuestring;
        lens[n++] = strlen(it->valuestring);
    }
    uint32_t len = 0;
    int rc = rc_members_pack(names, lens, n, "view.members", &view->members, &len, err);
    if (rc)
        return rc;
    view->kind = RC_VIEW_MEMBERS;
    view->nmembers = (uint32_t)n;
    view->members_len = len;
    return 0;
}

/* {"team": T_ID}: a roster (PROTOCOL v1.2), the team id in view->around. */
static int view_team(const cJSON *v, struct rc_view *view, struct rc_error *err)
{
    int rc = rc_proto__read_name(v, "team", "view.team", 1, &rc_proto__member_rule, view->around, err);
    if (rc < 0)
        return rc;
    view->kind = RC_VIEW_TEAM;
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
    {{"members", NULL}, view_members},
    {{"team", NULL}, view_team},
};

#define NVIEW_KINDS (sizeof VIEW_KINDS / sizeof VIEW_KINDS[0])

static int decode_view(const cJSON *msg, struct rc_view *view, struct rc_error *err)
{
    const cJSON *v;
    size_t kind = 0, nkinds = 0;
    int rc = rc_proto__need_object(msg, "view", &v, err);

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
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "view must be one of top, offset/limit, around, feed, members, team");
    return VIEW_KINDS[kind].decode(v, view, err);
}

/* ---- per-op handlers --------------------------------------------------- */

/* "since": {"seq": N} asks a feed to resume after N; {"seq": N, "epoch": E}
 * (v1.1) only within the board's history E (core/rc_epoch.h). */
static int decode_since(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    const cJSON *since;
    int rc = rc_proto__field(msg, "since", "since", &since, err);

    if (rc < 0 || !since)
        return rc;
    if (!cJSON_IsObject(since))
        return rc_err_set(err, RC_E_BAD_REQUEST, "since must be an object");
    if ((rc = rc_proto__read_int(since, "seq", "since.seq", 1, 0, RC_SAFE_INT_MAX, &out->since_seq,
                                 err)) < 0)
        return rc;
    const cJSON *epoch;
    if ((rc = rc_proto__field(since, "epoch", "since.epoch", &epoch, err)) < 0)
        return rc;
    if (epoch) {
        if (!cJSON_IsString(epoch) || !epoch->valuestring)
            return rc_err_set(err, RC_E_BAD_REQUEST, "since.epoch must be a string");
        size_t len = strlen(epoch->valuestring);
        if (!rc_epoch_valid(epoch->valuestring, len))
            return rc_err_set(err, RC_E_BAD_REQUEST, "since.epoch must be 0..%d characters of [A-Za-z0-9]",
                                RC_EPOCH_MAX);
        memcpy(out->since_epoch, epoch->valuestring, len + 1);
        out->has_since_epoch = 1;
    }
    const cJSON *cursor;
    if ((rc = rc_proto__field(since, "cursor", "since.cursor", &cursor, err)) < 0)
        return rc;
    if (cursor) {
        /* its shape is checked against the board's shard count later
         * (core/rc_shard.h, rc_shard_cursor_parse); here only its alphabet */
        size_t len = cJSON_IsString(cursor) && cursor->valuestring ? strlen(cursor->valuestring) : 0;
        if (len == 0 || len >= RC_SHARD_CURSOR_MAX ||
            strspn(cursor->valuestring, "0123456789abcdef:.") != len)
            return rc_err_set(err, RC_E_BAD_REQUEST,
                                "since.cursor must be a cursor of a sharded board's feed (as last received)");
        memcpy(out->since_cursor, cursor->valuestring, len + 1);
        out->has_since_cursor = 1;
    }
    out->has_since = 1;
    return 0;
}

/* "places" (v1.1, "Shared places"): "shared" gives a window view's rows
 * place and tied; "unique" (the default) keeps rank alone. Feeds have no
 * places to share. */
static int decode_places(const cJSON *msg, struct rc_view *view, struct rc_error *err)
{
    const cJSON *item;
    int rc = rc_proto__field(msg, "places", "places", &item, err);

    if (rc < 0 || !item)
        return rc;
    if (!cJSON_IsString(item) || !item->valuestring ||
        (strcmp(item->valuestring, "shared") != 0 && strcmp(item->valuestring, "unique") != 0))
        return rc_err_set(err, RC_E_BAD_REQUEST, "places must be \"shared\" or \"unique\"");
    view->places = strcmp(item->valuestring, "shared") == 0;
    if (view->places && view->kind == RC_VIEW_FEED)
        return rc_err_set(err, RC_E_BAD_REQUEST, "places applies to window views, not feeds");
    return 0;
}

/* "max_rate": R (v1.1), an integer 1..RC_RATE_MAX messages a second, on
 * window views only: a feed delivers every change as its own event. */
static int decode_max_rate(const cJSON *msg, struct rc_view *view, struct rc_error *err)
{
    int64_t rate = 0;
    int rc = rc_proto__read_int(msg, "max_rate", "max_rate", 0, RC_RATE_MIN, RC_RATE_MAX, &rate, err);

    if (rc < 0)
        return rc;
    if (rate && view->kind == RC_VIEW_FEED)
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "max_rate applies to top, offset/limit and around views, not to a feed");
    view->max_rate = (uint32_t)rate;
    return 0;
}

/* "live": true|false (v1.1, "Freeze and reveal"): an admin's view of the
 * live board through a freeze. The scope is checked by the gateway. */
static int decode_live(const cJSON *msg, struct rc_view *view, struct rc_error *err)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(msg, "live");
    if (l && !cJSON_IsBool(l))
        return rc_err_set(err, RC_E_BAD_REQUEST, "live must be true or false");
    view->live = cJSON_IsTrue(l);
    return 0;
}

static int decode_subscribe(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    int rc;

    if ((rc = decode_view(msg, &out->view, err)) < 0 || (rc = decode_places(msg, &out->view, err)) < 0 ||
        (rc = rc_proto__read_name(msg, "period", "period", 0, &rc_proto__period_rule, out->period, err)) < 0 ||
        (rc = decode_max_rate(msg, &out->view, err)) < 0 || (rc = decode_live(msg, &out->view, err)) < 0 ||
        (rc = rc_proto_at_decode_replay(msg, out, err)) < 0)
        return rc;
    return decode_since(msg, out, err);
}

/* get (PROTOCOL v1.2): a subscribe's window, once, optionally at a moment */
static int decode_get(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    int rc;
    if ((rc = decode_view(msg, &out->view, err)) < 0 || (rc = decode_places(msg, &out->view, err)) < 0 ||
        (rc = rc_proto__read_name(msg, "period", "period", 0, &rc_proto__period_rule, out->period, err)) < 0 ||
        (rc = decode_live(msg, &out->view, err)) < 0)
        return rc;
    if (out->view.kind == RC_VIEW_FEED)
        return rc_err_set(err, RC_E_BAD_REQUEST, "get reads a window (top, offset/limit, around), not a feed");
    return rc_proto_at_decode(msg, out, err);
}

static int decode_unsubscribe(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    return rc_proto__read_name(msg, "sub", "sub", 1, &rc_proto__sub_rule, out->sub, err);
}

static int decode_member(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    return rc_proto__read_name(msg, "member", "member", 1, &rc_proto__member_rule, out->member, err);
}

/* incr, set and best: the member and one safe integer under key. */
static int decode_points(const cJSON *msg, const char *key, struct rc_request *out,
                         struct rc_error *err)
{
    int rc = decode_member(msg, out, err);
    if (rc < 0)
        return rc;
    return rc_proto__read_int(msg, key, key, 1, -RC_SAFE_INT_MAX, RC_SAFE_INT_MAX, &out->value, err);
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

    if (!rc_names_field_name_valid(name, len))
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "fields: names must be 1.." XSTR(RC_FIELD_NAME_MAX)
                            " characters of [a-z0-9_], starting with a letter");
    for (unsigned i = 0; i < out->nfields; i++)
        if (strcmp(out->fields[i].name, name) == 0)
            return rc_err_set(err, RC_E_BAD_REQUEST, "fields: duplicate name '%s'", name);
    snprintf(label, sizeof label, "fields.%s", name);
    if ((rc = rc_proto__as_int(item, label, &f->value, err)) < 0)
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
        (rc = rc_proto__need_object(msg, "fields", &fields, err)) < 0)
        return rc;
    for (const cJSON *c = fields->child; c && count <= RC_MAX_FIELDS; c = c->next)
        count++;
    if (count < 1 || count > RC_MAX_FIELDS)
        return rc_err_set(err, RC_E_BAD_REQUEST, "fields must have 1..%d entries",
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
    return rc_proto__read_name(msg, "period", "period", 0, &rc_proto__period_rule, out->period, err);
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
        return rc_err_set(err, RC_E_BAD_REQUEST, "block must be true or false");
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
    int rc = rc_proto__read_name(msg, "req", "req", 1, &rc_proto__req_rule, out->req, err);
    if (rc < 0)
        return rc;
    return rc_proto__read_name(msg, "period", "period", 0, &rc_proto__period_rule, out->period, err);
}

static int decode_reset(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    return rc_proto__read_name(msg, "period", "period", 0, &rc_proto__period_rule, out->period, err);
}

static int decode_freeze(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    return rc_proto__read_name(msg, "period", "period", 0, &rc_proto__period_rule, out->period, err);
}

/* reveal: "steps" N (1..2^53-1) or "all", 1 when absent; optional period. */
static int decode_reveal(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    int rc = rc_proto__decode_steps(msg, &out->steps, err);
    if (rc < 0)
        return rc;
    return rc_proto__read_name(msg, "period", "period", 0, &rc_proto__period_rule, out->period, err);
}

/* auth: "token", a compact JWT (1..RC_JWT_MAX bytes of base64url and
 * dots). The gateway verifies it; here only its shape is checked, and the
 * message never quotes it. */
static int decode_auth(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(msg, "token");
    if (!t)
        return rc_err_set(err, RC_E_BAD_REQUEST, "auth needs \"token\": a JWT");
    if (!cJSON_IsString(t) || !rc_jwt_shaped(t->valuestring, strlen(t->valuestring)))
        return rc_err_set(err, RC_E_BAD_REQUEST, "token must be a JWT (header.payload.signature, at most %d bytes)",
                            RC_JWT_MAX);
    out->token = strdup(t->valuestring);
    if (!out->token)
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    return 0;
}

/* team: "member" and "team", a team id (member name rules) or null to
 * leave (docs/teams.md). */
int rc_proto__decode_team_field(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    int rc;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(msg, "team");
    if (!t)
        return rc_err_set(err, RC_E_BAD_REQUEST, "team needs \"team\": a team id, or null to leave");
    if (cJSON_IsNull(t)) {
        out->team[0] = '\0';
        return 0;
    }
    rc = rc_proto__read_name(msg, "team", "team", 1, &rc_proto__member_rule, out->team, err);
    return rc < 0 ? rc : 0;
}

static int decode_team(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    int rc = decode_member(msg, out, err);
    return rc < 0 ? rc : rc_proto__decode_team_field(msg, out, err);
}

/* Flags of an op table row. */
#define OPF_BOARD (1u << 0) /* names a board: "board" (or the REST path) */
#define OPF_WRITE (1u << 1) /* a write: takes "req", allowed in a REST body */

/* Every op: its wire name, and the handler for the fields that are its own
 * (board and req are read by the dispatcher, from the flags). Kept in
 * enum rc_op order. */
static const struct rc_proto__op_row OPS[] = {
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
    {"auth", RC_OP_AUTH, 0, decode_auth},
    {"freeze", RC_OP_FREEZE, OPF_BOARD, decode_freeze},
    {"reveal", RC_OP_REVEAL, OPF_BOARD, decode_reveal},
    {"team", RC_OP_TEAM, OPF_BOARD, decode_team},
    {"get", RC_OP_GET, OPF_BOARD, decode_get},
    {"history", RC_OP_HISTORY, OPF_BOARD, rc_proto_at_decode_history},
};

#define NOPS (sizeof OPS / sizeof OPS[0])

const struct rc_proto__op_row *rc_proto__op_lookup(const char *name)
{
    for (size_t i = 0; i < NOPS; i++)
        if (strcmp(OPS[i].name, name) == 0)
            return &OPS[i];
    return NULL;
}

/* The op's own fields, then "req" for writes. out->op and, when the op
 * names one, out->board are already set. */
int rc_proto__decode_op_fields(const cJSON *msg, const struct rc_proto__op_row *row, struct rc_request *out,
                            struct rc_error *err)
{
    int rc = row->decode(msg, out, err);
    if (rc < 0 || !(row->flags & OPF_WRITE))
        return rc;
    return rc_proto__read_name(msg, "req", "req", 0, &rc_proto__req_rule, out->req, err);
}


int rc_proto_op_parse(const char *name)
{
    const struct rc_proto__op_row *row = name ? rc_proto__op_lookup(name) : NULL;
    return row ? (int)row->op : RC_E_BAD_REQUEST;
}

const char *rc_proto_op_name(enum rc_op op)
{
    for (size_t i = 0; i < NOPS; i++)
        if (OPS[i].op == op)
            return OPS[i].name;
    return "unknown";
}
