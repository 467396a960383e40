/* rc_proto_at.c - the wire side of standings at a moment (PROTOCOL v1.2,
 * docs/history.md): get's "at", op history's fields, the history reply and
 * the out_of_range error that names the oldest seq still held. */
#include "rc_proto.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_proto_int.h"

int rc_proto_at_decode(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    const cJSON *at;
    int rc = rc_proto__field(msg, "at", "at", &at, err);
    if (rc < 0 || !at || cJSON_IsNull(at))
        return rc;
    if (!cJSON_IsObject(at))
        return rc_err_set(err, RC_E_BAD_REQUEST, "at must be an object: {\"seq\": S} or {\"time\": MS}");
    int has_seq = cJSON_GetObjectItemCaseSensitive(at, "seq") != NULL;
    int has_time = cJSON_GetObjectItemCaseSensitive(at, "time") != NULL;
    if (has_seq == has_time)
        return rc_err_set(err, RC_E_BAD_REQUEST, "at must name one moment: {\"seq\": S} or {\"time\": MS}");
    out->at_kind = has_seq ? RC_AT_SEQ : RC_AT_TIME;
    return rc_proto__read_int(at, has_seq ? "seq" : "time", has_seq ? "at.seq" : "at.time", 1, 0, RC_SAFE_INT_MAX,
                              &out->at, err);
}

int rc_proto_at_check_history(const struct rc_request *r, struct rc_error *err)
{
    if (r->step_ms < 1)
        return rc_err_set(err, RC_E_BAD_REQUEST, "step must be at least 1 (ms)");
    if (r->from_ms < 0 || r->to_ms < r->from_ms)
        return rc_err_set(err, RC_E_BAD_REQUEST, "from and to must be times (ms) with from <= to");
    if ((r->to_ms - r->from_ms) / r->step_ms >= RC_HISTORY_MAX_POINTS)
        return rc_err_set(err, RC_E_BAD_REQUEST, "history answers at most %d points: (to - from) / step + 1 is %" PRId64,
                            RC_HISTORY_MAX_POINTS, (r->to_ms - r->from_ms) / r->step_ms + 1);
    return 0;
}

int rc_proto_at_decode_history(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    int rc;
    if ((rc = rc_proto__read_name(msg, "member", "member", 1, &rc_proto__member_rule, out->member, err)) < 0 ||
        (rc = rc_proto__read_name(msg, "period", "period", 0, &rc_proto__period_rule, out->period, err)) < 0 ||
        (rc = rc_proto__read_int(msg, "from", "from", 1, 0, RC_SAFE_INT_MAX, &out->from_ms, err)) < 0 ||
        (rc = rc_proto__read_int(msg, "to", "to", 1, 0, RC_SAFE_INT_MAX, &out->to_ms, err)) < 0 ||
        (rc = rc_proto__read_int(msg, "step", "step", 1, 1, RC_SAFE_INT_MAX, &out->step_ms, err)) < 0 ||
        (rc = rc_proto_at_check_history(out, err)) < 0)
        return rc;
    /* a live read through a freeze is the caster's (admin): "live" as on subscribe */
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(msg, "live");
    if (l && !cJSON_IsBool(l))
        return rc_err_set(err, RC_E_BAD_REQUEST, "live must be true or false");
    out->view.live = cJSON_IsTrue(l);
    return 0;
}

int rc_proto_at_decode_replay(const cJSON *msg, struct rc_request *out, struct rc_error *err)
{
    const cJSON *rp;
    int rc = rc_proto__field(msg, "replay", "replay", &rp, err);
    if (rc < 0 || !rp)
        return rc;
    const cJSON *from = cJSON_IsObject(rp) ? cJSON_GetObjectItemCaseSensitive(rp, "from") : NULL;
    if (!from || !cJSON_IsObject(from))
        return rc_err_set(err, RC_E_BAD_REQUEST, "replay must be {\"from\": {\"seq\": S} or {\"time\": MS}, "
                            "\"speed\": X}");
    int has_seq = cJSON_GetObjectItemCaseSensitive(from, "seq") != NULL;
    int has_time = cJSON_GetObjectItemCaseSensitive(from, "time") != NULL;
    if (has_seq == has_time)
        return rc_err_set(err, RC_E_BAD_REQUEST, "replay.from must name one moment: {\"seq\": S} or {\"time\": MS}");
    if ((rc = rc_proto__read_int(from, has_seq ? "seq" : "time", has_seq ? "replay.from.seq" : "replay.from.time", 1,
                                 0, RC_SAFE_INT_MAX, &out->replay_from, err)) < 0)
        return rc;
    out->replay_kind = has_seq ? RC_AT_SEQ : RC_AT_TIME;
    const cJSON *speed = cJSON_GetObjectItemCaseSensitive(rp, "speed");
    out->replay_speed = 1;
    if (speed && (!cJSON_IsNumber(speed) || !(speed->valuedouble >= RC_REPLAY_SPEED_MIN) ||
                  speed->valuedouble > RC_REPLAY_SPEED_MAX))
        return rc_err_set(err, RC_E_BAD_REQUEST, "replay.speed must be a number 0.25..64");
    if (speed)
        out->replay_speed = speed->valuedouble;
    if (out->has_since || cJSON_GetObjectItemCaseSensitive(msg, "since"))
        return rc_err_set(err, RC_E_BAD_REQUEST, "replay and since do not go together");
    out->has_replay = 1;
    return 0;
}

