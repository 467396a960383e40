/* rc_proto_encode.c - server messages of PROTOCOL.md as JSON text (but
 * snapshot and delta, the messages with rows: rc_proto_rows.c).
 *
 * Each encoder builds a cJSON tree, prints it once without formatting and
 * frees the tree before returning, so the tree may borrow everything it
 * shows: keys are attached as constants and strings as references, and only
 * numbers and the echoed id are copied. A failed allocation anywhere frees
 * the partial tree and returns NULL.
 *
 * Numbers are printed by us, not by cJSON: cJSON prints 1e15 as "1e+15",
 * which a JavaScript client reads correctly but a caster's log grep or a
 * byte-for-byte test does not. Any integral value within +-(2^53 - 1) is
 * printed as a plain integer, other finite values in the shortest %.Ng form
 * that reads back to the same double, and non-finite values as null.
 *
 * The returned text comes from cJSON_PrintUnformatted, i.e. from malloc as
 * long as nobody installs other cJSON hooks (the project does not); the
 * caller frees it with free().
 */
#include "rc_proto.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_proto_int.h"


/* ---- items ------------------------------------------------------------- */

size_t rc_proto_encode_int_text(int64_t v, char *buf)
{
    char tmp[24];
    size_t n = 0, len = 0;
    /* (digits of the magnitude as unsigned: INT64_MIN has no positive twin) */
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        buf[len++] = '-';
    while (n)
        buf[len++] = tmp[--n];
    buf[len] = '\0';
    return len;
}

void rc_proto_encode_number_text(double d, char *buf, size_t size)
{
    if (d >= -(double)RC_SAFE_INT_MAX && d <= (double)RC_SAFE_INT_MAX &&
        d == (double)(int64_t)d) {
        if (size >= RC_NUMBER_TEXT_MAX)
            rc_proto_encode_int_text((int64_t)d, buf); /* -0.0 prints as 0 */
        else
            snprintf(buf, size, "%" PRId64, (int64_t)d);
        return;
    }
    /* Any value with at most DBL_DIG (15) significant digits survives a
     * round trip at %.15g, so trying 15, 16, 17 finds the shortest form. */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    /* A locale with a decimal comma would turn 1.5 into "1,5". */
    for (char *p = buf; *p; p++)
        if (*p == ',')
            *p = '.';
}

static cJSON *number_item(double d)
{
    char buf[RC_NUMBER_TEXT_MAX];

    if (!isfinite(d))
        return cJSON_CreateNull();
    rc_proto_encode_number_text(d, buf, sizeof buf);
    return cJSON_CreateRaw(buf);
}

/* Counters (seq, total, rank, at) are printed exactly, whatever their size. */
static cJSON *int_item(int64_t v)
{
    char buf[RC_NUMBER_TEXT_MAX];

    rc_proto_encode_int_text(v, buf);
    return cJSON_CreateRaw(buf);
}

/* A borrowed string, or null for NULL. */
static cJSON *str_item(const char *s)
{
    return s ? cJSON_CreateStringReference(s) : cJSON_CreateNull();
}

/* Attaches item under the borrowed key; on failure frees item. Returns 0 or
 * RC_E_INTERNAL (a NULL item is a failed allocation upstream). */
static int add(cJSON *obj, const char *key, cJSON *item)
{
    if (!item)
        return RC_E_INTERNAL;
    if (!cJSON_AddItemToObjectCS(obj, key, item)) {
        cJSON_Delete(item);
        return RC_E_INTERNAL;
    }
    return 0;
}

