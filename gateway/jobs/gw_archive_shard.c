/* gw_archive_shard.c - a sharded board-period's rows for the archive, in
 * the merged order, by a streaming K-way merge over pages of each shard
 * (gw_archive_shard.h). */
#include "jobs/gw_archive_shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "redis/gw_redis.h"
#include "store/gw_read.h"
#include "rc_err.h"
#include "rc_keys.h"
#include "rc_read_args.h"
#include "rc_shard.h"

/* One shard's place in the merge. */
struct shard {
    struct gw_ashard *m;
    unsigned j;
    char name[RC_SHARD_NAME_MAX + 1];
    char **member;        /* the current page (a row taken by the merge is NULL here) */
    double *c;
    size_t n, pos;        /* rows in the page; the next one to merge */
    int64_t next;         /* the shard's index of the row after the page */
    int more;             /* rows may follow the page */
    int started;          /* seq and total below are its first page's */
    int64_t seq, total;
};

struct gw_ashard {
    struct gw_app *app;
    const struct rc_board *b;
    char board[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    unsigned nshards;
    int desc;
    /* the call in flight */
    unsigned waiting;     /* shard reads (or EXISTS) not answered yet */
    int sending;          /* inside a round's loop: an answer does not end it */
    int code, changed, any;
    const char *why;
    gw_ashard_page_cb *page_cb;
    gw_ashard_exists_cb *exists_cb;
    void *privdata;
    size_t want, on;      /* rows asked; rows in the output so far */
    char **om;            /* the output page */
    double *oc;
    struct shard s[RC_SHARDS_MAX];
    struct rc_shard_stream st; /* the merge of the shards' rows at hand */
};

static void page_clear(struct shard *sh)
{
    for (size_t i = 0; i < sh->n; i++)
        free(sh->member[i]);
    free(sh->member);
    free(sh->c);
    sh->member = NULL;
    sh->c = NULL;
    sh->n = sh->pos = 0;
}

static void out_clear(struct gw_ashard *m)
{
    for (size_t i = 0; i < m->on; i++)
        free(m->om[i]);
    free(m->om);
    free(m->oc);
    m->om = NULL;
    m->oc = NULL;
    m->on = 0;
}

void gw_archive_shard_rewind(struct gw_ashard *m)
{
    for (unsigned j = 0; j < m->nshards; j++) {
        struct shard *sh = &m->s[j];
        page_clear(sh);
        sh->next = 0;
        sh->more = 1;
        sh->started = 0;
    }
    out_clear(m);
}

struct gw_ashard *gw_archive_shard_new(struct gw_app *app, const struct rc_board *b, const char *board, const char *period)
{
    if (b->shards < RC_SHARDS_MIN || b->shards > RC_SHARDS_MAX || strlen(board) > RC_BOARD_MAX ||
        strlen(period) >= RC_PERIOD_ID_MAX)
        return NULL;
    struct gw_ashard *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->app = app;
    m->b = b;
    m->nshards = b->shards;
    m->desc = b->layout.order == RC_ORDER_DESC;
    rc_shard_stream_init(&m->st, m->desc, m->nshards);
    memcpy(m->board, board, strlen(board) + 1);
    memcpy(m->period, period, strlen(period) + 1);
    for (unsigned j = 0; j < m->nshards; j++) {
        m->s[j].m = m;
        m->s[j].j = j;
        if (rc_shard_name(m->s[j].name, sizeof m->s[j].name, board, j) != 0) {
            free(m);
            return NULL;
        }
    }
    gw_archive_shard_rewind(m);
    return m;
}

void gw_archive_shard_free(struct gw_ashard *m)
{
    if (!m)
        return;
    gw_archive_shard_rewind(m);
    free(m);
}

/* ---- EXISTS on every shard ---------------------------------------------- */

static void on_exists(redisReply *rep, void *privdata)
{
    struct shard *sh = privdata;
    struct gw_ashard *m = sh->m;
    if (!rep || rep->type != REDIS_REPLY_INTEGER)
        m->code = RC_E_UNAVAILABLE;
    else if (rep->integer > 0)
        m->any = 1;
    if (--m->waiting || m->sending)
        return;
    m->exists_cb(m->code, m->any, m->privdata); /* last: it may free m */
}

int gw_archive_shard_exists(struct gw_ashard *m, gw_ashard_exists_cb *cb, void *privdata)
{
    struct gw_redis *redis = m->app->redis;
    m->exists_cb = cb;
    m->privdata = privdata;
    m->code = m->any = 0;
    m->sending = 1;
    for (unsigned j = 0; j < m->nshards; j++) {
        char key[RC_KEY_MAX];
        if (rc_keys_board(key, sizeof key, m->s[j].name, m->period, "z", NULL) != 0) {
            m->code = RC_E_INTERNAL;
            break;
        }
        const char *argv[] = {"EXISTS", key};
        m->waiting++;
        if (!redis || gw_redis_command(redis, key, strlen(key), 2, argv, NULL, on_exists, &m->s[j]) != 0) {
            m->waiting--;
            m->code = RC_E_UNAVAILABLE;
            break;
        }
    }
    m->sending = 0;
    if (m->waiting)
        return 0; /* the last answer reports (with any failure to send the rest) */
    return m->code ? m->code : (cb(0, m->any, privdata), 0);
}

/* ---- the merge ------------------------------------------------------------ */

static int pump(struct gw_ashard *m);

/* Hands the output page to the caller (or the failure), m ready for the
 * next call. Calls back last: the callback may free m. */
static void emit(struct gw_ashard *m)
{
    gw_ashard_page_cb *cb = m->page_cb;
    void *privdata = m->privdata;
    int code = m->code, changed = m->changed;
    const char *why = m->why;
    int64_t seq = 0, total = 0;
    for (unsigned j = 0; j < m->nshards; j++) {
        seq += m->s[j].seq;
        total += m->s[j].total;
    }
    char **om = m->om;
    double *oc = m->oc;
    size_t n = m->on;
    if (code || changed) {
        out_clear(m);
        om = NULL;
        oc = NULL;
        n = 0;
    }
    m->om = NULL;
    m->oc = NULL;
    m->on = 0;
    cb(code, why, changed, seq, total, om, oc, n, privdata);
}

/* Shard sh's page from read.lua's reply. Returns 0, or an RC_E_* with
 * m->why set; a page whose seq or total differs from the shard's first
 * sets m->changed. */
static int take_page(struct gw_ashard *m, struct shard *sh, const redisReply *rep)
{
    struct rc_read_head head;
    struct rc_read_row *rows;
    size_t n;
    int rc = gw_read_call_reply(rep, &head, &rows, &n);
    if (rc) {
        m->why = !rep ? "Redis went away" : rep->type == REDIS_REPLY_ERROR ? "read.lua failed on a shard"
                                                                         : "unexpected read.lua reply";
        return rc;
    }
    if (sh->started && (head.seq != sh->seq || head.total != sh->total)) {
        free(rows);
        m->changed = 1; /* a late write on this shard: the pages so far are of another version */
        return 0;
    }
    sh->started = 1;
    sh->seq = head.seq;
    sh->total = head.total;
    page_clear(sh);
    sh->member = calloc(n ? n : 1, sizeof *sh->member);
    sh->c = calloc(n ? n : 1, sizeof *sh->c);
    for (size_t i = 0; sh->member && sh->c && i < n; i++) {
        if (!(sh->member[i] = strdup(rows[i].member)))
            break;
        sh->c[i] = rows[i].c;
        sh->n++;
    }
    free(rows);
    if (!sh->member || !sh->c || sh->n != n) {
        m->why = "out of memory";
        return RC_E_INTERNAL;
    }
    sh->next += (int64_t)n;
    sh->more = n == GW_ASHARD_PAGE && sh->next < sh->total;
    return 0;
}

static void on_page(redisReply *rep, void *privdata)
{
    struct shard *sh = privdata;
    struct gw_ashard *m = sh->m;
    if (!m->code && !m->changed) {
        int rc = take_page(m, sh, rep);
        if (rc)
            m->code = rc;
    }
    if (--m->waiting || m->sending)
        return;
    if (m->code || m->changed) {
        emit(m);
        return;
    }
    pump(m); /* reports through the callback itself, also a failure to send */
}

/* Reads the next page of every shard whose page is used up while rows may
 * follow. Returns how many reads went out (m->code set when one could not). */
static unsigned refill(struct gw_ashard *m)
{
    unsigned sent = 0;
    m->sending = 1;
    for (unsigned j = 0; j < m->nshards && !m->code; j++) {
        struct shard *sh = &m->s[j];
        struct rc_read_args args;
        if (sh->pos < sh->n || !sh->more)
            continue;
        /* the live board; a page reads on from the shard's last row */
        const struct rc_read_req req = {.kind = RC_READ_RANGE, .first = sh->next, .count = GW_ASHARD_PAGE, .live = 1};
        m->waiting++;
        if (rc_read_args_build(sh->name, m->period, m->b->layout.order, &req, &args) != 0 || !m->app->redis ||
            gw_read_call_send(&m->app->read_script, m->app->redis, &args, on_page, sh) != 0) {
            m->waiting--;
            m->code = RC_E_UNAVAILABLE;
            m->why = "Redis is unavailable";
        } else {
            sent++;
        }
    }
    m->sending = 0;
    return sent;
}

/* The shard whose current row comes first, -1 when all are used up. */
static int best_shard(struct gw_ashard *m)
{
    /* each shard's row at hand: pages are refilled and rows taken between
     * calls, so offer them afresh (the merge rule is core's) */
    for (unsigned j = 0; j < m->nshards; j++) {
        const struct shard *a = &m->s[j];
        if (a->pos < a->n)
            rc_shard_stream_offer(&m->st, j, a->c[a->pos], a->member[a->pos]);
        else
            rc_shard_stream_clear(&m->st, j);
    }
    return rc_shard_stream_next(&m->st);
}

/* Merges rows into the output until it is full or every shard is used up
 * (then emits), or until a shard's page must be read on (then sends). */
static int pump(struct gw_ashard *m)
{
    for (;;) {
        for (unsigned j = 0; j < m->nshards; j++) {
            if (m->s[j].pos < m->s[j].n || !m->s[j].more)
                continue;
            /* shard j may hold the next row: read on before merging */
            unsigned sent = refill(m);
            if (m->waiting)
                return 0; /* on_page goes on (a failure to send the rest waits for the sent ones) */
            if (!sent && !m->code)
                m->code = RC_E_INTERNAL;
            if (m->code || m->changed) {
                emit(m);
                return 0;
            }
        }
        int j = best_shard(m);
        if (j < 0 || m->on == m->want) {
            emit(m);
            return 0;
        }
        struct shard *sh = &m->s[j];
        m->om[m->on] = sh->member[sh->pos]; /* moved to the output */
        m->oc[m->on] = sh->c[sh->pos];
        sh->member[sh->pos] = NULL;
        sh->pos++;
        m->on++;
    }
}

int gw_archive_shard_next(struct gw_ashard *m, size_t want, gw_ashard_page_cb *cb, void *privdata)
{
    if (want == 0 || want > GW_ASHARD_PAGE)
        return RC_E_INTERNAL;
    if (!m->app->redis)
        return RC_E_UNAVAILABLE;
    out_clear(m);
    m->om = calloc(want, sizeof *m->om);
    m->oc = calloc(want, sizeof *m->oc);
    if (!m->om || !m->oc) {
        out_clear(m);
        return RC_E_INTERNAL;
    }
    m->want = want;
    m->page_cb = cb;
    m->privdata = privdata;
    m->code = m->changed = 0;
    m->why = NULL;
    return pump(m);
}
