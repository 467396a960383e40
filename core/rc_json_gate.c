/* rc_json_gate.c - the strict JSON gate (see rc_json_gate.h for what it
 * refuses and why).
 *
 * A text passes four checks in order, each with its own message:
 *   1. size and UTF-8;
 *   2. lex(): one scan of the bytes for what cJSON lets through: it skips a
 *      leading byte order mark, takes raw control characters in strings,
 *      reads "\u0000" (and a malformed "\uZZZZ") as a NUL that silently cuts
 *      the string short, treats any byte <= 0x20 as whitespace, and hands any
 *      run of [0-9.eE+-] to strtod, which takes "01", "1." and "-.5" and
 *      turns "1e-400" into 0 and "1e400" into infinity;
 *   3. cJSON's parse, then our own "only whitespace after the object" and
 *      "is an object";
 *   4. no_duplicates(): a walk of the parsed tree, so keys compare as the
 *      program will see them (after unescaping).
 * Nothing here keeps state between calls.
 */
#include "rc_json_gate.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_names.h"

#define NUMBER_ECHO_MAX 24 /* how much of an out-of-range number the message repeats */
#define NUMBER_STACK 64    /* number tokens shorter than this are copied on the stack */
#define PATH_MAX_LEN 96    /* "view.top", "x[1].a": the path a duplicate is named by */
#define PAIRWISE_MAX 16    /* objects up to this many keys are checked pair by pair */

/* ---- pass 2: the bytes ------------------------------------------------------ */

static int json_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Checks the escape whose backslash is s[*i] and moves *i to its last byte.
 * Surrogate pairing is left to cJSON, which refuses a lone surrogate. */
