/* rc_query.h - a REST query string mapped to a request (PROTOCOL.md, "REST
 * API"): pure, so every parameter, bad value and duplicate is tested alone
 * (tests/unit/test_query.c). The glue (serve/) hands over the url-decoded
 * "name=value" fragments in order; nothing here reads a socket. */
#ifndef RC_QUERY_H
#define RC_QUERY_H

#include <stddef.h>

#include "rc_err.h"
#include "rc_proto.h"

/* The longest query fragment any route reads (a member name, a period, a
 * token); a longer one is refused before anything reads it, so no value is
 * ever cut or taken for absent. */
#define RC_QUERY_VALUE_MAX 255

/* A query: n fragments "name=value", borrowed from the caller. */
struct rc_query {
    const char *const *args;
    size_t n;
};

/* The value of argument `name` (without '='), borrowed from q, or NULL when
 * absent. The first occurrence wins. */
const char *rc_query_get(const struct rc_query *q, const char *name);

/* The checks every route makes first: no fragment over RC_QUERY_VALUE_MAX,
 * no ?period= over RC_PERIOD_SEL_MAX. Returns 0 or RC_E_BAD_REQUEST (err
 * filled). */
int rc_query_check(const struct rc_query *q, struct rc_error *err);

/* Fills r->view (and r->period) from ?top=N | ?offset=O&limit=L |
 * ?around=M&radius=R, ?places=shared|unique, ?period= and the moment
 * ?at_seq=S | ?at=MS (docs/history.md). No view at all means top 10. Returns 0
 * or RC_E_BAD_REQUEST (err filled). */
int rc_query_view(const struct rc_query *q, struct rc_request *r, struct rc_error *err);

/* GET .../members/{m}/history: ?from=MS&to=MS&step=MS (required) and
 * ?live=1 into r (op RC_OP_HISTORY); the point rule of rc_proto_at_check_history. Returns 0 or
 * RC_E_BAD_REQUEST (err filled). */
int rc_query_history(const struct rc_query *q, struct rc_request *r, struct rc_error *err);
/* ?block=1 or ?block=true: 1, else 0. */
int rc_query_block(const struct rc_query *q);

#endif
