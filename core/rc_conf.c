/* rc_conf.c - the config file parser.
 *
 * The parser is pure: it reads text[0..len) that the caller loaded (the text
 * need not be NUL-terminated) and fills a struct rc_conf. It never opens a
 * file, allocates, logs or keeps state between calls.
 *
 * Shape of a load:
 *   1. split the text into lines (LF or CRLF), refusing overlong lines and
 *      control bytes, and copy each into a bounded NUL-terminated buffer;
 *   2. a "[...]" line closes the open section (a board or an API key is
 *      checked as a whole at that point) and opens the next one;
 *   3. a "key = value" line is looked up in one table of {section, key,
 *      handler}; the handler checks the value and stores it;
 *   4. at the end of a [board] section, finish_board() fills the defaults that
 *      depend on other keys, refuses keys that do not apply to this kind of
 *      board, and calls rc_layout_finish() to prove the layout fits 53 bits;
 *      at the end of a [key] section, finish_key() checks that the key has
 *      exactly one secret source and its scopes.
 * The first problem fails the whole load with "FILE:LINE: reason"; errors found
 * when a board or key is finished carry the line of its header.
 *
 * API key secrets never appear in a message: errors are printed, logged and
 * pasted into tickets, so a message about a secret, or about a line of a
 * [key] section that might hold one, names the key and the rule, never the
 * offending text.
 */
#include "rc_conf.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rc_err.h"
#include "rc_names.h"
#include "rc_period.h"

#define CONF_LINE_MAX 1024 /* bytes per line, without the line ending */

#define MS_S INT64_C(1000)
#define MS_M (60 * MS_S)
#define MS_H (60 * MS_M)
#define MS_D (24 * MS_H)
#define MS_W (7 * MS_D)

#define KIB INT64_C(1024)
#define MIB (1024 * KIB)

#define MAX_BUCKETS 1000 /* hot board: window / bucket_span */

enum section {
    SEC_NONE = 0, /* before the first header: keys are refused */
    SEC_SERVER,
    SEC_REDIS,
    SEC_LIMITS,
    SEC_AUTH,
    SEC_BOARD,
    SEC_KEY,
    SEC_COUNT
};

/* One id per key, so a section can remember which keys it has seen (a bit
 * each) and on which line (for "repeated key" and cross-key messages). */
enum key_id {
    K_LISTEN, K_STATE_DIR, K_WEB_ROOT, K_TICK, K_ARCHIVE_PATH, K_TEST_CLOCK,
    K_ADDRESS, K_KEYSPACE_EVENTS, K_RECONNECT_MAX,
    K_MAX_FRAME, K_MAX_SUBS, K_MAX_CONNS, K_QUEUE_BYTES, K_MAX_CONNS_PER_IP, K_IDLE_TIMEOUT,
    K_ALLOWED_ORIGINS, K_TLS_CERT, K_TLS_KEY,
    K_CONN_WRITE_RATE, K_CONN_WRITE_BURST, K_KEY_WRITE_RATE, K_KEY_WRITE_BURST,
    K_HEADER_TIMEOUT, K_BODY_TIMEOUT, K_MAX_PENDING, K_CONN_READ_RATE, K_CONN_READ_BURST,
    K_IP_READ_RATE, K_IP_READ_BURST, K_MAX_BOARDS,
    K_READS,
    K_SECRET, K_SECRET_ENV, K_SCOPES, K_BOARDS,
    K_ORDER, K_OPS, K_SUBMIT_MODE, K_POINTS_MIN, K_POINTS_MAX, K_FIELDS,
    K_TIEBREAK, K_TB_RESOLUTION, K_TB_HORIZON, K_TB_BASE,
    K_PERIOD, K_UTC_OFFSET, K_PERIOD_BASE, K_PERIOD_LENGTH, K_KEEP,
    K_DECAY, K_BUCKET_SPAN, K_WINDOW, K_WEIGHTING, K_HALF_LIFE, K_REBUILD_EVERY,
    K_RESULT_TTL, K_SCALE_FACTOR, K_SCALE_EVERY,
    K_IDEMPOTENCY, K_LOG_CAP,
    K_COUNT
};

_Static_assert(K_COUNT <= 64, "seen mask is a uint64_t");

/* Everything one load needs; lives on rc_conf_parse's stack. */
struct parser {
    const char *file;         /* borrowed, for messages */
    struct rc_conf *c;
    struct rc_error *err;
    int lineno;               /* 1-based line being read */
    enum section sec;         /* open section */
    int sec_line[SEC_COUNT];  /* header line of [server], [redis], [limits], [auth]; 0 = not yet */
    struct rc_board *board;   /* open [board] section, else NULL */
    struct rc_key *key;       /* open [key] section, else NULL */
    uint64_t seen;            /* keys given in the open section, bit per key_id */
    int key_line[K_COUNT];    /* where each seen key was given */
};

struct key_spec;
typedef int key_setter(struct parser *p, const struct key_spec *k, void *obj, const char *v);

/* A row of the key table. obj + off is where the value goes; obj is the
 * rc_conf for [server]/[redis]/[limits]/[auth], the rc_board for [board] and
 * the rc_key for [key]. */
struct key_spec {
    enum section sec;
    enum key_id id;
    const char *name;
    key_setter *set;
    size_t off;
    int64_t min, max; /* numeric keys: inclusive range */
};

#define SEEN(p, id) (((p)->seen >> (id)) & 1u)

/* ---------------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------------ */

/* Fails the load: err->msg = "FILE:LINE: reason". Always RC_E_BAD_REQUEST. */
static int fail(struct parser *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct parser *p, int line, const char *fmt, ...)
{
    char reason[RC_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return rc_error_set(p->err, RC_E_BAD_REQUEST, "%s:%d: %s", p->file, line, reason);
}

/* "90s", "24h", "1500ms": the largest unit that divides ms exactly. */
static const char *fmt_dur(int64_t ms, char *buf, size_t cap)
{
    static const struct { int64_t ms; const char *unit; } units[] = {
        {MS_W, "w"}, {MS_D, "d"}, {MS_H, "h"}, {MS_M, "m"}, {MS_S, "s"}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (ms != 0 && ms % units[i].ms == 0) {
            snprintf(buf, cap, "%" PRId64 "%s", ms / units[i].ms, units[i].unit);
            return buf;
        }
    }
    snprintf(buf, cap, "%" PRId64 "ms", ms);
    return buf;
}

/* "64k", "1m", "300": the byte form the config itself accepts. */
static const char *fmt_bytes(int64_t n, char *buf, size_t cap)
{
    if (n != 0 && n % MIB == 0)
        snprintf(buf, cap, "%" PRId64 "m", n / MIB);
    else if (n != 0 && n % KIB == 0)
        snprintf(buf, cap, "%" PRId64 "k", n / KIB);
    else
        snprintf(buf, cap, "%" PRId64, n);
    return buf;
}

/* The open section as written in the file: "[server]", "[board demo]". */
static const char *sec_label(const struct parser *p, char *buf, size_t cap)
{
    switch (p->sec) {
    case SEC_SERVER: return "[server]";
    case SEC_REDIS: return "[redis]";
    case SEC_LIMITS: return "[limits]";
    case SEC_AUTH: return "[auth]";
    case SEC_BOARD:
        snprintf(buf, cap, "[board %s]", p->board->name);
        return buf;
    case SEC_KEY:
        snprintf(buf, cap, "[key %s]", p->key->name);
        return buf;
    default: return "(no section)";
    }
}

/* ---------------------------------------------------------------------------
 * Value parsers (public ones first; they take NUL-terminated, trimmed text)
 * ------------------------------------------------------------------------ */

static int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

/* Strict: optional '-', at least one digit, nothing else, no overflow.
 * *out is written only on success. */
int rc_parse_int64(const char *s, int64_t *out)
{
    if (!s || !out)
        return RC_E_BAD_REQUEST;
    int neg = *s == '-';
    if (neg)
        s++;
    if (!is_digit(*s))
        return RC_E_BAD_REQUEST;
    uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (; *s; s++) {
        if (!is_digit(*s))
            return RC_E_BAD_REQUEST;
        unsigned d = (unsigned)(*s - '0');
        if (v > (lim - d) / 10)
            return RC_E_BAD_REQUEST;
        v = v * 10 + d;
    }
    if (neg)
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    else
        *out = (int64_t)v;
    return 0;
}

/* Unsigned digits then an optional suffix, for durations and byte sizes.
 * Returns the suffix (possibly "") or NULL on no digits / overflow. */
static const char *parse_count(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!is_digit(*s))
        return NULL;
    for (; is_digit(*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > ((uint64_t)INT64_MAX - d) / 10)
            return NULL;
        v = v * 10 + d;
    }
    *out = v;
    return s;
}

