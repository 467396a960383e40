/* rc_period.c - period ids and boundaries for periodic boards.
 *
 * Calendar periods (hour, day, week, month, year) are worked out in local time,
 * that is UTC plus the spec's fixed offset, on the proleptic Gregorian calendar,
 * then shifted back to UTC. All arithmetic is int64 with floor division, so
 * instants before 1970 and negative offsets land in the right period.
 *
 * Range: calendar periods exist for years 0001..9999 only. For weeks the year
 * is the ISO week-year, so 0001-W01 starts on 0001-01-01 (a Monday) and
 * 9999-W52 runs on into 10000-01-02. CUSTOM periods exist while their index,
 * start and end all fit in int64. rc_period_at answers RC_E_OUT_OF_RANGE
 * outside these; rc_period_parse answers RC_E_BAD_REQUEST (no such id).
 *
 * NONE (all-time boards) has exactly one period, whatever the instant: id "",
 * start_ms 0, end_ms INT64_MAX. It has no previous or next period, so prev,
 * next and the "previous" selector answer RC_E_BAD_REQUEST for it.
 *
 * Every function validates all its arguments before writing to *out, writes
 * *out only on success, and allows out to alias its period argument.
 */
#include "rc_period.h"

#include <stddef.h>
#include <string.h>

#include "rc_err.h"

#define MS_PER_HOUR INT64_C(3600000)
#define MS_PER_DAY INT64_C(86400000)
#define MAX_OFFSET_S (14 * 3600)
#define YEAR_MIN 1
#define YEAR_MAX 9999

/* C division truncates toward zero; periods need floor (b > 0). */
static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if (a % b < 0)
        q--;
    return q;
}

static int64_t floor_mod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

/* Two's-complement bits back to int64 without relying on the
 * implementation-defined conversion of out-of-range unsigned values. */
static int64_t u2i(uint64_t u)
{
    return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(UINT64_MAX - u) - 1;
}

/* Hinnant's days_from_civil. Exact for any y with |y| < 10^16 (negative years
 * included); m must be 1..12 and d 1..31 (d is not checked against m). */
int64_t rc_period_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;                            /* [0, 399] */
    int64_t mp = m > 2 ? (int64_t)m - 3 : (int64_t)m + 9;   /* March = 0 */
    int64_t doy = (153 * mp + 2) / 5 + (int64_t)d - 1;      /* [0, 365] */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;    /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

/* Hinnant's civil_from_days, for every int64 z. The original adds 719468
 * (days from 0000-03-01 to 1970-01-01) before splitting z into 400-year eras;
 * we split first (719468 = 4 * 146097 + 135080) so nothing can overflow. */
