/* rc_proto_decode.c - the gates and dispatch of a client message (PROTOCOL.md)
 * into struct rc_request; the fields are read by rc_proto_field.c and each
 * op's own by rc_proto_op.c.
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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_proto_int.h"

#define ID_MAX 256    /* longest string id, in bytes, we agree to echo */
#define OP_ECHO_MAX 32 /* how much of an unknown op the error message repeats */

/* ---- id and op --------------------------------------------------------- */

/* The id as JSON text in a malloc'd buffer. Numbers are printed so they
 * read back as exactly the same double (cJSON's own printer settles for a
 * near one), integers without an exponent. */
static char *id_text(const cJSON *item)
{
    if (cJSON_IsNumber(item)) {
        char buf[RC_NUMBER_TEXT_MAX];
        rc_proto_encode_number_text(item->valuedouble, buf, sizeof buf);
        return strdup(buf);
    }
    /* cJSON's printer allocates with malloc unless someone installed other
     * hooks; the project never does, so rc_proto_decode_free can free() this. */
    return cJSON_PrintUnformatted(item);
}

/* Sets out->id_json from msg's "id" (any JSON scalar). Runs before every
 * other field check so that their errors can be echoed with the id. */
static int decode_id(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    const cJSON *item;
    int rc = rc_proto__field(msg, "id", "id", &item, err);

    if (rc < 0 || !item)
        return rc;
    if (cJSON_IsObject(item) || cJSON_IsArray(item))
        return rc_err_set(err, RC_E_BAD_REQUEST, "id must be a JSON scalar");
    if (cJSON_IsNumber(item) && !isfinite(item->valuedouble))
        return rc_err_set(err, RC_E_BAD_REQUEST, "id must be a finite number");
    if (cJSON_IsString(item) && (!item->valuestring || strlen(item->valuestring) > ID_MAX))
        return rc_err_set(err, RC_E_BAD_REQUEST, "id must be at most %d bytes", ID_MAX);
    out->id_json = id_text(item);
    if (!out->id_json)
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    return 0;
}

/* Reads "op" as a string into *name (borrowed from msg). */
static int read_op_name(const cJSON *msg, const char **name, struct rc_error *err)
{
    const cJSON *item;
    int rc = rc_proto__need(msg, "op", "op", &item, err);

    if (rc < 0)
        return rc;
    if (!cJSON_IsString(item) || !item->valuestring)
        return rc_err_set(err, RC_E_BAD_REQUEST, "op must be a string");
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
    return rc_err_set(err, RC_E_BAD_REQUEST, "unknown op '%s'", echo);
}

/* ---- public ------------------------------------------------------------ */

/* Borrows text; fills *out, which owns id_json afterwards (see rc_proto.h:
 * the caller always calls rc_proto_decode_free, on failure too). */
int rc_proto_decode(const char *text, size_t len, struct rc_request *out, struct rc_error *err)
{
    const struct rc_proto__op_row *row;
    const char *name = NULL;
    cJSON *msg = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = rc_json_gate_parse_strict(text, len, &msg, err)) < 0)
        return rc;
    if ((rc = decode_id(msg, out, err)) < 0 || (rc = read_op_name(msg, &name, err)) < 0)
        goto cleanup;
    if (!(row = rc_proto__op_lookup(name))) {
        rc = unknown_op(name, err);
        goto cleanup;
    }
    out->op = row->op;
    if ((row->flags & OPF_BOARD) &&
        (rc = rc_proto__read_name(msg, "board", "board", 1, &rc_proto__board_rule, out->board, err)) < 0)
        goto cleanup;
    rc = rc_proto__decode_op_fields(msg, row, out, err);

cleanup:
    cJSON_Delete(msg);
    return rc;
}

/* The REST write body: board borrowed from the URL path, op restricted to
 * the writes. "id" is not part of a REST body and is ignored like any
 * unknown field, so out->id_json stays NULL. */
int rc_proto_decode_write_body(const char *board, const char *text, size_t len,
                                 struct rc_request *out, struct rc_error *err)
{
    const struct rc_proto__op_row *row;
    const char *name = NULL;
    cJSON *msg = NULL;
    size_t blen = board ? strlen(board) : 0;
    int rc;

    memset(out, 0, sizeof *out);
    if (blen > RC_BOARD_MAX || !rc_names_board_name_valid(board, blen))
        return rc_err_set(err, RC_E_BAD_REQUEST, "board must be %s", rc_proto__board_rule.rule);
    memcpy(out->board, board, blen + 1);
    if ((rc = rc_json_gate_parse_strict(text, len, &msg, err)) < 0)
        return rc;
    if ((rc = read_op_name(msg, &name, err)) < 0)
        goto cleanup;
    row = rc_proto__op_lookup(name);
    if (!row || !(row->flags & OPF_WRITE)) {
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "op must be one of incr, set, best, submit");
        goto cleanup;
    }
    out->op = row->op;
    rc = rc_proto__decode_op_fields(msg, row, out, err);