/* {"name": value, ...} of a multi-field entry; names and values borrowed. */
static cJSON *fields_item(const struct rc_field_value *fields, unsigned nfields)
{
    cJSON *o = cJSON_CreateObject();

    for (unsigned i = 0; o && i < nfields; i++) {
        if (add(o, fields[i].name, int_item(fields[i].value)) < 0) {
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}

/* Adds "fields" to o when there are any. */
static int add_fields(cJSON *o, const struct rc_field_value *fields, unsigned nfields)
{
    if (nfields == 0 || !fields)
        return 0;
    return add(o, "fields", fields_item(fields, nfields));
}

/* ---- messages ---------------------------------------------------------- */

/* A new message object with "op" and, when the request carried one, the
 * echoed "id" (raw JSON from our own decoder, copied). NULL on failure. */
static cJSON *message(const char *op, const char *id_json)
{
    cJSON *o = cJSON_CreateObject();

    if (o && (add(o, "op", cJSON_CreateStringReference(op)) ||
              (id_json && add(o, "id", cJSON_CreateRaw(id_json))))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Prints o and frees it; when failed (or o is NULL) only frees it. */
static char *finish(cJSON *o, int failed)
{
    char *text = NULL;

    if (o && !failed)
        text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

/* The extras of more (struct rc_msg_more) a message takes, in its order. */
static int add_freeze(cJSON *o, const struct rc_msg_more *m)
{
    if (!m->frozen)
        return 0;
    return add(o, "frozen", int_item(m->freeze_seq)) || (m->live && add(o, "shown", int_item(m->shown)));
}

/* "epoch" on an event: the board's history began with it, so one it must
 * be (rc_epoch_valid: nothing to escape). */
static int add_epoch(cJSON *o, const char *epoch)
{
    if (!epoch)
        return 0;
    return rc_epoch_valid(epoch, strlen(epoch)) ? add(o, "epoch", str_item(epoch)) : RC_E_INTERNAL;
}

int rc_proto__cursor_ok(const char *cursor)
{
    size_t len = strlen(cursor);
    return len > 0 && len < RC_SHARD_CURSOR_MAX && strspn(cursor, "0123456789abcdef:.") == len;
}

static int add_cursor(cJSON *o, const char *cursor)
{
    if (!cursor)
        return 0;
    return rc_proto__cursor_ok(cursor) ? add(o, "cursor", str_item(cursor)) : RC_E_INTERNAL;
}

char *rc_proto_encode_event(const struct rc_event_msg *m)
{
    cJSON *o = message("event", NULL);
    int failed = !o || add(o, "sub", str_item(m->sub)) || add(o, "seq", int_item(m->seq)) ||
                 add(o, "member", str_item(m->member)) || add(o, "score", number_item(m->score)) ||
                 add(o, "delta", number_item(m->delta)) ||
                 add(o, "rank", m->rank > 0 ? int_item(m->rank) : cJSON_CreateNull()) ||
                 add(o, "prev_rank", m->prev_rank ? int_item(m->prev_rank) : cJSON_CreateNull()) ||
                 add(o, "at", int_item(m->at_ms)) || add_fields(o, m->fields, m->nfields) ||
                 add_epoch(o, m->more.epoch) || add_cursor(o, m->more.cursor);
    return finish(o, failed);
}

char *rc_proto_encode_ack(const struct rc_ack_msg *m)
{
    int queued = m->queued_entry != NULL, known = !queued && !m->unranked;
    cJSON *o = message("ack", m->id_json);
    int failed = !o || add(o, "board", str_item(m->board)) || add(o, "member", str_item(m->member)) ||
                 add(o, "score", queued ? cJSON_CreateNull() : number_item(m->score)) ||
                 add(o, "rank", known ? int_item(m->rank) : cJSON_CreateNull()) ||
                 add(o, "seq", known ? int_item(m->seq) : cJSON_CreateNull()) ||
                 (m->unranked && !queued && add(o, "rank_unknown", cJSON_CreateTrue())) ||
                 (queued && (add(o, "queued", cJSON_CreateTrue()) || add(o, "entry", str_item(m->queued_entry)))) ||
                 add(o, "duplicate", cJSON_CreateBool(m->duplicate != 0)) ||
                 (!queued && add_fields(o, m->fields, m->nfields)) ||
                 (m->replicas >= 0 && add(o, "replicas", int_item(m->replicas)));
    int team = m->team && m->team[0];
    failed = failed || (m->teams_board && !queued &&
                        (add(o, "team", team ? str_item(m->team) : cJSON_CreateNull()) ||
                         add(o, "team_score", team && m->has_team_score ? number_item(m->team_score)
                                                                        : cJSON_CreateNull()) ||
                         add(o, "team_rank", team && m->team_rank > 0 ? int_item(m->team_rank)
                                                                      : cJSON_CreateNull())));
    return finish(o, failed);
}

char *rc_proto_encode_teamed(const struct rc_teamed_msg *m)
{
    cJSON *o = message("teamed", m->id_json);
    int failed = !o || add(o, "board", str_item(m->board)) || add(o, "member", str_item(m->member)) ||
                 add(o, "team", m->team[0] ? str_item(m->team) : cJSON_CreateNull()) ||
                 add(o, "seq", int_item(m->seq)) || add(o, "team_seq", int_item(m->team_seq));
    return finish(o, failed);
}

/* A rank of 0 (or below) means the member is not on the board: both "score"
 * and "rank" are null, whatever score says. */
char *rc_proto_encode_rank(const struct rc_rank_msg *m)
{
    int absent = m->rank <= 0;
    cJSON *o = message("rank", m->id_json);
    int failed = !o || add(o, "member", str_item(m->member)) ||
                 add(o, "score", absent ? cJSON_CreateNull() : number_item(m->score)) ||
                 add(o, "rank", absent ? cJSON_CreateNull() : int_item(m->rank)) ||
                 add(o, "total", int_item(m->total)) || add_freeze(o, &m->more);
    return finish(o, failed);
}

char *rc_proto_encode_error(const char *id_json, int code, const char *message_text)
{
    cJSON *o = message("error", id_json);
    int failed = !o || add(o, "code", cJSON_CreateStringReference(rc_err_code_name(code))) ||
                 add(o, "message", str_item(message_text ? message_text : ""));
    return finish(o, failed);
}

char *rc_proto_encode_view_error(const char *sub, int code, const char *message_text)
{
    cJSON *o = message("error", NULL);
    int failed = !o || add(o, "code", cJSON_CreateStringReference(rc_err_code_name(code))) ||
                 add(o, "message", str_item(message_text ? message_text : "")) || add(o, "sub", str_item(sub));
    return finish(o, failed);
}

char *rc_proto_encode_authed(const char *id_json, int64_t exp_s)
{
    cJSON *o = message("authed", id_json);
    int failed = !o || add(o, "exp", int_item(exp_s));
    return finish(o, failed);
}

char *rc_proto_encode_pong(const char *id_json)
{
    cJSON *o = message("pong", id_json);
    return finish(o, !o);
}

char *rc_proto_encode_unsubscribed(const char *id_json, const char *sub)
{
    cJSON *o = message("unsubscribed", id_json);
    int failed = !o || add(o, "sub", str_item(sub));
    return finish(o, failed);
}

char *rc_proto_encode_admin(const char *id_json, const char *op, const char *board, const char *member, int64_t seq,
                      int has_score, double score, int64_t rank, const char *req, int blocked)
{
    cJSON *o = message(op, id_json);
    int failed = !o || add(o, "board", str_item(board)) || (member && add(o, "member", str_item(member))) ||
                 (has_score && (add(o, "score", number_item(score)) ||
                                add(o, "rank", rank > 0 ? int_item(rank) : cJSON_CreateNull()))) ||
                 add(o, "seq", int_item(seq)) || (req && add(o, "req", str_item(req))) ||
                 (blocked >= 0 && add(o, "blocked", cJSON_CreateBool(blocked)));
    return finish(o, failed);
}

char *rc_proto_encode_frozen(const char *id_json, const char *board, const char *period, int64_t freeze_seq)
{
    cJSON *o = message("frozen", id_json);
    int failed = !o || add(o, "board", str_item(board)) ||
                 (period && add(o, "period", str_item(period))) || add(o, "seq", int_item(freeze_seq)) ||
                 add(o, "frozen", int_item(freeze_seq));
    return finish(o, failed);
}

char *rc_proto_encode_revealed(const char *id_json, const char *board, const char *period, int64_t shown, int64_t pending,
                         int frozen, int64_t freeze_seq, int64_t skipped)
{
    cJSON *o = message("revealed", id_json);
    int failed = !o || add(o, "board", str_item(board)) ||
                 (period && add(o, "period", str_item(period))) || add(o, "seq", int_item(shown)) ||
                 add(o, "pending", int_item(pending)) || (frozen && add(o, "frozen", int_item(freeze_seq))) ||
                 (skipped > 0 && add(o, "skipped", int_item(skipped)));
    return finish(o, failed);
}

char *rc_proto_encode_freeze_state(const char *board, const char *period, int frozen, int64_t freeze_seq, int64_t shown,
                             int64_t seq)
{
    cJSON *o = cJSON_CreateObject();
    int failed = !o || add(o, "board", str_item(board)) || (period && add(o, "period", str_item(period))) ||
                 add(o, "frozen", frozen ? int_item(freeze_seq) : cJSON_CreateNull()) ||
                 add(o, "shown", frozen ? int_item(shown) : cJSON_CreateNull()) || add(o, "seq", int_item(seq)) ||
                 add(o, "pending", int_item(frozen && seq > shown ? seq - shown : 0));
    return finish(o, failed);
}

char *rc_proto_encode_stats(const char *board, const char *period, int64_t viewers, int64_t total, int64_t seq)
{
    cJSON *o = cJSON_CreateObject();
    int failed = !o || add(o, "board", str_item(board)) ||
                 (period && add(o, "period", str_item(period))) || add(o, "viewers", int_item(viewers)) ||
                 add(o, "total", int_item(total)) || add(o, "seq", int_item(seq));
    return finish(o, failed);
}
