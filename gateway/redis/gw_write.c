/* gw_write.c - sends a write through the script and decodes the answer.
 *
 * A periodic board's write may find its period's blocklist not seeded yet
 * (lua/write.lua, "Blocklists"): then the board's blocklist is read
 * (SMEMBERS rc:{B|}:blocked), the write sent again with its members as the
 * seed, and once it is answered the board's list is read once more and the
 * difference (a block or unblock that ran while we seeded) applied to the
 * period's list. A periodic board with teams may find its period's team
 * membership not seeded yet (lua/write.lua, "Teams"): it is seeded from the
 * latest earlier period's (redis/gw_teamseed.c) and the write sent again.
 * The caller sees one answer, as for any write. */
#include "redis/gw_write.h"

#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "base/gw_log.h"
#include "redis/gw_teamseed.h"
#include "rc_err.h"

#define KEY_BLOCKED 7 /* KEYS[8] of lua/write.lua, the period's blocklist */

struct pending {
    struct gw_redis *redis;
    struct gw_script *script;
    const struct rc_board *board;
    int replicas; /* asked for (ack_replicas), 0 none */
    int64_t replicas_timeout_ms;
    gw_write_cb *cb;
    void *privdata;
    /* periodic boards only: the call, kept to send it again with a seed */
    int nkeys, argc;
    char **argv;        /* argc words, one block with the strings */
    size_t *argvlen;
    char **seed;        /* the board's blocklist as read for the seed (NULL: none sent) */
    size_t nseed;
    struct rc_period period; /* the write's, for seeding its team membership */
    int64_t now_ms;
    int team_seeded;    /* the team membership was seeded for this write: once only */
};

static void pending_free(struct pending *p)
{
    free(p->argv);
    free(p->seed);
    free(p);
}

int gw_write_parse_reply(const struct rc_board *b, const redisReply *reply, struct rc_write_result *res,
                         struct rc_error *err)
{
    struct rc_reply_item items[11];
    if (!reply && gw_redis_route_why_null() != GW_REDIS_NULL_LOST)
        return rc_err_set(err, RC_E_UNAVAILABLE, "%s: the write was not applied (retry)",
                            gw_redis_route_why_text(gw_redis_route_why_null()));
    if (!reply)
        return rc_err_set(err, RC_E_UNAVAILABLE, "Redis connection lost before the write was answered");
    if (reply->type == REDIS_REPLY_ERROR)
        return gw_script_reply_error(err, RC_E_INTERNAL, "the write script", reply);
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 || reply->elements > 11)
        return rc_err_set(err, RC_E_INTERNAL, "write script answered an unexpected reply");
    if (rc_write_args_result_parse(b, items, gw_script_reply_items(reply, items, 11), res))
        return rc_err_set(err, RC_E_INTERNAL, "write script answered an unexpected reply");
    return 0;
}

/* ---- seeding a period's blocklist ------------------------------------- */

static int send_call(struct pending *p, size_t nextra, const char *const *extra, const size_t *extralen);

/* The members of an SMEMBERS reply, copied into one block (NULL on a bad
 * reply or no memory; *n 0 with a non-NULL block for an empty set). */
static char **copy_members(const redisReply *r, size_t *n)
{
    if (!r || r->type != REDIS_REPLY_ARRAY)
        return NULL;
    size_t bytes = (r->elements + 1) * sizeof(char *);
    for (size_t i = 0; i < r->elements; i++) {
        if (r->element[i]->type != REDIS_REPLY_STRING)
            return NULL;
        bytes += r->element[i]->len + 1;
    }
    char **out = malloc(bytes);
    if (!out)
        return NULL;
    char *s = (char *)(out + r->elements + 1);
    size_t k = 0;
    for (size_t i = 0; i < r->elements; i++) {
        if (r->element[i]->len == 0)
            continue; /* the sentinel: never a member */
        out[k++] = s;
        memcpy(s, r->element[i]->str, r->element[i]->len);
        s[r->element[i]->len] = '\0';
        s += r->element[i]->len + 1;
    }
    out[k] = NULL;
    *n = k;
    return out;
}

static int contains(char *const *list, size_t n, const char *m)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], m) == 0)
            return 1;
    return 0;
}

/* SADD (add) or SREM every member of `from` that `other` lacks, on the
 * period's blocklist (the write's KEYS[8]); fire and forget. */
static void apply_diff(struct pending *p, char *const *from, size_t nfrom, char *const *other, size_t nother,
                       int add)
{
    const char *key = p->argv[KEY_BLOCKED];
    for (size_t i = 0; i < nfrom; i++) {
        if (contains(other, nother, from[i]))
            continue;
        const char *argv[] = {add ? "SADD" : "SREM", key, from[i]};
        if (gw_redis_command(p->redis, key, p->argvlen[KEY_BLOCKED], 3, argv, NULL, NULL, NULL) != 0)
            gw_log_warn("blocklist of %s: could not %s %s after seeding", key, argv[0], from[i]);
    }
}

/* The board's blocklist read again after the seeded write: what changed
 * while we seeded reaches the period's list. */
