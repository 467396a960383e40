/* gw_teamseed.c - a period's team membership seeded from the latest
 * earlier period's (see gw_teamseed.h). The earlier membership is in
 * another slot than the new period's, so it is read first and passed to
 * the seed script, which runs on the new period's slot alone and writes
 * nothing when the period has its membership already. The script text goes
 * with EVAL: this runs once a period per board, and keeps this file free of
 * the app's script table. */
#include "redis/gw_teamseed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gw_log.h"
#include "rc_err.h"
#include "rc_expiry.h"
#include "rc_lua.h"
#include "rc_team_args.h"

struct seed {
    struct gw_redis *redis;
    const struct rc_board *b;
    struct rc_period p;          /* the period seeded */
    struct rc_period src;        /* the earlier period being read */
    struct rc_team_walk walk;    /* where src came from (core/rc_team_args.h) */
    int64_t now_ms;
    int found;                   /* src's membership was copied */
    gw_teamseed_cb *cb;
    void *privdata;
};

static void finish(struct seed *s, int code)
{
    s->cb(code, s->privdata);
    free(s);
}

static int send_seed(struct seed *s, const redisReply *pairs);
static void on_src(redisReply *r, void *privdata);
static void on_pointer(redisReply *r, void *privdata);

/* The next place to look (pointer: the pointer's value when it was just
 * read). Returns 0 (a reply comes later) or an RC_E_* code (nothing sent). */
static int look(struct seed *s, const char *pointer)
{
    char key[RC_KEY_MAX];
    const char *argv[2] = {"HGETALL", key};
    switch (rc_team_args_walk_next(&s->walk, s->b, &s->p, pointer, &s->src)) {
    case RC_TEAM_WALK_READ:
        if (rc_team_args_tm_key(key, sizeof key, s->b->name, s->src.id, "tm") != 0)
            return RC_E_INTERNAL;
        return gw_redis_command(s->redis, key, strlen(key), 2, argv, NULL, on_src, s);
    case RC_TEAM_WALK_POINTER:
        argv[0] = "GET";
        if (rc_team_args_tm_key(key, sizeof key, s->b->name, "", "tmp") != 0)
            return RC_E_INTERNAL;
        return gw_redis_command(s->redis, key, strlen(key), 2, argv, NULL, on_pointer, s);
    case RC_TEAM_WALK_NONE:
    default:
        return send_seed(s, NULL); /* no earlier membership: the period starts with none */
    }
}

static void on_pointer(redisReply *r, void *privdata)
{
    struct seed *s = privdata;
    if (look(s, r && r->type == REDIS_REPLY_STRING ? r->str : NULL) != 0)
        finish(s, RC_E_UNAVAILABLE);
}

static void on_src(redisReply *r, void *privdata)
{
    struct seed *s = privdata;
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements % 2) {
        finish(s, RC_E_UNAVAILABLE);
        return;
    }
    if (r->elements == 0) {
        if (look(s, NULL) != 0) /* no membership there */
            finish(s, RC_E_UNAVAILABLE);
        return;
    }
    s->found = 1;
    if (send_seed(s, r) != 0)
        finish(s, RC_E_UNAVAILABLE);
}

/* After the seed: the pointer moves forward, and the earlier membership
 * (no TTL while it was the latest) expires with its period's keys. Both
 * fire and forget: a miss leaves a key for longer, never a wrong one. */
static void after_seed(struct seed *s)
{
    struct rc_team_args a;
    if (rc_team_args_point(s->b->name, &s->p, &a) == 0) {
        const char *argv[3 + RC_TEAM_POINT_NWORDS] = {"EVAL", rc_lua_teams, "1"};
        for (unsigned i = 0; i < RC_TEAM_POINT_NWORDS; i++)
            argv[3 + i] = a.words[i];
        if (gw_redis_command(s->redis, a.keys[0], strlen(a.keys[0]), 3 + RC_TEAM_POINT_NWORDS, argv, NULL, NULL,
                             NULL) != 0)
            gw_log_warn("board %s: its pointer to period %s's membership could not be set", s->b->name, s->p.id);
    }
    struct rc_error err = {0, ""};
    int64_t ttl = 0;
    if (!s->found || rc_expiry_period_ttl_ms(s->b, &s->src, s->now_ms, &ttl, &err) != 0)
        return;
    char ms[32];
    snprintf(ms, sizeof ms, "%lld", (long long)ttl);
    static const char *const what[] = {"tm", "tml"};
    for (unsigned i = 0; i < 2; i++) {
        char key[RC_KEY_MAX];
        if (rc_team_args_tm_key(key, sizeof key, s->b->name, s->src.id, what[i]) != 0)
            continue;
        const char *argv[3] = {"PEXPIRE", key, ms};
        (void)gw_redis_command(s->redis, key, strlen(key), 3, argv, NULL, NULL, NULL);
    }
}

static void on_seeded(redisReply *r, void *privdata)
{
    struct seed *s = privdata;
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 1 || r->element[0]->type != REDIS_REPLY_STRING) {
        if (r && r->type == REDIS_REPLY_ERROR)
            gw_log_warn("board %s: seeding period %s's membership: %s", s->b->name, s->p.id, r->str);
        finish(s, RC_E_UNAVAILABLE);
        return;
    }
    if (strcmp(r->element[0]->str, "seeded") == 0) {
        gw_log_info("board %s: period %s's team membership started from %s", s->b->name, s->p.id,
                    s->found ? s->src.id : "none (no earlier period has one)");
        if (rc_team_args_seed_is_latest(&s->p, s->now_ms))
            after_seed(s);
    }
    finish(s, 0); /* "exists": another gateway seeded it first */
}

/* Returns 0 (on_seeded runs later) or an RC_E_* code (nothing sent). */
static int send_seed(struct seed *s, const redisReply *pairs)
{
    struct rc_team_args a;
    size_t n = pairs ? pairs->elements : 0;
    const char **argv = malloc((RC_TEAM_SEED_HEAD + n) * sizeof *argv);
    size_t *lens = malloc((RC_TEAM_SEED_HEAD + n) * sizeof *lens);
    int rc = !argv || !lens || rc_team_args_seed(s->b, &s->p, s->now_ms, &a) != 0 ? RC_E_INTERNAL : 0;
    for (size_t i = 0; !rc && i < n; i++)
        if (pairs->element[i]->type != REDIS_REPLY_STRING)
            rc = RC_E_INTERNAL;
    if (!rc) {
        size_t head = rc_team_args_seed_head(&a, rc_lua_teams, argv, lens);
        for (size_t i = 0; i < n; i++) {
            argv[head + i] = pairs->element[i]->str;
            lens[head + i] = pairs->element[i]->len;
        }
        rc = gw_redis_command(s->redis, a.keys[0], strlen(a.keys[0]), (int)(RC_TEAM_SEED_HEAD + n), argv, lens,
                              on_seeded, s);
    }
    free(argv);
    free(lens);
    return rc;
}

int gw_teamseed_run(struct gw_redis *redis, const struct rc_board *b, const struct rc_period *p, int64_t now_ms,
                    gw_teamseed_cb *cb, void *privdata)
{
    if (!b->teams[0] || !p->id[0])
        return RC_E_INTERNAL; /* all-time boards have one membership: nothing to seed */
    struct seed *s = calloc(1, sizeof *s);
    if (!s)
        return RC_E_INTERNAL;
    *s = (struct seed){.redis = redis, .b = b, .p = *p, .now_ms = now_ms, .cb = cb, .privdata = privdata};
    int rc = look(s, NULL);
    if (rc) {
        free(s);
        return rc;
    }
    return 0;
}
