/* gw_ops.h - the request operations shared by WebSocket and REST: writes,
 * rank lookups and one-off window reads. Each answers through a callback with
 * the JSON text to send (an ack/rank/snapshot or an error object) and the
 * RC_* code (0 or an error) that picks the HTTP status. */
#ifndef GW_OPS_H
#define GW_OPS_H

#include "rc_proto.h"

#include "net/gw_caller.h"

struct gw_app;

/* The audit stream: admin actions (ops/gw_admin.c) and writes made with a
 * token (gw_ops.c), with who made them. */
#define GW_AUDIT_KEY "rc:audit"

/* json is owned by the callee (free it); code 0 or an RC_E_*. Runs exactly
 * once, possibly before the gw_op_* call returns. */
typedef void gw_op_done(void *privdata, int code, char *json);

/* incr/set/best/submit. Borrows r for the call only. */
void gw_ops_write(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                 void *privdata);

/* rank of r->member on r->board (r->period). */
void gw_ops_rank(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                void *privdata);

/* A one-off snapshot of r->view on r->board (REST GET /boards/{b}). */
void gw_ops_snapshot(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                    void *privdata);

/* A roster's one-off snapshot (ops/gw_roster.c): r->view the member list
 * of the team's members (or, for a team without members, a page of none),
 * shown as a roster: its best RC_MEMBERS_MAX rows, total team_total. */
void gw_ops_snapshot_roster(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r,
                           int64_t team_total, gw_op_done *done, void *privdata);

/* Resolves r->board and r->period: *decl and *p on success, else an error
 * code with err filled. Shared with the subscribe path. */
struct rc_board;
struct rc_period;
struct rc_error;
int gw_ops_resolve(struct gw_app *app, const struct rc_request *r, const struct rc_board **decl,
                  struct rc_period *p, struct rc_error *err);

/* May `who` do something needing `scope` on board (NULL: no board)? For
 * writes (RC_SCOPE_WRITE) also takes a token from the connection's and the
 * key's write buckets. Returns 0 or RC_E_UNAUTHORIZED / RC_E_FORBIDDEN /
 * RC_E_RATE_LIMITED with err filled. */
int gw_ops_authorize(struct gw_app *app, const struct gw_caller *who, unsigned scope, const char *board,
                    struct rc_error *err);

/* Reads "Bearer KEY" from an Authorization header value (or a bare ?token=
 * value when bearer is 0) and fills *who: the API key it names, else (when
 * tokens are accepted) the verified JWT's rights in who->token (allocated:
 * gw_caller_release frees it); or who->bad_token, with who->why for a token
 * that did not verify. Releases a token who held before. Leaves
 * who->conn_bucket alone. Borrows value. */
void gw_ops_identify(struct gw_app *app, const char *value, size_t len, int bearer, struct gw_caller *who);

/* Who, for logs and the audit stream: the key's name, or "jwt:SUB" ("jwt"
 * for a token without sub). Never a secret. */
void gw_ops_who(const struct gw_caller *who, char *out, size_t cap);

/* 1 when who holds a token that has expired now (with jwt_skew). */
int gw_ops_caller_expired(struct gw_app *app, const struct gw_caller *who);

/* Encodes an error reply and counts it in the metrics. */
char *gw_ops_error(struct gw_app *app, const char *id_json, int code, const char *message);

#endif
