/* gw_ws_drain.h - services a connection again while lws 4.1 still holds
 * part of a compressed message it has not inflated (gw_ws_drain.c says why).
 * Loop thread only. */
#ifndef GW_WS_DRAIN_H
#define GW_WS_DRAIN_H

struct gw_app;
struct lws;

/* Services wsi again at the next idle turn (once however often asked). */
void gw_ws_drain_push(struct gw_app *app, struct lws *wsi);

/* wsi is closing: never service it again. Call from its close callback. */
void gw_ws_drain_forget(struct gw_app *app, struct lws *wsi);

#endif