void rc_period_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    int64_t era = floor_div(z, 146097) + 4;
    int64_t doe = floor_mod(z, 146097) + 135080;
    if (doe >= 146097) {
        doe -= 146097;
        era++;
    }
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);              /* [0, 365] */
    int64_t mp = (5 * doy + 2) / 153;                                    /* [0, 11] */
    unsigned mm = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    *m = mm;
    *y = yoe + era * 400 + (mm <= 2);
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int64_t days_in_month(int64_t y, int64_t m)
{
    static const unsigned char len[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : len[m - 1];
}

/* ISO weekday with Monday = 0; 1970-01-01 (day 0) was a Thursday. */
static int64_t weekday(int64_t z)
{
    return floor_mod(z + 3, 7);
}

/* Week 1 of an ISO week-year is the week holding January 4th. */
static int64_t week1_monday(int64_t y)
{
    int64_t jan4 = rc_period_days_from_civil(y, 1, 4);
    return jan4 - weekday(jan4);
}

static int64_t weeks_in_year(int64_t y)
{
    return (week1_monday(y + 1) - week1_monday(y)) / 7;
}

static int spec_valid(const struct rc_period_spec *spec)
{
    if (!spec)
        return 0;
    switch (spec->kind) {
    case RC_PERIOD_NONE:
        return 1;
    case RC_PERIOD_HOUR:
    case RC_PERIOD_DAY:
    case RC_PERIOD_WEEK:
    case RC_PERIOD_MONTH:
    case RC_PERIOD_YEAR:
        return spec->utc_offset_s >= -MAX_OFFSET_S && spec->utc_offset_s <= MAX_OFFSET_S;
    case RC_PERIOD_CUSTOM:
        return spec->length_ms > 0;
    }
    return 0;
}

/* Writes v (>= 0) as exactly width zero-padded digits; returns the end. */
static char *put_digits(char *p, int64_t v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        p[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return p + width;
}

/* Reads exactly n ASCII digits: no sign, no spaces. Returns 1 if they were. */
static int get_digits(const char *s, int n, int64_t *out)
{
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

/* A calendar period from its local bounds. Callers pass years 1..9999, so
 * nothing here can overflow. */
static void local_period(const struct rc_period_spec *spec, int64_t start_local_ms,
                         int64_t end_local_ms, struct rc_period *out)
{
    int64_t off_ms = (int64_t)spec->utc_offset_s * 1000;
    out->start_ms = start_local_ms - off_ms;
    out->end_ms = end_local_ms - off_ms;
}

/* Builds the calendar period named by its fields, which the caller has
 * checked (year 1..9999, a real date, hour 0..23, a week the year has). */
static void make_calendar(const struct rc_period_spec *spec, int64_t y, int64_t m, int64_t d,
                          int64_t h, int64_t w, struct rc_period *out)
{
    char *p = put_digits(out->id, y, 4);
    int64_t day;

    switch (spec->kind) {
    case RC_PERIOD_HOUR:
        day = rc_period_days_from_civil(y, (unsigned)m, (unsigned)d);
        local_period(spec, day * MS_PER_DAY + h * MS_PER_HOUR,
                     day * MS_PER_DAY + (h + 1) * MS_PER_HOUR, out);
        *p++ = '-';
        p = put_digits(p, m, 2);
        *p++ = '-';
        p = put_digits(p, d, 2);
        *p++ = 'T';
        p = put_digits(p, h, 2);
        break;
    case RC_PERIOD_DAY:
        day = rc_period_days_from_civil(y, (unsigned)m, (unsigned)d);
        local_period(spec, day * MS_PER_DAY, (day + 1) * MS_PER_DAY, out);
        *p++ = '-';
        p = put_digits(p, m, 2);
        *p++ = '-';
        p = put_digits(p, d, 2);
        break;
    case RC_PERIOD_WEEK:
        day = week1_monday(y) + (w - 1) * 7;
        local_period(spec, day * MS_PER_DAY, (day + 7) * MS_PER_DAY, out);
        *p++ = '-';
        *p++ = 'W';
        p = put_digits(p, w, 2);
        break;
    case RC_PERIOD_MONTH:
        local_period(spec, rc_period_days_from_civil(y, (unsigned)m, 1) * MS_PER_DAY,
                     rc_period_days_from_civil(y + (m == 12), m == 12 ? 1u : (unsigned)m + 1, 1) *
                         MS_PER_DAY,
                     out);
        *p++ = '-';
        p = put_digits(p, m, 2);
        break;
    case RC_PERIOD_YEAR:
        local_period(spec, rc_period_days_from_civil(y, 1, 1) * MS_PER_DAY,
                     rc_period_days_from_civil(y + 1, 1, 1) * MS_PER_DAY, out);
        break;
    case RC_PERIOD_NONE:
    case RC_PERIOD_CUSTOM:
        break; /* not calendar kinds; never called with them */
    }
    *p = '\0';
}

/* Finds the local date of t_ms, then the calendar fields of its period. The
 * offset is added with an overflow check because t_ms comes from outside. */
static int calendar_at(const struct rc_period_spec *spec, int64_t t_ms, struct rc_period *out)
{
    int64_t off_ms = (int64_t)spec->utc_offset_s * 1000;
    if ((off_ms > 0 && t_ms > INT64_MAX - off_ms) || (off_ms < 0 && t_ms < INT64_MIN - off_ms))
        return RC_E_OUT_OF_RANGE;

    int64_t local = t_ms + off_ms;
    int64_t z = floor_div(local, MS_PER_DAY);
    int64_t y, w = 1;
    unsigned m, d;

    if (spec->kind == RC_PERIOD_WEEK) {
        /* The week-year is the year of the week's Thursday. */
        int64_t monday = z - weekday(z);
        rc_period_civil_from_days(monday + 3, &y, &m, &d);
        if (y < YEAR_MIN || y > YEAR_MAX)
            return RC_E_OUT_OF_RANGE;
        w = (monday - week1_monday(y)) / 7 + 1;
    } else {
        rc_period_civil_from_days(z, &y, &m, &d);
        if (y < YEAR_MIN || y > YEAR_MAX)
            return RC_E_OUT_OF_RANGE;
    }
    make_calendar(spec, y, m, d, (local - z * MS_PER_DAY) / MS_PER_HOUR, w, out);
    return 0;
}

/* Writes v in decimal ("-1", "42"); buf holds RC_PERIOD_ID_MAX bytes, and
 * int64 needs at most 20 characters plus the NUL. */
static void put_i64(char *buf, int64_t v)
{
    char tmp[20];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *buf++ = '-';
    while (n)
        *buf++ = tmp[--n];
    *buf = '\0';
}

/* Period index -> bounds: start = base + index * length. Done on uint64
 * magnitudes so every int64 base, index and length is handled exactly, and
 * any result outside int64 is RC_E_OUT_OF_RANGE rather than overflow. */
static int custom_from_index(const struct rc_period_spec *spec, int64_t index,
                             struct rc_period *out)
{
    uint64_t len = (uint64_t)spec->length_ms;
    uint64_t mag = index >= 0 ? (uint64_t)index : (uint64_t)0 - (uint64_t)index;
    uint64_t base = (uint64_t)spec->base_ms;
    int64_t start;

    if (mag > UINT64_MAX / len)
        return RC_E_OUT_OF_RANGE;
    uint64_t prod = mag * len;
    if (index >= 0) {
        if (prod > (uint64_t)INT64_MAX - base) /* room above base */
            return RC_E_OUT_OF_RANGE;
        start = u2i(base + prod);
    } else {
        if (prod > base - (uint64_t)INT64_MIN) /* room below base */
            return RC_E_OUT_OF_RANGE;
        start = u2i(base - prod);
    }
    if (start > INT64_MAX - spec->length_ms)
        return RC_E_OUT_OF_RANGE;
    out->start_ms = start;
    out->end_ms = start + spec->length_ms;
    put_i64(out->id, index);
    return 0;
}

/* index = floor((t - base) / length), where t - base itself may not fit in
 * int64: work on its magnitude as uint64, which always fits. */
static int custom_at(const struct rc_period_spec *spec, int64_t t_ms, struct rc_period *out)
{
    uint64_t len = (uint64_t)spec->length_ms;
    int64_t index;

    if (t_ms >= spec->base_ms) {
        uint64_t q = ((uint64_t)t_ms - (uint64_t)spec->base_ms) / len;
        if (q > (uint64_t)INT64_MAX)
            return RC_E_OUT_OF_RANGE;
        index = (int64_t)q;
    } else {
        uint64_t mag = (uint64_t)spec->base_ms - (uint64_t)t_ms;
        uint64_t q = mag / len + (mag % len != 0); /* ceil; cannot wrap */
        if (q > (uint64_t)INT64_MAX + 1)
            return RC_E_OUT_OF_RANGE;
        index = u2i((uint64_t)0 - q);
    }
    return custom_from_index(spec, index, out);
}

int rc_period_at(const struct rc_period_spec *spec, int64_t t_ms, struct rc_period *out)
{
    struct rc_period p;
    int rc;

    if (!spec_valid(spec) || !out)
        return RC_E_BAD_REQUEST;
    switch (spec->kind) {
    case RC_PERIOD_NONE:
        p.start_ms = 0;
        p.end_ms = INT64_MAX;
        p.id[0] = '\0';
        rc = 0;
        break;
    case RC_PERIOD_CUSTOM:
        rc = custom_at(spec, t_ms, &p);
        break;
    default:
        rc = calendar_at(spec, t_ms, &p);
        break;
    }
    if (rc == 0)
        *out = p;
    return rc;
}

/* Neighbours are found through the instants just outside p, which is exact
 * for every kind because periods tile time. p is checked first: a period
 * that is not one of this spec's would otherwise yield a wrong neighbour. */
static int neighbour(const struct rc_period_spec *spec, const struct rc_period *p, int after,
                     struct rc_period *out)
{
    struct rc_period cur;

    if (!spec_valid(spec) || !p || !out || spec->kind == RC_PERIOD_NONE)
        return RC_E_BAD_REQUEST;
    if (rc_period_at(spec, p->start_ms, &cur) != 0 || cur.start_ms != p->start_ms ||
        cur.end_ms != p->end_ms)
        return RC_E_BAD_REQUEST;
    if (after)
        return rc_period_at(spec, p->end_ms, out);
    if (p->start_ms == INT64_MIN)
        return RC_E_OUT_OF_RANGE;
    return rc_period_at(spec, p->start_ms - 1, out);
}

int rc_period_prev(const struct rc_period_spec *spec, const struct rc_period *p,
                   struct rc_period *out)
{
    return neighbour(spec, p, 0, out);
}

int rc_period_next(const struct rc_period_spec *spec, const struct rc_period *p,
                   struct rc_period *out)
{
    return neighbour(spec, p, 1, out);
}

/* Canonical decimal only: optional '-', no '+', no leading zeros, no "-0",
 * and the value must fit in int64. */
static int parse_index(const char *s, int64_t *out)
{
    int neg = *s == '-';
    uint64_t limit, u = 0;

    if (neg)
        s++;
    if (!neg && s[0] == '0' && s[1] == '\0') {
        *out = 0;
        return 1;
    }
    if (*s < '1' || *s > '9')
        return 0;
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        unsigned dig = (unsigned)(*s - '0');
        if (u > (limit - dig) / 10)
            return 0;
        u = u * 10 + dig;
    }
    *out = neg ? u2i((uint64_t)0 - u) : (int64_t)u;
    return 1;
}

/* Fixed-width fields make the canonical form the only accepted one: the
 * length is checked exactly, then every field is digits and in range. */
static int calendar_parse(const struct rc_period_spec *spec, const char *id,
                          struct rc_period *out)
{
    size_t n = strlen(id);
    int64_t y, m = 1, d = 1, h = 0, w = 1;
    size_t want;

    switch (spec->kind) {
    case RC_PERIOD_HOUR: want = 13; break;  /* 2026-11-21T13 */
    case RC_PERIOD_DAY: want = 10; break;   /* 2026-11-21 */
    case RC_PERIOD_WEEK: want = 8; break;   /* 2026-W47 */
    case RC_PERIOD_MONTH: want = 7; break;  /* 2026-11 */
    default: want = 4; break;               /* 2026 */
    }
    if (n != want || !get_digits(id, 4, &y) || y < YEAR_MIN || y > YEAR_MAX)
        return RC_E_BAD_REQUEST;

    if (spec->kind == RC_PERIOD_WEEK) {
        if (id[4] != '-' || id[5] != 'W' || !get_digits(id + 6, 2, &w) || w < 1 ||
            w > weeks_in_year(y))
            return RC_E_BAD_REQUEST;
    } else if (spec->kind != RC_PERIOD_YEAR) {
        if (id[4] != '-' || !get_digits(id + 5, 2, &m) || m < 1 || m > 12)
            return RC_E_BAD_REQUEST;
        if (spec->kind != RC_PERIOD_MONTH &&
            (id[7] != '-' || !get_digits(id + 8, 2, &d) || d < 1 || d > days_in_month(y, m)))
            return RC_E_BAD_REQUEST;
        if (spec->kind == RC_PERIOD_HOUR &&
            (id[10] != 'T' || !get_digits(id + 11, 2, &h) || h > 23))
            return RC_E_BAD_REQUEST;
    }
    make_calendar(spec, y, m, d, h, w, out);
    return 0;
}

/* Every failure here means "this board has no such period", which is the
 * client's mistake: always RC_E_BAD_REQUEST, even for a well-formed custom
 * index whose bounds would not fit in int64. */
int rc_period_parse(const struct rc_period_spec *spec, const char *id, struct rc_period *out)
{
    struct rc_period p;
    int64_t index;

    if (!spec_valid(spec) || !id || !out)
        return RC_E_BAD_REQUEST;
    switch (spec->kind) {
    case RC_PERIOD_NONE:
        if (id[0] != '\0')
            return RC_E_BAD_REQUEST;
        p.start_ms = 0;
        p.end_ms = INT64_MAX;
        p.id[0] = '\0';
        break;
    case RC_PERIOD_CUSTOM:
        if (!parse_index(id, &index) || custom_from_index(spec, index, &p) != 0)
            return RC_E_BAD_REQUEST;
        break;
    default:
        if (calendar_parse(spec, id, &p) != 0)
            return RC_E_BAD_REQUEST;
        break;
    }
    *out = p;
    return 0;
}

int rc_period_select(const struct rc_period_spec *spec, const char *selector, int64_t now_ms,
                     struct rc_period *out)
{
    struct rc_period cur;
    int rc;

    if (!selector || selector[0] == '\0' || strcmp(selector, "current") == 0)
        return rc_period_at(spec, now_ms, out);
    if (strcmp(selector, "previous") == 0) {
        if ((rc = rc_period_at(spec, now_ms, &cur)) != 0)
            return rc;
        return rc_period_prev(spec, &cur, out);
    }
    return rc_period_parse(spec, selector, out);
}

/* Upper bounds, not averages: the tie-break layout must fit the longest
 * period (31-day months, leap years). An invalid spec gets 0. */
int64_t rc_period_max_length_ms(const struct rc_period_spec *spec)
{
    if (!spec_valid(spec))
        return 0;
    switch (spec->kind) {
    case RC_PERIOD_NONE: return 0;
    case RC_PERIOD_HOUR: return MS_PER_HOUR;
    case RC_PERIOD_DAY: return MS_PER_DAY;
    case RC_PERIOD_WEEK: return 7 * MS_PER_DAY;
    case RC_PERIOD_MONTH: return 31 * MS_PER_DAY;
    case RC_PERIOD_YEAR: return 366 * MS_PER_DAY;
    case RC_PERIOD_CUSTOM: return spec->length_ms;
    }
    return 0;
}

static const char *const kind_names[] = {
    [RC_PERIOD_NONE] = "none",   [RC_PERIOD_HOUR] = "hour",   [RC_PERIOD_DAY] = "day",
    [RC_PERIOD_WEEK] = "week",   [RC_PERIOD_MONTH] = "month", [RC_PERIOD_YEAR] = "year",
    [RC_PERIOD_CUSTOM] = "custom",
};

#define KIND_COUNT (sizeof(kind_names) / sizeof(kind_names[0]))

int rc_period_kind_parse(const char *name, enum rc_period_kind *out)
{
    if (!name || !out)
        return RC_E_BAD_REQUEST;
    for (size_t i = 0; i < KIND_COUNT; i++) {
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (enum rc_period_kind)i;
            return 0;
        }
    }
    return RC_E_BAD_REQUEST;
}

/* Never NULL, so callers can print it directly; "unknown" for a value that
 * is not a kind. */
const char *rc_period_kind_name(enum rc_period_kind kind)
{
    if ((unsigned)kind >= KIND_COUNT)
        return "unknown";
    return kind_names[kind];
}