static void on_reread(redisReply *reply, void *privdata)
{
    struct pending *p = privdata;
    size_t n = 0;
    char **now = copy_members(reply, &n);
    if (now) {
        apply_diff(p, now, n, p->seed, p->nseed, 1);
        apply_diff(p, p->seed, p->nseed, now, n, 0);
        free(now);
    } else {
        gw_log_warn("blocklist of %s: the board's list could not be read again after seeding; a block or unblock "
                    "made meanwhile reaches this period only when an admin repeats it", p->argv[KEY_BLOCKED]);
    }
    pending_free(p);
}

static void on_board_list(redisReply *reply, void *privdata)
{
    struct pending *p = privdata;
    struct rc_error err = {0, ""};
    p->seed = copy_members(reply, &p->nseed);
    if (!p->seed) {
        rc_err_set(&err, RC_E_UNAVAILABLE, "could not read the board's blocklist: nothing was written");
        p->cb(err.code, NULL, &err, p->privdata);
        pending_free(p);
        return;
    }
    /* the sentinel "" first, then the members (lua/write.lua) */
    size_t nextra = p->nseed + 1;
    const char **extra = malloc(nextra * sizeof *extra);
    size_t *extralen = malloc(nextra * sizeof *extralen);
    int rc = RC_E_INTERNAL;
    if (extra && extralen) {
        extra[0] = "";
        extralen[0] = 0;
        for (size_t i = 0; i < p->nseed; i++) {
            extra[i + 1] = p->seed[i];
            extralen[i + 1] = strlen(p->seed[i]);
        }
        rc = send_call(p, nextra, extra, extralen);
    }
    free(extra);
    free(extralen);
    if (rc) {
        rc_err_set(&err, RC_E_UNAVAILABLE, "Redis is unreachable: nothing was written");
        p->cb(err.code, NULL, &err, p->privdata);
        pending_free(p);
    }
}

/* ---- the write ---------------------------------------------------------- */

void gw_write_new_epoch(char *out)
{
    unsigned char bytes[RC_EPOCH_RANDOM_BYTES];
    out[0] = '\0';
    /* no loop and no callback: the call is synchronous (getrandom) */
    if (uv_random(NULL, NULL, bytes, sizeof bytes, 0, NULL) == 0)
        rc_epoch_hex(out, bytes);
}

/* The period's team membership is seeded (or was, by someone else): the
 * write goes again, as it was. */
static void on_team_seeded(int code, void *privdata)
{
    struct pending *p = privdata;
    struct rc_error err = {0, ""};
    if (!code && send_call(p, 0, NULL, NULL) == 0)
        return;
    rc_err_set(&err, RC_E_UNAVAILABLE, "could not start the period's team membership: nothing was written");
    p->cb(err.code, NULL, &err, p->privdata);
    pending_free(p);
}

static void on_reply_waited(redisReply *reply, int replicas, void *privdata)
{
    struct pending *p = privdata;
    struct rc_write_result res;
    struct rc_error err = {0, ""};
    int code = gw_write_parse_reply(p->board, reply, &res, &err);
    if (!code && res.team_unseeded) {
        /* before the blocklist's check: no seed words sent yet (lua/write.lua) */
        if (!p->team_seeded && !p->seed && p->argv) {
            p->team_seeded = 1;
            if (gw_teamseed_run(p->redis, p->board, &p->period, p->now_ms, on_team_seeded, p) == 0)
                return;
        }
        code = rc_err_set(&err, RC_E_UNAVAILABLE, "%s", res.message);
    }
    if (!code && res.unseeded) {
        if (!p->seed && p->argv) {
            const char *from = p->argv[p->argc - 1]; /* kept past the words: see submit */
            const char *argv[] = {"SMEMBERS", from};
            if (gw_redis_command(p->redis, from, strlen(from), 2, argv, NULL, on_board_list, p) == 0)
                return;
        }
        code = rc_err_set(&err, RC_E_UNAVAILABLE, "%s", res.message);
    }
    if (!code)
        res.replicas = p->replicas > 0 ? replicas : -1;
    p->cb(code, code ? NULL : &res, &err, p->privdata);
    if (p->seed) {
        /* seeded by this write: read the board's list again */
        const char *from = p->argv[p->argc - 1];
        const char *argv[] = {"SMEMBERS", from};
        if (gw_redis_command(p->redis, from, strlen(from), 2, argv, NULL, on_reread, p) == 0)
            return;
        gw_log_warn("blocklist of %s: the board's list could not be read again after seeding",
                    p->argv[KEY_BLOCKED]);
    }
    pending_free(p);
}

static void on_reply(redisReply *reply, void *privdata)
{
    on_reply_waited(reply, -1, privdata);
}

/* Sends the kept call (p->argv without its last word, the seed source),
 * with extra words appended. */
