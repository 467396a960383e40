/* gw_read.c - lua/read.lua calls, reply decoding and the profile join. */
#include "store/gw_read.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "store/gw_archive_read.h"
#include "store/gw_join.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_codec.h"
#include "rc_event.h"
#include "rc_keys.h"

struct pending {
    struct gw_app *app;
    const struct rc_board *b;
    gw_read_cb *cb;
    void *privdata;
    struct gw_window *w;
    /* kept for a fall back to the archive */
    char board[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    struct gw_read_spec spec;
    char member[RC_MEMBER_MAX + 1];
};

/* A past period whose keys are gone from Redis (expired after `keep`
 * periods) is answered from the archive, in the same shape. */
static int past_and_gone(const struct pending *p)
{
    struct rc_period now;
    if (p->b->period.kind == RC_PERIOD_NONE || p->w->seq != 0 || p->w->total != 0)
        return 0;
    return rc_period_at(&p->b->period, gw_now_ms(p->app), &now) == 0 && strcmp(now.id, p->period) != 0;
}

struct fallback {
    struct gw_window *empty; /* what Redis said, for when the archive has nothing */
    gw_read_cb *cb;
    void *privdata;
};

static void on_archive(int code, struct gw_window *w, void *privdata)
{
    struct fallback *fb = privdata;
    if (code == RC_E_NOT_FOUND) {
        fb->cb(0, fb->empty, fb->privdata);
    } else {
        gw_window_free(fb->empty);
        fb->cb(code, w, fb->privdata);
    }
    free(fb);
}

/* Hands the read over to the archive; 0 when it took it (p is freed). */
static int try_archive(struct pending *p)
{
    struct fallback *fb = malloc(sizeof *fb);
    if (!fb)
        return -1;
    *fb = (struct fallback){p->w, p->cb, p->privdata};
    if (gw_archive_read(p->app, p->b, p->board, p->period, &p->spec, on_archive, fb) != 0) {
        free(fb);
        return -1;
    }
    free(p);
    return 0;
}

static void finish(struct pending *p, int code)
{
    struct gw_window *w = p->w;
    if (code) {
        gw_window_free(w);
        w = NULL;
    }
    p->cb(code, w, p->privdata);
    free(p);
}

static void on_joined(struct gw_window *w, void *privdata)
{
    (void)w;
    finish(privdata, 0);
}

static int reply_int(const redisReply *r, int64_t *v)
{
    if (r->type != REDIS_REPLY_INTEGER)
        return -1;
    *v = r->integer;
    return 0;
}

/* { seq, total, first_rank, m1, c1, ... } -> window. */
static int parse_window(const struct rc_board *b, const redisReply *r, struct gw_window *w)
{
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 3 || (r->elements - 3) % 2)
        return -1;
    if (reply_int(r->element[0], &w->seq) || reply_int(r->element[1], &w->total) ||
        reply_int(r->element[2], &w->first_rank))
        return -1;
    size_t n = w->first_rank ? (r->elements - 3) / 2 : 0; /* rank 0: member absent */
    w->rows = calloc(n ? n : 1, sizeof *w->rows);
    if (!w->rows)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const redisReply *m = r->element[3 + 2 * i], *c = r->element[4 + 2 * i];
        if (m->type != REDIS_REPLY_STRING || c->type != REDIS_REPLY_STRING)
            return -1;
        struct gw_row *row = &w->rows[w->n];
        row->member = strdup(m->str);
        if (!row->member)
            return -1;
        w->n++;
        row->c = strtod(c->str, NULL);
        gw_decode_score(b, row->c, &row->score, row->fields, &row->nfields);
    }
    return 0;
}

static void on_read(redisReply *reply, void *privdata)
{
    struct pending *p = privdata;
    if (!reply) {
        finish(p, RC_E_UNAVAILABLE);
        return;
    }
    if (parse_window(p->b, reply, p->w) != 0) {
        finish(p, RC_E_INTERNAL);
        return;
    }
    if (past_and_gone(p) && try_archive(p) == 0)
        return;
    gw_profiles_join(p->app->profiles, p->w, on_joined, p);
}