/* "<digits><unit>", unit ms|s|m|h|d|w ("m" is minutes). A bare number is
 * refused (is "5" seconds or ms?), so is 0 and anything past INT64_MAX ms. */
int rc_parse_duration_ms(const char *s, int64_t *out_ms)
{
    static const struct { const char *unit; int64_t ms; } units[] = {
        {"ms", 1}, {"s", MS_S}, {"m", MS_M}, {"h", MS_H}, {"d", MS_D}, {"w", MS_W}};
    uint64_t v;
    if (!s || !out_ms)
        return RC_E_BAD_REQUEST;
    const char *unit = parse_count(s, &v);
    if (!unit || v == 0)
        return RC_E_BAD_REQUEST;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(unit, units[i].unit) == 0) {
            if (v > (uint64_t)(INT64_MAX / units[i].ms))
                return RC_E_BAD_REQUEST;
            *out_ms = (int64_t)v * units[i].ms;
            return 0;
        }
    }
    return RC_E_BAD_REQUEST;
}

/* Exactly n digits at s (no sign); -1 when any is not a digit. */
static int64_t fixed_digits(const char *s, int n)
{
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* "+HH:MM" or "-HH:MM", within -14:00..+14:00 (the span real zones use). */
int rc_parse_utc_offset(const char *s, int32_t *out_s)
{
    if (!s || !out_s)
        return RC_E_BAD_REQUEST;
    if ((s[0] != '+' && s[0] != '-') || strlen(s) != 6 || s[3] != ':')
        return RC_E_BAD_REQUEST;
    int64_t h = fixed_digits(s + 1, 2), m = fixed_digits(s + 4, 2);
    if (h < 0 || m < 0 || m > 59)
        return RC_E_BAD_REQUEST;
    int64_t secs = h * 3600 + m * 60;
    if (secs > 14 * 3600)
        return RC_E_BAD_REQUEST;
    *out_s = (int32_t)(s[0] == '-' ? -secs : secs);
    return 0;
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* "YYYY-MM-DDTHH:MM:SSZ" or the same with "+HH:MM"/"-HH:MM" instead of Z:
 * the local time at that offset. Years 0001..9999, real calendar dates only
 * (2024-02-29 yes, 2023-02-29 no), no leap seconds. Result: UTC ms. */
int rc_parse_timestamp_ms(const char *s, int64_t *out_ms)
{
    static const unsigned mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (!s || !out_ms)
        return RC_E_BAD_REQUEST;
    size_t n = strlen(s);
    if (n < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
        return RC_E_BAD_REQUEST;
    int64_t y = fixed_digits(s, 4), mo = fixed_digits(s + 5, 2), d = fixed_digits(s + 8, 2);
    int64_t h = fixed_digits(s + 11, 2), mi = fixed_digits(s + 14, 2), sec = fixed_digits(s + 17, 2);
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 ||
        sec > 59)
        return RC_E_BAD_REQUEST;
    int64_t dim = mdays[mo - 1] + (mo == 2 && is_leap(y));
    if (d > dim)
        return RC_E_BAD_REQUEST;
    int32_t off = 0;
    if (n == 20) {
        if (s[19] != 'Z')
            return RC_E_BAD_REQUEST;
    } else if (n != 25 || rc_parse_utc_offset(s + 19, &off) != 0) {
        return RC_E_BAD_REQUEST;
    }
    int64_t days = rc_days_from_civil(y, (unsigned)mo, (unsigned)d);
    *out_ms = ((days * 86400 + h * 3600 + mi * 60 + sec) - off) * MS_S;
    return 0;
}

/* "<digits>" with an optional k (KiB) or m (MiB) suffix, either case. */
static int parse_bytes(const char *s, int64_t *out)
{
    uint64_t v;
    int64_t mult = 1;
    const char *suf = parse_count(s, &v);
    if (!suf)
        return RC_E_BAD_REQUEST;
    if (*suf == 'k' || *suf == 'K')
        mult = KIB;
    else if (*suf == 'm' || *suf == 'M')
        mult = MIB;
    else if (*suf)
        return RC_E_BAD_REQUEST;
    if (mult != 1 && suf[1])
        return RC_E_BAD_REQUEST;
    if (v > (uint64_t)(INT64_MAX / mult))
        return RC_E_BAD_REQUEST;
    *out = (int64_t)v * mult;
    return 0;
}

/* A plain decimal, digits with an optional fraction ("0.5", ".5", "1"); no
 * sign, no exponent. Computed by hand so the C locale's decimal point does not
 * matter. At most 18 significant digits. */
static int parse_decimal(const char *s, double *out)
{
    uint64_t mant = 0;
    int digits = 0, frac = 0, dot = 0;
    for (; *s; s++) {
        if (*s == '.' && !dot) {
            dot = 1;
            continue;
        }
        if (!is_digit(*s) || digits >= 18)
            return RC_E_BAD_REQUEST;
        mant = mant * 10 + (uint64_t)(*s - '0');
        digits++;
        frac += dot;
    }
    if (digits == 0)
        return RC_E_BAD_REQUEST;
    double v = (double)mant;
    while (frac-- > 0)
        v /= 10.0;
    *out = v;
    return 0;
}

static int host_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || is_digit(ch) || ch == '.' ||
           ch == '-' || ch == '_';
}

static int ip6_char(char ch)
{
    return (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F') || is_digit(ch) || ch == ':' ||
           ch == '.';
}

/* HOST:PORT, HOST a name or IPv4 address, or [IPv6]:PORT; port 1..65535. */
static int hostport_valid(const char *s)
{
    const char *port;
    if (*s == '[') {
        const char *close = strchr(s, ']');
        if (!close || close == s + 1 || close[1] != ':')
            return 0;
        for (const char *q = s + 1; q < close; q++)
            if (!ip6_char(*q))
                return 0;
        if (!memchr(s + 1, ':', (size_t)(close - s - 1)))
            return 0;
        port = close + 2;
    } else {
        const char *colon = strrchr(s, ':');
        if (!colon || colon == s)
            return 0;
        for (const char *q = s; q < colon; q++)
            if (!host_char(*q))
                return 0;
        port = colon + 1;
    }
    size_t n = strlen(port);
    if (n < 1 || n > 5)
        return 0;
    int64_t v = fixed_digits(port, (int)n);
    return v >= 1 && v <= 65535;
}

/* ---------------------------------------------------------------------------
 * Key handlers: check the value, then store it at obj + k->off. Each names
 * its key and what is allowed when it refuses.
 * ------------------------------------------------------------------------ */

#define FIELD(type, obj, k) ((type *)(void *)((char *)(obj) + (k)->off))

/* Index of v in words[0..n), or -1. */
static int word_index(const char *v, const char *const *words, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v, words[i]) == 0)
            return i;
    return -1;
}

static int set_string(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    size_t n = strlen(v);
    if (n >= RC_CONF_STR_MAX)
        return fail(p, p->lineno, "%s is too long (%zu bytes, at most %d)", k->name, n,
                    RC_CONF_STR_MAX - 1);
    memcpy(FIELD(char, obj, k), v, n + 1);
    return 0;
}

