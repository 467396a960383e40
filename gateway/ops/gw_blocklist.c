/* gw_blocklist.c - a periodic board's block and unblock beyond the period
 * (gw_blocklist.h). */
#include "ops/gw_blocklist.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_err.h"
#include "rc_expiry.h"
#include "rc_keys.h"
#include "rc_shard.h"

#define MAX_STEPS 6

struct step {
    const char *cmd;               /* SADD, SREM or PEXPIRE */
    char key[RC_KEY_MAX];
    const char *arg;               /* the member, or the ttl below */
};

struct spread {
    struct gw_redis *redis;
    gw_blocklist_cb *cb;
    void *privdata;
    struct step steps[MAX_STEPS];
    int nsteps, next;
    char member[RC_MEMBER_MAX + 1];
    char ttl_cur[32], ttl[32];   /* PEXPIRE arguments of the current and the next period */
};

static void run(struct spread *s);

static void on_step(redisReply *reply, void *privdata)
{
    struct spread *s = privdata;
    if (!reply || reply->type == REDIS_REPLY_ERROR) {
        s->cb(RC_E_UNAVAILABLE, s->privdata);
        free(s);
        return;
    }
    run(s);
}

static void run(struct spread *s)
{
    if (s->next == s->nsteps) {
        s->cb(0, s->privdata);
        free(s);
        return;
    }
    struct step *st = &s->steps[s->next++];
    const char *argv[] = {st->cmd, st->key, st->arg};
    if (gw_redis_command(s->redis, st->key, strlen(st->key), 3, argv, NULL, on_step, s) != 0) {
        s->cb(RC_E_UNAVAILABLE, s->privdata);
        free(s);
    }
}

static int add_step(struct spread *s, const char *cmd, const char *board, const char *period, const char *arg)
{
    if (s->nsteps == MAX_STEPS)
        return RC_E_INTERNAL;
    struct step *st = &s->steps[s->nsteps++];
    st->cmd = cmd;
    st->arg = arg;
    return rc_keys_board(st->key, RC_KEY_MAX, board, period, "blocked", NULL) ? RC_E_INTERNAL : 0;
}

/* The change on period q's list (a later one than the admin's): a block
 * creates the list when nobody wrote there yet, so it gets q's lifetime (and
 * still counts as not seeded: no sentinel). */
static int later_period(struct spread *s, const struct rc_board *b, const char *board, const struct rc_period *q,
                        int64_t now_ms, int add, char *ttl_buf, size_t ttl_cap)
{
    struct rc_error err = {0, ""};
    int64_t ttl = 0;
    int rc = add_step(s, add ? "SADD" : "SREM", board, q->id, s->member);
    if (rc || !add)
        return rc;
    if (rc_expiry_period_ttl_ms(b, q, now_ms, &ttl, &err) != 0)
        return RC_E_INTERNAL;
    snprintf(ttl_buf, ttl_cap, "%" PRId64, ttl > 0 ? ttl : 1);
    return add_step(s, "PEXPIRE", board, q->id, ttl_buf);
}

int gw_blocklist_spread(struct gw_redis *redis, const struct rc_board *b, const char *board, const struct rc_period *p,
                        int64_t now_ms, const char *member, int add, gw_blocklist_cb *cb, void *privdata)
{
    struct rc_period cur, next;
    char store[RC_SHARD_NAME_MAX + 1];
    if (!p->id[0] || rc_period_at(&b->period, now_ms, &cur) != 0 || rc_period_next(&b->period, &cur, &next) != 0)
        return RC_E_INTERNAL;
    /* a sharded board: the member's shard keeps its lists (the write script
     * seeds a period of shard i from rc:{B#i|}:blocked) */
    if (b->shards > 1 ? rc_shard_name(store, sizeof store, board, rc_shard_of(member, b->shards)) != 0
                      : snprintf(store, sizeof store, "%s", board) >= (int)sizeof store)
        return RC_E_INTERNAL;
    board = store;
    struct spread *s = calloc(1, sizeof *s);
    if (!s)
        return RC_E_INTERNAL;
    s->redis = redis;
    s->cb = cb;
    s->privdata = privdata;
    snprintf(s->member, sizeof s->member, "%s", member);
    int rc = add_step(s, add ? "SADD" : "SREM", board, "", s->member);
    if (!rc && !add)
        rc = add_step(s, "SREM", board, p->id, s->member);
    /* the admin may have named a past period: the current one and the next
     * are the ones writes reach */
    if (!rc && strcmp(cur.id, p->id) != 0)
        rc = later_period(s, b, board, &cur, now_ms, add, s->ttl_cur, sizeof s->ttl_cur);
    if (!rc && strcmp(next.id, p->id) != 0)
        rc = later_period(s, b, board, &next, now_ms, add, s->ttl, sizeof s->ttl);
    if (rc) {
        free(s);
        return rc;
    }
    run(s);
    return 0;
}
