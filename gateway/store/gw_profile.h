/* gw_profile.h - member display data (rc:profile:MEMBER hashes), cached.
 *
 * Rows sent to viewers carry the member's profile fields ("name", "avatar",
 * ...). Reading a hash per row per delta would multiply Redis traffic, so the
 * gateway caches profiles for a short time (ttl): a profile written through
 * this gateway shows at once, one changed behind its back (redis-cli, another
 * gateway) within the ttl. Members without a profile are cached as empty.
 */
#ifndef GW_PROFILE_H
#define GW_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "rc_proto.h"
#include "rc_row.h"

struct gw_store;
struct gw_profiles;

/* An immutable profile, refcounted: rows that show it hold a reference.
 * The type is core's (core/rc_row.h), so rows carry it to the encoders. */

#define GW_PROFILE_MAX_FIELDS 16
#define GW_PROFILE_MAX_VALUE 256

/* A cache whose entries live ttl_ms, at most max_entries of them (past that
 * it starts over). Borrows s (Redis and the clock) for its whole life. */
struct gw_profiles *gw_profile_new(const struct gw_store *s, int64_t ttl_ms, size_t max_entries);
void gw_profile_free(struct gw_profiles *p);

/* The cached profile of member when fresh, else NULL. Borrowed: take a
 * reference (gw_profile_ref) to keep it past the current callback. */
struct rc_profile *gw_profile_get(struct gw_profiles *p, const char *member);

/* Replaces member's cached profile with pairs kv[0..n) (copied). Returns the
 * new profile (borrowed) or NULL on OOM. */
struct rc_profile *gw_profile_put(struct gw_profiles *p, const char *member, const struct rc_kv *kv, unsigned n);

typedef void gw_profiles_cb(void *privdata);

/* Makes sure members[0..n) are cached: sends HGETALL for those that are not
 * fresh and calls cb once all answered (or failed: then they are cached as
 * empty for a short while). Calls cb synchronously when nothing is missing.
 * Borrows members for the call only. Returns 0, or -1 when Redis is down (cb
 * not called; the caller proceeds without profiles). */
int gw_profile_fetch(struct gw_profiles *p, const char *const *members, size_t n, gw_profiles_cb *cb,
                      void *privdata);

void gw_profile_ref(struct rc_profile *pr);
void gw_profile_unref(struct rc_profile *pr);

#endif
