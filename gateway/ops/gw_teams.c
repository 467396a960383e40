/* gw_teams.c - lua/teams.lua on the event loop (see gw_teams.h). */
#include "ops/gw_teams.h"

#include <uv.h>


#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "redis/gw_redis.h"
#include "redis/gw_write.h"
#include "rc_err.h"
#include "rc_team_args.h"

struct teams_call {
    gw_teams_cb *cb;
    void *privdata;
};

static void on_reply(redisReply *r, void *privdata)
{
    struct teams_call *c = privdata;
    int code = 0;
    if (!r)
        code = RC_E_UNAVAILABLE;
    else if (r->type != REDIS_REPLY_ARRAY || r->elements != 3) {
        gw_log_warn("the teams script answered an unexpected reply (type %d)", r->type);
        code = RC_E_INTERNAL;
    }
    c->cb(code, c->privdata);
    free(c);
}

int gw_teams_sync(struct gw_app *app, const struct rc_board *b, const struct rc_period *p, int reset, gw_teams_cb *cb,
                  void *privdata)
{
    struct rc_team_args a;
    struct rc_error err = {0, ""};
    size_t lens[RC_TEAM_NKEYS + RC_TEAM_NARGV];
    if (!app->redis || rc_team_args_build(b, p, reset, gw_now_ms(app), gw_redis_is_cluster(app->redis) == 1, &a,
                                          &err) != 0)
        return RC_E_UNAVAILABLE;
    gw_write_new_epoch(a.epoch); /* if the team board starts a history, this is its id */
    for (unsigned i = 0; i < RC_TEAM_NKEYS + RC_TEAM_NARGV; i++)
        lens[i] = strlen(a.words[i]);
    struct teams_call *c = calloc(1, sizeof *c);
    if (!c)
        return RC_E_INTERNAL;
    c->cb = cb;
    c->privdata = privdata;
    if (gw_redis_eval(app->redis, &app->teams_script, RC_TEAM_NKEYS, RC_TEAM_NKEYS + RC_TEAM_NARGV, a.words, lens,
                      on_reply, c) != 0) {
        free(c);
        return RC_E_UNAVAILABLE;
    }
    return 0;
}