cleanup:
    cJSON_Delete(msg);
    return rc;
}

/* The REST admin body (POST /api/v1/boards/{board}/reverse or /reset):
 * {"req","period"}, both optional except reverse's req. No body means {};
 * a body passes the same strict gate as a WebSocket message. The messages
 * are the REST API's own (PROTOCOL.md examples rely on them). */
int rc_proto_decode_admin_body(enum rc_op op, const char *board, const char *text, size_t len,
                                 struct rc_request *out, struct rc_error *err)
{
    size_t blen = board ? strlen(board) : 0;
    const char *bad = NULL;
    cJSON *o = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    if (op != RC_OP_REVERSE && op != RC_OP_RESET && op != RC_OP_FREEZE && op != RC_OP_REVEAL)
        return rc_err_set(err, RC_E_INTERNAL, "not an admin body op");
    if (blen > RC_BOARD_MAX || !rc_names_board_name_valid(board, blen))
        return rc_err_set(err, RC_E_BAD_REQUEST, "board must be %s", rc_proto__board_rule.rule);
    if (len == 0)
        o = cJSON_CreateObject();
    else if ((rc = rc_json_gate_parse_strict(text, len, &o, err)) < 0)
        return rc;
    if (!o)
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    out->op = op;
    memcpy(out->board, board, blen + 1);
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(o, "req");
    const cJSON *per = cJSON_GetObjectItemCaseSensitive(o, "period");
    if (!cJSON_IsObject(o))
        bad = "body must be a JSON object";
    else if (op == RC_OP_REVERSE && (!cJSON_IsString(req) || !rc_names_req_valid(req->valuestring, strlen(req->valuestring))))
        bad = "req must be the request id (1..64 printable characters) of the write to reverse";
    else if (per && (!cJSON_IsString(per) || strlen(per->valuestring) > RC_PERIOD_SEL_MAX))
        bad = "period must be a string";
    else if (op == RC_OP_REVEAL && rc_proto__decode_steps(o, &out->steps, err) < 0)
        bad = "steps must be a whole number from 1, or \"all\"";
    if (!bad && cJSON_IsString(req)) /* reset ignores a req, as it ignores any unknown field */
        snprintf(out->req, sizeof out->req, "%s", req->valuestring);
    if (!bad && cJSON_IsString(per))
        snprintf(out->period, sizeof out->period, "%s", per->valuestring);
    cJSON_Delete(o);
    return bad ? rc_err_set(err, RC_E_BAD_REQUEST, "%s", bad) : 0;
}

/* The REST team body (PUT /api/v1/boards/{b}/members/{m}/team):
 * {"team": ID|null} (docs/teams.md). */
int rc_proto_decode_team_body(const char *board, const char *member, const char *text, size_t len,
                                struct rc_request *out, struct rc_error *err)
{
    size_t blen = board ? strlen(board) : 0, mlen = member ? strlen(member) : 0;
    cJSON *o = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    if (blen > RC_BOARD_MAX || !rc_names_board_name_valid(board, blen))
        return rc_err_set(err, RC_E_BAD_REQUEST, "board must be %s", rc_proto__board_rule.rule);
    if (mlen > RC_MEMBER_MAX || !rc_names_member_name_valid(member, mlen))
        return rc_err_set(err, RC_E_BAD_REQUEST, "member must be %s", rc_proto__member_rule.rule);
    if ((rc = rc_json_gate_parse_strict(text, len, &o, err)) < 0)
        return rc;
    out->op = RC_OP_TEAM;
    memcpy(out->board, board, blen + 1);
    memcpy(out->member, member, mlen + 1);
    if (!cJSON_IsObject(o))
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "body must be a JSON object: {\"team\": ID} or {\"team\": null}");
    else
        rc = rc_proto__decode_team_field(o, out, err);
    cJSON_Delete(o);
    return rc < 0 ? rc : 0;
}

/* Frees what the request owns; safe on a zeroed or already freed request. */
void rc_proto_decode_free(struct rc_request *r)
{
    if (!r)
        return;
    free(r->id_json);
    r->id_json = NULL;
    free(r->view.members);
    r->view.members = NULL;
    r->view.nmembers = r->view.members_len = 0;
    if (r->token) {
        /* a credential: do not leave it in freed memory */
        memset(r->token, 0, strlen(r->token));
        free(r->token);
        r->token = NULL;
    }
}
