/* gw_http_routes.h - the REST route table: method + path -> handler. */
#ifndef GW_HTTP_ROUTES_H
#define GW_HTTP_ROUTES_H

struct gw_http_req;

/* Answers a complete request (body received), now or when Redis replies. */
void gw_http_routes_dispatch(struct gw_http_req *q);

#endif
