/* gw_cli_blocklist.c - seeding a period's blocklist and asking a blocklist
 * about a batch (gw_cli_blocklist.h). */
#include "cli/gw_cli_blocklist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The members of an SMEMBERS answer, without the sentinel "". NULL on a bad
 * reply; *n 0 for an empty set. Strings borrowed from rep. */
static const char **members_of(const redisReply *rep, size_t *n)
{
    if (!rep || rep->type != REDIS_REPLY_ARRAY)
        return NULL;
    const char **out = malloc((rep->elements + 1) * sizeof *out);
    *n = 0;
    for (size_t i = 0; out && i < rep->elements; i++) {
        if (rep->element[i]->type != REDIS_REPLY_STRING) {
            free(out);
            return NULL;
        }
        if (rep->element[i]->len)
            out[(*n)++] = rep->element[i]->str;
    }
    return out;
}

static int contains(const char **list, size_t n, const char *m)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], m) == 0)
            return 1;
    return 0;
}

/* A two- or three-word command on key. */
static redisReply *simple(struct gw_cli_redis *r, const char *a0, const char *key, const char *a2, char *err,
                          size_t cap)
{
    const char *argv[3] = {a0, key, a2};
    size_t lens[3] = {strlen(a0), strlen(key), a2 ? strlen(a2) : 0};
    struct gw_cli_cmd cmd = {a2 ? 3 : 2, argv, lens, 1, NULL};
    return gw_cli_redis_command(r, &cmd, err, cap);
}

static int is_unseeded(const redisReply *rep)
{
    return rep->type == REDIS_REPLY_ARRAY && rep->elements == 1 && rep->element[0]->type == REDIS_REPLY_STRING &&
           strcmp(rep->element[0]->str, "unseeded") == 0;
}

/* What changed on the board's list while we seeded reaches the period's. */
static void reconcile(struct gw_cli_redis *r, const char *seed_from, const char *period_list, const char **seed,
                      size_t nseed)
{
    char err[GW_CLI_ERR_MAX];
    redisReply *again = simple(r, "SMEMBERS", seed_from, NULL, err, sizeof err), *rep;
    size_t nnow = 0;
    const char **now = members_of(again, &nnow);
    int ok = now != NULL;
    for (size_t i = 0; now && i < nnow; i++)
        if (!contains(seed, nseed, now[i]))
            (rep = simple(r, "SADD", period_list, now[i], err, sizeof err)) ? freeReplyObject(rep) : (void)(ok = 0);
    for (size_t i = 0; now && i < nseed; i++)
        if (!contains(now, nnow, seed[i]))
            (rep = simple(r, "SREM", period_list, seed[i], err, sizeof err)) ? freeReplyObject(rep) : (void)(ok = 0);
    if (!ok)
        fprintf(stderr, "rankcast import: warning: %s could not be brought in line with %s after seeding it; a "
                        "block or unblock made meanwhile reaches this period only when an admin repeats it\n",
                period_list, seed_from);
    free(now);
    if (again)
        freeReplyObject(again);
}

redisReply *gw_cli_blocklist_write_seeded(struct gw_cli_redis *r, const struct gw_cli_cmd *call, const char *seed_from,
                                const char *period_list, char *err, size_t cap)
{
    struct gw_cli_cmd cmd = *call;
    redisReply *rep = gw_cli_redis_command(r, &cmd, err, cap);
    if (!rep || !is_unseeded(rep))
        return rep;
    freeReplyObject(rep);
    rep = NULL;
    redisReply *board_list = simple(r, "SMEMBERS", seed_from, NULL, err, cap);
    size_t nseed = 0, total;
    const char **seed = members_of(board_list, &nseed);
    const char **words = NULL;
    size_t *lens = NULL;
    if (!seed) {
        if (board_list)
            snprintf(err, cap, "%s is not a set of members", seed_from);
        goto cleanup;
    }
    total = (size_t)call->argc + 1 + nseed;
    words = malloc(total * sizeof *words);
    lens = malloc(total * sizeof *lens);
    if (!words || !lens) {
        snprintf(err, cap, "out of memory");
        goto cleanup;
    }
    size_t n = 0;
    for (; n < (size_t)call->argc; n++) {
        words[n] = call->argv[n];
        lens[n] = call->lens[n];
    }
    words[n] = ""; /* the sentinel, then the members (lua/write.lua) */
    lens[n++] = 0;
    for (size_t i = 0; i < nseed; i++, n++) {
        words[n] = seed[i];
        lens[n] = strlen(seed[i]);
    }
    cmd = (struct gw_cli_cmd){(int)n, words, lens, call->key_at, call->script};
    if ((rep = gw_cli_redis_command(r, &cmd, err, cap)) != NULL)
        reconcile(r, seed_from, period_list, seed, nseed);
cleanup:
    free(words);
    free(lens);
    free(seed);
    if (board_list)
        freeReplyObject(board_list);
    return rep;
}

int gw_cli_blocklist_first_blocked(struct gw_cli_redis *r, const char *list, const char *const *members, size_t n, size_t *at,
                         char *err, size_t cap)
{
    const char **argv = malloc((n + 2) * sizeof *argv);
    size_t *lens = malloc((n + 2) * sizeof *lens);
    int rc = -1;
    *at = n;
    if (!argv || !lens) {
        snprintf(err, cap, "out of memory");
        goto cleanup;
    }
    argv[0] = "SMISMEMBER";
    argv[1] = list;
    memcpy(argv + 2, members, n * sizeof *members);
    for (size_t i = 0; i < n + 2; i++)
        lens[i] = strlen(argv[i]);
    struct gw_cli_cmd cmd = {(int)n + 2, argv, lens, 1, NULL};
    redisReply *rep = gw_cli_redis_command(r, &cmd, err, cap);
    if (!rep)
        goto cleanup;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != n) {
        snprintf(err, cap, "%s: %.150s", list, rep->type == REDIS_REPLY_ERROR ? rep->str : "an answer of the wrong shape");
    } else {
        rc = 0;
        for (size_t i = 0; i < n; i++) {
            if (rep->element[i]->type == REDIS_REPLY_INTEGER && rep->element[i]->integer == 1) {
                *at = i;
                break;
            }
        }
    }
    freeReplyObject(rep);
cleanup:
    free(argv);
    free(lens);
    return rc;
}