static int set_listen(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (strlen(v) < RC_CONF_STR_MAX && !hostport_valid(v))
        return fail(p, p->lineno,
                    "%s must be HOST:PORT (or [IPv6]:PORT) with port 1..65535, got '%.60s'",
                    k->name, v);
    return set_string(p, k, obj, v);
}

static int set_redis_address(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    const char *hp = strncmp(v, "redis://", 8) == 0 ? v + 8 : v;
    if (strlen(v) < RC_CONF_STR_MAX && !hostport_valid(hp))
        return fail(p, p->lineno,
                    "%s must be HOST:PORT or redis://HOST:PORT with port 1..65535, got '%.60s'",
                    k->name, v);
    return set_string(p, k, obj, v);
}

static int set_onoff(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {"off", "on"};
    int i = word_index(v, words, 2);
    if (i < 0)
        return fail(p, p->lineno, "%s must be on or off, got '%.40s'", k->name, v);
    *FIELD(int, obj, k) = i;
    return 0;
}

/* Checks a duration against [k->min, k->max]; shared by the duration keys. */
static int get_duration(struct parser *p, const struct key_spec *k, const char *v, int64_t *ms)
{
    char lo[32], hi[32];
    if (rc_parse_duration_ms(v, ms) != 0 || *ms < k->min || *ms > k->max)
        return fail(p, p->lineno,
                    "%s must be a duration from %s to %s (a number and a unit: ms, s, m, h, d, "
                    "w), got '%.40s'",
                    k->name, fmt_dur(k->min, lo, sizeof lo), fmt_dur(k->max, hi, sizeof hi), v);
    return 0;
}

static int set_duration(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    int64_t ms;
    int rc = get_duration(p, k, v, &ms);
    if (rc)
        return rc;
    *FIELD(int64_t, obj, k) = ms;
    return 0;
}

/* Idempotency markers are SET ... EX seconds: refuse what would be rounded. */
static int set_whole_seconds(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    int64_t ms;
    int rc = get_duration(p, k, v, &ms);
    if (rc)
        return rc;
    if (ms % MS_S != 0)
        return fail(p, p->lineno, "%s must be whole seconds (e.g. 600s, 10m), got '%.40s'",
                    k->name, v);
    *FIELD(int64_t, obj, k) = ms;
    return 0;
}

static int set_bytes(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    char lo[32], hi[32];
    int64_t n;
    if (parse_bytes(v, &n) != 0 || n < k->min || n > k->max)
        return fail(p, p->lineno,
                    "%s must be a byte count from %s to %s (k = KiB, m = MiB), got '%.40s'",
                    k->name, fmt_bytes(k->min, lo, sizeof lo), fmt_bytes(k->max, hi, sizeof hi), v);
    *FIELD(size_t, obj, k) = (size_t)n;
    return 0;
}

static int set_unsigned(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    int64_t n;
    if (rc_parse_int64(v, &n) != 0 || n < k->min || n > k->max)
        return fail(p, p->lineno, "%s must be an integer from %" PRId64 " to %" PRId64 ", got '%.40s'",
                    k->name, k->min, k->max, v);
    *FIELD(unsigned, obj, k) = (unsigned)n;
    return 0;
}

/* An integer in min..max, or "auto" (stored as 0: the gateway derives it). */
static int set_unsigned_or_auto(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (strcmp(v, "auto") == 0) {
        *FIELD(unsigned, obj, k) = 0;
        return 0;
    }
    int64_t n;
    if (rc_parse_int64(v, &n) != 0 || n < k->min || n > k->max)
        return fail(p, p->lineno, "%s must be auto or an integer from %" PRId64 " to %" PRId64 ", got '%.40s'",
                    k->name, k->min, k->max, v);
    *FIELD(unsigned, obj, k) = (unsigned)n;
    return 0;
}

static int set_int64(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (rc_parse_int64(v, FIELD(int64_t, obj, k)) != 0)
        return fail(p, p->lineno, "%s must be an integer (digits, optional '-'), got '%.40s'",
                    k->name, v);
    return 0;
}

static int set_timestamp(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (rc_parse_timestamp_ms(v, FIELD(int64_t, obj, k)) != 0)
        return fail(p, p->lineno,
                    "%s must be a timestamp YYYY-MM-DDTHH:MM:SSZ (or +HH:MM instead of Z) on a real "
                    "date, got '%.40s'",
                    k->name, v);
    return 0;
}

static int set_utc_offset(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (rc_parse_utc_offset(v, FIELD(int32_t, obj, k)) != 0)
        return fail(p, p->lineno, "%s must be +HH:MM or -HH:MM within -14:00..+14:00, got '%.40s'",
                    k->name, v);
    return 0;
}

static int set_order(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {[RC_ORDER_DESC] = "desc", [RC_ORDER_ASC] = "asc"};
    int i = word_index(v, words, 2);
    if (i < 0)
        return fail(p, p->lineno, "%s must be desc or asc, got '%.40s'", k->name, v);
    *FIELD(enum rc_order, obj, k) = (enum rc_order)i;
    return 0;
}

static int set_tiebreak(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {
        [RC_TB_EARLIEST] = "earliest", [RC_TB_LATEST] = "latest", [RC_TB_NONE] = "none"};
    int i = word_index(v, words, 3);
    if (i < 0)
        return fail(p, p->lineno, "%s must be earliest, latest or none, got '%.40s'", k->name, v);
    *FIELD(enum rc_tiebreak, obj, k) = (enum rc_tiebreak)i;
    return 0;
}

static int set_submit_mode(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {[RC_SUBMIT_REPLACE] = "replace", [RC_SUBMIT_BEST] = "best"};
    int i = word_index(v, words, 2);
    if (i < 0)
        return fail(p, p->lineno, "%s must be replace or best, got '%.40s'", k->name, v);
    *FIELD(enum rc_submit_mode, obj, k) = (enum rc_submit_mode)i;
    return 0;
}

static int set_decay(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {
        [RC_DECAY_NONE] = "none", [RC_DECAY_BUCKETS] = "buckets", [RC_DECAY_SCALE] = "scale"};
    int i = word_index(v, words, 3);
    if (i < 0)
        return fail(p, p->lineno, "%s must be none, buckets or scale, got '%.40s'", k->name, v);
    *FIELD(enum rc_decay, obj, k) = (enum rc_decay)i;
    return 0;
}

static int set_weighting(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {[RC_WEIGHT_LINEAR] = "linear", [RC_WEIGHT_HALFLIFE] = "halflife"};
    int i = word_index(v, words, 2);
    if (i < 0)
        return fail(p, p->lineno, "%s must be linear or halflife, got '%.40s'", k->name, v);
    *FIELD(enum rc_weighting, obj, k) = (enum rc_weighting)i;
    return 0;
}

static int set_period(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    if (rc_period_kind_parse(v, FIELD(enum rc_period_kind, obj, k)) != 0)
        return fail(p, p->lineno,
                    "%s must be none, hour, day, week, month, year or custom, got '%.40s'", k->name, v);
    return 0;
}

static int set_scale_factor(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    double f;
    if (parse_decimal(v, &f) != 0 || !(f > 0.0 && f < 1.0))
        return fail(p, p->lineno, "%s must be a decimal between 0 and 1 (exclusive), got '%.40s'",
                    k->name, v);
    *FIELD(double, obj, k) = f;
    return 0;
}

