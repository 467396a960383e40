/* gw_cli_export.c - `rankcast export BOARD [--period P] [--format csv|jsonl]`:
 * a board's rows, best first, to stdout (docs/export-import.md).
 *
 * A live board is read in pages of PAGE rows, each page one call of
 * lua/read.lua (the same script as every read of the gateway: one page is
 * one consistent snapshot with its seq). The export as a whole is a sequence
 * of pages, not one snapshot: a write between two pages can move a member
 * across the page boundary (shown twice, or not at all) and shift ranks.
 * When the board's seq changed between the first and the last page the
 * export says so on stderr. A past period whose keys have left Redis is read
 * from the archive database, as the gateway's reads do; rows there never
 * change. Profile names come from Redis (HGET rc:profile:MEMBER name), one
 * pipelined batch per page.
 */
#include "cli/gw_cli_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/gw_cli_archive.h"
#include "store/gw_read.h"
#include "rc_err.h"
#include "rc_keys.h"
#include "rc_lua.h"
#include "rc_period.h"
#include "rc_read_args.h"

#define PAGE 1000
#define LINE_MIN 512

struct page {
    size_t n;
    int64_t rank[PAGE];
    char member[PAGE][RC_MEMBER_MAX + 1];
    double c[PAGE];
};

struct sink {
    char *buf;
    size_t cap;
    int64_t rows;
};

static int put_line(const struct gw_cli *c, struct sink *s, size_t need)
{
    if (fwrite(s->buf, 1, need, stdout) != need)
        return gw_cli_fail(c, GW_CLI_UNAVAILABLE, "writing stdout: %s", strerror(errno));
    return 0;
}

/* Writes the page's rows with their members' profile names. */
static int emit(const struct gw_cli *c, struct gw_cli_redis *r, struct sink *s, const struct page *pg)
{
    static char keys[PAGE][RC_KEY_MAX];
    static const char *argv[PAGE][3];
    static size_t lens[PAGE][3];
    static struct gw_cli_cmd cmds[PAGE];
    static redisReply *replies[PAGE];
    char err[GW_CLI_ERR_MAX];
    int rc = 0;
    for (size_t i = 0; i < pg->n; i++) {
        if (rc_profile_key(keys[i], RC_KEY_MAX, pg->member[i]) != 0)
            return gw_cli_fail(c, GW_CLI_UNAVAILABLE, "member name too long: %s", pg->member[i]);
        argv[i][0] = "HGET";
        argv[i][1] = keys[i];
        argv[i][2] = "name";
        for (int k = 0; k < 3; k++)
            lens[i][k] = strlen(argv[i][k]);
        cmds[i] = (struct gw_cli_cmd){3, argv[i], lens[i], 1, NULL};
    }
    if (gw_cli_redis_batch(r, cmds, pg->n, replies, err, sizeof err) != 0)
        rc = gw_cli_fail(c, GW_CLI_UNAVAILABLE, "reading profiles: %s", err);
    for (size_t i = 0; i < pg->n && !rc; i++) {
        /* no profile, or one that is not a hash (written behind our back): no name */
        const char *name = replies[i]->type == REDIS_REPLY_STRING ? replies[i]->str : NULL;
        size_t need = rc_export_row(c->b, c->format, pg->rank[i], pg->member[i], pg->c[i], name, s->buf, s->cap);
        if (need >= s->cap) {
            char *nb = realloc(s->buf, need + 1);
            if (!nb) {
                rc = gw_cli_fail(c, GW_CLI_UNAVAILABLE, "out of memory");
                break;
            }
            s->buf = nb;
            s->cap = need + 1;
            rc_export_row(c->b, c->format, pg->rank[i], pg->member[i], pg->c[i], name, s->buf, s->cap);
        }
        rc = put_line(c, s, need);
        s->rows++;
    }
    for (size_t i = 0; i < pg->n; i++)
        if (replies[i])
            freeReplyObject(replies[i]);
    return rc;
}

/* One page of lua/read.lua: rows first..first+PAGE-1. */
static int read_page(const struct gw_cli *c, struct gw_cli_redis *r, const char *period, int64_t first,
                     struct rc_read_head *head, struct page *pg)
{
    struct rc_read_req req = {.kind = RC_READ_RANGE, .first = first, .count = PAGE, .live = 1}; /* through a freeze */
    struct rc_read_args a;
    const char *words[3 + RC_READ_NKEYS + RC_READ_ARGV_MAX];
    size_t lens[3 + RC_READ_NKEYS + RC_READ_ARGV_MAX];
    char err[GW_CLI_ERR_MAX];
    int n = 0;
    if (rc_read_args_build(c->board, period, c->b->layout.order, &req, &a) != 0)
        return gw_cli_fail(c, GW_CLI_UNAVAILABLE, "cannot build the read of board %s", c->board);
    words[n++] = "EVALSHA";
    words[n++] = rc_lua_read_sha;
    char nkeys[8];
    snprintf(nkeys, sizeof nkeys, "%d", RC_READ_NKEYS);
    words[n++] = nkeys;
    for (unsigned i = 0; i < RC_READ_NKEYS; i++)
        words[n++] = a.keys[i];
    for (unsigned i = 0; i < a.nargv; i++)
        words[n++] = a.argv[i];
    for (int i = 0; i < n; i++)
        lens[i] = strlen(words[i]);
    struct gw_cli_cmd cmd = {n, words, lens, 3, rc_lua_read};
    redisReply *rep = gw_cli_redis_command(r, &cmd, err, sizeof err);
    if (!rep)
        return gw_cli_fail(c, GW_CLI_UNAVAILABLE, "%s", err);
    struct rc_read_row *rows;
    size_t nrows;
    int rc = 0;
    if (rep->type == REDIS_REPLY_ERROR)
        rc = gw_cli_fail(c, GW_CLI_UNAVAILABLE, "reading board %s: Redis answered: %s", c->board, rep->str);
    else if (gw_read_reply(rep, head, &rows, &nrows) != 0 || nrows > PAGE)
        rc = gw_cli_fail(c, GW_CLI_UNAVAILABLE, "reading board %s: an answer of the wrong shape", c->board);
    if (!rc) {
        pg->n = nrows;
        for (size_t i = 0; i < nrows; i++) {
            pg->rank[i] = head->first_rank + (int64_t)i;
            strcpy(pg->member[i], rows[i].member); /* the parser checked the length */
            pg->c[i] = rows[i].c;
        }
        free(rows);
    }
    freeReplyObject(rep);
    return rc;
}

