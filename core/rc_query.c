/* rc_query.c - query string to request mapping (rc_query.h). */
#include "rc_query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_members.h"
#include "rc_names.h"

const char *rc_query_get(const struct rc_query *q, const char *name)
{
    size_t nlen = strlen(name);
    for (size_t i = 0; q && i < q->n; i++) {
        const char *f = q->args[i];
        if (f && strncmp(f, name, nlen) == 0 && f[nlen] == '=')
            return f + nlen + 1;
    }
    return NULL;
}

int rc_query_check(const struct rc_query *q, struct rc_error *err)
{
    for (size_t i = 0; q && i < q->n; i++) {
        const char *a = q->args[i];
        if (!a || strlen(a) <= RC_QUERY_VALUE_MAX)
            continue;
        /* a member list takes up to RC_MEMBERS_QUERY_MAX bytes (v1.2) */
        if (strncmp(a, "members=", 8) != 0)
            return rc_err_set(err, RC_E_BAD_REQUEST, "a query argument is too long");
        if (strlen(a + 8) > RC_MEMBERS_QUERY_MAX)
            return rc_err_set(err, RC_E_TOO_LARGE, "members is over %d bytes (percent-decoded)",
                                RC_MEMBERS_QUERY_MAX);
    }
    const char *period = rc_query_get(q, "period");
    if (period && strlen(period) > RC_PERIOD_SEL_MAX)
        return rc_err_set(err, RC_E_BAD_REQUEST, "period is too long");
    return 0;
}

/* A query integer in lo..hi: digits only. Returns 0, 1 when absent, -1 bad. */
static int get_int(const struct rc_query *q, const char *name, long lo, long hi, uint32_t *out)
{
    const char *v = rc_query_get(q, name);
    if (!v)
        return 1;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (*v < '0' || *v > '9' || *end || errno || n < lo || n > hi)
        return -1;
    *out = (uint32_t)n;
    return 0;
}

/* A safe integer 0..2^53-1 of digits only: 0 or -1. */
static int get_int64(const char *v, int64_t *out)
{
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (*v < '0' || *v > '9' || *end || errno || n > 9007199254740991LL)
        return -1;
    *out = (int64_t)n;
    return 0;
}

int rc_query_history(const struct rc_query *q, struct rc_request *r, struct rc_error *err)
{
    const char *names[] = {"from", "to", "step"};
    int64_t *dst[] = {&r->from_ms, &r->to_ms, &r->step_ms};
    for (int i = 0; i < 3; i++) {
        const char *v = rc_query_get(q, names[i]);
        if (!v || get_int64(v, dst[i]) != 0)
            return rc_err_set(err, RC_E_BAD_REQUEST, "%s is required: an integer (ms)", names[i]);
    }
    const char *live = rc_query_get(q, "live");
    r->view.live = live && (strcmp(live, "1") == 0 || strcmp(live, "true") == 0);
    r->op = RC_OP_HISTORY;
    return rc_proto_at_check_history(r, err);
}

