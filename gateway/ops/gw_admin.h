/* gw_admin.h - admin operations (admin scope): remove a member and
 * optionally block it from writing, unblock, reverse a write by its req,
 * reset a board. Each runs as one lua/admin.lua call and is appended to the
 * audit stream rc:audit (XADD) with who, what and when. */
#ifndef GW_ADMIN_H
#define GW_ADMIN_H

#include <stdint.h>

#include "ops/gw_ops.h"

/* r->op is one of RC_OP_REMOVE, RC_OP_UNBLOCK, RC_OP_REVERSE, RC_OP_RESET.
 * Answers through done like the other ops. */
void gw_admin_op(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                 void *privdata);

/* Who did what to which board, when: one entry of the audit stream rc:audit
 * (fields who, op, board, period, member, req, block, at). Sent on the
 * command connection right after the action; never holds a secret. */
void gw_admin_audit(struct gw_app *app, const char *who, enum rc_op op, const char *board, const char *period,
                    const char *member, const char *req, int block, int64_t at_ms);

#endif
