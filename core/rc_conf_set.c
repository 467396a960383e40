/* rc_conf_set.c - one job: the key handlers for [server], [redis], [limits]
 * and [board] values: check a value against its key's rule, then store it. */
#include "rc_conf_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rc_err.h"
#include "rc_hostport.h"
#include "rc_names.h"
#include "rc_period.h"

/* ---------------------------------------------------------------------------
 * Key handlers: check the value, then store it at obj + k->off. Each names
 * its key and what is allowed when it refuses.
 * ------------------------------------------------------------------------ */


int rc_conf__set_string(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    size_t n = strlen(v);
    if (n >= RC_CONF_STR_MAX)
        return rc_conf__fail(p, p->lineno, "%s is too long (%zu bytes, at most %d)", k->name, n,
                             RC_CONF_STR_MAX - 1);
    memcpy(FIELD(char, obj, k), v, n + 1);
    return 0;
}

int rc_conf__set_listen(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (strlen(v) < RC_CONF_STR_MAX && !rc_conf__hostport_valid(v))
        return rc_conf__fail(p, p->lineno,
                             "%s must be HOST:PORT (or [IPv6]:PORT) with port 1..65535, got '%.60s'",
                    k->name, v);
    return rc_conf__set_string(p, k, obj, v);
}

/* One server, or the seed nodes of a cluster: "A:1,B:2,...", each entry
 * HOST:PORT or redis://HOST:PORT (spaces around the commas allowed). */
static int seeds_valid(const char *v)
{
    char one[RC_CONF_STR_MAX];
    struct rc_seed seeds[RC_SEEDS_MAX];
    size_t n;
    if (rc_hostport_split_seeds(v, seeds, RC_SEEDS_MAX, &n) != 0)
        return 0;
    for (const char *p = v;;) {
        while (*p == ' ')
            p++;
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len > 0 && p[len - 1] == ' ')
            len--;
        memcpy(one, p, len);
        one[len] = '\0';
        if (!rc_conf__hostport_valid(strncmp(one, "redis://", 8) == 0 ? one + 8 : one))
            return 0;
        if (!end)
            return 1;
        p = end + 1;
    }
}

int rc_conf__set_redis_address(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (strlen(v) < RC_CONF_STR_MAX && !seeds_valid(v))
        return rc_conf__fail(p, p->lineno,
                             "%s must be HOST:PORT or redis://HOST:PORT with port 1..65535, or a comma-separated "
                             "list of them (cluster seeds), got '%.60s'",
                    k->name, v);
    return rc_conf__set_string(p, k, obj, v);
}

int rc_conf__set_onoff(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {"off", "on"};
    int i = rc_conf__word_index(v, words, 2);
    if (i < 0)
        return rc_conf__fail(p, p->lineno, "%s must be on or off, got '%.40s'", k->name, v);
    *FIELD(int, obj, k) = i;
    return 0;
}

/* Checks a duration against [k->min, k->max]; shared by the duration keys. */
static int get_duration(struct parser *p, const struct key_spec *k, const char *v, int64_t *ms)
{
    char lo[32], hi[32];
    if (rc_conf_value_parse_duration_ms(v, ms) != 0 || *ms < k->min || *ms > k->max)
        return rc_conf__fail(p, p->lineno,
                             "%s must be a duration from %s to %s (a number and a unit: ms, s, m, h, d, "
                    "w), got '%.40s'",
                    k->name, rc_conf__fmt_dur(k->min, lo, sizeof lo), rc_conf__fmt_dur(k->max, hi, sizeof hi), v);
    return 0;
}

int rc_conf__set_duration(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    int64_t ms;
    int rc = get_duration(p, k, v, &ms);
    if (rc)
        return rc;
    *FIELD(int64_t, obj, k) = ms;
    return 0;
}

/* Idempotency markers are SET ... EX seconds: refuse what would be rounded. */
int rc_conf__set_whole_seconds(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    int64_t ms;
    int rc = get_duration(p, k, v, &ms);
    if (rc)
        return rc;
    if (ms % MS_S != 0)
        return rc_conf__fail(p, p->lineno, "%s must be whole seconds (e.g. 600s, 10m), got '%.40s'",
                             k->name, v);
    *FIELD(int64_t, obj, k) = ms;
    return 0;
}

int rc_conf__set_bytes(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    char lo[32], hi[32];
    int64_t n;
    if (rc_conf__parse_bytes(v, &n) != 0 || n < k->min || n > k->max)
        return rc_conf__fail(p, p->lineno,
                             "%s must be a byte count from %s to %s (k = KiB, m = MiB), got '%.40s'",
                    k->name, rc_conf__fmt_bytes(k->min, lo, sizeof lo), rc_conf__fmt_bytes(k->max, hi, sizeof hi), v);
    *FIELD(size_t, obj, k) = (size_t)n;
    return 0;
}

