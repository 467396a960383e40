/* gw_join.h - the one profile join: a window's rows get their members'
 * profiles (store/gw_profile.h), fetched from Redis when not cached. Used by
 * every read path (Redis reads, archive reads) and the fan-out. */
#ifndef GW_JOIN_H
#define GW_JOIN_H

#include "store/gw_read.h"

struct gw_profiles;

/* Attaches the cached profiles to w's rows (a reference each; rows without a
 * cached profile get NULL). Synchronous. */
void gw_join_attach(struct gw_profiles *p, struct gw_window *w);

typedef void gw_join_cb(struct gw_window *w, void *privdata);

/* Fetches the profiles of w's rows that are not cached, attaches them all
 * (gw_join_attach) and calls cb(w, privdata) once: later, or at once when
 * nothing is missing, Redis is down or memory is short (then rows go out with
 * what the cache holds). w stays the caller's and must live until cb. */
void gw_join_profiles(struct gw_profiles *p, struct gw_window *w, gw_join_cb *cb, void *privdata);

#endif
