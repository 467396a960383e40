/* gw_stats.h - a board's stats (REST GET /api/v1/boards/{b}/stats): its
 * viewer count across every gateway, its total and seq
 * (docs/protocol-additions.md, "Viewer counts"). */
#ifndef GW_STATS_H
#define GW_STATS_H

#include "net/gw_caller.h"
#include "ops/gw_ops.h"
#include "rc_proto.h"

struct gw_app;

/* {"board","period" (periodic boards),"viewers","total","seq"} of r->board
 * in r->period (default: current): total and seq of that period, viewers of
 * the board in any period. Read scope. Answers through done, once. */
void gw_stats_op(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                 void *privdata);

#endif
