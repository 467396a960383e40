/* gw_ws_rows.c - a subscribe charged with the rows it reads
 * ([limits] conn_read_rows, ip_read_rows; gw_ws_rows.h). */
#include "serve/gw_ws_rows.h"

#include <stdint.h>
#include <stdio.h>

#include "fanout/gw_fanout.h"
#include "gw_app.h"
#include "net/gw_conn.h"
#include "serve/gw_peers.h"
#include "ops/gw_ops.h"
#include "rc_err.h"
#include "store/gw_read_gate.h"

/* The rows a new view reads for its snapshot: its charge under
 * conn_read_rows and ip_read_rows (a read's own count is
 * gw_read_gate_rows; this is the same for the request, before any read). */
static int64_t view_rows(const struct rc_view *v)
{
    switch (v->kind) {
    case RC_VIEW_TOP:
    case RC_VIEW_PAGE:
        return v->limit;
    case RC_VIEW_AROUND:
        return 2 * (int64_t)v->radius + 1;
    case RC_VIEW_MEMBERS:
        return v->nmembers;
    case RC_VIEW_TEAM:
        return 200; /* (a roster shows at most 200 rows) */
    default:
        return 1;
    }
}

/* Subscribes with the reads it sends charged to c and its address; refused
 * (rate_limited, nothing read) when the view's rows would take either past
 * its share of rows in flight (docs/gateway.md, "The Redis links"). */
void gw_ws_rows_subscribe(struct gw_app *app, struct gw_conn *c, const struct rc_request *r,
                          const struct rc_board *decl, const struct rc_period *p)
{
    const struct rc_conf *conf = app->conf;
    if (!c->read_rows)
        c->read_rows = gw_read_gate_owner_new();
    struct gw_read_owner *addr = gw_peers_read_rows(c->sock);
    int64_t rows = view_rows(&r->view);
    char msg[160];
    if (c->read_rows && c->read_rows->rows > 0 && c->read_rows->rows + rows > conf->conn_read_rows) {
        snprintf(msg, sizeof msg, "too many rows being read for this connection (conn_read_rows %u): try again later",
                 conf->conn_read_rows);
    } else if (addr && addr->rows > 0 && addr->rows + rows > conf->ip_read_rows) {
        snprintf(msg, sizeof msg, "too many rows being read for this address (ip_read_rows %u): try again later",
                 conf->ip_read_rows);
    } else {
        gw_read_gate_charge(app->store.read_gate, c->read_rows, addr);
        gw_fanout_subscribe(app->fanout, c, r, decl, p);
        gw_read_gate_charge(app->store.read_gate, NULL, NULL);
        return;
    }
    app->metrics.read_rows_limited++;
    app->metrics.reads_limited++;
    gw_conn_reply(c, gw_ops_error(app, r->id_json, RC_E_RATE_LIMITED, msg));
}

