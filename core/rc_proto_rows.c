/* rc_proto_rows.c - the messages that carry rows (snapshot and delta),
 * written straight into one buffer.
 *
 * These go out on every tick for every window view, so they are not built
 * as a cJSON tree (one allocation per item and per number's text: about 20
 * for a one-row delta, more per row) but printed once, in order, into a
 * buffer sized from the row count: usually one allocation per message. The
 * text is the same, byte for byte, as rc_proto_encode.c's cJSON printing
 * would give (keys and strings escaped as cJSON_PrintUnformatted escapes
 * them, numbers by rc_proto_encode_number_text, no spaces); tests/unit/test_proto_encode.c
 * holds the documented examples.
 *
 * The buffer comes from cJSON_malloc, as the other encoders' text does, so
 * the caller frees it with free() and an allocation failure is seen by the
 * same hooks in the tests.
 */
#include "rc_proto.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rc_proto_int.h"

#define DEPTH_MAX 4 /* message, rows, row, fields */

struct jw {
    char *p;
    size_t len, cap;
    int failed;
    unsigned depth;
    unsigned char more[DEPTH_MAX + 1]; /* an item was written at this depth: the next needs a comma */
};

/* Grows w's buffer to hold n more bytes and the final NUL; 0, or -1 (and
 * w->failed) when it cannot. Out of line: the start's estimate (start())
 * makes it rare. */
static __attribute__((noinline)) int jw_grow(struct jw *w, size_t n)
{
    if (w->failed)
        return -1;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->len + n + 1)
        cap *= 2;
    char *p = cJSON_malloc(cap);
    if (!p) {
        w->failed = 1;
        return -1;
    }
    if (w->len)
        memcpy(p, w->p, w->len);
    cJSON_free(w->p);
    w->p = p;
    w->cap = cap;
    return 0;
}

/* Room for n more bytes at w->p + w->len (and the NUL), or NULL: the
 * writers below print straight into it (issue 26: at 5,000 member lists,
 * a call per byte of the rows' text was half the gateway's CPU). A failed
 * writer has no room, so nothing is written after a failure. */
static inline char *jw_room(struct jw *w, size_t n)
{
    if (w->len + n + 1 > w->cap && jw_grow(w, n) != 0)
        return NULL;
    return w->failed ? NULL : w->p + w->len;
}

static inline void jw_bytes(struct jw *w, const char *s, size_t n)
{
    char *p = jw_room(w, n);
    if (!p)
        return;
    memcpy(p, s, n);
    w->len += n;
}

static inline void jw_byte(struct jw *w, char c)
{
    char *p = jw_room(w, 1);
    if (!p)
        return;
    *p = c;
    w->len++;
}

static void jw_lit(struct jw *w, const char *s)
{
    jw_bytes(w, s, strlen(s));
}

/* A string literal, its length known when compiled. */
#define JW_LIT(w, s) jw_bytes((w), (s), sizeof(s) - 1)

/* s as a JSON string, escaped as cJSON escapes it: '"' '\\' and the control
 * characters with a short form by it, the other bytes below 32 as \u00XX,
 * everything else as it is (UTF-8 is checked by the caller where needed).
 * Runs of bytes that need no escape are copied whole. */
static void jw_str(struct jw *w, const char *s)
{
    if (!s) {
        JW_LIT(w, "null");
        return;
    }
    jw_byte(w, '"');
    const unsigned char *c = (const unsigned char *)s, *run = c;
    for (;; c++) {
        if (*c >= 32 && *c != '"' && *c != '\\')
            continue;
        jw_bytes(w, (const char *)run, (size_t)(c - run));
        if (!*c)
            break;
        run = c + 1;
        char u[8];
        const char *esc = u;
        switch (*c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        default: snprintf(u, sizeof u, "\\u%04x", *c);
        }
        jw_lit(w, esc);
    }
    jw_byte(w, '"');
}

/* The comma before an item, when one came before it at this depth. */
static inline void jw_item(struct jw *w)
{
    if (w->more[w->depth])
        jw_byte(w, ',');
    w->more[w->depth] = 1;
}

static void jw_key(struct jw *w, const char *key)
{
    jw_item(w);
    jw_str(w, key);
    jw_byte(w, ':');
}

/* jw_key for a literal key that needs no escape: one copy. */
#define JW_KEY(w, k) (jw_item(w), JW_LIT((w), "\"" k "\":"))

static inline void jw_open(struct jw *w, char c)
{
    jw_byte(w, c);
    if (w->depth < DEPTH_MAX)
        w->more[++w->depth] = 0;
    else
        w->failed = 1;
}

static inline void jw_close(struct jw *w, char c)
{
    jw_byte(w, c);
    w->depth--;
}

