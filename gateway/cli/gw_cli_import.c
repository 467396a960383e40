/* gw_cli_import.c - `rankcast import BOARD FILE`: loads a CSV or JSON Lines
 * file into a board through the write script (docs/export-import.md).
 *
 * Each row becomes the write a client would send (core/rc_import_row.h):
 * set (best on a board without set, submit on a multi-field board) with a
 * req derived from the board, the header, the line number and the line, so
 * running the same file again answers every row as a duplicate and changes
 * nothing. Every check the gateway makes before Redis is asked
 * (rc_write_args_build: the op, fields, ranges, the tie-break horizon) runs
 * on each row before any later row is sent, so a bad row stops the import
 * with its line number, the rows before it written and none after it.
 *
 * Rows go in pipelined batches of BATCH. The only refusal left to the
 * script is a blocked member: each batch asks the blocklist first (one
 * SMISMEMBER) and is cut before a blocked member, which then stops the
 * import like a bad row. A periodic board's period blocklist is seeded from
 * the board's on the period's first write (lua/write.lua, "Blocklists"):
 * the first row of each batch of a period not yet seen is sent alone and,
 * when the script asks, sent again with the seed, as redis/gw_write.c does.
 * A sharded board's row is written to its member's shard "B#i" (as the
 * gateway's writes: docs/sharded.md); blocklists and WAITs are then asked
 * per shard.
 */
#include "cli/gw_cli_int.h"
#include "cli/gw_cli_blocklist.h"
#include "cli/gw_cli_teamseed.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis/gw_write.h"
#include "rc_err.h"
#include "rc_import_row.h"
#include "rc_keys.h"
#include "rc_lua.h"
#include "rc_period.h"
#include "rc_shard.h"
#include "rc_write_args.h"

#define BATCH 256
#define PROGRESS_MS 1000
#define NWORDS (3 + RC_WRITE_NKEYS + RC_WRITE_ARGV_MAX)

/* One row on its way: the request, the script call built from it. */
struct call {
    int64_t lineno;
    struct rc_import_row row;
    struct rc_request req;
    struct rc_write_args a;   /* argv points into req and a itself */
    const char *words[NWORDS];
    size_t lens[NWORDS];
    int nwords;
    int seed;                 /* the first row of its period's blocklist (of its shard): sent alone, seeded */
};

struct import {
    struct gw_cli *c;
    struct gw_cli_redis *r;
    enum rc_op op;
    struct call *batch;
    size_t n;
    struct rc_period p;                 /* the batch's period and time */
    int64_t now;
    char seeded[RC_SHARDS_MAX][RC_PERIOD_ID_MAX]; /* per shard (0 unsharded): the last period whose
                                                     blocklist a row seeds */
    int64_t rows, changed, unchanged, duplicates, names;
    int64_t unconfirmed;                /* rows written with fewer replicas than ack_replicas confirming */
    int64_t started, last_progress;
    char header[RC_IMPORT_LINE_MAX + 1];
    size_t hlen;
};

/* ---- replies ----------------------------------------------------------------- */

/* Counts an answered row; returns 0, or the exit code after printing why
 * the row was refused. */
static int take_result(struct import *im, const struct call *k, const redisReply *rep)
{
    struct rc_write_result res;
    struct rc_error err = {0, ""};
    if (gw_write_parse_reply(im->c->b, rep, &res, &err) != 0)
        return gw_cli_base_fail(im->c, GW_CLI_UNAVAILABLE, "line %" PRId64 ": %s: the row may or may not be written",
                           k->lineno, err.msg);
    if (res.team_unseeded)
        return gw_cli_base_fail(im->c, GW_CLI_UNAVAILABLE,
                           "line %" PRId64 ": the period's team membership is not seeded: nothing from this line on "
                           "was written by this batch; run the import again", k->lineno);
    if (res.unseeded)
        return gw_cli_base_fail(im->c, GW_CLI_UNAVAILABLE,
                           "line %" PRId64 ": the period's blocklist is not seeded: nothing from this line on was "
                           "written by this batch; run the import again", k->lineno);
    if (res.status)
        return gw_cli_base_fail(im->c, GW_CLI_BAD_ROW, "line %" PRId64 ": %s: %s", k->lineno, rc_err_code_name(res.status),
                           res.message);
    im->rows++;
    if (res.duplicate)
        im->duplicates++;
    else if (res.changed)
        im->changed++;
    else
        im->unchanged++;
    return 0;
}

