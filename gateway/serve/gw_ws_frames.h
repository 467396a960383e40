/* gw_ws_frames.h - what WebSocket frames cost outside requests
 * (docs/security.md, "Frames"): continuation, ping and pong frames charged
 * to the read budgets, and messages that never finish (message_timeout).
 * Loop thread only. */
#ifndef GW_WS_FRAMES_H
#define GW_WS_FRAMES_H

struct gw_app;
struct gw_conn;

/* Installs the charge hook of serve/gw_wsguard.h. Call once at start. */
void gw_ws_frames_setup(void);

/* lws handed over a piece of a data message on c; final: it was the last
 * (the message is whole). What tells message_timeout about connections the
 * frame guard does not watch (TLS). */
void gw_ws_frames_received(struct gw_conn *c, int final);

/* Called on every tick: every quarter of message_timeout (at most every
 * 0.5 s) closes with 1008 the connections whose message has been
 * unfinished for message_timeout. */
void gw_ws_frames_tick(struct gw_app *app);

#endif
