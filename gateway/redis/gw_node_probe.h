/* gw_node_probe.h - do keyspace notifications reach us? Asked by writing a
 * probe key when CONFIG cannot tell (an ACL user without CONFIG, a renamed
 * CONFIG, or keyspace_events = off). Private to gateway/redis/gw_node*.c. */
#ifndef GW_NODE_PROBE_H
#define GW_NODE_PROBE_H

#include <stddef.h>

struct gw_node;

/* The key the probe writes and deletes. Its keyspace channel matches the
 * gateway's keyspace pattern (__keyspace@*__:rc:{*}:z); no board has a key
 * without '|' in its hash tag, so it never meets a board's data. */
#define GW_NODE_PROBE_KEY "rc:{~probe}:z"

/* Asks for a probe once this attempt's node is up (setup calls it when
 * CONFIG GET is refused or not asked). Needs a keyspace pattern. */
void gw_node_probe_want(struct gw_node *r);
/* The node just came up: runs the probe if it was wanted. */
void gw_node_probe_after_up(struct gw_node *r);
/* A keyspace message on channel: 1 when it is the probe's (swallowed:
 * counted here, never given to the hooks), else 0. */
int gw_node_probe_heard(struct gw_node *r, const char *channel);
/* The subscribe connection answered a PING: the probe's, when one is out.
 * Every notification of the probe was delivered before it, so this
 * decides. */
void gw_node_probe_pong(struct gw_node *r);

#endif
