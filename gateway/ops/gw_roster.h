/* gw_roster.h - a roster read over REST (?team=T, docs/teams.md). */
#ifndef GW_ROSTER_H
#define GW_ROSTER_H

#include "ops/gw_ops.h"

struct gw_app;
struct gw_caller;
struct rc_request;

/* The roster of team r->view.around (r->view.kind RC_VIEW_TEAM) on board
 * r->board, answered through done like gw_ops_snapshot. Borrows who until
 * done runs, r for the call only. */
void gw_roster_read(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                    void *privdata);

#endif