static inline void jw_int(struct jw *w, int64_t v)
{
    char *p = jw_room(w, RC_NUMBER_TEXT_MAX);
    if (p)
        w->len += rc_proto_encode_int_text(v, p); /* (its NUL is overwritten next) */
}

/* A score: rc_proto_encode_number_text, null when not finite. */
static void jw_number(struct jw *w, double d)
{
    if (!isfinite(d)) {
        JW_LIT(w, "null");
        return;
    }
    char *p = jw_room(w, RC_NUMBER_TEXT_MAX);
    if (!p)
        return;
    rc_proto_encode_number_text(d, p, RC_NUMBER_TEXT_MAX);
    w->len += strlen(p);
}

/* The text, or NULL (and the buffer freed) when anything failed. */
static char *jw_finish(struct jw *w)
{
    if (!w->failed && w->depth == 0)
        jw_bytes(w, "", 0);
    if (w->failed || w->depth != 0 || !w->p) {
        cJSON_free(w->p);
        return NULL;
    }
    w->p[w->len] = '\0';
    return w->p;
}

/* A profile entry joins its row unless it would shadow a key the row has
 * (rank, member, score, fields always: the client's own; prev_rank, place
 * and tied when printed; "tied" too whenever the row has a place, so a
 * shared place keeps "tied" its own even when it is not) or an entry that
 * joined before it (joined: a bit per earlier entry; entries past the 64th
 * are left out, profiles hold at most 16), or is not valid UTF-8 (a text
 * frame with bad UTF-8 makes browsers drop the connection). */
static int profile_entry_ok(const struct rc_row *r, int has_prev, const struct rc_kv *kv, unsigned at, uint64_t joined)
{
    static const char *const reserved[] = {"rank", "member", "score", "fields"};
    if (r->team && kv[at].key && strcmp(kv[at].key, "team") == 0)
        return 0; /* (a board with teams: the row's own) */
    const char *k = kv[at].key;

    if (at >= 64 || !k || !kv[at].value || !rc_names_utf8_valid(k, strlen(k)) ||
        !rc_names_utf8_valid(kv[at].value, strlen(kv[at].value)))
        return 0;
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcmp(k, reserved[i]) == 0)
            return 0;
    if ((has_prev && strcmp(k, "prev_rank") == 0) || (r->place > 0 && (!strcmp(k, "place") || !strcmp(k, "tied"))))
        return 0;
    /* ("tied" also gives way to a "place" that an earlier entry brought,
     * as it always has) */
    for (unsigned i = 0; i < at; i++)
        if ((joined >> i & 1) && (strcmp(kv[i].key, k) == 0 || (!strcmp(k, "tied") && !strcmp(kv[i].key, "place"))))
            return 0;
    return 1;
}

/* {"rank"[,"prev_rank"],"member","score"[,"place"[,"tied"]][,"fields"],
 * profile...}; prev NULL leaves "prev_rank" out, else *prev (0: null). */
static void row(struct jw *w, const struct rc_row *r, int64_t rank, const struct rc_layout *layout,
                const int64_t *prev)
{
    jw_item(w);
    jw_open(w, '{');
    JW_KEY(w, "rank");
    jw_int(w, rank);
    if (prev) {
        JW_KEY(w, "prev_rank");
        if (*prev > 0)
            jw_int(w, *prev);
        else
            JW_LIT(w, "null");
    }
    JW_KEY(w, "member");
    jw_str(w, r->member);
    JW_KEY(w, "score");
    jw_number(w, r->score);
    if (r->place > 0) {
        JW_KEY(w, "place");
        jw_int(w, r->place);
        if (r->tied) {
            JW_KEY(w, "tied");
            JW_LIT(w, "true");
        }
    }
    if (r->team) {
        JW_KEY(w, "team");
        jw_str(w, r->team);
    }
    if (layout && r->nfields > 0) {
        JW_KEY(w, "fields");
        jw_open(w, '{');
        for (unsigned k = 0; k < r->nfields && k < RC_MAX_FIELDS; k++) {
            jw_key(w, layout->fields[k].name);
            jw_int(w, r->fields[k]);
        }
        jw_close(w, '}');
    }
    uint64_t joined = 0;
    for (unsigned k = 0; r->profile && k < r->profile->n; k++) {
        const struct rc_kv *kv = r->profile->kv;
        if (!profile_entry_ok(r, prev != NULL, kv, k, joined))
            continue;
        joined |= (uint64_t)1 << k;
        jw_key(w, kv[k].key);
        jw_str(w, kv[k].value);
    }
    jw_close(w, '}');
}