static int export_archive(const struct gw_cli *c, struct gw_cli_redis *r, struct sink *s, const char *period)
{
    char path[RC_CONF_STR_MAX + 32], err[GW_CLI_ERR_MAX];
    struct gw_cli_archive *a = NULL;
    int64_t total = 0;
    if (c->conf->archive_path[0])
        snprintf(path, sizeof path, "%s", c->conf->archive_path);
    else
        snprintf(path, sizeof path, "%s/archive.sqlite3", c->conf->state_dir);
    int rc = gw_cli_archive_open(path, c->board, period, &a, &total, err, sizeof err);
    if (rc == RC_E_NOT_FOUND) {
        fprintf(stderr, "rankcast export: board %s has nothing in Redis for period %s, and %s does not hold it: "
                        "no rows\n", c->board, period, path);
        return 0;
    }
    if (rc)
        return gw_cli_fail(c, GW_CLI_UNAVAILABLE, "%s", err);
    struct page *pg = malloc(sizeof *pg);
    if (!pg) {
        gw_cli_archive_close(a);
        return gw_cli_fail(c, GW_CLI_UNAVAILABLE, "out of memory");
    }
    int more = 1;
    rc = 0;
    while (more && !rc) {
        pg->n = 0;
        while (pg->n < PAGE &&
               (more = gw_cli_archive_next(a, &pg->rank[pg->n], pg->member[pg->n], &pg->c[pg->n], err, sizeof err)) ==
                   1)
            pg->n++;
        if (more < 0)
            rc = gw_cli_fail(c, GW_CLI_UNAVAILABLE, "%s", err);
        else if (pg->n)
            rc = emit(c, r, s, pg);
    }
    if (!rc && s->rows != total)
        rc = gw_cli_fail(c, GW_CLI_UNAVAILABLE, "archive %s: period %s lists %" PRId64 " rows, %" PRId64 " were read",
                         path, period, total, s->rows);
    free(pg);
    gw_cli_archive_close(a);
    return rc;
}

int gw_cli_export(struct gw_cli *c)
{
    struct rc_period p, now;
    int64_t t = gw_cli_now_ms();
    if (c->b->period.kind == RC_PERIOD_NONE && c->period && strcmp(c->period, "current") != 0)
        return gw_cli_fail(c, GW_CLI_USAGE, "board %s has no periods: leave --period out", c->board);
    if (rc_period_select(&c->b->period, c->period, t, &p) != 0)
        return gw_cli_fail(c, GW_CLI_USAGE, "period '%s' is not a %s period of board %s", c->period,
                           rc_period_kind_name(c->b->period.kind), c->board);
    rc_period_at(&c->b->period, t, &now);
    struct gw_cli_redis *r = gw_cli_connect(c);
    if (!r)
        return GW_CLI_UNAVAILABLE;
    struct sink s = {malloc(LINE_MIN), LINE_MIN, 0};
    struct page *pg = malloc(sizeof *pg);
    struct rc_read_head head, first_head;
    memset(&first_head, 0, sizeof first_head);
    int rc = 0;
    if (!s.buf || !pg) {
        rc = gw_cli_fail(c, GW_CLI_UNAVAILABLE, "out of memory");
        goto cleanup;
    }
    size_t hl = rc_export_header(c->b, c->format, s.buf, s.cap);
    if (hl >= s.cap || (rc = put_line(c, &s, hl)) != 0) {
        rc = rc ? rc : gw_cli_fail(c, GW_CLI_UNAVAILABLE, "header too long");
        goto cleanup;
    }
    for (int64_t first = 0;; first += PAGE) {
        if ((rc = read_page(c, r, p.id, first, &head, pg)) != 0)
            break;
        if (first == 0) {
            first_head = head;
            /* a past period whose keys are gone: the archive has it */
            if (c->b->period.kind != RC_PERIOD_NONE && strcmp(p.id, now.id) != 0 && head.seq == 0 &&
                head.total == 0) {
                rc = export_archive(c, r, &s, p.id);
                break;
            }
        }
        if (pg->n && (rc = emit(c, r, &s, pg)) != 0)
            break;
        if (pg->n < PAGE)
            break;
    }
    if (!rc && head.seq != first_head.seq)
        fprintf(stderr,
                "rankcast export: board %s changed while it was read (seq %" PRId64 " to %" PRId64 "): the pages "
                "of %d rows are each consistent, the export as a whole is not one snapshot\n",
                c->board, first_head.seq, head.seq, PAGE);
    if (!rc && fflush(stdout) != 0)
        rc = gw_cli_fail(c, GW_CLI_UNAVAILABLE, "writing stdout: %s", strerror(errno));
cleanup:
    free(s.buf);
    free(pg);
    gw_cli_redis_close(r);
    return rc;
}
