/* gw_lock.h - one Redis lock with an owner, used by the jobs that must run on
 * one gateway at a time (the archive run, the decay rebuild): acquire with an
 * expiry (SET NX PX), renew for long runs and release, both compare-and-set
 * on the owner's token (lua/lock_renew.lua, lua/lock_release.lua), so a
 * gateway whose lock expired never extends or deletes the next owner's. */
#ifndef GW_LOCK_H
#define GW_LOCK_H

#include <stdint.h>

#include <hiredis/async.h>

#include "redis/gw_redis.h"
#include "redis/gw_script.h"

/* The two scripts; one per user (gw_script caches the SHA per connection). */
struct gw_lock_scripts {
    struct gw_script renew, release;
};

void gw_lock_scripts_init(struct gw_lock_scripts *s);

/* A random owner token: 32 hex digits (128 bits from the OS), NUL-terminated
 * in out[GW_LOCK_TOKEN_MAX]; one per job instance, naming it in its locks. */
#define GW_LOCK_TOKEN_MAX 33
void gw_lock_token(char *out);

/* rc: 1 the caller holds the lock (taken, renewed or released by it), 0 it
 * does not (another owner, or expired), or a negative RC_E_* (no reply:
 * RC_E_UNAVAILABLE; an error reply: RC_E_INTERNAL, with err set). Called
 * exactly once per request that returned 0. */
typedef void gw_lock_cb(int rc, const char *err, void *privdata);

/* SET key token NX PX ttl_ms. Returns 0 (cb later) or an RC_E_* (cb not called). */
int gw_lock_acquire(struct gw_redis *redis, const char *key, const char *token, int64_t ttl_ms, gw_lock_cb *cb,
                    void *privdata);

/* Extends the lock to ttl_ms from now, only when token holds it. */
int gw_lock_renew(struct gw_lock_scripts *s, struct gw_redis *redis, const char *key, const char *token,
                  int64_t ttl_ms, gw_lock_cb *cb, void *privdata);

/* Deletes the lock, only when token holds it. cb may be NULL. */
int gw_lock_release(struct gw_lock_scripts *s, struct gw_redis *redis, const char *key, const char *token,
                    gw_lock_cb *cb, void *privdata);

#endif
