/* gw_store.h - what the store/ modules (reads, archive reads, the profile
 * cache) need from the process, in one small context instead of the whole
 * struct gw_app: main fills it, the owners of each part keep it current.
 * It lives as long as the process (it is embedded in struct gw_app), so
 * modules and requests in flight may keep a pointer to it. */
#ifndef GW_STORE_H
#define GW_STORE_H

#include <stdint.h>

#include "base/gw_clock.h"

struct gw_redis;
struct gw_script;
struct gw_profiles;
struct gw_adb;
struct gw_read_gate;

struct gw_store {
    struct gw_redis *redis;        /* the connection manager; NULL before start and after stop (main) */
    struct gw_script *read_script; /* lua/read.lua, loaded by the connection manager */
    struct gw_profiles *profiles;  /* the profile cache every read joins with */
    struct gw_adb *adb;            /* the archive database; NULL while none is open (jobs/gw_archive) */
    struct gw_read_gate *read_gate; /* rows of board reads in flight (store/gw_read_gate.h); NULL: no cap */
    const struct gw_clock *clock;  /* "now": profile ttl, which period is past */
    unsigned history_undo_max;     /* [limits] history_undo_max: changes one moment read may undo (0: no cap) */
    uint64_t *undo_refused;        /* counts moment reads refused past it (/metrics); NULL: not counted */
    uint64_t *chain_reads;         /* counts moments read by a chain (store/gw_read_at_chain.c); NULL: not */
};

static inline int64_t gw_store_now_ms(const struct gw_store *s)
{
    return gw_clock_now_ms(s->clock);
}

#endif