/* Trims blanks at both ends of the NUL-terminated s, in place. */
static char *trim(char *s)
{
    while (is_blank(*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && is_blank(s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Cuts buf (NUL-terminated, writable) at the next ',' and returns the trimmed
 * item; *rest moves past the comma, or to NULL after the last item. */
static char *next_item(char **rest)
{
    char *s = *rest, *comma = strchr(s, ',');
    if (comma) {
        *comma = '\0';
        *rest = comma + 1;
    } else {
        *rest = NULL;
    }
    return trim(s);
}

static int set_ops(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {"incr", "set", "best", "submit"};
    static const unsigned flags[] = {RC_OPF_INCR, RC_OPF_SET, RC_OPF_BEST, RC_OPF_SUBMIT};
    char buf[CONF_LINE_MAX + 1];
    unsigned ops = 0;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *rest = buf; rest;) {
        char *item = next_item(&rest);
        int i = word_index(item, words, 4);
        if (!*item)
            return fail(p, p->lineno, "%s has an empty item in '%.40s'", k->name, v);
        if (i < 0)
            return fail(p, p->lineno,
                        "%s must be a comma list of incr, set, best, submit, got '%.40s'", k->name,
                        item);
        if (ops & flags[i])
            return fail(p, p->lineno, "%s lists '%s' twice", k->name, words[i]);
        ops |= flags[i];
    }
    *FIELD(unsigned, obj, k) = ops;
    return 0;
}

/* fields = name dir bits, name dir bits, ... -> layout.fields[], in rank
 * order (the first field weighs most). */
static int set_fields(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    struct rc_layout *l = FIELD(struct rc_layout, obj, k);
    char buf[CONF_LINE_MAX + 1];
    unsigned n = 0;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *rest = buf; rest;) {
        char *item = next_item(&rest), *tok[4] = {0};
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
            return fail(p, p->lineno,
                        "%s must list 'name desc|asc bits' items separated by commas, got '%.60s'",
                        k->name, v);
        if (n == RC_MAX_FIELDS)
            return fail(p, p->lineno, "%s: at most %d fields", k->name, RC_MAX_FIELDS);
        if (!rc_field_name_valid(tok[0], strlen(tok[0])))
            return fail(p, p->lineno,
                        "%s: bad field name '%.40s' (1..%d of a-z 0-9 _, starting with a letter)",
                        k->name, tok[0], RC_FIELD_NAME_MAX);
        for (unsigned i = 0; i < n; i++)
            if (strcmp(l->fields[i].name, tok[0]) == 0)
                return fail(p, p->lineno, "%s: field '%s' appears twice", k->name, tok[0]);
        int asc = strcmp(tok[1], "asc") == 0;
        if (!asc && strcmp(tok[1], "desc") != 0)
            return fail(p, p->lineno, "%s: field %s: direction must be desc or asc, got '%.20s'",
                        k->name, tok[0], tok[1]);
        int64_t bits;
        if (rc_parse_int64(tok[2], &bits) != 0 || bits < 1 || bits > 52)
            return fail(p, p->lineno, "%s: field %s: bits must be an integer from 1 to 52, got '%.20s'",
                        k->name, tok[0], tok[2]);
        memcpy(l->fields[n].name, tok[0], strlen(tok[0]) + 1);
        l->fields[n].ascending = asc;
        l->fields[n].bits = (unsigned)bits;
        n++;
    }
    l->nfields = n;
    return 0;
}

/* ---------------------------------------------------------------------------
 * [auth] and [key NAME] handlers. Messages about secret, secret_env and
 * scopes never quote the value: a secret pasted on the wrong line would
 * otherwise end up in the message. Board patterns are quoted, since they only
 * name boards, which are public.
 * ------------------------------------------------------------------------ */

static int set_reads(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {"open", "key"};
    int i = word_index(v, words, 2);
    if (i < 0)
        return fail(p, p->lineno, "%s must be open or key, got '%.40s'", k->name, v);
    *FIELD(int, obj, k) = i;
    return 0;
}

/* 0x21..0x7e: what fits an Authorization header and a URL query unquoted. */
static int secret_char(unsigned char ch)
{
    return ch > 0x20 && ch < 0x7f;
}

/* obj is the rc_key: fills secret and secret_len. Refuses a secret another
 * key already has, since a lookup by secret must name exactly one key. */
static int set_secret(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    struct rc_key *key = obj;
    size_t n = strlen(v);
    (void)k;
    if (SEEN(p, K_SECRET_ENV))
        return fail(p, p->lineno, "secret and secret_env are exclusive: give one (secret_env at line %d)",
                    p->key_line[K_SECRET_ENV]);
    int ok = n >= RC_SECRET_MIN && n <= RC_SECRET_MAX;
    for (size_t i = 0; ok && i < n; i++)
        ok = secret_char((unsigned char)v[i]);
    if (!ok)
        return fail(p, p->lineno, "secret must be %d..%d printable characters without spaces",
                    RC_SECRET_MIN, RC_SECRET_MAX);
    memset(key->secret, 0, sizeof key->secret);
    memcpy(key->secret, v, n);
    key->secret_len = n;
    const struct rc_key *dup = rc_auth_find(&p->c->auth, key->secret, key->secret_len);
    if (dup && dup != key)
        return fail(p, p->lineno, "secret repeats the secret of key '%s' (line %d): each key needs its own",
                    dup->name, dup->config_line);
    return 0;
}

/* obj is the rc_key: fills secret_env; the gateway resolves it at start. Two
 * keys reading one variable would share a secret, so that is refused too. */
static int set_secret_env(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    struct rc_key *key = obj;
    size_t n = strlen(v);
    (void)k;
    if (SEEN(p, K_SECRET))
        return fail(p, p->lineno, "secret and secret_env are exclusive: give one (secret at line %d)",
                    p->key_line[K_SECRET]);
    int ok = n >= 1 && n <= RC_ENV_NAME_MAX && !is_digit(v[0]);
    for (size_t i = 0; ok && i < n; i++)
        ok = (v[i] >= 'A' && v[i] <= 'Z') || is_digit(v[i]) || v[i] == '_';
    if (!ok)
        return fail(p, p->lineno,
                    "secret_env must name an environment variable: 1..%d of A-Z 0-9 _, not starting "
                    "with a digit (put the secret itself in that variable)",
                    RC_ENV_NAME_MAX);
    for (unsigned i = 0; i + 1 < p->c->auth.nkeys; i++) {
        const struct rc_key *o = &p->c->auth.keys[i];
        if (strcmp(o->secret_env, v) == 0)
            return fail(p, p->lineno, "secret_env %s is already used by key '%s' (line %d): "
                        "each key needs its own secret", v, o->name, o->config_line);
    }
    memcpy(key->secret_env, v, n + 1);
    return 0;
}

static int set_scopes(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    static const char *const words[] = {"read", "write", "admin"};
    static const unsigned flags[] = {RC_SCOPE_READ, RC_SCOPE_WRITE, RC_SCOPE_ADMIN};
    char buf[CONF_LINE_MAX + 1];
    unsigned scopes = 0;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *rest = buf; rest;) {
        char *item = next_item(&rest);
        int i = word_index(item, words, 3);
        if (!*item)
            return fail(p, p->lineno, "%s has an empty item", k->name);
        if (i < 0)
            return fail(p, p->lineno, "%s must be a comma list of read, write, admin", k->name);
        if (scopes & flags[i])
            return fail(p, p->lineno, "%s lists '%s' twice", k->name, words[i]);
        scopes |= flags[i];
    }
    *FIELD(unsigned, obj, k) = scopes;
    return 0;
}

/* obj is the rc_key: fills patterns[] and npatterns. Items are board names,
 * templates ("match:*", which also covers the boards the template creates)
 * or "*" for every board. */
static int set_boards(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    struct rc_key *key = obj;
    char buf[CONF_LINE_MAX + 1];
    unsigned n = 0;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *rest = buf; rest;) {
        char *item = next_item(&rest);
        size_t len = strlen(item);
        if (!*item)
            return fail(p, p->lineno, "%s has an empty item", k->name);
        int ok = strcmp(item, "*") == 0 ||
                 (item[len - 1] == '*' ? rc_board_template_valid(item, len)
                                       : rc_board_name_valid(item, len));
        if (!ok || len >= sizeof key->patterns[0])
            return fail(p, p->lineno,
                        "%s: bad board pattern '%.70s' (a board name, a template ending in '*' "
                        "such as match:*, or * for every board)",
                        k->name, item);
        if (n == RC_AUTH_MAX_PATTERNS)
            return fail(p, p->lineno, "%s: at most %d patterns", k->name, RC_AUTH_MAX_PATTERNS);
        for (unsigned i = 0; i < n; i++)
            if (strcmp(key->patterns[i], item) == 0)
                return fail(p, p->lineno, "%s lists '%s' twice", k->name, item);
        memcpy(key->patterns[n++], item, len + 1);
    }
    key->npatterns = n;
    return 0;
}

