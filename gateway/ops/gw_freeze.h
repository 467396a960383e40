/* gw_freeze.h - freeze and reveal (PROTOCOL v1.1, admin scope): one
 * lua/freeze.lua call each, audited like the other admin actions. The
 * viewers follow through the board's channel (fanout/gw_frozen.c). */
#ifndef GW_FREEZE_H
#define GW_FREEZE_H

#include "ops/gw_ops.h"

/* r->op RC_OP_FREEZE ({"op":"frozen"}) or RC_OP_REVEAL ({"op":"revealed"}). */
void gw_freeze_op(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                  void *privdata);

/* The freeze state of r->board (r->period), for GET .../freeze (admin). */
void gw_freeze_op_state(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r,
                        gw_op_done *done, void *privdata);

#endif
