/* gw_roster.c - a roster read over REST (GET /api/v1/boards/{b}?team=T,
 * PROTOCOL v1.2, docs/teams.md): the team's members from the board's
 * membership (one HGETALL of rc:{B|P}:tm, the period's on a periodic board:
 * the current period's is seeded first when it has none yet, as a write
 * would, redis/gw_teamseed.c), then one roster read of them
 * through gw_ops (lua/read.lua: its best 200 by rank, any team size; total
 * the team's member count, absent those without points). The fan-out's rosters keep the same
 * membership in memory (fanout/gw_rowteam.c); a one-off read asks Redis. */
#include "ops/gw_roster.h"

#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "ops/gw_ops.h"
#include "redis/gw_redis.h"
#include "redis/gw_teamseed.h"
#include "rc_auth.h"
#include "rc_conf.h"
#include "rc_err.h"
#include "rc_keys.h"
#include "rc_members.h"
#include "rc_names.h"
#include "rc_period.h"
#include "rc_team_args.h"

struct roster_call {
    struct gw_app *app;
    const struct gw_caller *who; /* borrowed: the caller holds it until done */
    struct rc_request r;         /* board, period, view flags; id_json owned */
    gw_op_done *done;
    void *privdata;
    const struct rc_board *decl;
    struct rc_period p;
    int seed_tried;
    char key[RC_KEY_MAX];        /* the membership read */
};

static int read_members(struct roster_call *k);
static void finish(struct roster_call *k, int code, const char *msg);

static void on_seeded(int code, void *privdata)
{
    struct roster_call *k = privdata;
    (void)code; /* (failed: read as it is) */
    if (read_members(k) != 0)
        finish(k, RC_E_UNAVAILABLE, "Redis is unreachable");
}

/* 1 when seeding k's period's membership started (the reply had none) */
static int seed_first(struct roster_call *k, const redisReply *rep)
{
    int64_t now = gw_now_ms(k->app);
    if (!k->p.id[0] || k->seed_tried || k->p.end_ms <= now || k->p.start_ms > now)
        return 0;
    for (size_t i = 0; i + 1 < rep->elements; i += 2)
        if (rep->element[i]->type == REDIS_REPLY_STRING && rep->element[i]->len == 1 && rep->element[i]->str[0] == '#')
            return 0;
    k->seed_tried = 1;
    return gw_teamseed_run(k->app->redis, k->decl, &k->p, now, on_seeded, k) == 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void finish(struct roster_call *k, int code, const char *msg)
{
    k->done(k->privdata, code, gw_ops_error(k->app, k->r.id_json, code, msg));
    free(k->r.id_json);
    free(k);
}

static void on_members(redisReply *rep, void *privdata)
{
    struct roster_call *k = privdata;
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements % 2) {
        finish(k, rep ? RC_E_INTERNAL : RC_E_UNAVAILABLE, rep ? "the team membership could not be read"
                                                               : "Redis is unreachable");
        return;
    }
    if (seed_first(k, rep))
        return;
    const char *team = k->r.view.around;
    const char **names = malloc((rep->elements / 2 + 1) * sizeof *names);
    size_t n = 0, bytes = 0;
    for (size_t i = 0; names && i + 1 < rep->elements; i += 2) {
        const redisReply *m = rep->element[i], *t = rep->element[i + 1];
        if (m->type == REDIS_REPLY_STRING && t->type == REDIS_REPLY_STRING && m->str[0] != '#' &&
            strcmp(t->str, team) == 0 && rc_names_member_name_valid(m->str, m->len)) {
            names[n++] = m->str;
            bytes += m->len + 1;
        }
    }
    if (!names) {
        finish(k, RC_E_INTERNAL, "out of memory");
        return;
    }
    struct rc_request r = k->r;
    r.view.members = NULL;
    if (n) {
        qsort(names, n, sizeof *names, name_cmp);
        char *p = r.view.members = malloc(bytes);
        for (size_t i = 0; p && i < n; i++) {
            size_t l = strlen(names[i]) + 1;
            memcpy(p, names[i], l);
            p += l;
        }
        r.view.kind = RC_VIEW_MEMBERS;
        r.view.nmembers = (uint32_t)n;
        r.view.members_len = (uint32_t)bytes;
    } else {
        r.view.kind = RC_VIEW_PAGE; /* no members: the board's head, no rows */
        r.view.offset = 1;
        r.view.limit = 0;
    }
    free(names);
    if (n && !r.view.members) {
        finish(k, RC_E_INTERNAL, "out of memory");
        return;
    }
    gw_ops_snapshot_roster(k->app, k->who, &r, (int64_t)n, k->done, k->privdata);
    free(r.view.members);
    free(k->r.id_json);
    free(k);
}

void gw_roster_read(struct gw_app *app, const struct gw_caller *who, const struct rc_request *r, gw_op_done *done,
                    void *privdata)
{
    struct rc_error err = {0, ""};
    const struct rc_board *decl = NULL;
    struct rc_period p;
    int code = gw_ops_authorize(app, who, r->view.live ? RC_SCOPE_ADMIN : RC_SCOPE_READ, r->board, &err);
    if (!code)
        code = gw_ops_resolve(app, r, &decl, &p, &err);
    if (!code && !decl->teams[0])
        code = rc_err_set(&err, RC_E_BAD_REQUEST, "team=: a roster needs a board with teams (docs/teams.md)");
    struct roster_call *k = code ? NULL : calloc(1, sizeof *k);
    if (!code && !k)
        code = rc_err_set(&err, RC_E_INTERNAL, "out of memory");
    if (!code) {
        *k = (struct roster_call){app, who, *r, done, privdata, decl, p, 0, ""};
        if (rc_team_args_tm_key(k->key, sizeof k->key, r->board, p.id, "tm"))
            k->key[0] = '\0'; /* (cannot be: a board name and a period id fit) */
        k->r.view.members = NULL;
        k->r.token = NULL;
        k->r.id_json = r->id_json ? strdup(r->id_json) : NULL;
        if (read_members(k) == 0)
            return;
        free(k->r.id_json);
        code = rc_err_set(&err, RC_E_UNAVAILABLE, "Redis is unreachable");
    }
    free(k);
    done(privdata, code, gw_ops_error(app, r->id_json, code, err.msg));
}

static int read_members(struct roster_call *k)
{
    const char *argv[2] = {"HGETALL", k->key};
    return gw_redis_command(k->app->redis, k->key, strlen(k->key), 2, argv, NULL, on_members, k);
}