/* ---------------------------------------------------------------------------
 * The key table
 * ------------------------------------------------------------------------ */

#define CONF(member) offsetof(struct rc_conf, member)
#define BOARD(member) offsetof(struct rc_board, member)
#define KEY(member) offsetof(struct rc_key, member)

static const struct key_spec keys[] = {
    {SEC_SERVER, K_LISTEN, "listen", set_listen, CONF(listen), 0, 0},
    {SEC_SERVER, K_STATE_DIR, "state_dir", set_string, CONF(state_dir), 0, 0},
    {SEC_SERVER, K_WEB_ROOT, "web_root", set_string, CONF(web_root), 0, 0},
    {SEC_SERVER, K_TICK, "tick", set_duration, CONF(tick_ms), 1, 10 * MS_S},
    {SEC_SERVER, K_ARCHIVE_PATH, "archive_path", set_string, CONF(archive_path), 0, 0},
    {SEC_SERVER, K_TEST_CLOCK, "test_clock", set_onoff, CONF(test_clock), 0, 0},
    {SEC_SERVER, K_ALLOWED_ORIGINS, "allowed_origins", set_string, CONF(allowed_origins), 0, 0},
    {SEC_SERVER, K_TLS_CERT, "tls_cert", set_string, CONF(tls_cert), 0, 0},
    {SEC_SERVER, K_TLS_KEY, "tls_key", set_string, CONF(tls_key), 0, 0},

    {SEC_REDIS, K_ADDRESS, "address", set_redis_address, CONF(redis), 0, 0},
    {SEC_REDIS, K_KEYSPACE_EVENTS, "keyspace_events", set_onoff, CONF(keyspace_events), 0, 0},
    {SEC_REDIS, K_RECONNECT_MAX, "reconnect_max", set_duration, CONF(reconnect_max_ms), 10, 10 * MS_M},

    {SEC_LIMITS, K_MAX_FRAME, "max_frame", set_bytes, CONF(max_frame), 256, MIB},
    {SEC_LIMITS, K_MAX_SUBS, "max_subs_per_conn", set_unsigned, CONF(max_subs_per_conn), 1, 10000},
    {SEC_LIMITS, K_MAX_CONNS, "max_conns", set_unsigned_or_auto, CONF(max_conns), 1, 1000000},
    {SEC_LIMITS, K_QUEUE_BYTES, "queue_bytes", set_bytes, CONF(queue_bytes), 4 * KIB, 64 * MIB},
    {SEC_LIMITS, K_MAX_CONNS_PER_IP, "max_conns_per_ip", set_unsigned, CONF(max_conns_per_ip), 1, 1000000},
    {SEC_LIMITS, K_IDLE_TIMEOUT, "idle_timeout", set_duration, CONF(idle_timeout_ms), 2 * MS_S, MS_D},
    {SEC_LIMITS, K_CONN_WRITE_RATE, "conn_write_rate", set_unsigned, CONF(conn_write_rate), 1, 1000000},
    {SEC_LIMITS, K_CONN_WRITE_BURST, "conn_write_burst", set_unsigned, CONF(conn_write_burst), 1,
     10000000},
    {SEC_LIMITS, K_KEY_WRITE_RATE, "key_write_rate", set_unsigned, CONF(key_write_rate), 1, 1000000},
    {SEC_LIMITS, K_KEY_WRITE_BURST, "key_write_burst", set_unsigned, CONF(key_write_burst), 1,
     10000000},
    {SEC_LIMITS, K_HEADER_TIMEOUT, "header_timeout", set_duration, CONF(header_timeout_ms), MS_S, 10 * MS_M},
    {SEC_LIMITS, K_BODY_TIMEOUT, "body_timeout", set_duration, CONF(body_timeout_ms), MS_S, 10 * MS_M},
    {SEC_LIMITS, K_MAX_PENDING, "max_pending", set_unsigned, CONF(max_pending), 1, 100000},
    {SEC_LIMITS, K_CONN_READ_RATE, "conn_read_rate", set_unsigned, CONF(conn_read_rate), 1, 1000000},
    {SEC_LIMITS, K_CONN_READ_BURST, "conn_read_burst", set_unsigned, CONF(conn_read_burst), 1, 10000000},
    {SEC_LIMITS, K_IP_READ_RATE, "ip_read_rate", set_unsigned, CONF(ip_read_rate), 1, 1000000},
    {SEC_LIMITS, K_IP_READ_BURST, "ip_read_burst", set_unsigned, CONF(ip_read_burst), 1, 10000000},
    {SEC_LIMITS, K_MAX_BOARDS, "max_boards", set_unsigned, CONF(max_boards), 1, 1000000},

    {SEC_AUTH, K_READS, "reads", set_reads, CONF(auth.reads_need_key), 0, 0},

    /* secret, secret_env and boards fill several fields of the rc_key. */
    {SEC_KEY, K_SECRET, "secret", set_secret, 0, 0, 0},
    {SEC_KEY, K_SECRET_ENV, "secret_env", set_secret_env, 0, 0, 0},
    {SEC_KEY, K_SCOPES, "scopes", set_scopes, KEY(scopes), 0, 0},
    {SEC_KEY, K_BOARDS, "boards", set_boards, 0, 0, 0},

    {SEC_BOARD, K_ORDER, "order", set_order, BOARD(layout.order), 0, 0},
    {SEC_BOARD, K_OPS, "ops", set_ops, BOARD(ops), 0, 0},
    {SEC_BOARD, K_SUBMIT_MODE, "submit_mode", set_submit_mode, BOARD(submit_mode), 0, 0},
    {SEC_BOARD, K_POINTS_MIN, "points_min", set_int64, BOARD(layout.points_min), 0, 0},
    {SEC_BOARD, K_POINTS_MAX, "points_max", set_int64, BOARD(layout.points_max), 0, 0},
    {SEC_BOARD, K_FIELDS, "fields", set_fields, BOARD(layout), 0, 0},
    {SEC_BOARD, K_TIEBREAK, "tiebreak", set_tiebreak, BOARD(layout.tiebreak), 0, 0},
    {SEC_BOARD, K_TB_RESOLUTION, "tiebreak_resolution", set_duration, BOARD(layout.tb_resolution_ms),
     1, 365 * MS_D},
    {SEC_BOARD, K_TB_HORIZON, "tiebreak_horizon", set_duration, BOARD(layout.tb_horizon_ms), 1,
     36500 * MS_D},
    {SEC_BOARD, K_TB_BASE, "tiebreak_base", set_timestamp, BOARD(layout.tb_base_ms), 0, 0},
    {SEC_BOARD, K_PERIOD, "period", set_period, BOARD(period.kind), 0, 0},
    {SEC_BOARD, K_UTC_OFFSET, "utc_offset", set_utc_offset, BOARD(period.utc_offset_s), 0, 0},
    {SEC_BOARD, K_PERIOD_BASE, "period_base", set_timestamp, BOARD(period.base_ms), 0, 0},
    {SEC_BOARD, K_PERIOD_LENGTH, "period_length", set_duration, BOARD(period.length_ms), MS_S,
     3660 * MS_D},
    {SEC_BOARD, K_KEEP, "keep", set_unsigned, BOARD(keep), 1, 1000},
    {SEC_BOARD, K_DECAY, "decay", set_decay, BOARD(decay.kind), 0, 0},
    {SEC_BOARD, K_BUCKET_SPAN, "bucket_span", set_duration, BOARD(decay.bucket_ms), MS_S, 7 * MS_D},
    {SEC_BOARD, K_WINDOW, "window", set_duration, BOARD(decay.window_ms), MS_S, 365 * MS_D},
    {SEC_BOARD, K_WEIGHTING, "weighting", set_weighting, BOARD(decay.weighting), 0, 0},
    {SEC_BOARD, K_HALF_LIFE, "half_life", set_duration, BOARD(decay.half_life_ms), MS_S, 365 * MS_D},
    {SEC_BOARD, K_REBUILD_EVERY, "rebuild_every", set_duration, BOARD(decay.rebuild_ms), 100, MS_H},
    {SEC_BOARD, K_RESULT_TTL, "result_ttl", set_duration, BOARD(decay.result_ttl_ms), MS_S, MS_D},
    {SEC_BOARD, K_SCALE_FACTOR, "scale_factor", set_scale_factor, BOARD(decay.scale_factor), 0, 0},
    {SEC_BOARD, K_SCALE_EVERY, "scale_every", set_duration, BOARD(decay.scale_every_ms), MS_S,
     365 * MS_D},
    {SEC_BOARD, K_IDEMPOTENCY, "idempotency_window", set_whole_seconds, BOARD(idempotency_ms), MS_S,
     30 * MS_D},
    {SEC_BOARD, K_LOG_CAP, "log_cap", set_unsigned, BOARD(log_cap), 1, 100000},
};