static struct gw_cli_cmd call_cmd(struct call *k)
{
    return (struct gw_cli_cmd){k->nwords, k->words, k->lens, 3, rc_lua_write};
}

/* The batch's first row, alone, with the period blocklist's seed when the
 * script asks for it (cli/gw_cli_blocklist.h). */
static int send_seeded(struct import *im, struct call *k)
{
    char err[GW_CLI_ERR_MAX];
    struct gw_cli_cmd cmd = call_cmd(k);
    redisReply *rep = gw_cli_blocklist_write_seeded(im->r, &cmd, k->a.seed_from, k->a.keys[7], err, sizeof err);
    if (gw_cli_teamseed_asked(rep)) {
        /* a board with teams: the period's membership first (gw_cli_teamseed.h) */
        freeReplyObject(rep);
        rep = gw_cli_teamseed_run(im->r, im->c->b, &im->p, im->now, err, sizeof err) == 0
                  ? gw_cli_blocklist_write_seeded(im->r, &cmd, k->a.seed_from, k->a.keys[7], err, sizeof err)
                  : NULL;
    }
    if (!rep)
        return gw_cli_base_fail(im->c, GW_CLI_UNAVAILABLE, "line %" PRId64 ": %s (the row may or may not be written)",
                           k->lineno, err);
    int rc = take_result(im, k, rep);
    freeReplyObject(rep);
    return rc;
}

/* The first of calls[from..to) whose member is on its blocklist KEYS[8]
 * (to when none): one SMISMEMBER per blocklist among them (one; a sharded
 * board's rows have their shard's). Returns 0 or the exit code. */
static int first_blocked(struct import *im, size_t from, size_t to, size_t *at)
{
    static const char *members[BATCH];
    static size_t index[BATCH];
    char err[GW_CLI_ERR_MAX];
    *at = to;
    for (size_t i = from; i < to; i++) {
        const char *list = im->batch[i].a.keys[7];
        size_t n = 0, hit;
        for (size_t j = from; j < i && !n; j++)
            n = strcmp(im->batch[j].a.keys[7], list) == 0; /* asked already */
        if (n)
            continue;
        for (size_t j = i; j < to; j++) {
            if (strcmp(im->batch[j].a.keys[7], list) == 0) {
                members[n] = im->batch[j].req.member;
                index[n++] = j;
            }
        }
        if (gw_cli_blocklist_first_blocked(im->r, list, members, n, &hit, err, sizeof err) != 0)
            return gw_cli_base_fail(im->c, GW_CLI_UNAVAILABLE, "reading the blocklist: %s", err);
        if (hit < n && index[hit] < *at)
            *at = index[hit];
    }
    return 0;
}

/* HSET rc:profile:MEMBER name VALUE for calls[0..n) that carry a name. */
static int set_names(struct import *im, size_t n)
{
    static char keys[BATCH][RC_KEY_MAX];
    static const char *argv[BATCH][4];
    static size_t lens[BATCH][4];
    static struct gw_cli_cmd cmds[BATCH];
    static redisReply *replies[BATCH];
    char err[GW_CLI_ERR_MAX];
    size_t m = 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct call *k = &im->batch[i];
        if (!k->row.has_name || rc_keys_profile(keys[m], RC_KEY_MAX, k->row.member) != 0)
            continue;
        argv[m][0] = "HSET";
        argv[m][1] = keys[m];
        argv[m][2] = "name";
        argv[m][3] = k->row.name;
        for (int j = 0; j < 4; j++)
            lens[m][j] = strlen(argv[m][j]);
        cmds[m] = (struct gw_cli_cmd){4, argv[m], lens[m], 1, NULL};
        m++;
    }
    if (m && gw_cli_redis_batch(im->r, cmds, m, replies, err, sizeof err) != 0)
        rc = gw_cli_base_fail(im->c, GW_CLI_UNAVAILABLE, "setting profile names: %s", err);
    for (size_t i = 0; i < m; i++) {
        if (!rc && replies[i]->type == REDIS_REPLY_ERROR)
            rc = gw_cli_base_fail(im->c, GW_CLI_UNAVAILABLE, "setting the profile name of %s: %s", argv[i][1] + 11,
                             replies[i]->str);
        if (replies[i])
            freeReplyObject(replies[i]);
    }
    if (!rc)
        im->names += (int64_t)m;
    return rc;
}