static int send_call(struct pending *p, size_t nextra, const char *const *extra, const size_t *extralen)
{
    int n = p->argc - 1 + (int)nextra;
    const char **words = malloc((size_t)n * sizeof *words);
    size_t *lens = malloc((size_t)n * sizeof *lens);
    int rc = RC_E_INTERNAL;
    if (words && lens) {
        for (int i = 0; i < p->argc - 1; i++) {
            words[i] = p->argv[i];
            lens[i] = p->argvlen[i];
        }
        for (size_t i = 0; i < nextra; i++) {
            words[p->argc - 1 + (int)i] = extra[i];
            lens[p->argc - 1 + (int)i] = extralen[i];
        }
        rc = p->replicas > 0 ? gw_redis_eval_wait(p->redis, p->script, p->nkeys, n, words, lens, p->replicas,
                                                  p->replicas_timeout_ms, on_reply_waited, p)
                             : gw_redis_eval_write(p->redis, p->script, p->nkeys, n, words, lens, on_reply, p);
    }
    free(words);
    free(lens);
    return rc;
}

/* Keeps a copy of the call in p, with seed_from as one more word at the end
 * (not sent). Returns 0 or RC_E_INTERNAL. */
static int keep_call(struct pending *p, int nkeys, int argc, const char *const *words, const size_t *lens,
                     const char *seed_from)
{
    size_t total = (size_t)(argc + 1) * (sizeof(char *) + sizeof(size_t)) + strlen(seed_from) + 1;
    for (int i = 0; i < argc; i++)
        total += lens[i] + 1;
    char **argv = malloc(total);
    if (!argv)
        return RC_E_INTERNAL;
    size_t *argvlen = (size_t *)(argv + argc + 1);
    char *s = (char *)(argvlen + argc + 1);
    for (int i = 0; i <= argc; i++) {
        const char *w = i < argc ? words[i] : seed_from;
        size_t len = i < argc ? lens[i] : strlen(seed_from);
        argv[i] = s;
        argvlen[i] = len;
        memcpy(s, w, len);
        s[len] = '\0';
        s += len + 1;
    }
    p->argv = argv;
    p->argvlen = argvlen;
    p->nkeys = nkeys;
    p->argc = argc + 1;
    return 0;
}

int gw_write_submit(struct gw_redis *redis, struct gw_script *s, const struct rc_board *b,
                    const struct rc_request *r, const struct rc_period *p, int64_t now_ms, gw_write_cb *cb,
                    void *privdata, struct rc_error *err)
{
    return gw_write_submit_acked(redis, s, b, r, p, now_ms, 0, 0, cb, privdata, err);
}

int gw_write_submit_acked(struct gw_redis *redis, struct gw_script *s, const struct rc_board *b,
                          const struct rc_request *r, const struct rc_period *p, int64_t now_ms, int replicas,
                          int64_t replicas_timeout_ms, gw_write_cb *cb, void *privdata, struct rc_error *err)
{
    return gw_write_submit_as(redis, s, b, r, p, r->board, now_ms, replicas, replicas_timeout_ms, 0, cb, privdata,
                              err);
}

int gw_write_submit_as(struct gw_redis *redis, struct gw_script *s, const struct rc_board *b,
                       const struct rc_request *r, const struct rc_period *p, const char *store, int64_t now_ms,
                       int replicas, int64_t replicas_timeout_ms, unsigned flags, gw_write_cb *cb, void *privdata,
                       struct rc_error *err)
{
    struct rc_write_args a;
    const char *words[RC_WRITE_NKEYS + RC_WRITE_ARGV_MAX];
    size_t lens[RC_WRITE_NKEYS + RC_WRITE_ARGV_MAX];
    int rc = rc_write_args_build_as(b, r, p, now_ms, gw_redis_is_cluster(redis) == 1, store, &a, err);
    if (rc)
        return rc;
    if (flags & GW_WRITE_F_NO_NEW_RECORD)
        rc_write_args_no_new_record(&a); /* kept in a seeded resend too: the flag precedes the seed */
    gw_write_new_epoch(a.epoch); /* kept with the call: a seeded resend starts the same history */
    unsigned n = gw_script_call_words(a.keys, a.nkeys, a.argv, a.nargv, words, lens);
    struct pending *pd = calloc(1, sizeof *pd);
    if (!pd)
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    pd->redis = redis;
    pd->script = s;
    pd->board = b;
    pd->replicas = replicas;
    pd->replicas_timeout_ms = replicas_timeout_ms;
    pd->cb = cb;
    pd->privdata = privdata;
    pd->period = *p;
    pd->now_ms = now_ms;
    if (a.seed_from[0] && keep_call(pd, (int)a.nkeys, (int)n, words, lens, a.seed_from) != 0) {
        free(pd);
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    }
    if ((replicas > 0 ? gw_redis_eval_wait(redis, s, (int)a.nkeys, (int)n, words, lens, replicas, replicas_timeout_ms,
                                           on_reply_waited, pd)
                      : gw_redis_eval_write(redis, s, (int)a.nkeys, (int)n, words, lens, on_reply, pd)) != 0) {
        pending_free(pd);
        return rc_err_set(err, RC_E_UNAVAILABLE, "Redis is unreachable: nothing was written");
    }
    return 0;
}