static const struct key_spec *find_key(enum section sec, const char *name)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i].sec == sec && strcmp(keys[i].name, name) == 0)
            return &keys[i];
    return NULL;
}

static const char *key_name(enum key_id id)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i].id == id)
            return keys[i].name;
    return "?";
}

/* ---------------------------------------------------------------------------
 * Boards
 * ------------------------------------------------------------------------ */

/* Defaults that do not depend on other keys; the rest are settled in
 * finish_board once the whole section has been read. */
static void board_defaults(struct rc_board *b)
{
    memset(b, 0, sizeof *b);
    b->submit_mode = RC_SUBMIT_REPLACE;
    b->layout.order = RC_ORDER_DESC;
    b->layout.tiebreak = RC_TB_EARLIEST;
    b->layout.tb_resolution_ms = 1;
    b->period.kind = RC_PERIOD_NONE;
    b->keep = 2;
    b->decay.kind = RC_DECAY_NONE;
    b->decay.bucket_ms = MS_H;
    b->decay.window_ms = 24 * MS_H;
    b->decay.weighting = RC_WEIGHT_LINEAR;
    b->decay.half_life_ms = 6 * MS_H;
    b->decay.rebuild_ms = 5 * MS_S;
    b->decay.result_ttl_ms = 30 * MS_S;
    b->decay.scale_every_ms = MS_H;
    b->idempotency_ms = 600 * MS_S;
    b->log_cap = 1000;
}

/* First key of ids[0..n) given in this section, or -1: for "X applies only
 * to ..." checks over a group of keys. */
static int first_seen(const struct parser *p, const enum key_id *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (SEEN(p, ids[i]))
            return (int)ids[i];
    return -1;
}

/* Single- vs multi-field: operators, submit_mode, points range, order. */
static int finish_ops(struct parser *p, struct rc_board *b, int line)
{
    if (b->layout.nfields) {
        if (SEEN(p, K_POINTS_MIN) || SEEN(p, K_POINTS_MAX))
            return fail(p, line, "%s cannot be combined with fields: multi-field boards take their "
                        "range from the fields' bits",
                        SEEN(p, K_POINTS_MIN) ? "points_min" : "points_max");
        if (b->layout.order == RC_ORDER_ASC)
            return fail(p, line, "order = asc cannot be combined with fields: multi-field boards rank "
                        "by each field's direction (leave order out)");
        if (b->decay.kind != RC_DECAY_NONE)
            return fail(p, line, "decay cannot be combined with fields: weighted sums do not decode "
                        "back into fields");
        if (!SEEN(p, K_OPS))
            b->ops = RC_OPF_SUBMIT;
        else if (b->ops != RC_OPF_SUBMIT)
            return fail(p, line, "ops must be submit on a multi-field board (fields is set): "
                        "incr, set and best need a single-field board");
    } else {
        if (!SEEN(p, K_OPS))
            b->ops = RC_OPF_INCR | RC_OPF_SET | RC_OPF_BEST;
        else if (b->ops & RC_OPF_SUBMIT)
            return fail(p, line, "ops = submit needs fields: only multi-field boards take submit");
        if (SEEN(p, K_SUBMIT_MODE))
            return fail(p, line, "submit_mode applies only to multi-field boards: set fields, or "
                        "remove submit_mode");
    }
    return 0;
}

/* Period keys: custom needs base and length; calendar periods take an offset;
 * all-time boards take none of them. */
static int finish_period(struct parser *p, struct rc_board *b, int line)
{
    const char *kind = rc_period_kind_name(b->period.kind);
    if (b->period.kind == RC_PERIOD_CUSTOM) {
        if (!SEEN(p, K_PERIOD_BASE) || !SEEN(p, K_PERIOD_LENGTH))
            return fail(p, line, "period = custom needs period_base and period_length");
        if (SEEN(p, K_UTC_OFFSET))
            return fail(p, line, "utc_offset does not apply to period = custom: period_base sets "
                        "the boundaries");
    } else {
        static const enum key_id custom_only[] = {K_PERIOD_BASE, K_PERIOD_LENGTH};
        int k = first_seen(p, custom_only, 2);
        if (k >= 0)
            return fail(p, line, "%s applies only to period = custom (period is %s)",
                        key_name((enum key_id)k), kind);
    }
    if (b->period.kind == RC_PERIOD_NONE) {
        if (SEEN(p, K_UTC_OFFSET))
            return fail(p, line, "utc_offset applies only to periodic boards: set period, or remove "
                        "utc_offset");
        if (SEEN(p, K_KEEP))
            return fail(p, line, "keep applies only to periodic boards: set period, or remove keep");
    }
    return 0;
}

/* Decay keys: the keys of one mode are refused under the other. */
static int finish_decay(struct parser *p, struct rc_board *b, int line)
{
    static const enum key_id bucket_keys[] = {K_BUCKET_SPAN, K_WINDOW, K_WEIGHTING,
                                              K_HALF_LIFE, K_REBUILD_EVERY, K_RESULT_TTL};
    static const enum key_id scale_keys[] = {K_SCALE_FACTOR, K_SCALE_EVERY};
    struct rc_decay_spec *d = &b->decay;
    char a[32], z[32];
    int k;

    if (d->kind != RC_DECAY_NONE && b->period.kind != RC_PERIOD_NONE)
        return fail(p, line, "decay cannot be combined with period: a board either decays or "
                    "starts over each period");
    if (d->kind != RC_DECAY_BUCKETS && (k = first_seen(p, bucket_keys, 6)) >= 0)
        return fail(p, line, "%s applies only to decay = buckets", key_name((enum key_id)k));
    if (d->kind != RC_DECAY_SCALE && (k = first_seen(p, scale_keys, 2)) >= 0)
        return fail(p, line, "%s applies only to decay = scale", key_name((enum key_id)k));

    if (d->kind == RC_DECAY_BUCKETS) {
        if (SEEN(p, K_HALF_LIFE) && d->weighting != RC_WEIGHT_HALFLIFE)
            return fail(p, line, "half_life applies only to weighting = halflife");
        if (d->window_ms < d->bucket_ms || d->window_ms % d->bucket_ms != 0)
            return fail(p, line, "window (%s) must be a whole multiple of bucket_span (%s)",
                        fmt_dur(d->window_ms, a, sizeof a), fmt_dur(d->bucket_ms, z, sizeof z));
        if (d->window_ms / d->bucket_ms > MAX_BUCKETS)
            return fail(p, line, "window / bucket_span is %" PRId64 " buckets, at most %d",
                        d->window_ms / d->bucket_ms, MAX_BUCKETS);
        if (d->result_ttl_ms <= d->rebuild_ms)
            return fail(p, line, "result_ttl (%s) must exceed rebuild_every (%s), or the board "
                        "vanishes between rebuilds",
                        fmt_dur(d->result_ttl_ms, a, sizeof a), fmt_dur(d->rebuild_ms, z, sizeof z));
    }
    if (d->kind == RC_DECAY_SCALE && !SEEN(p, K_SCALE_FACTOR))
        return fail(p, line, "decay = scale needs scale_factor (a decimal, 0 < f < 1)");
    return 0;
}

