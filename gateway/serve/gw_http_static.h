/* gw_http_static.h - static files (gw_http_static.c). */
#ifndef GW_HTTP_STATIC_H
#define GW_HTTP_STATIC_H

struct gw_http_req;

/* GET or HEAD of a file under web_root; 404 when it leads out of it. */
void gw_http_static(struct gw_http_req *q);

#endif