static int call_read(struct gw_app *app, const struct rc_board *b, const char *board, const char *period,
                     const char *const *args, size_t nargs, gw_script_reply_cb *cb, void *privdata)
{
    char keys[3][RC_KEY_MAX];
    static const char *const suffix[3] = {"z", "seq", "log"};
    const char *words[3 + 8];
    size_t lens[3 + 8];
    redisAsyncContext *ac = gw_redis_cmd(app->redis);
    if (!ac)
        return RC_E_UNAVAILABLE;
    for (int i = 0; i < 3; i++) {
        if (rc_board_key(keys[i], RC_KEY_MAX, board, period, suffix[i], NULL))
            return RC_E_INTERNAL;
        words[i] = keys[i];
    }
    words[3] = args[0];
    words[4] = b->layout.order == RC_ORDER_DESC ? "desc" : "asc";
    for (size_t i = 1; i < nargs; i++)
        words[4 + i] = args[i];
    size_t nwords = 4 + nargs;
    for (size_t i = 0; i < nwords; i++)
        lens[i] = strlen(words[i]);
    if (gw_script_call(&app->read_script, ac, 3, (int)nwords, words, lens, cb, privdata) != 0)
        return RC_E_UNAVAILABLE;
    return 0;
}

int gw_read(struct gw_app *app, const struct rc_board *b, const char *board, const char *period,
            const struct gw_read_spec *spec, gw_read_cb *cb, void *privdata)
{
    char a1[32], a2[32];
    const char *args[3];
    size_t nargs = 3;
    switch (spec->kind) {
    case GW_READ_RANGE:
        snprintf(a1, sizeof a1, "%lld", (long long)spec->first);
        snprintf(a2, sizeof a2, "%lld", (long long)(spec->first + spec->count - 1));
        args[0] = "range", args[1] = a1, args[2] = a2;
        break;
    case GW_READ_AROUND:
        snprintf(a2, sizeof a2, "%lld", (long long)spec->radius);
        args[0] = "around", args[1] = spec->member, args[2] = a2;
        break;
    case GW_READ_RANK:
        args[0] = "rank", args[1] = spec->member;
        nargs = 2;
        break;
    default:
        return RC_E_INTERNAL;
    }
    struct pending *p = calloc(1, sizeof *p);
    if (!p || !(p->w = calloc(1, sizeof *p->w))) {
        free(p);
        return RC_E_INTERNAL;
    }
    p->app = app;
    p->b = b;
    p->cb = cb;
    p->privdata = privdata;
    snprintf(p->board, sizeof p->board, "%s", board);
    snprintf(p->period, sizeof p->period, "%s", period);
    p->spec = *spec;
    if (spec->member) {
        snprintf(p->member, sizeof p->member, "%s", spec->member);
        p->spec.member = p->member;
    }
    int rc = call_read(app, b, board, period, args, nargs, on_read, p);
    if (rc) {
        free(p->w);
        free(p);
    }
    return rc;
}

/* ---- change events and the log ------------------------------------------ */

struct log_pending {
    gw_read_log_cb *cb;
    void *privdata;
};

static void on_log(redisReply *r, void *privdata)
{
    struct log_pending *p = privdata;
    int64_t seq = 0, total = 0, first = 0;
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 3 || reply_int(r->element[0], &seq) ||
        reply_int(r->element[1], &total) || reply_int(r->element[2], &first)) {
        p->cb(r ? RC_E_INTERNAL : RC_E_UNAVAILABLE, 0, 0, NULL, 0, p->privdata);
        free(p);
        return;
    }
    size_t n = r->elements - 3, k = 0;
    struct rc_event *evs = calloc(n ? n : 1, sizeof *evs);
    if (!evs) {
        p->cb(RC_E_INTERNAL, 0, 0, NULL, 0, p->privdata);
        free(p);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const redisReply *e = r->element[3 + i];
        if (e->type == REDIS_REPLY_STRING && rc_event_parse(e->str, e->len, &evs[k]) == 0)
            k++;
    }
    p->cb(0, seq, total, evs, k, p->privdata);
    free(evs);
    free(p);
}

int gw_read_log(struct gw_app *app, const struct rc_board *b, const char *board, const char *period,
                gw_read_log_cb *cb, void *privdata)
{
    const char *args[1] = {"log"};
    struct log_pending *p = malloc(sizeof *p);
    if (!p)
        return RC_E_INTERNAL;
    p->cb = cb;
    p->privdata = privdata;
    int rc = call_read(app, b, board, period, args, 1, on_log, p);
    if (rc)
        free(p);
    return rc;
}
