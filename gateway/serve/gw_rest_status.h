/* gw_rest_status.h - /healthz and /metrics (gw_rest_status.c), rows of the
 * route table (gw_http_routes.c) like the handlers of gw_rest.h. */
#ifndef GW_REST_STATUS_H
#define GW_REST_STATUS_H

#include "serve/gw_rest.h"

struct gw_app;

/* GET /healthz: 200 when Redis is up, else 503. */
gw_rest_fn gw_rest_status_health;
/* GET /metrics: the Prometheus text format; in a worker group, the whole
 * group's (docs/gateway.md, "Workers"). */
gw_rest_fn gw_rest_status_metrics;
/* Refreshes the socket gauges from serve/gw_peers and, in a worker group,
 * publishes this worker's counters to its slot (main's tick calls it). */
void gw_rest_status_publish(struct gw_app *app);

#endif
