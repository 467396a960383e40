/* gw_roster_at.c - who was on a team at a past moment (see gw_roster_at.h):
 * the present membership and its log undone back to the moment, in one
 * lua/teams.lua call (atomic: a team op between a read of the hash and one
 * of the log would be undone twice or not at all). */
#include "ops/gw_roster_at.h"

#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_err.h"
#include "rc_team_args.h"

struct roster_at_call {
    gw_roster_at_cb *cb;
    void *privdata;
};

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void on_reply(redisReply *r, void *privdata)
{
    struct roster_at_call *k = privdata;
    struct rc_reply_item *items = NULL;
    const char **names = NULL;
    char *packed = NULL;
    size_t n = 0, bytes = 0;
    int gone = 0, code = 0;
    int64_t oldest = 0;
    if (!r) {
        code = RC_E_UNAVAILABLE;
        goto cleanup;
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 2 || !(items = malloc(r->elements * sizeof *items)) ||
        gw_script_reply_items(r, items, r->elements) != r->elements ||
        rc_team_args_roster_at_parse(items, r->elements, &gone, &oldest, &n) != 0) {
        gw_log_warn("the teams script answered roster_at with an unexpected reply (type %d)", r->type);
        code = RC_E_INTERNAL;
        goto cleanup;
    }
    if (gone || n == 0)
        goto cleanup;
    /* sorted as the live roster's list (strcmp: absent is by name) */
    if (!(names = malloc(n * sizeof *names))) {
        code = RC_E_INTERNAL;
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++) {
        names[i] = items[2 + i].str;
        bytes += strlen(names[i]) + 1;
    }
    qsort(names, n, sizeof *names, name_cmp);
    char *p = packed = malloc(bytes);
    for (size_t i = 0; p && i < n; i++) {
        size_t l = strlen(names[i]) + 1;
        memcpy(p, names[i], l);
        p += l;
    }
    if (!packed)
        code = RC_E_INTERNAL;
cleanup:
    k->cb(code, gone, oldest, code ? NULL : packed, code ? 0 : (uint32_t)n, code ? 0 : (uint32_t)bytes, k->privdata);
    free(packed);
    free(names);
    free(items);
    free(k);
}

int gw_roster_at_members(struct gw_app *app, const struct rc_board *b, const char *period, const char *team,
                         int by_time, int64_t target, gw_roster_at_cb *cb, void *privdata)
{
    struct rc_team_args a;
    struct rc_error err = {0, ""};
    size_t lens[RC_TEAM_AT_NWORDS];
    if (!app->redis)
        return RC_E_UNAVAILABLE;
    int rc = rc_team_args_roster_at(b, period, team, by_time, target, &a, &err);
    if (rc)
        return rc;
    for (unsigned i = 0; i < RC_TEAM_AT_NWORDS; i++)
        lens[i] = strlen(a.words[i]);
    struct roster_at_call *k = malloc(sizeof *k);
    if (!k)
        return RC_E_INTERNAL;
    *k = (struct roster_at_call){cb, privdata};
    if (gw_redis_eval(app->redis, &app->teams_script, RC_TEAM_AT_NKEYS, RC_TEAM_AT_NWORDS, a.words, lens, on_reply,
                      k) != 0) {
        free(k);
        return RC_E_UNAVAILABLE;
    }
    return 0;
}
