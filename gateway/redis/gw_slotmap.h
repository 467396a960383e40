/* gw_slotmap.h - reading a CLUSTER SLOTS answer: the one parser of the
 * gateway's slot map (redis/gw_redis_nodes.c) and the tools' (cli/
 * gw_cli_redis.c). The checks of an entry are core's (rc_slot_range_ok,
 * rc_slot_map_host); this walks hiredis's reply. */
#ifndef GW_SLOTMAP_H
#define GW_SLOTMAP_H

#include <stddef.h>

#include <hiredis/hiredis.h>

/* One range of slots and its primary. */
struct gw_slotmap_range {
    unsigned start, end;   /* first and last slot, < RC_SLOTS */
    const char *host;      /* borrowed from the reply, or the asked host */
    int port;
};

/* 0 when rep is a slot map: an array of entries [start, end, [host, port,
 * id...], replicas...] that each pass rc_slot_range_ok; -1 otherwise (then
 * the caller keeps its map as it is). */
int gw_slotmap_check(const redisReply *rep);

/* Entry i of a checked map (i < rep->elements); a host Redis leaves out ("" or
 * "?") is asked_host. out borrows from rep and asked_host. */
void gw_slotmap_range(const redisReply *rep, size_t i, const char *asked_host, struct gw_slotmap_range *out);

#endif