static void progress(struct import *im, int64_t line)
{
    int64_t t = gw_cli_base_now_ms();
    if (im->c->quiet || t - im->last_progress < PROGRESS_MS)
        return;
    im->last_progress = t;
    double secs = (double)(t - im->started) / 1000.0;
    fprintf(stderr, "rankcast import %s: %" PRId64 " rows written (line %" PRId64 "), %.0f rows/s\n", im->c->board,
            im->rows, line, secs > 0 ? (double)im->rows / secs : 0.0);
}

/* With [redis] ack_replicas = N, as the gateway's acks do: WAIT until N
 * replicas have the batch's writes (at most ack_timeout), on the node of
 * each board the batch wrote (one; a sharded board's: each shard written).
 * Fewer is said on stderr and counted (those rows are written, and a rerun
 * puts back what a failover may lose); it does not stop the import. */
static int wait_replicas(struct import *im, size_t n)
{
    unsigned want = im->c->conf->ack_replicas;
    char err[GW_CLI_ERR_MAX], nbuf[16], tbuf[24];
    if (!want || n == 0)
        return 0;
    snprintf(nbuf, sizeof nbuf, "%u", want);
    snprintf(tbuf, sizeof tbuf, "%" PRId64, im->c->conf->ack_timeout_ms);
    long long got = want;
    for (size_t i = 0; i < n && got >= (long long)want; i++) {
        int asked = 0;
        for (size_t j = 0; j < i && !asked; j++)
            asked = strcmp(im->batch[j].a.keys[0], im->batch[i].a.keys[0]) == 0;
        if (asked)
            continue;
        const char *argv[4] = {"WAIT", nbuf, tbuf, im->batch[i].a.keys[0]};
        size_t lens[4] = {4, strlen(nbuf), strlen(tbuf), strlen(argv[3])};
        struct gw_cli_cmd cmd = {3, argv, lens, 3, NULL};
        redisReply *rep = gw_cli_redis_command(im->r, &cmd, err, sizeof err);
        if (!rep)
            return gw_cli_base_fail(im->c, GW_CLI_UNAVAILABLE, "WAIT for replicas: %s", err);
        got = rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;
        freeReplyObject(rep);
    }
    if (got < (long long)want) {
        fprintf(stderr, "rankcast import: lines %" PRId64 "..%" PRId64 ": written, %lld of %u replicas confirmed "
                        "within %" PRId64 " ms (ack_replicas)\n",
                im->batch[0].lineno, im->batch[n - 1].lineno, got, want, im->c->conf->ack_timeout_ms);
        im->unconfirmed += (int64_t)n;
    }
    return 0;
}