int rc_conf__set_unsigned(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    int64_t n;
    if (rc_conf_value_parse_int64(v, &n) != 0 || n < k->min || n > k->max)
        return rc_conf__fail(p, p->lineno, "%s must be an integer from %" PRId64 " to %" PRId64 ", got '%.40s'",
                             k->name, k->min, k->max, v);
    *FIELD(unsigned, obj, k) = (unsigned)n;
    return 0;
}

/* An integer in min..max, or "auto" (stored as 0: the gateway derives it). */
int rc_conf__set_unsigned_or_auto(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (strcmp(v, "auto") == 0) {
        *FIELD(unsigned, obj, k) = 0;
        return 0;
    }
    int64_t n;
    if (rc_conf_value_parse_int64(v, &n) != 0 || n < k->min || n > k->max)
        return rc_conf__fail(p, p->lineno, "%s must be auto or an integer from %" PRId64 " to %" PRId64 ", got '%.40s'",
                             k->name, k->min, k->max, v);
    *FIELD(unsigned, obj, k) = (unsigned)n;
    return 0;
}

int rc_conf__set_checkpoint_every(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (strcmp(v, "off") == 0) {
        *FIELD(unsigned, obj, k) = RC_CONF_CKPT_OFF;
        return 0;
    }
    if (strcmp(v, "auto") == 0 || (v[0] >= '0' && v[0] <= '9'))
        return rc_conf__set_unsigned_or_auto(p, k, obj, v);
    return rc_conf__fail(p, p->lineno, "%s must be auto, off or an integer from %" PRId64 " to %" PRId64
                         ", got '%.40s'", k->name, k->min, k->max, v);
}

int rc_conf__set_int64(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (rc_conf_value_parse_int64(v, FIELD(int64_t, obj, k)) != 0)
        return rc_conf__fail(p, p->lineno, "%s must be an integer (digits, optional '-'), got '%.40s'",
                             k->name, v);
    return 0;
}

int rc_conf__set_timestamp(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (rc_conf_value_parse_timestamp_ms(v, FIELD(int64_t, obj, k)) != 0)
        return rc_conf__fail(p, p->lineno,
                             "%s must be a timestamp YYYY-MM-DDTHH:MM:SSZ (or +HH:MM instead of Z) on a real "
                    "date, got '%.40s'",
                    k->name, v);
    return 0;
}

int rc_conf__set_utc_offset(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (rc_conf_value_parse_utc_offset(v, FIELD(int32_t, obj, k)) != 0)
        return rc_conf__fail(p, p->lineno, "%s must be +HH:MM or -HH:MM within -14:00..+14:00, got '%.40s'",
                             k->name, v);
    return 0;
}

int rc_conf__set_order(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {[RC_ORDER_DESC] = "desc", [RC_ORDER_ASC] = "asc"};
    int i = rc_conf__word_index(v, words, 2);
    if (i < 0)
        return rc_conf__fail(p, p->lineno, "%s must be desc or asc, got '%.40s'", k->name, v);
    *FIELD(enum rc_order, obj, k) = (enum rc_order)i;
    return 0;
}

int rc_conf__set_tiebreak(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {
        [RC_TB_EARLIEST] = "earliest", [RC_TB_LATEST] = "latest", [RC_TB_NONE] = "none",
        [RC_TB_ARRIVAL] = "arrival"};
    int i = rc_conf__word_index(v, words, 4);
    if (i < 0)
        return rc_conf__fail(p, p->lineno, "%s must be earliest, latest, arrival or none, got '%.40s'", k->name,
                             v);
    *FIELD(enum rc_tiebreak, obj, k) = (enum rc_tiebreak)i;
    return 0;
}

int rc_conf__set_submit_mode(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {[RC_SUBMIT_REPLACE] = "replace", [RC_SUBMIT_BEST] = "best"};
    int i = rc_conf__word_index(v, words, 2);
    if (i < 0)
        return rc_conf__fail(p, p->lineno, "%s must be replace or best, got '%.40s'", k->name, v);
    *FIELD(enum rc_submit_mode, obj, k) = (enum rc_submit_mode)i;
    return 0;
}

int rc_conf__set_write_mode(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {[RC_WRITE_DIRECT] = "direct", [RC_WRITE_QUEUED] = "queued"};
    int i = rc_conf__word_index(v, words, 2);
    if (i < 0)
        return rc_conf__fail(p, p->lineno, "%s must be direct or queued, got '%.40s'", k->name, v);
    *FIELD(enum rc_write_mode, obj, k) = (enum rc_write_mode)i;
    return 0;
}

int rc_conf__set_history(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {"capped", "full"};
    int i = rc_conf__word_index(v, words, 2);
    if (i < 0)
        return rc_conf__fail(p, p->lineno, "%s must be capped or full, got '%.40s'", k->name, v);
    *FIELD(int, obj, k) = i;
    return 0;
}