static int lex_escape(const char *s, size_t len, size_t *i, struct rc_error *err)
{
    size_t at = *i;
    unsigned v = 0;

    if (at + 1 >= len)
        return rc_err_set(err, RC_E_BAD_REQUEST, "invalid JSON: unterminated string");
    switch (s[at + 1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        *i = at + 1;
        return 0;
    case 'u':
        break;
    default:
        return rc_err_set(err, RC_E_BAD_REQUEST, "invalid JSON: bad escape at offset %zu", at);
    }
    if (len - at < 6)
        return rc_err_set(err, RC_E_BAD_REQUEST, "invalid JSON: bad escape at offset %zu", at);
    for (size_t k = 2; k < 6; k++) {
        int h = hex_value((unsigned char)s[at + k]);
        if (h < 0)
            return rc_err_set(err, RC_E_BAD_REQUEST, "invalid JSON: bad escape at offset %zu", at);
        v = v * 16 + (unsigned)h;
    }
    if (v == 0)
        return rc_err_set(err, RC_E_BAD_REQUEST,
                            "strings must not contain \\u0000 (offset %zu)", at);
    *i = at + 5;
    return 0;
}

/* Checks the string whose opening quote is s[*i] and moves *i to its closing
 * quote. Bytes >= 0x80 were already proven valid UTF-8. */
static int lex_string(const char *s, size_t len, size_t *i, struct rc_error *err)
{
    for (size_t k = *i + 1; k < len; k++) {
        unsigned char c = (unsigned char)s[k];
        int rc;
        if (c == '"') {
            *i = k;
            return 0;
        }
        if (c < 0x20)
            return rc_err_set(err, RC_E_BAD_REQUEST,
                                "invalid JSON: raw control character U+%04X in a string at "
                                "offset %zu (escape it)",
                                c, k);
        if (c == '\\' && (rc = lex_escape(s, len, &k, err)) < 0)
            return rc;
    }
    return rc_err_set(err, RC_E_BAD_REQUEST, "invalid JSON: unterminated string");
}

/* Refuses a well-formed number token that a double cannot hold: one that
 * overflows, or a non-zero one (nonzero: some digit of it is not 0) that
 * would read as 0. Denormals are kept: they lose precision, as any decimal
 * does, but not the number's sign or its being non-zero. */
static int number_range(const char *tok, size_t n, int nonzero, struct rc_error *err)
{
    char small[NUMBER_STACK];
    char *buf = n < sizeof small ? small : malloc(n + 1);
    const char *point = localeconv()->decimal_point;
    double d;

    if (!buf)
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    memcpy(buf, tok, n);
    buf[n] = '\0';
    /* strtod reads the locale's decimal point, as cJSON knows too; the
     * gateway never sets a locale, but a library user might. */
    if (point && point[0] && point[0] != '.' && !point[1]) {
        char *dot = memchr(buf, '.', n);
        if (dot)
            *dot = point[0];
    }
    d = strtod(buf, NULL);
    if (buf != small)
        free(buf);
    if (isinf(d) || (d == 0 && nonzero)) {
        int cut = n > NUMBER_ECHO_MAX;
        return rc_err_set(err, RC_E_BAD_REQUEST, "number %.*s%s is out of range: it %s",
                            (int)(cut ? NUMBER_ECHO_MAX : n), tok, cut ? "..." : "",
                            isinf(d) ? "overflows a double" : "underflows to 0");
    }
    return 0;
}

/* The error for any number outside the grammar but a leading zero, which is
 * common enough (hand-written ids, zero-padded values) to get its own words. */
static int malformed(size_t at, struct rc_error *err)
{
    return rc_err_set(err, RC_E_BAD_REQUEST, "invalid JSON: malformed number at offset %zu", at);
}

/* Checks the number that starts at s[*i] against RFC 8259's grammar,
 *   -? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?
 * and its range, and moves *i to its last byte. */
static int lex_number(const char *s, size_t len, size_t *i, struct rc_error *err)
{
    size_t start = *i, k = start;
    int nonzero = 0;

    if (s[k] == '-')
        k++;
    if (k >= len || !digit((unsigned char)s[k]))
        return malformed(start, err);
    if (s[k] == '0') {
        if (++k < len && digit((unsigned char)s[k]))
            return rc_err_set(err, RC_E_BAD_REQUEST,
                                "invalid JSON: number with a leading zero at offset %zu", start);
    } else {
        nonzero = 1;
        while (k < len && digit((unsigned char)s[k]))
            k++;
    }
    if (k < len && s[k] == '.') {
        if (++k >= len || !digit((unsigned char)s[k]))
            return malformed(start, err);
        for (; k < len && digit((unsigned char)s[k]); k++)
            nonzero |= s[k] != '0';
    }
    if (k < len && (s[k] == 'e' || s[k] == 'E')) {
        if (++k < len && (s[k] == '+' || s[k] == '-'))
            k++;
        if (k >= len || !digit((unsigned char)s[k]))
            return malformed(start, err);
        while (k < len && digit((unsigned char)s[k]))
            k++;
    }
    /* cJSON would hand "1.5.3" or "0-1" to strtod whole; say so here. */
    if (k < len && (s[k] == '.' || s[k] == '-' || s[k] == '+' || s[k] == 'e' || s[k] == 'E'))
        return malformed(start, err);
    *i = k - 1;
    return number_range(s + start, k - start, nonzero, err);
}

/* The lexical rules cJSON does not enforce (see the banner). Anything else
 * out of place between tokens is left to cJSON, which refuses it. */
static int lex(const char *s, size_t len, struct rc_error *err)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        int rc = 0;
        if (c == '"')
            rc = lex_string(s, len, &i, err);
        else if (c == '-' || digit(c))
            rc = lex_number(s, len, &i, err);
        else if (c == 0xef && len - i >= 3 && (unsigned char)s[i + 1] == 0xbb &&
                 (unsigned char)s[i + 2] == 0xbf)
            rc = rc_err_set(err, RC_E_BAD_REQUEST,
                              "invalid JSON: byte order mark (U+FEFF) at offset %zu; send "
                              "the text without one",
                              i);
        else if (c < 0x20 && !json_space(c))
            rc = rc_err_set(err, RC_E_BAD_REQUEST,
                              "invalid JSON: control character U+%04X at offset %zu", c, i);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- pass 4: duplicate keys --------------------------------------------------- */

/* Appends prefix and then text (at most PATH_MAX_LEN in all, anything but
 * printable ASCII shown as '?', so the message stays harmless in logs) to
 * path[0..len). Returns the new length. */
static size_t path_append(char *path, size_t len, const char *prefix, const char *text)
{
    const char *parts[2] = {prefix, text[0] ? text : "\"\""}; /* an empty key shows as "" */

    for (size_t p = 0; p < 2; p++) {
        for (const char *t = parts[p]; *t && len < PATH_MAX_LEN; t++) {
            unsigned char c = (unsigned char)*t;
            path[len++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
        }
    }
    path[len] = '\0';
    return len;
}

static int key_order(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sets *dup to a key obj holds twice (borrowed from obj), or NULL. Small
 * objects are checked pair by pair; larger ones sorted, so a message of many
 * keys costs n log n, not n^2. Returns 0 or RC_E_INTERNAL. */
static int find_duplicate(const cJSON *obj, const char **dup)
{
    const cJSON *c;
    const char **keys;
    size_t n = 0, k = 0;

    *dup = NULL;
    for (c = obj->child; c; c = c->next)
        n++;
    if (n <= PAIRWISE_MAX) {
        for (c = obj->child; c && !*dup; c = c->next)
            for (const cJSON *d = c->next; d && !*dup; d = d->next)
                if (strcmp(c->string, d->string) == 0)
                    *dup = c->string;
        return 0;
    }
    if (!(keys = malloc(n * sizeof *keys)))
        return RC_E_INTERNAL;
    for (c = obj->child; c; c = c->next)
        keys[k++] = c->string;
    qsort(keys, n, sizeof *keys, key_order);
    for (k = 1; k < n && !*dup; k++)
        if (strcmp(keys[k - 1], keys[k]) == 0)
            *dup = keys[k];
    free(keys);
    return 0;
}

/* Refuses a key given twice in any object under node. path[0..len) names
 * node ("" for the root) and is shared by the whole walk, so each level of
 * the recursion (at most cJSON's nesting limit) costs a few words. */
static int no_duplicates(const cJSON *node, char *path, size_t len, struct rc_error *err)
{
    const char *dup = NULL;
    size_t index = 0;
    int rc;

    if (cJSON_IsObject(node)) {
        if (find_duplicate(node, &dup) < 0)
            return rc_err_set(err, RC_E_INTERNAL, "out of memory");
        if (dup) {
            path_append(path, len, len ? "." : "", dup);
            return rc_err_set(err, RC_E_BAD_REQUEST, "duplicate field %s", path);
        }
    }
    for (const cJSON *c = node->child; c; c = c->next, index++) {
        char at[24];
        if (!cJSON_IsObject(c) && !cJSON_IsArray(c))
            continue;
        if (cJSON_IsObject(node)) {
            rc = no_duplicates(c, path, path_append(path, len, len ? "." : "", c->string), err);
        } else {
            snprintf(at, sizeof at, "[%zu]", index);
            rc = no_duplicates(c, path, path_append(path, len, "", at), err);
        }
        path[len] = '\0';
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- public ------------------------------------------------------------------- */

int rc_json_gate_parse_strict(const char *text, size_t len, cJSON **out, struct rc_error *err)
{
    const char *end = NULL;
    char path[PATH_MAX_LEN + 1] = "";
    cJSON *root;
    int rc;

    *out = NULL;
    if (len > RC_JSON_MAX_TEXT)
        return rc_err_set(err, RC_E_TOO_LARGE, "message is larger than %u bytes",
                            (unsigned)RC_JSON_MAX_TEXT);
    if (!text)
        return rc_err_set(err, RC_E_BAD_REQUEST, "invalid JSON");
    if (!rc_names_utf8_valid(text, len))
        return rc_err_set(err, RC_E_BAD_REQUEST, "message is not valid UTF-8");
    if ((rc = lex(text, len, err)) < 0)
        return rc;

    /* require_null_terminated would refuse every text that is not followed by
     * a NUL inside len; checking the parse end ourselves gives the same "no
     * trailing garbage" rule for frames that are not NUL-terminated. */
    root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root)
        return rc_err_set(err, RC_E_BAD_REQUEST, "invalid JSON");
    while (end < text + len && json_space((unsigned char)*end))
        end++;
    if (end != text + len)
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "invalid JSON: text after the object");
    else if (!cJSON_IsObject(root))
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "message must be a JSON object");
    else
        rc = no_duplicates(root, path, 0, err);
    if (rc < 0) {
        cJSON_Delete(root);
        return rc;
    }
    *out = root;
    return 0;
}
