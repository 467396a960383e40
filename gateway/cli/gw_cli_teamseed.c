/* gw_cli_teamseed.c - see gw_cli_teamseed.h. The earlier periods are
 * looked at in the order the gateway uses (core/rc_team_args.h,
 * rc_team_args_walk_next). */
#include "cli/gw_cli_teamseed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_expiry.h"
#include "rc_lua.h"
#include "rc_team_args.h"

int gw_cli_teamseed_asked(const redisReply *rep)
{
    return rep && rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1 &&
           rep->element[0]->type == REDIS_REPLY_STRING && strcmp(rep->element[0]->str, "team_unseeded") == 0;
}

static redisReply *two(struct gw_cli_redis *r, const char *cmd, const char *key, char *err, size_t cap)
{
    const char *argv[2] = {cmd, key};
    size_t lens[2] = {strlen(cmd), strlen(key)};
    struct gw_cli_cmd c = {2, argv, lens, 1, NULL};
    return gw_cli_redis_command(r, &c, err, cap);
}

/* The membership of period q (HGETALL): the reply when it has one, else
 * NULL (*failed 1 when Redis could not answer). */
static redisReply *membership(struct gw_cli_redis *r, const struct rc_board *b, const struct rc_period *q,
                              int *failed, char *err, size_t cap)
{
    char key[RC_KEY_MAX];
    if (rc_team_args_tm_key(key, sizeof key, b->name, q->id, "tm") != 0)
        return NULL;
    redisReply *rep = two(r, "HGETALL", key, err, cap);
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements % 2) {
        *failed = 1;
        if (rep)
            snprintf(err, cap, "%s is not a membership hash", key);
    } else if (rep->elements) {
        return rep;
    }
    if (rep)
        freeReplyObject(rep);
    return NULL;
}

/* The latest earlier period's membership (NULL: none; *failed on errors),
 * looked for in the order of core/rc_team_args.h (rc_team_args_walk_next). */
static redisReply *find(struct gw_cli_redis *r, const struct rc_board *b, const struct rc_period *p,
                        struct rc_period *src, int *failed, char *err, size_t cap)
{
    struct rc_team_walk w = {0, 0};
    char pointer[64] = "";
    int have_pointer = 0;
    for (;;) {
        switch (rc_team_args_walk_next(&w, b, p, have_pointer ? pointer : NULL, src)) {
        case RC_TEAM_WALK_READ: {
            redisReply *rep = membership(r, b, src, failed, err, cap);
            if (rep || *failed)
                return rep;
            have_pointer = 0;
            break;
        }
        case RC_TEAM_WALK_POINTER: {
            char key[RC_KEY_MAX];
            redisReply *ptr = rc_team_args_tm_key(key, sizeof key, b->name, "", "tmp") == 0
                                  ? two(r, "GET", key, err, cap)
                                  : NULL;
            have_pointer = ptr && ptr->type == REDIS_REPLY_STRING && ptr->len < sizeof pointer;
            if (have_pointer)
                memcpy(pointer, ptr->str, ptr->len + 1);
            if (ptr)
                freeReplyObject(ptr);
            break;
        }
        case RC_TEAM_WALK_NONE:
        default:
            return NULL;
        }
    }
}

int gw_cli_teamseed_run(struct gw_cli_redis *r, const struct rc_board *b, const struct rc_period *p, int64_t now_ms,
                        char *err, size_t cap)
{
    struct rc_period src;
    int failed = 0;
    redisReply *pairs = find(r, b, p, &src, &failed, err, cap);
    if (failed)
        return -1;
    struct rc_team_args a;
    size_t n = pairs ? pairs->elements : 0, argc = RC_TEAM_SEED_HEAD + n;
    const char **argv = malloc(argc * sizeof *argv);
    size_t *lens = malloc(argc * sizeof *lens);
    int rc = -1;
    if (argv && lens && rc_team_args_seed(b, p, now_ms, &a) == 0) {
        size_t head = rc_team_args_seed_head(&a, rc_lua_teams, argv, lens);
        for (size_t i = 0; i < n; i++) {
            argv[head + i] = pairs->element[i]->str;
            lens[head + i] = pairs->element[i]->len;
        }
        struct gw_cli_cmd cmd = {(int)argc, argv, lens, 3, NULL};
        redisReply *rep = gw_cli_redis_command(r, &cmd, err, cap);
        if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 1 && rep->element[0]->type == REDIS_REPLY_STRING)
            rc = 0;
        else if (rep)
            snprintf(err, cap, "the seed of period %s's team membership answered %s", p->id,
                     rep->type == REDIS_REPLY_ERROR ? rep->str : "an unexpected reply");
        int seeded = rc == 0 && strcmp(rep->element[0]->str, "seeded") == 0;
        if (rep)
            freeReplyObject(rep);
        if (seeded && rc_team_args_seed_is_latest(p, now_ms) && rc_team_args_point(b->name, p, &a) == 0) {
            /* the pointer forward, the earlier membership to expire with
             * its period (as the gateway does; best effort) */
            const char *pargv[3 + RC_TEAM_POINT_NWORDS] = {"EVAL", rc_lua_teams, "1"};
            size_t plens[3 + RC_TEAM_POINT_NWORDS];
            for (unsigned i = 0; i < RC_TEAM_POINT_NWORDS; i++)
                pargv[3 + i] = a.words[i];
            for (unsigned i = 0; i < 3 + RC_TEAM_POINT_NWORDS; i++)
                plens[i] = strlen(pargv[i]);
            struct gw_cli_cmd pc = {3 + RC_TEAM_POINT_NWORDS, pargv, plens, 3, NULL};
            char perr[64];
            redisReply *prep = gw_cli_redis_command(r, &pc, perr, sizeof perr);
            if (prep)
                freeReplyObject(prep);
            struct rc_error e = {0, ""};
            int64_t ttl;
            if (pairs && rc_expiry_period_ttl_ms(b, &src, now_ms, &ttl, &e) == 0) {
                char ms[32];
                snprintf(ms, sizeof ms, "%lld", (long long)ttl);
                static const char *const what[] = {"tm", "tml"};
                for (unsigned i = 0; i < 2; i++) {
                    char key[RC_KEY_MAX];
                    if (rc_team_args_tm_key(key, sizeof key, b->name, src.id, what[i]) != 0)
                        continue;
                    const char *xargv[3] = {"PEXPIRE", key, ms};
                    size_t xlens[3] = {7, strlen(key), strlen(ms)};
                    struct gw_cli_cmd xc = {3, xargv, xlens, 1, NULL};
                    redisReply *x = gw_cli_redis_command(r, &xc, perr, sizeof perr);
                    if (x)
                        freeReplyObject(x);
                }
            }
        }
    } else {
        snprintf(err, cap, "out of memory");
    }
    free(argv);
    free(lens);
    if (pairs)
        freeReplyObject(pairs);
    return rc;
}
