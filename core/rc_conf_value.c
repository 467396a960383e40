/* rc_conf_value.c - one job: the config's value parsers (integers,
 * durations, UTC offsets, timestamps, byte sizes, decimals, HOST:PORT) and
 * the text helpers for words and comma lists. Pure: no parser state. */
#include "rc_conf_int.h"

#include <string.h>

#include "rc_err.h"

/* ---------------------------------------------------------------------------
 * Value parsers (public ones first; they take NUL-terminated, trimmed text)
 * ------------------------------------------------------------------------ */

/* Strict: optional '-', at least one digit, nothing else, no overflow.
 * *out is written only on success. */
int rc_conf_value_parse_int64(const char *s, int64_t *out)
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
int rc_conf_value_parse_duration_ms(const char *s, int64_t *out_ms)
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
int rc_conf_value_parse_utc_offset(const char *s, int32_t *out_s)
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
int rc_conf_value_parse_timestamp_ms(const char *s, int64_t *out_ms)
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
    } else if (n != 25 || rc_conf_value_parse_utc_offset(s + 19, &off) != 0) {
        return RC_E_BAD_REQUEST;
    }
    int64_t days = rc_period_days_from_civil(y, (unsigned)mo, (unsigned)d);
    *out_ms = ((days * 86400 + h * 3600 + mi * 60 + sec) - off) * MS_S;
    return 0;
}

/* "<digits>" with an optional k (KiB) or m (MiB) suffix, either case. */
int rc_conf__parse_bytes(const char *s, int64_t *out)
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
int rc_conf__parse_decimal(const char *s, double *out)
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
int rc_conf__hostport_valid(const char *s)
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

/* Index of v in words[0..n), or -1 (an index, not an error code). */
/* The one rule for keys that name an environment variable (secret_env,
 * password_env): 1..RC_ENV_NAME_MAX of A-Z 0-9 _, not starting with a digit. */
int rc_conf__env_name_valid(const char *v)
{
    size_t n = strlen(v);
    int ok = n >= 1 && n <= RC_ENV_NAME_MAX && !is_digit(v[0]);
    for (size_t i = 0; ok && i < n; i++)
        ok = (v[i] >= 'A' && v[i] <= 'Z') || is_digit(v[i]) || v[i] == '_';
    return ok;
}

/* The one rule for secrets and user names (key, JWT and webhook secrets, the
 * Redis ACL user): min..max bytes of 0x21..0x7e, printable ASCII without
 * spaces, what fits an Authorization header, a URL query and one AUTH
 * argument unquoted. */
int rc_conf__token_valid(const char *v, size_t min, size_t max)
{
    size_t n = strlen(v);
    int ok = n >= min && n <= max;
    for (size_t i = 0; ok && i < n; i++)
        ok = (unsigned char)v[i] > 0x20 && (unsigned char)v[i] < 0x7f;
    return ok;
}

int rc_conf__word_index(const char *v, const char *const *words, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v, words[i]) == 0)
            return i;
    return -1;
}

/* Trims blanks at both ends of the NUL-terminated s, in place. */
char *rc_conf__trim(char *s)
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
char *rc_conf__next_item(char **rest)
{
    char *s = *rest, *comma = strchr(s, ',');
    if (comma) {
        *comma = '\0';
        *rest = comma + 1;
    } else {
        *rest = NULL;
    }
    return rc_conf__trim(s);
}