/* Tie-break: forced off on decaying boards; horizon from the period on
 * periodic boards; explicit horizon and base on all-time boards. */
static int finish_tiebreak(struct parser *p, struct rc_board *b, int line)
{
    static const enum key_id tb_keys[] = {K_TB_RESOLUTION, K_TB_HORIZON, K_TB_BASE};
    struct rc_layout *l = &b->layout;
    int k;

    if (b->decay.kind != RC_DECAY_NONE) {
        if (SEEN(p, K_TIEBREAK) && l->tiebreak != RC_TB_NONE)
            return fail(p, line, "decaying boards hold weighted scores: tiebreak must be none");
        l->tiebreak = RC_TB_NONE;
    }
    if (l->tiebreak == RC_TB_NONE) {
        if ((k = first_seen(p, tb_keys, 3)) >= 0)
            return fail(p, line, "%s does not apply with tiebreak = none", key_name((enum key_id)k));
        l->tb_horizon_ms = 0;
        l->tb_base_ms = 0;
        return 0;
    }
    if (b->period.kind != RC_PERIOD_NONE) {
        if (SEEN(p, K_TB_HORIZON))
            return fail(p, line, "tiebreak_horizon cannot be set with period = %s: the period's "
                        "length decides it", rc_period_kind_name(b->period.kind));
        if (SEEN(p, K_TB_BASE))
            return fail(p, line, "tiebreak_base cannot be set with period = %s: slot 0 is the "
                        "period's start", rc_period_kind_name(b->period.kind));
        l->tb_horizon_ms = rc_period_max_length_ms(&b->period);
        l->tb_base_ms = 0;
        return 0;
    }
    if (!SEEN(p, K_TB_HORIZON) || !SEEN(p, K_TB_BASE))
        return fail(p, line, "tiebreak = %s on an all-time board needs tiebreak_horizon and "
                    "tiebreak_base (or set a period, or tiebreak = none)",
                    l->tiebreak == RC_TB_LATEST ? "latest" : "earliest");
    return 0;
}

/* Called when a [board] section ends: settles what depends on several keys
 * and proves the layout fits. Errors carry the board's header line. */
static int finish_board(struct parser *p)
{
    struct rc_board *b = p->board;
    struct rc_error lerr;
    int line = b->config_line, rc;

    if ((rc = finish_ops(p, b, line)) != 0 || (rc = finish_period(p, b, line)) != 0 ||
        (rc = finish_decay(p, b, line)) != 0 || (rc = finish_tiebreak(p, b, line)) != 0)
        return rc;
    lerr.msg[0] = '\0';
    if (rc_layout_finish(&b->layout, SEEN(p, K_POINTS_MIN), SEEN(p, K_POINTS_MAX), &lerr) != 0)
        return fail(p, line, "[board %s] %s", b->name, lerr.msg);
    return 0;
}

/* ---------------------------------------------------------------------------
 * API keys
 * ------------------------------------------------------------------------ */

/* Key names show in logs and forbidden messages: keep them plain. */
static int key_name_valid(const char *s, size_t n)
{
    if (n == 0 || n > RC_KEY_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || is_digit(s[i]) || s[i] == '_' || s[i] == '-'))
            return 0;
    return 1;
}

/* Called when a [key] section ends. A key must say where its secret comes
 * from and what it may do; "boards" defaults to every board. Errors carry the
 * key's header line. */
static int finish_key(struct parser *p)
{
    struct rc_key *key = p->key;
    int line = key->config_line;

    if (!SEEN(p, K_SECRET) && !SEEN(p, K_SECRET_ENV))
        return fail(p, line, "[key %s] needs secret or secret_env (exactly one)", key->name);
    if (!SEEN(p, K_SCOPES))
        return fail(p, line, "[key %s] needs scopes: a comma list of read, write, admin", key->name);
    if (!SEEN(p, K_BOARDS)) {
        memcpy(key->patterns[0], "*", 2);
        key->npatterns = 1;
    }
    return 0;
}

static int open_key(struct parser *p, const char *name)
{
    struct rc_auth *a = &p->c->auth;
    size_t n = strlen(name);
    if (!key_name_valid(name, n))
        return fail(p, p->lineno, "bad key name '%.40s': 1..%d of a-z 0-9 _ -", name, RC_KEY_NAME_MAX);
    for (unsigned i = 0; i < a->nkeys; i++)
        if (strcmp(a->keys[i].name, name) == 0)
            return fail(p, p->lineno, "key '%s' declared twice (first at line %d)", name,
                        a->keys[i].config_line);
    if (a->nkeys == RC_AUTH_MAX_KEYS)
        return fail(p, p->lineno, "too many keys: at most %d", RC_AUTH_MAX_KEYS);
    struct rc_key *key = &a->keys[a->nkeys++];
    memset(key, 0, sizeof *key);
    memcpy(key->name, name, n + 1);
    key->config_line = p->lineno;
    p->key = key;
    p->sec = SEC_KEY;
    return 0;
}

/* ---------------------------------------------------------------------------
 * Lines
 * ------------------------------------------------------------------------ */

/* Closes the open section (checking a board or key) before another one opens. */
static int close_section(struct parser *p)
{
    int rc = 0;
    if (p->sec == SEC_BOARD)
        rc = finish_board(p);
    else if (p->sec == SEC_KEY)
        rc = finish_key(p);
    p->sec = SEC_NONE;
    p->board = NULL;
    p->key = NULL;
    p->seen = 0;
    return rc;
}

static int open_board(struct parser *p, const char *name)
{
    struct rc_conf *c = p->c;
    size_t n = strlen(name);
    int tmpl = n > 0 && name[n - 1] == '*';
    if (tmpl ? !rc_board_template_valid(name, n) : !rc_board_name_valid(name, n))
        return fail(p, p->lineno,
                    "bad board name '%.70s': 1..%d of A-Z a-z 0-9 _ . : - (a template adds a final "
                    "'*', e.g. match:*)",
                    name, RC_BOARD_MAX);
    for (size_t i = 0; i < c->nboards; i++)
        if (strcmp(c->boards[i].name, name) == 0)
            return fail(p, p->lineno, "board '%s' declared twice (first at line %d)", name,
                        c->boards[i].config_line);
    if (c->nboards == RC_CONF_MAX_BOARDS)
        return fail(p, p->lineno, "too many boards: at most %d", RC_CONF_MAX_BOARDS);
    struct rc_board *b = &c->boards[c->nboards++];
    board_defaults(b);
    memcpy(b->name, name, n + 1);
    b->is_template = tmpl;
    b->config_line = p->lineno;
    p->board = b;
    p->sec = SEC_BOARD;
    return 0;
}

