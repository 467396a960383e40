/* rc_event.c - change event parsing (see rc_event.h). */
#include "rc_event.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "rc_err.h"
#include "rc_names.h"

static int num(const cJSON *o, const char *k, double *v)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(x))
        return RC_E_BAD_REQUEST;
    *v = x->valuedouble;
    return 0;
}

int rc_event_parse(const char *text, size_t len, struct rc_event *ev)
{
    double seq, at, v;
    int rc = RC_E_BAD_REQUEST;
    memset(ev, 0, sizeof *ev);
    cJSON *o = text ? cJSON_ParseWithLength(text, len) : NULL;
    if (!o)
        return RC_E_BAD_REQUEST;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "member");
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(o, "op");
    if (cJSON_IsString(op) && strlen(op->valuestring) < sizeof ev->op)
        strcpy(ev->op, op->valuestring);
    int reset = strcmp(ev->op, "reset") == 0;
    if ((reset || (cJSON_IsString(m) && strlen(m->valuestring) <= RC_MEMBER_MAX)) && num(o, "seq", &seq) == 0 &&
        num(o, "at", &at) == 0) {
        if (!reset)
            strcpy(ev->member, m->valuestring);
        ev->seq = (int64_t)seq;
        ev->at_ms = (int64_t)at;
        ev->has_new = num(o, "c", &ev->c) == 0; /* null: removed */
        if (num(o, "rank", &v) == 0)
            ev->rank = (int64_t)v;
        if (num(o, "old_c", &v) == 0) {
            ev->has_old = 1;
            ev->old_c = v;
        }
        if (num(o, "old_rank", &v) == 0)
            ev->old_rank = (int64_t)v;
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "epoch");
        if (!e)
            rc = 0;
        else if (cJSON_IsString(e) && rc_epoch_valid(e->valuestring, strlen(e->valuestring))) {
            strcpy(ev->epoch, e->valuestring);
            rc = 0;
        }
    }
    cJSON_Delete(o);
    if (rc)
        memset(ev, 0, sizeof *ev);
    return rc;
}

int rc_event_team_is(const char *text, size_t len)
{
    return text && len >= sizeof RC_EVENT_TEAM_PREFIX - 1 &&
           memcmp(text, RC_EVENT_TEAM_PREFIX, sizeof RC_EVENT_TEAM_PREFIX - 1) == 0;
}

int rc_event_team_parse(const char *text, size_t len, char *member, char *team, uint64_t *version)
{
    member[0] = team[0] = '\0';
    *version = 0;
    cJSON *o = rc_event_team_is(text, len) ? cJSON_ParseWithLength(text, len) : NULL;
    if (!o)
        return RC_E_BAD_REQUEST;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "team_of");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "team");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "v");
    int bad = !cJSON_IsString(m) || !rc_names_member_name_valid(m->valuestring, strlen(m->valuestring)) ||
              !(cJSON_IsNull(t) || (cJSON_IsString(t) && rc_names_member_name_valid(t->valuestring, strlen(t->valuestring)))) ||
              (v && (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 9007199254740992.0 ||
                     v->valuedouble != (double)(uint64_t)v->valuedouble));
    if (!bad) {
        strcpy(member, m->valuestring);
        if (cJSON_IsString(t))
            strcpy(team, t->valuestring);
        if (v)
            *version = (uint64_t)v->valuedouble;
    }
    cJSON_Delete(o);
    return bad ? RC_E_BAD_REQUEST : 0;
}

enum rc_teamv rc_event_team_judge(uint64_t held, uint64_t read, uint64_t v)
{
    if (v == 0 || v == held + 1)
        return RC_TEAMV_APPLY;
    return v <= read ? RC_TEAMV_KNOWN : RC_TEAMV_READ;
}
