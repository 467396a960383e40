/* rc_proto_field.c - one job: reading one field of a client message: the
 * kinds of names (board, member, req, period, subscription) and their rules,
 * integers, objects; a present field must be exactly right. */
#include "rc_proto_int.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* ---- names ------------------------------------------------------------- */

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
    return len <= RC_SUB_MAX && rc_names_req_valid(s, len);
}

const struct rc_proto__name_rule rc_proto__board_rule = {
    rc_names_board_name_valid, RC_BOARD_MAX, "1.." XSTR(RC_BOARD_MAX) " characters of [A-Za-z0-9_.:-]"};
const struct rc_proto__name_rule rc_proto__member_rule = {
    rc_names_member_name_valid, RC_MEMBER_MAX,
    "1.." XSTR(RC_MEMBER_MAX) " characters of [A-Za-z0-9_.:@-]"};
const struct rc_proto__name_rule rc_proto__req_rule = {
    rc_names_req_valid, RC_REQ_MAX, "1.." XSTR(RC_REQ_MAX) " printable ASCII characters without spaces"};
const struct rc_proto__name_rule rc_proto__period_rule = {
    period_valid, RC_PERIOD_SEL_MAX, "1.." XSTR(RC_PERIOD_SEL_MAX) " characters of [A-Za-z0-9-]"};
const struct rc_proto__name_rule rc_proto__sub_rule = {
    sub_valid, RC_SUB_MAX, "1.." XSTR(RC_SUB_MAX) " printable ASCII characters without spaces"};

/* ---- fields ------------------------------------------------------------ */

/* Looks key up in obj (case-sensitive). Sets *item to it, or NULL when
 * absent. A key given twice is refused: which copy wins is undefined in JSON,
 * and a proxy in front of us might have read the other one (the gate refuses
 * it first; this keeps rc_proto__field() safe on any tree). The item is borrowed from
 * obj. label names the field in messages ("view.top"). */
int rc_proto__field(const cJSON *obj, const char *key, const char *label, const cJSON **item,
                 struct rc_error *err)
{
    const cJSON *found = NULL;

    for (const cJSON *c = obj->child; c; c = c->next) {
        if (!c->string || strcmp(c->string, key) != 0)
            continue;
        if (found) {
            *item = NULL;
            return rc_err_set(err, RC_E_BAD_REQUEST, "duplicate field %s", label);
        }
        found = c;
    }
    *item = found;
    return 0;
}

/* rc_proto__field() for a field the op requires. */
int rc_proto__need(const cJSON *obj, const char *key, const char *label, const cJSON **item,
                struct rc_error *err)
{
    int rc = rc_proto__field(obj, key, label, item, err);
    if (rc < 0)
        return rc;
    if (!*item)
        return rc_err_set(err, RC_E_BAD_REQUEST, "missing field %s", label);
    return 0;
}

/* Copies the string item into dst[0..rule->max] after checking it against
 * rule. */
int rc_proto__copy_name(const cJSON *item, const char *label, const struct rc_proto__name_rule *rule,
                     char *dst, struct rc_error *err)
{
    size_t len;

    if (!cJSON_IsString(item) || !item->valuestring)
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s must be a string", label);
    len = strlen(item->valuestring);
    if (len > rule->max || !rule->valid(item->valuestring, len))
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s must be %s", label, rule->rule);
    memcpy(dst, item->valuestring, len + 1);
    return 0;
}

/* Reads obj[key] as a name of the given rule into dst. An absent optional
 * name leaves dst as it is (the caller zeroed it: ""). */
int rc_proto__read_name(const cJSON *obj, const char *key, const char *label, int required,
                     const struct rc_proto__name_rule *rule, char *dst, struct rc_error *err)
{
    const cJSON *item;
    int rc = required ? rc_proto__need(obj, key, label, &item, err) : rc_proto__field(obj, key, label, &item, err);

    if (rc < 0 || !item)
        return rc;
    return rc_proto__copy_name(item, label, rule, dst, err);
}

/* The item as an integer that JavaScript clients read exactly: finite,
 * within +-(2^53 - 1) and integral. The range test comes before the cast so
 * the cast is always defined. */
int rc_proto__as_int(const cJSON *item, const char *label, int64_t *v, struct rc_error *err)
{
    double d;

    if (!cJSON_IsNumber(item))
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s must be an integer", label);
    d = item->valuedouble;
    if (!isfinite(d))
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s must be a finite number", label);
    if (d > (double)RC_SAFE_INT_MAX || d < -(double)RC_SAFE_INT_MAX)
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s is beyond ±%lld", label,
                            (long long)RC_SAFE_INT_MAX);
    if (d != (double)(int64_t)d)
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s must be an integer", label);
    *v = (int64_t)d;
    return 0;
}

/* Reads obj[key] as an integer in lo..hi. An absent optional field leaves
 * *v untouched, so callers preset the default. */
int rc_proto__read_int(const cJSON *obj, const char *key, const char *label, int required,
                    int64_t lo, int64_t hi, int64_t *v, struct rc_error *err)
{
    const cJSON *item;
    int64_t x;
    int rc = required ? rc_proto__need(obj, key, label, &item, err) : rc_proto__field(obj, key, label, &item, err);

    if (rc < 0 || !item)
        return rc;
    if ((rc = rc_proto__as_int(item, label, &x, err)) < 0)
        return rc;
    if (x < lo || x > hi)
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s must be %" PRId64 "..%" PRId64, label,
                            lo, hi);
    *v = x;
    return 0;
}

/* Reads a required object-valued field. */
int rc_proto__need_object(const cJSON *obj, const char *key, const cJSON **item,
                       struct rc_error *err)
{
    int rc = rc_proto__need(obj, key, key, item, err);
    if (rc < 0)
        return rc;
    if (!cJSON_IsObject(*item))
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s must be an object", key);
    return 0;
}

int rc_proto__decode_steps(const cJSON *msg, int64_t *steps, struct rc_error *err)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(msg, "steps");
    *steps = 1;
    if (!s)
        return 0;
    if (cJSON_IsString(s) && strcmp(s->valuestring, "all") == 0) {
        *steps = RC_STEPS_ALL;
        return 0;
    }
    if (!cJSON_IsNumber(s) || !(s->valuedouble >= 1) || s->valuedouble > (double)RC_SAFE_INT_MAX ||
        s->valuedouble != floor(s->valuedouble))
        return rc_err_set(err, RC_E_BAD_REQUEST, "steps must be a whole number from 1, or \"all\"");
    *steps = (int64_t)s->valuedouble;
    return 0;
}
