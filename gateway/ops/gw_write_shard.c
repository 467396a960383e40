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
    struct rc_write_result res;   /* the script's answer, completed by the read */
};

static void finish(struct shard_write *sw)
{
    struct rc_error err = {0, ""};
    sw->cb(0, &sw->res, &err, sw->privdata);
    free(sw);
}

/* The merged read of the member after the write: its global rank and the
 * board's seq. A failed read leaves the script's score and says the rank is
 * unknown (the shard's rank and seq are not the board's). */
static void on_rank(int code, struct gw_window *w, void *privdata)
{
    struct shard_write *sw = privdata;
    if (code) {
        gw_log_warn("write to %s (%s): applied, but the global rank of %s could not be read (%s): acked with "
                    "rank unknown", sw->board, sw->shard, sw->res.member, rc_code_name(code));
        sw->res.rank_unknown = 1;
    } else {
        sw->res.rank = w->n ? w->first_rank : 0;
        sw->res.seq = w->seq;
    }
    gw_window_free(w);
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
    struct gw_read_spec spec = {.kind = GW_READ_RANK, .member = sw->res.member, .live = 1};
    int rc = gw_read(&sw->app->store, sw->b, sw->board, "", &spec, on_rank, sw);
    if (rc)
        on_rank(rc, NULL, sw);
}

int gw_write_shard_submit(struct gw_app *app, const struct rc_board *b, const struct rc_request *r,
                          const struct rc_period *p, gw_write_cb *cb, void *privdata, struct rc_error *err)
{
    struct shard_write *sw = calloc(1, sizeof *sw);
    if (!sw)
        return rc_error_set(err, RC_E_INTERNAL, "out of memory");
    sw->app = app;
    sw->b = b;
    sw->cb = cb;
    sw->privdata = privdata;
    snprintf(sw->board, sizeof sw->board, "%s", r->board);
    if (rc_shard_name(sw->shard, sizeof sw->shard, r->board, rc_shard_of(r->member, b->shards)) != 0) {
        free(sw);
        return rc_error_set(err, RC_E_INTERNAL, "shard name too long");
    }
    int code = gw_write_submit_as(app->redis, &app->write_script, b, r, p, sw->shard, gw_now_ms(app),
                                  (int)app->conf->ack_replicas, app->conf->ack_timeout_ms, on_written, sw, err);
    if (code)
        free(sw);
    return code;
}
