/* gw_ws_rows.h - a WebSocket subscribe charged with the rows it reads.
 *
 * Every board read a subscribe sends (the new view's snapshot: the fan-out
 * sends it before gw_fanout_subscribe returns) is charged, until answered,
 * to the connection and to its source address (store/gw_read_gate.h). A
 * subscribe whose view could take either past its share ([limits]
 * conn_read_rows, ip_read_rows) is answered rate_limited at once and reads
 * nothing: deep pages are bounded in flight per connection and per address,
 * on top of read_rows_in_flight for the whole process (docs/gateway.md, "The
 * Redis links"). A connection or address with nothing in flight is never
 * refused, whatever the view's size. */
#ifndef GW_WS_ROWS_H
#define GW_WS_ROWS_H

struct gw_app;
struct gw_conn;
struct rc_request;
struct rc_board;
struct rc_period;

/* gw_fanout_subscribe with the charge, or the rate_limited answer. */
void gw_ws_rows_subscribe(struct gw_app *app, struct gw_conn *c, const struct rc_request *r,
                          const struct rc_board *decl, const struct rc_period *p);

#endif
