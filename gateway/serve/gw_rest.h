/* gw_rest.h - the REST handlers (gw_rest.c), one per row of the route table
 * (gw_http_routes.c). Each answers q, now or when Redis replies; the table
 * has checked the method, the path, the names in it and, where the row says
 * so, the scope. */
#ifndef GW_REST_H
#define GW_REST_H

struct gw_http_req;

/* What a route's path names: {b} and {m}, NULL where the route has none.
 * Borrowed for the call only. */
struct gw_rest_target {
    const char *board;
    const char *member;
};

typedef void gw_rest_fn(struct gw_http_req *q, const struct gw_rest_target *t);

/* (GET /healthz and /metrics: gw_rest_status.h) */
/* GET /api/v1/boards: the configured boards. */
gw_rest_fn gw_rest_boards;
/* GET /api/v1/boards/{b}?top=|offset=&limit=|around=&radius=[&period=]: a snapshot. */
gw_rest_fn gw_rest_snapshot;
/* GET /api/v1/boards/{b}/members/{m}[?period=]: one member's rank. */
gw_rest_fn gw_rest_rank;
gw_rest_fn gw_rest_history; /* GET .../members/{m}/history (docs/history.md) */
/* GET /api/v1/boards/{b}/stats[?period=]: viewers (every gateway), total, seq. */
gw_rest_fn gw_rest_stats;
/* POST /api/v1/boards/{b}/scores: one write (the body as a WebSocket write op). */
gw_rest_fn gw_rest_write;
gw_rest_fn gw_rest_team;   /* PUT .../members/{m}/team (docs/teams.md) */
/* Admin: DELETE /api/v1/boards/{b}/members/{m}[?block=1], DELETE
 * .../blocked/{m}, POST .../reverse {"req"}, POST .../reset; each takes
 * ?period= or a "period" in the body. */
gw_rest_fn gw_rest_remove;
gw_rest_fn gw_rest_unblock;
gw_rest_fn gw_rest_reverse;
gw_rest_fn gw_rest_reset;
/* Freeze and reveal (admin): POST .../freeze, POST .../reveal {"steps":N|"all"},
 * GET .../freeze (the state); each takes ?period= or a "period" in the body. */
gw_rest_fn gw_rest_freeze;
gw_rest_fn gw_rest_reveal;
gw_rest_fn gw_rest_freeze_state;
/* GET /api/v1/members/{m}/profile. */
gw_rest_fn gw_rest_profile_get;
/* PUT /api/v1/members/{m}/profile: the body replaces the profile. */
gw_rest_fn gw_rest_profile_put;

#endif
