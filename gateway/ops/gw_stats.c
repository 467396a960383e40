/* gw_stats.c - a board's stats (see gw_stats.h): one consistent read of the
 * board for total and seq (lua/read.lua, no rows), then the viewer count
 * (fanout/gw_viewers.c: our count written, the other gateways' summed). */
#include "ops/gw_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "fanout/gw_fanout.h"
#include "store/gw_read.h"
#include "rc_err.h"

struct stats_call {
    struct gw_app *app;
    gw_op_done *done;
    void *privdata;
    char board[RC_BOARD_MAX + 1];
    char period[RC_PERIOD_ID_MAX];
    int periodic;
    int64_t total, seq;
};

static void finish(struct stats_call *c, int code, char *json)
{
    if (!code && !json) {
        code = RC_E_INTERNAL;
        json = gw_ops_error(c->app, NULL, code, "out of memory");
    }
    c->done(c->privdata, code, json);
    free(c);
}

static void on_viewers(int code, int64_t viewers, void *privdata)
{
    struct stats_call *c = privdata;
    if (code)
        finish(c, code, gw_ops_error(c->app, NULL, code, code == RC_E_UNAVAILABLE ? "Redis is unreachable"
                                                                                 : "viewer count failed"));
    else
        finish(c, 0, rc_proto_encode_stats(c->board, c->periodic ? c->period : NULL, viewers, c->total, c->seq));
}

static void on_read(int code, struct gw_window *w, void *privdata)
{
    struct stats_call *c = privdata;
    if (!code) {
        c->total = w->total;
        c->seq = w->seq;
    }
    gw_window_free(w);
    if (!code && !c->app->fanout)
        code = RC_E_UNAVAILABLE;
    if (!code)
        code = gw_viewers_count(c->app->fanout, c->board, on_viewers, c);
    if (code)
        finish(c, code, gw_ops_error(c->app, NULL, code, code == RC_E_UNAVAILABLE ? "Redis is unreachable"
                                                                                 : "read failed"));
}

void gw_stats_op(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                 void *privdata)
{
    struct rc_error err = {0, ""};
    const struct rc_board *decl = NULL;
    struct rc_period p;
    struct stats_call *c = calloc(1, sizeof *c);
    int code = c ? gw_ops_authorize(app, who, RC_SCOPE_READ, r->board, &err)
                 : rc_err_set(&err, RC_E_INTERNAL, "out of memory");
    if (!code)
        code = gw_ops_resolve(app, r, &decl, &p, &err);
    if (!code) {
        c->app = app;
        c->done = done;
        c->privdata = privdata;
        snprintf(c->board, sizeof c->board, "%s", r->board);
        snprintf(c->period, sizeof c->period, "%s", p.id);
        c->periodic = decl->period.kind != RC_PERIOD_NONE;
        struct gw_read_spec spec = {0};
        spec.kind = GW_READ_RANGE;
        spec.first = 0;
        spec.count = 0;
        code = gw_read(&app->store, decl, r->board, p.id, &spec, on_read, c);
        if (!code)
            return;
        rc_err_set(&err, code, code == RC_E_UNAVAILABLE ? "Redis is unreachable" : "read failed");
    }
    free(c);
    done(privdata, code, gw_ops_error(app, r->id_json, code, err.msg));
}