/* Writes the batch; rows after a refused one are not sent (see the banner). */
static int flush(struct import *im)
{
    char err[GW_CLI_ERR_MAX];
    static struct gw_cli_cmd cmds[BATCH];
    static redisReply *replies[BATCH];
    size_t from = 0, cut = im->n;
    int rc = 0;
    if (im->n == 0)
        return 0;
    if (im->batch[0].seed) {
        if ((rc = send_seeded(im, &im->batch[0])) != 0)
            return rc;
        from = 1;
    }
    if (from < im->n && (rc = first_blocked(im, from, im->n, &cut)) != 0)
        return rc;
    for (size_t i = from; i < cut; i++)
        cmds[i - from] = call_cmd(&im->batch[i]);
    size_t sent = cut;
    if (cut > from && gw_cli_redis_batch(im->r, cmds, cut - from, replies, err, sizeof err) != 0) {
        rc = gw_cli_base_fail(im->c, GW_CLI_UNAVAILABLE, "%s (lines %" PRId64 "..%" PRId64 " may or may not be written: "
                         "run the import again)", err, im->batch[from].lineno, im->batch[cut - 1].lineno);
        cut = from;
    }
    size_t done = cut;
    for (size_t i = from; i < cut && !rc; i++) {
        if ((rc = take_result(im, &im->batch[i], replies[i - from])) != 0) {
            done = i;
            size_t after = 0;
            for (size_t j = i + 1; j < cut; j++)
                after += replies[j - from] && replies[j - from]->type == REDIS_REPLY_ARRAY &&
                         replies[j - from]->elements == 8;
            if (after)
                fprintf(stderr, "rankcast import: %zu rows after line %" PRId64 " were already sent with it and "
                                "written (a block made after the blocklist was checked)\n",
                        after, im->batch[i].lineno);
        }
    }
    for (size_t i = from; i < sent; i++)
        if (replies[i - from])
            freeReplyObject(replies[i - from]);
    int nrc = set_names(im, done);
    rc = rc ? rc : nrc;
    nrc = wait_replicas(im, done);
    rc = rc ? rc : nrc;
    if (!rc && cut < im->n)
        rc = gw_cli_base_fail(im->c, GW_CLI_BAD_ROW, "line %" PRId64 ": forbidden: member %s is blocked on this board",
                         im->batch[cut].lineno, im->batch[cut].req.member);
    progress(im, im->batch[im->n - 1].lineno);
    im->n = 0;
    return rc;
}

/* ---- rows ------------------------------------------------------------------- */

/* Parses, checks and queues the row on line[0..len); a bad row writes what
 * was queued before it and stops. */
static int add_row(struct import *im, int64_t lineno, const char *line, size_t len, const struct rc_import_cols *cols)
{
    struct gw_cli *c = im->c;
    struct rc_error err = {0, ""};
    char req[RC_REQ_MAX + 1];
    if (im->n == 0) {
        im->now = gw_cli_base_now_ms();
        if (rc_period_at(&c->b->period, im->now, &im->p) != 0)
            return gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "no current period for board %s", c->board);
    }
    struct call *k = &im->batch[im->n];
    int rc = c->format == RC_EXPORT_CSV ? rc_import_row_csv_row(c->b, cols, line, len, &k->row, &err)
                                        : rc_import_row_json_row(c->b, line, len, &k->row, &err);
    if (!rc && (rc = rc_import_row_req(c->board, im->header, im->hlen, lineno, line, len, req)) != 0)
        rc_err_set(&err, rc, "out of memory");
    if (!rc)
        rc = rc_import_row_request(c->board, im->op, &k->row, req, &k->req, &err);
    /* a sharded board's row goes to its member's shard "B#i" (docs/sharded.md) */
    char store[RC_SHARD_NAME_MAX + 1];
    unsigned shard = !rc && c->b->shards > 1 ? rc_shard_of(k->req.member, c->b->shards) : 0;
    snprintf(store, sizeof store, "%s", c->board);
    if (!rc && c->b->shards > 1 && rc_shard_name(store, sizeof store, c->board, shard) != 0)
        rc = rc_err_set(&err, RC_E_INTERNAL, "board name too long for its shards");
    /* the first row of a period (of a shard) seeds its blocklist, as the
     * first of a batch: the rows before it go first */
    int seed = !rc && im->p.id[0] && strcmp(im->seeded[shard], im->p.id) != 0;
    if (seed && im->n > 0) {
        int frc = flush(im);
        return frc ? frc : add_row(im, lineno, line, len, cols);
    }
    if (!rc)
        rc = rc_write_args_build_as(c->b, &k->req, &im->p, im->now, gw_cli_redis_is_cluster(im->r), store, &k->a,
                                    &err);
    if (!rc)
        gw_write_new_epoch(k->a.epoch); /* the history's id if this row starts one (lua/write.lua, "Epochs") */
    if (rc) {
        int frc = flush(im);
        if (frc)
            return frc;
        return gw_cli_base_fail(c, rc == RC_E_INTERNAL ? GW_CLI_UNAVAILABLE : GW_CLI_BAD_ROW, "line %" PRId64 ": %s: %s",
                           lineno, rc_err_code_name(rc), err.msg);
    }
    int n = 0;
    static char nkeys[12];
    snprintf(nkeys, sizeof nkeys, "%u", k->a.nkeys); /* one board: the same for every row */
    k->words[n++] = "EVALSHA";
    k->words[n++] = rc_lua_write_sha;
    k->words[n++] = nkeys;
    for (unsigned i = 0; i < k->a.nkeys; i++)
        k->words[n++] = k->a.keys[i];
    for (unsigned i = 0; i < k->a.nargv; i++)
        k->words[n++] = k->a.argv[i];
    for (int i = 0; i < n; i++)
        k->lens[i] = strlen(k->words[i]);
    k->nwords = n;
    k->lineno = lineno;
    k->seed = seed;
    if (seed)
        snprintf(im->seeded[shard], sizeof im->seeded[shard], "%s", im->p.id);
    if (++im->n == BATCH)
        return flush(im);
    return 0;
}

