/* gw_node_sub.h - the subscribe connection: PSUBSCRIBE of every pattern on
 * every connect, and pmessages to the on_message hook. Private to
 * gateway/redis/gw_node*.c. */
#ifndef GW_NODE_SUB_H
#define GW_NODE_SUB_H

struct gw_node;

/* Queues the setup on r->sub (called by the link when it connected). */
void gw_node_sub_setup(struct gw_node *r);

/* Queues PSUBSCRIBE pattern (borrowed until it is queued) on r->sub.
 * Returns 0 or RC_E_UNAVAILABLE (the connection cannot take it). */
int gw_node_sub_send(struct gw_node *r, const char *pattern);

#endif
