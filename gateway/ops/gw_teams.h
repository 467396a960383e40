/* gw_teams.h - keeps a team board exact after changes to its source board
 * that lua/write.lua did not make (docs/teams.md): an admin op's remove or
 * reverse (rebuild), a reset (reset), through lua/teams.lua. */
#ifndef GW_TEAMS_H
#define GW_TEAMS_H

#include "rc_layout.h"
#include "rc_period.h"

struct gw_app;

/* code 0: the team board was updated; else RC_E_UNAVAILABLE / RC_E_INTERNAL. */
typedef void gw_teams_cb(int code, void *privdata);

/* Sends lua/teams.lua for source board b (with teams) in period p: reset 1
 * empties the team board, 0 recomputes it. cb is called once, unless this
 * returns non-zero (nothing was sent). */
int gw_teams_sync(struct gw_app *app, const struct rc_board *b, const struct rc_period *p, int reset, gw_teams_cb *cb,
                  void *privdata);

#endif
