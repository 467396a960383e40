/* gw_node_setup.h - the command connection's setup on every connect
 * (keyspace events, SCRIPT LOAD, PING). Private to gateway/redis/gw_node*.c. */
#ifndef GW_NODE_SETUP_H
#define GW_NODE_SETUP_H

struct gw_node;
struct gw_script;

/* Queues the setup on r->cmd (called by the link when it connected). */
void gw_node_setup_cmd(struct gw_node *r);

/* Queues the setup on r->wr (AUTH when set, PING). */
void gw_node_setup_wr(struct gw_node *r);

/* Queues SCRIPT LOAD of s on r->cmd (a setup step while connecting).
 * Returns 0 or RC_E_UNAVAILABLE (the connection cannot take it). */
int gw_node_setup_load_script(struct gw_node *r, struct gw_script *s);

#endif
