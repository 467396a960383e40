/* rc_conf.c - the config file reader: lines, sections and the dispatch of
 * each "key = value" through the key table (rc_conf_table.c).
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
 *
 * Files of the parser (each with one job): rc_conf_value.c the value
 * parsers, rc_conf_set.c the value keys' handlers, rc_conf_key.c API key
 * rules, rc_conf_board.c board rules, rc_conf_table.c the key table,
 * rc_conf_msg.c messages; rc_conf_int.h what they share.
 */
#include "rc_conf.h"

#include <stdio.h>
#include <string.h>

#include "rc_conf_int.h"
#include "rc_err.h"

/* ---------------------------------------------------------------------------
 * Lines
 * ------------------------------------------------------------------------ */

/* Closes the open section (checking a board or key) before another one opens. */
static int close_section(struct parser *p)
{
    int rc = 0;
    if (p->sec == SEC_BOARD)
        rc = rc_conf__finish_board(p);
    else if (p->sec == SEC_KEY)
        rc = rc_conf__finish_key(p);
    else if (p->sec == SEC_WEBHOOK)
        rc = rc_conf__finish_webhook(p);
    else if (p->sec == SEC_LIMITS && SEEN(p, K_HISTORY_CHECKPOINT_EVERY) &&
             p->c->history_checkpoint_every != RC_CONF_CKPT_OFF &&
             p->c->history_checkpoint_every > p->c->history_undo_max)
        /* a moment between two checkpoints further apart than the cap could
         * be refused although both are there (docs/history.md) */
        rc = rc_conf__fail(p, p->key_line[K_HISTORY_CHECKPOINT_EVERY],
                           "history_checkpoint_every (%u) must not exceed history_undo_max (%u)",
                           p->c->history_checkpoint_every, p->c->history_undo_max);
    p->sec = SEC_NONE;
    p->board = NULL;
    p->key = NULL;
    memset(p->seen, 0, sizeof p->seen);
    return rc;
}
/* "[server]", "[board demo]", "[key ops]", with an optional trailing comment. */
static int header_line(struct parser *p, char *s)
{
    static const char *const simple[] = {[SEC_SERVER] = "server", [SEC_REDIS] = "redis",
                                         [SEC_LIMITS] = "limits", [SEC_AUTH] = "auth", [SEC_WEBHOOK] = "webhook"};
    char *close = strchr(s, ']');
    if (!close)
        return rc_conf__fail(p, p->lineno, "section header has no closing ']': '%.40s'", s);
    char *after = rc_conf__trim(close + 1);
    if (*after && *after != '#' && *after != ';')
        return rc_conf__fail(p, p->lineno, "unexpected text after section header: '%.40s'", after);
    *close = '\0';
    char *name = rc_conf__trim(s + 1);

    int rc = close_section(p);
    if (rc)
        return rc;
    for (int sec = SEC_SERVER; sec <= SEC_WEBHOOK; sec++) {
        if (strcmp(name, simple[sec]) == 0) {
            if (p->sec_line[sec])
                return rc_conf__fail(p, p->lineno, "section [%s] appears twice (first at line %d)", name,
                                     p->sec_line[sec]);
            p->sec_line[sec] = p->lineno;
            p->sec = (enum section)sec;
            return 0;
        }
    }
    if (strncmp(name, "board", 5) == 0 && (name[5] == '\0' || is_blank(name[5]))) {
        char *bname = rc_conf__trim(name + 5);
        if (!*bname)
            return rc_conf__fail(p, p->lineno, "[board] needs a name: [board NAME] or [board PREFIX*]");
        return rc_conf__open_board(p, bname);
    }
    if (strncmp(name, "key", 3) == 0 && (name[3] == '\0' || is_blank(name[3]))) {
        char *kname = rc_conf__trim(name + 3);
        if (!*kname)
            return rc_conf__fail(p, p->lineno, "[key] needs a name: [key NAME]");
        return rc_conf__open_key(p, kname);
    }
    return rc_conf__fail(p, p->lineno,
                         "unknown section [%.40s] (expected [server], [redis], [limits], [auth], "
                "[webhook], [board NAME] or [key NAME])",
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
        return rc_conf__fail(p, p->lineno, "missing '=' in %s (expected key = value)",
                             rc_conf__sec_label(p, label, sizeof label));
    if (!eq)
        return rc_conf__fail(p, p->lineno, "missing '=' in '%.40s' (expected key = value)", s);
    *eq = '\0';
    char *key = rc_conf__trim(s), *v = eq + 1;
    for (char *q = v; *q; q++) {
        if ((*q == '#' || *q == ';') && (q == v || is_blank(q[-1]))) {
            *q = '\0';
            break;
        }
    }
    v = rc_conf__trim(v);
    if (!*key)
        return rc_conf__fail(p, p->lineno, "missing key before '='");
    if (p->sec == SEC_NONE)
        return rc_conf__fail(p, p->lineno,
                             "key '%.40s' outside any section (put it under [server], [redis], [limits], "
                    "[auth], [board NAME] or [key NAME])",
                    key);
    const struct key_spec *k = rc_conf__find_key(p->sec, key);
    if (!k && p->sec == SEC_KEY)
        return rc_conf__fail(p, p->lineno, "unknown key in %s (expected secret, secret_env, scopes, boards)",
                             rc_conf__sec_label(p, label, sizeof label));
    if (!k)
        return rc_conf__fail(p, p->lineno, "unknown key '%.40s' in %s", key,
                             rc_conf__sec_label(p, label, sizeof label));
    if (SEEN(p, k->id))
        return rc_conf__fail(p, p->lineno, "key '%s' repeated in %s (first at line %d)", k->name,
                             rc_conf__sec_label(p, label, sizeof label), p->key_line[k->id]);
    if (!*v)
        return rc_conf__fail(p, p->lineno, "empty value for '%s'", k->name);
    p->seen[k->id / 64] |= (uint64_t)1 << (k->id % 64);
    p->key_line[k->id] = p->lineno;
    return k->set(p, k, section_obj(p), v);
}

/* One line, without its ending: comment, blank, header or key. */
static int do_line(struct parser *p, const char *text, size_t n)
{
    char buf[CONF_LINE_MAX + 1];
    if (n > CONF_LINE_MAX)
        return rc_conf__fail(p, p->lineno, "line is too long (%zu bytes, at most %d)", n, CONF_LINE_MAX);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)text[i];
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return rc_conf__fail(p, p->lineno, "control character 0x%02x at column %zu", ch, i + 1);
    }
    memcpy(buf, text, n);
    buf[n] = '\0';
    char *s = rc_conf__trim(buf);
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
    c->viewers_every_ms = 2 * MS_S;
    c->list_builds_per_turn = 256;
    c->compression = 1;
    c->workers = 1;
    snprintf(c->redis, sizeof c->redis, "%s", "127.0.0.1:6390");
    c->keyspace_events = 1;
    c->reconnect_max_ms = 2000;
    c->ack_timeout_ms = 1000;
    c->max_frame = 64 * KIB;
    c->max_subs_per_conn = 64;
    c->max_conns = 0; /* auto: derived from the fd limit at start */
    c->header_timeout_ms = 10 * MS_S;
    c->body_timeout_ms = 10 * MS_S;
    c->max_pending = 64;
    c->read_rows_in_flight = 20000;
    c->conn_read_rows = 100000;
    c->ip_read_rows = 400000;
    c->conn_read_rate = 200;
    c->conn_read_burst = 400;
    c->ip_read_rate = 1000;
    c->ip_read_burst = 2000;
    c->max_boards = 10000;
    c->ip_board_share = 10;
    c->message_timeout_ms = 10 * MS_S;
    c->ip_handshake_rate = 1000;
    c->ip_handshake_burst = 2000;
    c->history_undo_max = 10000;
    c->history_checkpoint_every = 0; /* auto */
    c->queue_bytes = 256 * KIB;
    c->conn_write_rate = 1000;
    c->max_conns_per_ip = 1000;
    c->idle_timeout_ms = 60 * MS_S;
    c->conn_write_burst = 2000;
    c->key_write_rate = 20000;
    c->key_write_burst = 40000;
    c->idem_max_per_key = 0; /* auto: rc_idem_floor, above what key_write_rate allows */
    c->auth.reads_need_key = 0; /* reads are open unless [auth] reads = key */
    c->auth.nkeys = 0;
    c->jwt_skew_ms = 30 * MS_S; /* clock difference allowed on exp and nbf */
    c->nboards = 0;
    c->webhook.top = 10;
    c->webhook.timeout_ms = 10 * MS_S;
    c->webhook.retries = 5;
    c->webhook.backoff_base_ms = MS_S;
    c->webhook.backoff_cap_ms = 60 * MS_S;
    c->webhook.lock_ttl_ms = 30 * MS_S;
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
        return rc_err_set(err, RC_E_BAD_REQUEST, "no config to fill");
    rc_conf_defaults(c);
    memset(&p, 0, sizeof p);
    p.file = filename ? filename : "(config)";
    p.c = c;
    p.err = err;
    if (!text && len)
        return rc_err_set(err, RC_E_BAD_REQUEST, "%s: no text", p.file);
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
    if ((rc = close_section(&p)) != 0)
        return rc;
    rc_conf__register_teams(c); /* team boards' keys live in their source's tag (rc_keys.h) */
    return 0;
}

unsigned rc_conf_checkpoint_every(const struct rc_conf *c)
{
    if (c->history_checkpoint_every == RC_CONF_CKPT_OFF)
        return 0;
    if (c->history_checkpoint_every == 0)
        return c->history_undo_max / 2 ? c->history_undo_max / 2 : 1;
    return c->history_checkpoint_every;
}

unsigned rc_conf_checkpoint_every_at(const struct rc_conf *c, int64_t members)
{
    unsigned lo = rc_conf_checkpoint_every(c);
    if (!lo || c->history_checkpoint_every != 0)
        return lo;
    int64_t hi = 2 * (int64_t)c->history_undo_max, n = members / 2;
    return (unsigned)(n < lo ? lo : n > hi ? hi : n);
}
