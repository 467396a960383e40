/* gw_cli_page.c - one page of a board's rows for `rankcast export`: read
 * through lua/read.lua, printed with profile names (gw_cli_page.h). */
#include "cli/gw_cli_page.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/gw_read.h"
#include "rc_keys.h"
#include "rc_lua.h"

int gw_cli_page_put_line(const struct gw_cli *c, struct gw_cli_sink *s, size_t need)
{
    if (fwrite(s->buf, 1, need, stdout) != need)
        return gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "writing stdout: %s", strerror(errno));
    return 0;
}

int gw_cli_page_emit(const struct gw_cli *c, struct gw_cli_redis *r, struct gw_cli_sink *s, const struct gw_cli_page *pg)
{
    static char keys[GW_CLI_PAGE][RC_KEY_MAX];
    static const char *argv[GW_CLI_PAGE][3];
    static size_t lens[GW_CLI_PAGE][3];
    static struct gw_cli_cmd cmds[GW_CLI_PAGE];
    static redisReply *replies[GW_CLI_PAGE];
    char err[GW_CLI_ERR_MAX];
    int rc = 0;
    for (size_t i = 0; i < pg->n; i++) {
        if (rc_keys_profile(keys[i], RC_KEY_MAX, pg->member[i]) != 0)
            return gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "member name too long: %s", pg->member[i]);
        argv[i][0] = "HGET";
        argv[i][1] = keys[i];
        argv[i][2] = "name";
        for (int k = 0; k < 3; k++)
            lens[i][k] = strlen(argv[i][k]);
        cmds[i] = (struct gw_cli_cmd){3, argv[i], lens[i], 1, NULL};
    }
    if (gw_cli_redis_batch(r, cmds, pg->n, replies, err, sizeof err) != 0)
        rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "reading profiles: %s", err);
    for (size_t i = 0; i < pg->n && !rc; i++) {
        /* no profile, or one that is not a hash (written behind our back): no name */
        const char *name = replies[i]->type == REDIS_REPLY_STRING ? replies[i]->str : NULL;
        size_t need = rc_export_fmt_row(c->b, c->format, pg->rank[i], pg->member[i], pg->c[i], name, s->buf, s->cap);
        if (need >= s->cap) {
            char *nb = realloc(s->buf, need + 1);
            if (!nb) {
                rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "out of memory");
                break;
            }
            s->buf = nb;
            s->cap = need + 1;
            rc_export_fmt_row(c->b, c->format, pg->rank[i], pg->member[i], pg->c[i], name, s->buf, s->cap);
        }
        rc = gw_cli_page_put_line(c, s, need);
        s->rows++;
    }
    for (size_t i = 0; i < pg->n; i++)
        if (replies[i])
            freeReplyObject(replies[i]);
    return rc;
}

int gw_cli_page_read_page(const struct gw_cli *c, struct gw_cli_redis *r, const char *store, const char *period,
                     int64_t first, struct rc_read_head *head, struct gw_cli_page *pg)
{
    struct rc_read_req req = {.kind = RC_READ_RANGE, .first = first, .count = GW_CLI_PAGE, .live = 1}; /* through a freeze */
    struct rc_read_args a;
    const char *words[3 + RC_READ_NKEYS + RC_READ_ARGV_MAX];
    size_t lens[3 + RC_READ_NKEYS + RC_READ_ARGV_MAX];
    char err[GW_CLI_ERR_MAX];
    int n = 0;
    if (rc_read_args_build(store, period, c->b->layout.order, &req, &a) != 0)
        return gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "cannot build the read of board %s", c->board);
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
        return gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "%s", err);
    struct rc_read_row *rows;
    size_t nrows;
    int rc = 0;
    if (rep->type == REDIS_REPLY_ERROR)
        rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "reading board %s: Redis answered: %s", c->board, rep->str);
    else if (gw_read_call_reply(rep, head, &rows, &nrows) != 0 || nrows > GW_CLI_PAGE)
        rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "reading board %s: an answer of the wrong shape", c->board);
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
