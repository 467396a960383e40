/* gw_get.h - the one-shot reads of PROTOCOL v1.2 (docs/history.md): `get`
 * (a window once, at the present or at a past moment; REST GET
 * /boards/{b} with at_seq or at) and `history` (a member's score and rank
 * at points in time). Each answers through a gw_op_done callback with the
 * JSON to send and the RC_* code. */
#ifndef GW_GET_H
#define GW_GET_H

#include "ops/gw_ops.h"

/* get: r->view on r->board (r->period) at r->at_kind/r->at; a roster
 * (present only) through gw_roster_read. Borrows r for the call only, who
 * until done. */
void gw_get_read(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                 void *privdata);

/* history: r->member on r->board at r->from_ms, + step_ms, .. <= to_ms. */
void gw_get_history(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                    void *privdata);

#endif
