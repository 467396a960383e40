/* gw_teamseed.h - a period's team membership seeded from the latest
 * earlier period's (core/rc_team_args.h, "a period's membership";
 * docs/teams.md, "Periods"), on the event loop. */
#ifndef GW_TEAMSEED_H
#define GW_TEAMSEED_H

#include <stdint.h>

#include "redis/gw_redis.h"
#include "rc_conf.h"
#include "rc_period.h"

/* code 0: the period's membership exists now (seeded by this call or by
 * someone else first); else an RC_E_* code and nothing is known to exist. */
typedef void gw_teamseed_cb(int code, void *privdata);

/* Seeds source board b's membership in period p when it does not exist:
 * finds the latest earlier period's (HGETALL, one period at a time), copies
 * it with lua/teams.lua's seed on p's slot (refused there when p was
 * seeded meanwhile: two gateways racing are safe), then moves the board's
 * pointer forward and lets the earlier membership expire with its
 * period's keys. cb runs later (never from inside). Returns 0, or an
 * RC_E_* code (cb not called). b must outlive the call (config boards do). */
int gw_teamseed_run(struct gw_redis *redis, const struct rc_board *b, const struct rc_period *p, int64_t now_ms,
                    gw_teamseed_cb *cb, void *privdata);

#endif