int rc_conf__set_decay(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {
        [RC_DECAY_NONE] = "none", [RC_DECAY_BUCKETS] = "buckets", [RC_DECAY_SCALE] = "scale"};
    int i = rc_conf__word_index(v, words, 3);
    if (i < 0)
        return rc_conf__fail(p, p->lineno, "%s must be none, buckets or scale, got '%.40s'", k->name, v);
    *FIELD(enum rc_decay, obj, k) = (enum rc_decay)i;
    return 0;
}

int rc_conf__set_weighting(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {[RC_WEIGHT_LINEAR] = "linear", [RC_WEIGHT_HALFLIFE] = "halflife"};
    int i = rc_conf__word_index(v, words, 2);
    if (i < 0)
        return rc_conf__fail(p, p->lineno, "%s must be linear or halflife, got '%.40s'", k->name, v);
    *FIELD(enum rc_weighting, obj, k) = (enum rc_weighting)i;
    return 0;
}

int rc_conf__set_period(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (rc_period_kind_parse(v, FIELD(enum rc_period_kind, obj, k)) != 0)
        return rc_conf__fail(p, p->lineno,
                             "%s must be none, hour, day, week, month, year or custom, got '%.40s'", k->name, v);
    return 0;
}

int rc_conf__set_scale_factor(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    double f;
    if (rc_conf__parse_decimal(v, &f) != 0 || !(f > 0.0 && f < 1.0))
        return rc_conf__fail(p, p->lineno, "%s must be a decimal between 0 and 1 (exclusive), got '%.40s'",
                             k->name, v);
    *FIELD(double, obj, k) = f;
    return 0;
}

int rc_conf__set_ops(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {"incr", "set", "best", "submit"};
    static const unsigned flags[] = {RC_OPF_INCR, RC_OPF_SET, RC_OPF_BEST, RC_OPF_SUBMIT};
    char buf[CONF_LINE_MAX + 1];
    unsigned ops = 0;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *rest = buf; rest;) {
        char *item = rc_conf__next_item(&rest);
        int i = rc_conf__word_index(item, words, 4);
        if (!*item)
            return rc_conf__fail(p, p->lineno, "%s has an empty item in '%.40s'", k->name, v);
        if (i < 0)
            return rc_conf__fail(p, p->lineno,
                                 "%s must be a comma list of incr, set, best, submit, got '%.40s'", k->name,
                        item);
        if (ops & flags[i])
            return rc_conf__fail(p, p->lineno, "%s lists '%s' twice", k->name, words[i]);
        ops |= flags[i];
    }
    *FIELD(unsigned, obj, k) = ops;
    return 0;
}

/* fields = name dir bits, name dir bits, ... -> layout.fields[], in rank
 * order (the first field weighs most). */
int rc_conf__set_fields(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    struct rc_layout *l = FIELD(struct rc_layout, obj, k);
    char buf[CONF_LINE_MAX + 1];
    unsigned n = 0;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *rest = buf; rest;) {
        char *item = rc_conf__next_item(&rest), *tok[4] = {0};
        int ntok = 0;
        for (char *q = item; *q && ntok < 4;) {
            tok[ntok++] = q;
            while (*q && !is_blank(*q))
                q++;
            if (*q)
                *q++ = '\0';
            while (is_blank(*q))
                q++;
        }
        if (ntok != 3)
            return rc_conf__fail(p, p->lineno,
                                 "%s must list 'name desc|asc bits' items separated by commas, got '%.60s'",
                        k->name, v);
        if (n == RC_MAX_FIELDS)
            return rc_conf__fail(p, p->lineno, "%s: at most %d fields", k->name, RC_MAX_FIELDS);
        if (!rc_names_field_name_valid(tok[0], strlen(tok[0])))
            return rc_conf__fail(p, p->lineno,
                                 "%s: bad field name '%.40s' (1..%d of a-z 0-9 _, starting with a letter)",
                        k->name, tok[0], RC_FIELD_NAME_MAX);
        for (unsigned i = 0; i < n; i++)
            if (strcmp(l->fields[i].name, tok[0]) == 0)
                return rc_conf__fail(p, p->lineno, "%s: field '%s' appears twice", k->name, tok[0]);
        int asc = strcmp(tok[1], "asc") == 0;
        if (!asc && strcmp(tok[1], "desc") != 0)
            return rc_conf__fail(p, p->lineno, "%s: field %s: direction must be desc or asc, got '%.20s'",
                                 k->name, tok[0], tok[1]);
        int64_t bits;
        if (rc_conf_value_parse_int64(tok[2], &bits) != 0 || bits < 1 || bits > 52)
            return rc_conf__fail(p, p->lineno, "%s: field %s: bits must be an integer from 1 to 52, got '%.20s'",
                                 k->name, tok[0], tok[2]);
        memcpy(l->fields[n].name, tok[0], strlen(tok[0]) + 1);
        l->fields[n].ascending = asc;
        l->fields[n].bits = (unsigned)bits;
        n++;
    }
    l->nfields = n;
    return 0;
}
