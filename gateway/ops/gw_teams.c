/* gw_teams.c - lua/teams.lua on the event loop (see gw_teams.h). A rebuild
 * of a period whose team membership is not seeded yet is answered
 * "team_unseeded" with nothing changed: the membership is seeded from the
 * latest earlier period's (redis/gw_teamseed.c) and the call sent again. */
#include "ops/gw_teams.h"

#include <uv.h>


#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "redis/gw_redis.h"
#include "redis/gw_teamseed.h"
#include "redis/gw_write.h"
#include "rc_err.h"
#include "rc_team_args.h"

struct teams_call {
    struct gw_app *app;
    const struct rc_board *b;
    struct rc_period p;
    int reset;
    int seeded;         /* seeded for this call: once only */
    gw_teams_cb *cb;
    void *privdata;
};

static int send_call(struct teams_call *c);

static void on_seeded(int code, void *privdata)
{
    struct teams_call *c = privdata;
    if (!code && (code = send_call(c)) == 0)
        return;
    c->cb(code, c->privdata);
    free(c);
}

static void on_reply(redisReply *r, void *privdata)
{
    struct teams_call *c = privdata;
    int code = 0;
    if (!r)
        code = RC_E_UNAVAILABLE;
    else if (r->type != REDIS_REPLY_ARRAY || r->elements != 3) {
        gw_log_warn("the teams script answered an unexpected reply (type %d)", r->type);
        code = RC_E_INTERNAL;
    } else if (r->element[0]->type == REDIS_REPLY_STRING && strcmp(r->element[0]->str, "team_unseeded") == 0) {
        code = RC_E_UNAVAILABLE;
        if (!c->seeded) {
            c->seeded = 1;
            if (gw_teamseed_run(c->app->redis, c->b, &c->p, gw_now_ms(c->app), on_seeded, c) == 0)
                return;
        }
    }
    c->cb(code, c->privdata);
    free(c);
}

static int send_call(struct teams_call *c)
{
    struct rc_team_args a;
    struct rc_error err = {0, ""};
    size_t lens[RC_TEAM_NKEYS + RC_TEAM_NARGV];
    struct gw_app *app = c->app;
    if (!app->redis || rc_team_args_build(c->b, &c->p, c->reset, gw_now_ms(app),
                                          gw_redis_is_cluster(app->redis) == 1, &a, &err) != 0)
        return RC_E_UNAVAILABLE;
    gw_write_new_epoch(a.epoch); /* if the team board starts a history, this is its id */
    for (unsigned i = 0; i < RC_TEAM_NKEYS + RC_TEAM_NARGV; i++)
        lens[i] = strlen(a.words[i]);
    if (gw_redis_eval(app->redis, &app->teams_script, RC_TEAM_NKEYS, RC_TEAM_NKEYS + RC_TEAM_NARGV, a.words, lens,
                      on_reply, c) != 0)
        return RC_E_UNAVAILABLE;
    return 0;
}

int gw_teams_sync(struct gw_app *app, const struct rc_board *b, const struct rc_period *p, int reset, gw_teams_cb *cb,
                  void *privdata)
{
    struct teams_call *c = calloc(1, sizeof *c);
    if (!c)
        return RC_E_INTERNAL;
    *c = (struct teams_call){app, b, *p, reset, 0, cb, privdata};
    int rc = send_call(c);
    if (rc)
        free(c);
    return rc;
}
