/* gw_cli_teams.c - `rankcast teams rebuild BOARD [--period P]`
 * (docs/teams.md): recomputes the team board of BOARD from BOARD itself
 * through lua/teams.lua, for changes made to BOARD outside rankcast (a
 * redis-cli ZADD cannot update team sums by itself). */
#include "cli/gw_cli_int.h"
#include "cli/gw_cli_teamseed.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "redis/gw_write.h"
#include "rc_err.h"
#include "rc_lua.h"
#include "rc_period.h"
#include "rc_team_args.h"

int gw_cli_teams(struct gw_cli *c)
{
    struct rc_period p;
    struct rc_team_args a;
    struct rc_error err = {0, ""};
    char msg[GW_CLI_ERR_MAX];
    int64_t now = gw_cli_base_now_ms();
    if (!c->b->teams[0])
        return gw_cli_base_fail(c, GW_CLI_USAGE, "board %s has no team board (no teams = in its config)", c->board);
    if (rc_period_select(&c->b->period, c->period ? c->period : "", now, &p) != 0)
        return gw_cli_base_fail(c, GW_CLI_USAGE, "no period '%s' on board %s", c->period ? c->period : "", c->board);
    struct gw_cli_redis *r = gw_cli_base_connect(c);
    if (!r)
        return GW_CLI_UNAVAILABLE;
    if (rc_team_args_build(c->b, &p, 0, now, gw_cli_redis_is_cluster(r), &a, &err) != 0) {
        gw_cli_redis_close(r);
        return gw_cli_base_fail(c, GW_CLI_USAGE, "%s", err.msg);
    }
    gw_write_new_epoch(a.epoch);
    char nkeys[8];
    snprintf(nkeys, sizeof nkeys, "%d", RC_TEAM_NKEYS);
    const char *argv[3 + RC_TEAM_NKEYS + RC_TEAM_NARGV] = {"EVALSHA", rc_lua_teams_sha, nkeys};
    size_t lens[3 + RC_TEAM_NKEYS + RC_TEAM_NARGV];
    for (unsigned i = 0; i < RC_TEAM_NKEYS + RC_TEAM_NARGV; i++)
        argv[3 + i] = a.words[i];
    for (unsigned i = 0; i < 3 + RC_TEAM_NKEYS + RC_TEAM_NARGV; i++)
        lens[i] = strlen(argv[i]);
    struct gw_cli_cmd cmd = {3 + RC_TEAM_NKEYS + RC_TEAM_NARGV, argv, lens, 3, rc_lua_teams};
    redisReply *rep = gw_cli_redis_command(r, &cmd, msg, sizeof msg);
    if (gw_cli_teamseed_asked(rep)) {
        /* a period whose membership is not seeded yet: seeded, then again */
        freeReplyObject(rep);
        rep = gw_cli_teamseed_run(r, c->b, &p, now, msg, sizeof msg) == 0 ? gw_cli_redis_command(r, &cmd, msg, sizeof msg)
                                                                        : NULL;
    }
    int rc = GW_CLI_OK;
    if (!rep) {
        rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "%s", msg);
    } else if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 3 || rep->element[1]->type != REDIS_REPLY_INTEGER) {
        rc = gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "the teams script answered: %s",
                         rep->type == REDIS_REPLY_ERROR ? rep->str : "an unexpected reply");
    } else {
        fprintf(stderr, "rankcast teams rebuild %s: team board %s recomputed: %lld teams changed, seq %lld\n",
                c->board, c->b->teams, rep->element[1]->integer, rep->element[2]->integer);
    }
    if (rep)
        freeReplyObject(rep);
    gw_cli_redis_close(r);
    return rc;
}