static void rows(struct jw *w, const struct rc_rows_out *rs)
{
    JW_KEY(w, "rows");
    jw_open(w, '[');
    for (size_t k = 0; rs->rows && k < rs->n; k++) {
        size_t i = rs->pick ? rs->pick[k] : k;
        const struct rc_row *r = &rs->rows[i];
        row(w, r, r->rank > 0 ? r->rank : rs->first_rank + (int64_t)i, rs->layout, rs->prev_rank ? &rs->prev_rank[k] : NULL);
    }
    jw_close(w, ']');
}

/* A message's start: {"op":op[,"id":id_json] (raw JSON from our decoder). */
static void start(struct jw *w, const char *op, const char *id_json, size_t nrows)
{
    /* room for the head and about a row's worth of text per row: usually
     * the one allocation of the message */
    size_t want = 256 + nrows * 128;
    if ((w->p = cJSON_malloc(want)) != NULL)
        w->cap = want;
    jw_open(w, '{');
    JW_KEY(w, "op");
    jw_str(w, op);
    if (id_json) {
        JW_KEY(w, "id");
        jw_lit(w, id_json);
    }
}

static void freeze(struct jw *w, const struct rc_msg_more *m)
{
    if (!m->frozen)
        return;
    JW_KEY(w, "frozen");
    jw_int(w, m->freeze_seq);
    if (m->live) {
        JW_KEY(w, "shown");
        jw_int(w, m->shown);
    }
}

static void viewers(struct jw *w, const struct rc_msg_more *m)
{
    if (!m->has_viewers)
        return;
    if (m->viewers < 0)
        w->failed = 1; /* never a negative count */
    JW_KEY(w, "viewers");
    jw_int(w, m->viewers);
}

char *rc_proto_rows_snapshot(const struct rc_snapshot_msg *m)
{
    struct jw w = {0};
    start(&w, "snapshot", m->id_json, m->rows.n);
    if (m->sub) { /* a REST read is no subscription: its snapshot carries no "sub" */
        JW_KEY(&w, "sub");
        jw_str(&w, m->sub);
    }
    JW_KEY(&w, "board");
    jw_str(&w, m->board);
    if (m->period) {
        JW_KEY(&w, "period");
        jw_str(&w, m->period);
    }
    JW_KEY(&w, "seq");
    jw_int(&w, m->seq);
    JW_KEY(&w, "total");
    jw_int(&w, m->total);
    if (m->more.epoch) { /* the board's, as it is ("" while it has no history) */
        JW_KEY(&w, "epoch");
        jw_str(&w, m->more.epoch);
    }
    if (m->reset) {
        JW_KEY(&w, "reset");
        JW_LIT(&w, "true");
    }
    if (m->has_at) { /* a get at a moment (docs/history.md) */
        JW_KEY(&w, "at_seq");
        jw_int(&w, m->at_seq);
        JW_KEY(&w, "at_time");
        if (m->has_at_time)
            jw_int(&w, m->at_time);
        else
            JW_LIT(&w, "null");
    }
    if (m->replay) {
        JW_KEY(&w, "replay");
        JW_LIT(&w, "true");
    }
    rows(&w, &m->rows);
    if (m->has_absent) {
        JW_KEY(&w, "absent");
        jw_open(&w, '[');
        for (size_t k = 0; m->absent && k < m->nabsent; k++) {
            jw_item(&w);
            jw_str(&w, m->absent[k]);
        }
        jw_close(&w, ']');
    }
    viewers(&w, &m->more);
    freeze(&w, &m->more);
    if (m->more.cursor) {
        if (!rc_proto__cursor_ok(m->more.cursor))
            w.failed = 1;
        JW_KEY(&w, "cursor");
        jw_str(&w, m->more.cursor);
    }
    jw_close(&w, '}');
    return jw_finish(&w);
}

char *rc_proto_rows_delta(const struct rc_delta_msg *m)
{
    struct jw w = {0};
    start(&w, "delta", NULL, m->rows.n + m->nremoved / 2);
    JW_KEY(&w, "sub");
    jw_str(&w, m->sub);
    JW_KEY(&w, "seq");
    jw_int(&w, m->seq);
    JW_KEY(&w, "total");
    jw_int(&w, m->total);
    rows(&w, &m->rows);
    JW_KEY(&w, "removed");
    jw_open(&w, '[');
    for (size_t k = 0; m->removed_from && m->removed && k < m->nremoved; k++) {
        jw_item(&w);
        jw_str(&w, m->removed_from[m->removed[k]].member);
    }
    jw_close(&w, ']');
    freeze(&w, &m->more);
    if (m->more.epoch) { /* the history began: one it must be */
        if (!rc_epoch_valid(m->more.epoch, strlen(m->more.epoch)))
            w.failed = 1;
        JW_KEY(&w, "epoch");
        jw_str(&w, m->more.epoch);
    }
    viewers(&w, &m->more);
    jw_close(&w, '}');
    return jw_finish(&w);
}
