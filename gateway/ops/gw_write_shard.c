/* gw_write_shard.c - a write to a sharded board: the member's shard, then
 * its global rank (gw_write_shard.h). */
#include "ops/gw_write_shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "store/gw_read.h"
#include "rc_err.h"
#include "rc_shard.h"

struct shard_write {
    struct gw_app *app;
    const struct rc_board *b;
    gw_write_cb *cb;
    void *privdata;
    char board[RC_BOARD_MAX + 1];
    char shard[RC_SHARD_NAME_MAX + 1];
    char period[RC_PERIOD_ID_MAX];  /* the period written ("" all-time): the rank is read there */
    unsigned index;                 /* the member's shard */
    struct rc_write_result res;   /* the script's answer, completed by the read */
};

static void finish(struct shard_write *sw)
{
    struct rc_error err = {0, ""};
    sw->cb(0, &sw->res, &err, sw->privdata);
    free(sw);
}

/* The other shards' part of the member's rank, read right after the write
 * (store/gw_read_ahead.c): the script's rank in the member's shard plus the
 * members the others hold ahead of it is its global rank; the seqs add up
 * to the board's. A failed read leaves the script's score and says the rank
 * is unknown (the shard's rank and seq are not the board's). */
static void on_ahead(int code, int64_t ahead, int64_t seqs, void *privdata)
{
    struct shard_write *sw = privdata;
    if (code) {
        gw_log_warn("write to %s (%s): applied, but the global rank of %s could not be read (%s): acked with "
                    "rank unknown", sw->board, sw->shard, sw->res.member, rc_err_code_name(code));
        sw->res.rank_unknown = 1;
    } else {
        if (sw->res.rank > 0)
            sw->res.rank += ahead;
        sw->res.seq += seqs;
    }
    finish(sw);
}

static void on_written(int code, const struct rc_write_result *res, const struct rc_error *err, void *privdata)
{
    struct shard_write *sw = privdata;
    if (code || res->status) {
        sw->cb(code, res, err, sw->privdata);
        free(sw);
        return;
    }
    sw->res = *res;
    int on = sw->res.has_score && sw->res.rank > 0;
    int rc = gw_read_ahead(&sw->app->store, sw->b, sw->board, sw->period, sw->index, on, sw->res.composite, on_ahead,
                           sw);
    if (rc)
        on_ahead(rc, 0, 0, sw);
}

int gw_write_shard_submit(struct gw_app *app, const struct rc_board *b, const struct rc_request *r,
                          const struct rc_period *p, unsigned flags, gw_write_cb *cb, void *privdata,
                          struct rc_error *err)
{
    struct shard_write *sw = calloc(1, sizeof *sw);
    if (!sw)
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    sw->app = app;
    sw->b = b;
    sw->cb = cb;
    sw->privdata = privdata;
    snprintf(sw->board, sizeof sw->board, "%s", r->board);
    snprintf(sw->period, sizeof sw->period, "%s", p->id);
    sw->index = rc_shard_of(r->member, b->shards);
    if (rc_shard_name(sw->shard, sizeof sw->shard, r->board, sw->index) != 0) {
        free(sw);
        return rc_err_set(err, RC_E_INTERNAL, "shard name too long");
    }
    int code = gw_write_submit_as(app->redis, &app->write_script, b, r, p, sw->shard, gw_now_ms(app),
                                  (int)app->conf->ack_replicas, app->conf->ack_timeout_ms, flags, on_written, sw,
                                  err);
    if (code)
        free(sw);
    return code;
}
