/* gw_iplimit.h - WebSocket connections per source address ([limits]
 * max_conns_per_ip): a count per address, kept while connections are open. */
#ifndef GW_IPLIMIT_H
#define GW_IPLIMIT_H

struct gw_iplimit;

struct gw_iplimit *gw_iplimit_new(void);
void gw_iplimit_free(struct gw_iplimit *l);

/* Connections open now from address ip (borrowed). */
unsigned gw_iplimit_count(const struct gw_iplimit *l, const char *ip);

/* One more / one fewer from ip. add returns 0 or -1 (out of memory). */
int gw_iplimit_add(struct gw_iplimit *l, const char *ip);
void gw_iplimit_remove(struct gw_iplimit *l, const char *ip);

#endif
