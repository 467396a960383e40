/* gw_iplimit.h - one entry per source address: the sockets open from it
 * ([limits] max_conns_per_ip), its read bucket (ip_read_rate) and its
 * bucket of new connections (ip_handshake_rate). An entry
 * outlives the address's last socket until its buckets would be full again
 * (gw_iplimit_sweep), so an address cannot refill its bucket by
 * reconnecting. */
#ifndef GW_IPLIMIT_H
#define GW_IPLIMIT_H

#include <stdint.h>

#include "rc_auth.h"
#include "rc_hmap.h"

struct gw_iplimit;

struct gw_read_owner;

struct gw_ipentry {
    unsigned count;            /* sockets open now */
    struct rc_bucket reads;    /* reads from this address */
    struct rc_bucket handshakes; /* new connections from this address (ip_handshake_rate) */
    struct gw_read_owner *read_rows; /* rows of its reads in flight (ip_read_rows; store/gw_read_gate.h),
                                        made on first use; NULL until then */
};

/* An empty table whose hash is keyed with seed (pick it at random, so clients
 * cannot choose addresses that share a chain). NULL: out of memory. */
struct gw_iplimit *gw_iplimit_new(struct rc_hash_key seed);
void gw_iplimit_free(struct gw_iplimit *l);

/* The entry for ip (borrowed), or NULL when there is none. */
struct gw_ipentry *gw_iplimit_find(struct gw_iplimit *l, const char *ip);

/* The entry for ip, created with count 0 when missing (NULL: out of
 * memory). The pointer stays valid while count > 0. */
struct gw_ipentry *gw_iplimit_get(struct gw_iplimit *l, const char *ip);

/* The rate and burst of an entry's buckets, for gw_iplimit_sweep. */
struct gw_iplimit_rates {
    double read_rate, read_burst;           /* ip_read_rate, ip_read_burst */
    double handshake_rate, handshake_burst; /* ip_handshake_rate, ip_handshake_burst */
};

/* Frees entries without sockets whose buckets have both refilled by now_ms
 * and no read rows in flight, and returns how many entries remain. */
unsigned gw_iplimit_sweep(struct gw_iplimit *l, int64_t now_ms, const struct gw_iplimit_rates *r);

#endif
