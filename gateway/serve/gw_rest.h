/* gw_rest.h - REST handlers outside the ops layer (gw_rest.c). Each answers
 * q (now or when Redis replies); the route table checked the path. */
#ifndef GW_REST_H
#define GW_REST_H

struct gw_http_req;

/* GET /api/v1/boards: the configured boards. */
void gw_rest_boards(struct gw_http_req *q);
/* GET /api/v1/members/{m}/profile. */
void gw_rest_profile_get(struct gw_http_req *q, const char *member);
/* PUT /api/v1/members/{m}/profile: the body replaces the profile. */
void gw_rest_profile_put(struct gw_http_req *q, const char *member);
/* GET /healthz: 200 when Redis is up, else 503. */
void gw_rest_health(struct gw_http_req *q);
/* GET /metrics: the Prometheus text format. */
void gw_rest_metrics(struct gw_http_req *q);

#endif
