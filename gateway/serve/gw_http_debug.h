/* gw_http_debug.h - test-only HTTP endpoints (gw_http_debug.c). */
#ifndef GW_HTTP_DEBUG_H
#define GW_HTTP_DEBUG_H

struct gw_http_req;

/* POST /api/v1/debug/clock (the route table checked the method and the
 * admin scope): shifts the gateway's clock; 404 unless test_clock. */
void gw_http_debug_clock(struct gw_http_req *q);

#endif