int rc_query_view(const struct rc_query *q, struct rc_request *r, struct rc_error *err)
{
    uint32_t top_n = 0, offset_n = 0, limit_n = 0;
    int top = get_int(q, "top", 1, RC_VIEW_MAX_ROWS, &top_n);
    int offset = get_int(q, "offset", 0, 2147483647L, &offset_n);
    int limit = get_int(q, "limit", 1, RC_VIEW_MAX_ROWS, &limit_n);
    const char *around = rc_query_get(q, "around");
    const char *members = rc_query_get(q, "members");
    const char *team = rc_query_get(q, "team");
    if (top < 0 || offset < 0 || limit < 0)
        return rc_err_set(err, RC_E_BAD_REQUEST, "top and limit must be integers 1..%d, offset 0..2147483647",
                            RC_VIEW_MAX_ROWS);
    if (team) { /* a roster (PROTOCOL v1.2, docs/teams.md) */
        if (!rc_names_member_name_valid(team, strlen(team)))
            return rc_err_set(err, RC_E_BAD_REQUEST, "team must be a team id (member name rules)");
        r->view.kind = RC_VIEW_TEAM;
        snprintf(r->view.around, sizeof r->view.around, "%s", team);
    } else if (members) {
        if (strlen(members) > RC_MEMBERS_QUERY_MAX)
            return rc_err_set(err, RC_E_TOO_LARGE, "members is over %d bytes (percent-decoded)",
                                RC_MEMBERS_QUERY_MAX);
        free(r->view.members);
        r->view.members = NULL;
        int rc = rc_members_pack_csv(members, &r->view.members, &r->view.nmembers, &r->view.members_len, err);
        if (rc)
            return rc;
        r->view.kind = RC_VIEW_MEMBERS;
    } else if (top == 0) {
        r->view.kind = RC_VIEW_TOP;
        r->view.limit = top_n;
        r->view.offset = offset == 0 ? offset_n : r->view.offset;
    } else if (around) {
        if (!rc_names_member_name_valid(around, strlen(around)))
            return rc_err_set(err, RC_E_BAD_REQUEST, "around must be a member name");
        r->view.kind = RC_VIEW_AROUND;
        snprintf(r->view.around, sizeof r->view.around, "%s", around);
        r->view.radius = 5;
        if (offset == 0)
            r->view.offset = offset_n;
        if (limit == 0)
            r->view.limit = limit_n;
        if (get_int(q, "radius", 0, RC_VIEW_MAX_RADIUS, &r->view.radius) < 0)
            return rc_err_set(err, RC_E_BAD_REQUEST, "radius must be an integer 0..%d", RC_VIEW_MAX_RADIUS);
    } else if (offset == 0 || limit == 0) {
        r->view.kind = RC_VIEW_PAGE;
        r->view.offset = offset == 0 ? offset_n : 0;
        r->view.limit = limit == 0 ? limit_n : 10;
    } else {
        r->view.kind = RC_VIEW_TOP;
        r->view.limit = 10;
    }
    const char *places = rc_query_get(q, "places");
    if (places && strcmp(places, "shared") != 0 && strcmp(places, "unique") != 0)
        return rc_err_set(err, RC_E_BAD_REQUEST, "places must be shared or unique");
    r->view.places = places && strcmp(places, "shared") == 0;
    const char *live = rc_query_get(q, "live"); /* v1.1: the live board through a freeze (admin) */
    if (live && strcmp(live, "1") != 0 && strcmp(live, "true") != 0 && strcmp(live, "0") != 0 &&
        strcmp(live, "false") != 0)
        return rc_err_set(err, RC_E_BAD_REQUEST, "live must be 1 or 0");
    r->view.live = live && (strcmp(live, "1") == 0 || strcmp(live, "true") == 0);
    const char *at_seq = rc_query_get(q, "at_seq"), *at = rc_query_get(q, "at");
    if (at_seq && at)
        return rc_err_set(err, RC_E_BAD_REQUEST, "name one moment: at_seq or at, not both");
    if (at_seq || at) { /* PROTOCOL v1.2: the board at a past moment (docs/history.md) */
        if (get_int64(at_seq ? at_seq : at, &r->at) != 0)
            return rc_err_set(err, RC_E_BAD_REQUEST, "%s must be an integer 0..9007199254740991",
                                at_seq ? "at_seq" : "at");
        r->at_kind = at_seq ? RC_AT_SEQ : RC_AT_TIME;
    }
    const char *period = rc_query_get(q, "period");
    if (period) {
        if (strlen(period) > RC_PERIOD_SEL_MAX)
            return rc_err_set(err, RC_E_BAD_REQUEST, "period is too long");
        snprintf(r->period, sizeof r->period, "%s", period);
    }
    return 0;
}

int rc_query_block(const struct rc_query *q)
{
    const char *block = rc_query_get(q, "block");
    return block && (!strcmp(block, "1") || !strcmp(block, "true"));
}
