/* gw_archive_copy.c - step 5 of an archive run: the rows of a finished
 * period copied page by page (gw_archive_copy.h; the run and its other
 * steps: gw_archive_run.c). */
#include "jobs/gw_archive_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "jobs/gw_archive_run.h"
#include "jobs/gw_archive_shard.h"
#include "store/gw_archive_db.h"
#include "store/gw_archive_sql.h"
#include "store/gw_read.h"
#include "rc_err.h"
#include "rc_read_args.h"

#define PAGE_ROWS 1000       /* rows per Redis read and per transaction */
#define MAX_RESTARTS 3       /* re-reads when a finished board still changes */
#define ERR_MAX GW_ADB_ERR_MAX

struct page_job {
    struct gw_adb_job job;
    struct gw_acopy *copy;
    int64_t first_rank;              /* rank of members[0] */
    size_t n;
    char **members;                  /* owned */
    double *c;                       /* owned */
};

static void page_free(struct page_job *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->members[i]);
    free(p->members);
    free(p->c);
    free(p);
}

static void work_page(struct gw_adb_job *j, sqlite3 *db)
{
    struct page_job *p = (struct page_job *)j;
    gw_archive_sql_put_rows(j, db, p->copy->decl->name, p->copy->period, p->first_rank, p->members, p->c, p->n);
}

static void done_page(struct gw_adb_job *j)
{
    struct page_job *p = (struct page_job *)j;
    struct gw_acopy *cp = p->copy;
    size_t n = p->n;
    int rc = j->rc;
    char err[ERR_MAX];
    memcpy(err, j->err, sizeof err);
    page_free(p);
    if (rc) {
        cp->done(cp, err);
    } else if (cp->a->rel.stopping) {
        cp->done(cp, "the archive is stopping");
    } else {
        cp->next += (int64_t)n;
        if (n < PAGE_ROWS || cp->next >= cp->total)
            cp->done(cp, NULL);
        else
            cp->read_on(cp);
    }
}

/* read.lua's reply (store/gw_read_call_reply) -> a page job (copies the rows).
 * Returns 0 or the RC_E_* of gw_read_call_reply (or RC_E_INTERNAL: memory). */
static int page_from_reply(struct gw_acopy *cp, const redisReply *rep, struct page_job **out, int64_t *seq,
                           int64_t *total)
{
    struct rc_read_head head;
    struct rc_read_row *rows;
    size_t n;
    int rc = gw_read_call_reply(rep, &head, &rows, &n);
    if (rc)
        return rc;
    *seq = head.seq;
    *total = head.total;
    struct page_job *p = calloc(1, sizeof *p);
    if (p) {
        p->copy = cp;
        p->first_rank = head.first_rank;
        p->members = calloc(n ? n : 1, sizeof *p->members);
        p->c = calloc(n ? n : 1, sizeof *p->c);
    }
    for (size_t i = 0; p && p->members && p->c && i < n; i++) {
        if (!(p->members[i] = strdup(rows[i].member)))
            break;
        p->n++;
        p->c[i] = rows[i].c;
    }
    free(rows);
    if (!p || p->n != n) {
        if (p)
            page_free(p);
        return RC_E_INTERNAL;
    }
    *out = p;
    return 0;
}

/* A late write (a gateway whose clock lags by more than the grace): the
 * pages so far are from another version. Read it all again. */
static void restart(struct gw_acopy *cp)
{
    if (++cp->restarts > MAX_RESTARTS) {
        cp->done(cp, "the finished board keeps changing");
        return;
    }
    cp->next = 0;
    if (cp->merge)
        gw_archive_shard_rewind(cp->merge);
    cp->read_on(cp);
}

/* A page read (seq and total: the board's at its read) goes to SQLite. */
static void take_page(struct gw_acopy *cp, struct page_job *p, int64_t seq, int64_t total)
{
    if (cp->next == 0) {
        cp->seq = seq;
        cp->total = total;
    } else if (seq != cp->seq || total != cp->total) {
        page_free(p);
        restart(cp);
        return;
    }
    if (p->n == 0) {
        page_free(p);
        cp->done(cp, NULL);
        return;
    }
    if (gw_archive_db_submit(cp->a->db, &p->job, work_page, done_page) != 0) {
        page_free(p);
        cp->done(cp, "the archive is closing");
    }
}

static void on_page(redisReply *reply, void *privdata)
{
    struct gw_acopy *cp = privdata;
    int64_t seq, total;
    struct page_job *p;
    if (!reply || cp->a->rel.stopping) {
        cp->done(cp, "Redis went away");
        return;
    }
    if (page_from_reply(cp, reply, &p, &seq, &total) != 0) {
        cp->done(cp, reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected read.lua reply");
        return;
    }
    take_page(cp, p, seq, total);
}

/* A sharded board's next merged page (gw_archive_shard.h): its rows are
 * ranked on from cp->next. */
static void on_merged(int code, const char *why, int changed, int64_t seq, int64_t total, char **members, double *c,
                      size_t n, void *privdata)
{
    struct gw_acopy *cp = privdata;
    struct page_job *p = code || changed || cp->a->rel.stopping ? NULL : calloc(1, sizeof *p);
    if (p) {
        *p = (struct page_job){.copy = cp, .first_rank = cp->next + 1, .n = n, .members = members, .c = c};
    } else {
        for (size_t i = 0; i < n; i++)
            free(members[i]);
        free(members);
        free(c);
    }
    if (code || cp->a->rel.stopping)
        cp->done(cp, why ? why : "Redis went away");
    else if (changed)
        restart(cp);
    else if (!p)
        cp->done(cp, "out of memory");
    else
        take_page(cp, p, seq, total);
}

/* One page through lua/read.lua (core/rc_read_args, store/gw_read), or a
 * sharded board's next merged page. */
void gw_archive_copy_read(struct gw_acopy *cp)
{
    struct gw_app *app = cp->a->app;
    struct rc_read_args args;
    /* the live board: a frozen board's archive holds its true standings */
    const struct rc_read_req req = {.kind = RC_READ_RANGE, .first = cp->next, .count = PAGE_ROWS, .live = 1};
    if (cp->merge) { /* a sharded board: the next page of its shards merged */
        if (cp->a->rel.stopping || gw_archive_shard_next(cp->merge, PAGE_ROWS, on_merged, cp) != 0)
            cp->done(cp, "Redis is unavailable");
        return;
    }
    if (cp->a->rel.stopping || rc_read_args_build(cp->decl->name, cp->period, cp->decl->layout.order, &req, &args) != 0 ||
        gw_read_call_send(&app->read_script, app->redis, &args, on_page, cp) != 0)
        cp->done(cp, "Redis is unavailable");
}
