/* gw_roster_at.h - who was on a team at a past moment (docs/history.md,
 * "Rosters at a moment"): lua/teams.lua's roster_at, one call. */
#ifndef GW_ROSTER_AT_H
#define GW_ROSTER_AT_H

#include <stdint.h>

struct gw_app;
struct rc_board;

/* The members of team `team` at B's seq target (by_time 0) or time target
 * (ms, by_time 1): code 0 and gone 0 with members (packed and sorted by
 * name, core/rc_members.h; owned by the callee: copy what you keep; NULL
 * when none), n names, len bytes; gone 1 when the membership's log does
 * not reach back that far (oldest: the oldest seq it can show); or an
 * RC_E_* code. */
typedef void gw_roster_at_cb(int code, int gone, int64_t oldest, const char *members, uint32_t n, uint32_t len,
                             void *privdata);

/* Asks Redis; cb runs later (never from inside). Returns 0, or an RC_E_*
 * code (cb not called). period: whose membership (its id, "" all-time).
 * Borrows b and team for the call only. */
int gw_roster_at_members(struct gw_app *app, const struct rc_board *b, const char *period, const char *team,
                         int by_time, int64_t target, gw_roster_at_cb *cb, void *privdata);

#endif