static cJSON *num(double d)
{
    char buf[RC_NUMBER_TEXT_MAX];
    rc_proto_encode_number_text(d, buf, sizeof buf);
    return cJSON_CreateRaw(buf);
}

/* Adds item (freed on failure); returns 1 on failure. */
static int add(cJSON *o, const char *key, cJSON *item)
{
    if (!item)
        return 1;
    if (!cJSON_AddItemToObject(o, key, item)) {
        cJSON_Delete(item);
        return 1;
    }
    return 0;
}

static cJSON *head(const char *op, const char *id_json)
{
    cJSON *o = cJSON_CreateObject();
    if (o && (add(o, "op", cJSON_CreateString(op)) || (id_json && add(o, "id", cJSON_CreateRaw(id_json))))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static char *done(cJSON *o, int failed)
{
    char *text = o && !failed ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return text;
}

char *rc_proto_at_encode_history(const char *id_json, const char *board, const char *member, const char *period,
                                 const struct rc_history_point *pts, size_t n, int64_t frozen)
{
    cJSON *o = head("history", id_json);
    cJSON *arr = cJSON_CreateArray();
    int failed = !o || !arr || add(o, "board", cJSON_CreateString(board)) ||
                 add(o, "member", cJSON_CreateString(member)) ||
                 (period && add(o, "period", cJSON_CreateString(period)));
    for (size_t i = 0; !failed && i < n; i++) {
        cJSON *p = cJSON_CreateObject();
        failed = !p || add(p, "at", num((double)pts[i].at)) || add(p, "seq", num((double)pts[i].seq)) ||
                 add(p, "score", pts[i].present ? num(pts[i].score) : cJSON_CreateNull()) ||
                 add(p, "rank", pts[i].present ? num((double)pts[i].rank) : cJSON_CreateNull());
        if (p && (failed || !cJSON_AddItemToArray(arr, p))) {
            cJSON_Delete(p);
            failed = 1;
        }
    }
    if (!failed) {
        failed = add(o, "points", arr);
        arr = NULL;
    }
    cJSON_Delete(arr);
    if (!failed && frozen > 0)
        failed = add(o, "frozen", num((double)frozen));
    return done(o, failed);
}

char *rc_proto_at_encode_gone(const char *id_json, const char *message, int64_t oldest_seq)
{
    return rc_proto_at_encode_gone_time(id_json, message, oldest_seq, 0, 0);
}

char *rc_proto_at_encode_gone_time(const char *id_json, const char *message, int64_t oldest_seq, int has_time,
                                   int64_t oldest_time)
{
    cJSON *o = head("error", id_json);
    int failed = !o || add(o, "code", cJSON_CreateString("out_of_range")) ||
                 add(o, "message", cJSON_CreateString(message)) || add(o, "oldest_seq", num((double)oldest_seq)) ||
                 (has_time && add(o, "oldest_time", num((double)oldest_time)));
    return done(o, failed);
}

char *rc_proto_at_encode_live(const char *sub, int64_t seq)
{
    cJSON *o = head("live", NULL);
    int failed = !o || add(o, "sub", cJSON_CreateString(sub)) || add(o, "seq", num((double)seq));
    return done(o, failed);
}

char *rc_proto_at_encode_live_reset(const char *sub, int64_t seq)
{
    cJSON *o = head("live", NULL);
    int failed = !o || add(o, "sub", cJSON_CreateString(sub)) || add(o, "seq", num((double)seq)) ||
                 add(o, "reset", cJSON_CreateTrue());
    return done(o, failed);
}