static int run(struct import *im, FILE *in)
{
    struct gw_cli *c = im->c;
    struct rc_import_cols cols;
    struct rc_error err = {0, ""};
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int64_t lineno = 0;
    int have_header = c->format != RC_EXPORT_CSV, rc = 0;
    while (!rc && (got = getline(&line, &cap, in)) >= 0) {
        size_t len = (size_t)got;
        lineno++;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            len--;
        if (lineno == 1 && c->format == RC_EXPORT_CSV && len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
            memmove(line, line + 3, len - 3); /* a spreadsheet's byte order mark */
            len -= 3;
        }
        if (len == 0)
            continue;
        if (len > RC_IMPORT_LINE_MAX) {
            rc = flush(im);
            if (!rc)
                rc = gw_cli_base_fail(c, GW_CLI_BAD_ROW, "line %" PRId64 ": longer than %d bytes", lineno,
                                 RC_IMPORT_LINE_MAX);
            break;
        }
        if (!have_header) {
            if (rc_import_row_csv_header(c->b, line, len, &cols, &err) != 0) {
                rc = gw_cli_base_fail(c, GW_CLI_BAD_ROW, "line %" PRId64 ": header: %s", lineno, err.msg);
                break;
            }
            memcpy(im->header, line, len);
            im->hlen = len;
            have_header = 1;
            continue;
        }
        rc = add_row(im, lineno, line, len, &cols);
    }
    if (!rc && ferror(in))
        rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "reading %s: %s", c->file, strerror(errno));
    if (!rc)
        rc = flush(im);
    if (!rc && !have_header)
        rc = gw_cli_base_fail(c, GW_CLI_BAD_ROW, "line 1: the file has no header line");
    free(line);
    return rc;
}

int gw_cli_import(struct gw_cli *c)
{
    struct rc_error err = {0, ""};
    struct import *im = calloc(1, sizeof *im);
    FILE *in = NULL;
    int rc = 0;
    if (!im || !(im->batch = calloc(BATCH, sizeof *im->batch))) {
        rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "out of memory");
        goto cleanup;
    }
    im->c = c;
    if (rc_import_row_op(c->b, &im->op, &err) != 0) {
        rc = gw_cli_base_fail(c, GW_CLI_USAGE, "%s", err.msg);
        goto cleanup;
    }
    in = strcmp(c->file, "-") == 0 ? stdin : fopen(c->file, "r");
    if (!in) {
        rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "%s: %s", c->file, strerror(errno));
        goto cleanup;
    }
    if (!(im->r = gw_cli_base_connect(c))) {
        rc = GW_CLI_UNAVAILABLE;
        goto cleanup;
    }
    im->started = im->last_progress = gw_cli_base_now_ms();
    rc = run(im, in);
    fprintf(stderr,
            "rankcast import %s: %" PRId64 " rows written with %s%s%s: %" PRId64 " changed the board, %" PRId64
            " left it as it was, %" PRId64 " were duplicates of an earlier run; %" PRId64 " profile names set%s%s\n",
            c->board, im->rows, rc_proto_op_name(im->op), im->p.id[0] ? " to period " : "", im->p.id, im->changed,
            im->unchanged, im->duplicates, im->names, im->unconfirmed ? "; some rows not confirmed by every replica "
            "asked for (see above)" : "", rc ? " (stopped early)" : "");
cleanup:
    if (in && in != stdin)
        fclose(in);
    if (im) {
        gw_cli_redis_close(im->r);
        free(im->batch);
    }
    free(im);
    return rc;
}