/* "[server]", "[board demo]", "[key ops]", with an optional trailing comment. */
static int header_line(struct parser *p, char *s)
{
    static const char *const simple[] = {[SEC_SERVER] = "server", [SEC_REDIS] = "redis",
                                         [SEC_LIMITS] = "limits", [SEC_AUTH] = "auth"};
    char *close = strchr(s, ']');
    if (!close)
        return fail(p, p->lineno, "section header has no closing ']': '%.40s'", s);
    char *after = trim(close + 1);
    if (*after && *after != '#' && *after != ';')
        return fail(p, p->lineno, "unexpected text after section header: '%.40s'", after);
    *close = '\0';
    char *name = trim(s + 1);

    int rc = close_section(p);
    if (rc)
        return rc;
    for (int sec = SEC_SERVER; sec <= SEC_AUTH; sec++) {
        if (strcmp(name, simple[sec]) == 0) {
            if (p->sec_line[sec])
                return fail(p, p->lineno, "section [%s] appears twice (first at line %d)", name,
                            p->sec_line[sec]);
            p->sec_line[sec] = p->lineno;
            p->sec = (enum section)sec;
            return 0;
        }
    }
    if (strncmp(name, "board", 5) == 0 && (name[5] == '\0' || is_blank(name[5]))) {
        char *bname = trim(name + 5);
        if (!*bname)
            return fail(p, p->lineno, "[board] needs a name: [board NAME] or [board PREFIX*]");
        return open_board(p, bname);
    }
    if (strncmp(name, "key", 3) == 0 && (name[3] == '\0' || is_blank(name[3]))) {
        char *kname = trim(name + 3);
        if (!*kname)
            return fail(p, p->lineno, "[key] needs a name: [key NAME]");
        return open_key(p, kname);
    }
    return fail(p, p->lineno,
                "unknown section [%.40s] (expected [server], [redis], [limits], [auth], "
                "[board NAME] or [key NAME])",
                name);
}

/* Where the open section's values go (see struct key_spec). */
static void *section_obj(struct parser *p)
{
    if (p->sec == SEC_BOARD)
        return p->board;
    if (p->sec == SEC_KEY)
        return p->key;
    return p->c;
}

/* "key = value # comment" inside the open section. Inside [key] sections the
 * line is never quoted: it may be a secret typed without "secret =". */
static int key_line(struct parser *p, char *s)
{
    char label[RC_BOARD_MAX + 16];
    char *eq = strchr(s, '=');
    if (!eq && p->sec == SEC_KEY)
        return fail(p, p->lineno, "missing '=' in %s (expected key = value)",
                    sec_label(p, label, sizeof label));
    if (!eq)
        return fail(p, p->lineno, "missing '=' in '%.40s' (expected key = value)", s);
    *eq = '\0';
    char *key = trim(s), *v = eq + 1;
    for (char *q = v; *q; q++) {
        if ((*q == '#' || *q == ';') && (q == v || is_blank(q[-1]))) {
            *q = '\0';
            break;
        }
    }
    v = trim(v);
    if (!*key)
        return fail(p, p->lineno, "missing key before '='");
    if (p->sec == SEC_NONE)
        return fail(p, p->lineno,
                    "key '%.40s' outside any section (put it under [server], [redis], [limits], "
                    "[auth], [board NAME] or [key NAME])",
                    key);
    const struct key_spec *k = find_key(p->sec, key);
    if (!k && p->sec == SEC_KEY)
        return fail(p, p->lineno, "unknown key in %s (expected secret, secret_env, scopes, boards)",
                    sec_label(p, label, sizeof label));
    if (!k)
        return fail(p, p->lineno, "unknown key '%.40s' in %s", key, sec_label(p, label, sizeof label));
    if (SEEN(p, k->id))
        return fail(p, p->lineno, "key '%s' repeated in %s (first at line %d)", k->name,
                    sec_label(p, label, sizeof label), p->key_line[k->id]);
    if (!*v)
        return fail(p, p->lineno, "empty value for '%s'", k->name);
    p->seen |= (uint64_t)1 << k->id;
    p->key_line[k->id] = p->lineno;
    return k->set(p, k, section_obj(p), v);
}

/* One line, without its ending: comment, blank, header or key. */
static int do_line(struct parser *p, const char *text, size_t n)
{
    char buf[CONF_LINE_MAX + 1];
    if (n > CONF_LINE_MAX)
        return fail(p, p->lineno, "line is too long (%zu bytes, at most %d)", n, CONF_LINE_MAX);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)text[i];
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return fail(p, p->lineno, "control character 0x%02x at column %zu", ch, i + 1);
    }
    memcpy(buf, text, n);
    buf[n] = '\0';
    char *s = trim(buf);
    if (!*s || *s == '#' || *s == ';')
        return 0;
    if (*s == '[')
        return header_line(p, s);
    return key_line(p, s);
}

/* ---------------------------------------------------------------------------
 * Public API
 * ------------------------------------------------------------------------ */

void rc_conf_defaults(struct rc_conf *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->listen, sizeof c->listen, "%s", "127.0.0.1:8080");
    snprintf(c->state_dir, sizeof c->state_dir, "%s", "state");
    snprintf(c->web_root, sizeof c->web_root, "%s", "web");
    c->tick_ms = 50;
    snprintf(c->redis, sizeof c->redis, "%s", "127.0.0.1:6390");
    c->keyspace_events = 1;
    c->reconnect_max_ms = 2000;
    c->max_frame = 64 * KIB;
    c->max_subs_per_conn = 64;
    c->max_conns = 0; /* auto: derived from the fd limit at start */
    c->header_timeout_ms = 10 * MS_S;
    c->body_timeout_ms = 10 * MS_S;
    c->max_pending = 64;
    c->conn_read_rate = 200;
    c->conn_read_burst = 400;
    c->ip_read_rate = 1000;
    c->ip_read_burst = 2000;
    c->max_boards = 10000;
    c->queue_bytes = 256 * KIB;
    c->conn_write_rate = 1000;
    c->max_conns_per_ip = 1000;
    c->idle_timeout_ms = 60 * MS_S;
    c->conn_write_burst = 2000;
    c->key_write_rate = 20000;
    c->key_write_burst = 40000;
    c->auth.reads_need_key = 0; /* reads are open unless [auth] reads = key */
    c->auth.nkeys = 0;
    c->nboards = 0;
}

/* Reads text[0..len) line by line; the text need not end in a newline or a
 * NUL. A UTF-8 byte order mark at the start is skipped. Borrows everything;
 * on failure *c holds whatever was parsed before the error. */
int rc_conf_parse(const char *filename, const char *text, size_t len, struct rc_conf *c,
                  struct rc_error *err)
{
    struct parser p;
    size_t pos = 0;
    int rc;

    if (!c)
        return rc_error_set(err, RC_E_BAD_REQUEST, "no config to fill");
    rc_conf_defaults(c);
    memset(&p, 0, sizeof p);
    p.file = filename ? filename : "(config)";
    p.c = c;
    p.err = err;
    if (!text && len)
        return rc_error_set(err, RC_E_BAD_REQUEST, "%s: no text", p.file);
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        pos = 3;

    while (pos < len) {
        const char *start = text + pos;
        const char *nl = memchr(start, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - start) : len - pos;
        pos += n + (nl ? 1 : 0);
        if (n > 0 && start[n - 1] == '\r')
            n--;
        p.lineno++;
        if ((rc = do_line(&p, start, n)) != 0)
            return rc;
    }
    p.lineno++;
    return close_section(&p);
}

/* Exact declaration first; else the template with the longest prefix that
 * starts name ("match:*" covers "match:1842"). Borrows name; the result
 * points into c. */
const struct rc_board *rc_conf_find_board(const struct rc_conf *c, const char *name)
{
    const struct rc_board *best = NULL;
    size_t best_len = 0;
    if (!c || !name)
        return NULL;
    for (size_t i = 0; i < c->nboards; i++) {
        const struct rc_board *b = &c->boards[i];
        if (!b->is_template && strcmp(b->name, name) == 0)
            return b;
    }
    /* A template covers only names longer than its prefix: "match:" is no
     * match of "match:*" (it would be a board with an empty match id), and
     * falls to a shorter template, if any, or to unknown_board. */
    size_t nlen = strlen(name);
    for (size_t i = 0; i < c->nboards; i++) {
        const struct rc_board *b = &c->boards[i];
        if (!b->is_template)
            continue;
        size_t plen = strlen(b->name) - 1;
        if (nlen > plen && strncmp(b->name, name, plen) == 0 && (!best || plen > best_len)) {
            best = b;
            best_len = plen;
        }
    }
    return best;
}
