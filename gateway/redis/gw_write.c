/* gw_write.c - sends a write through the script and decodes the answer. */
#include "redis/gw_write.h"

#include <stdlib.h>
#include <string.h>

struct pending {
    const struct rc_board *board;
    int replicas; /* asked for (ack_replicas), 0 none */
    gw_write_cb *cb;
    void *privdata;
};

int gw_write_parse_reply(const struct rc_board *b, const redisReply *reply, struct rc_write_result *res,
                         struct rc_error *err)
{
    struct rc_reply_item items[8];
    if (!reply)
        return rc_error_set(err, RC_E_UNAVAILABLE, "Redis connection lost before the write was answered");
    if (reply->type == REDIS_REPLY_ERROR)
        return rc_error_set(err, RC_E_INTERNAL, "Redis error: %.150s", reply->str);
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 || reply->elements > 8)
        return rc_error_set(err, RC_E_INTERNAL, "write script answered an unexpected reply");
    for (size_t i = 0; i < reply->elements; i++) {
        const redisReply *e = reply->element[i];
        items[i].is_int = e->type == REDIS_REPLY_INTEGER;
        items[i].integer = e->integer;
        items[i].str = (e->type == REDIS_REPLY_STRING || e->type == REDIS_REPLY_STATUS) ? e->str : NULL;
    }
    if (rc_write_result_parse(b, items, reply->elements, res))
        return rc_error_set(err, RC_E_INTERNAL, "write script answered an unexpected reply");
    return 0;
}

static void on_reply_waited(redisReply *reply, int replicas, void *privdata)
{
    struct pending *p = privdata;
    struct rc_write_result res;
    struct rc_error err = {0, ""};
    int code = gw_write_parse_reply(p->board, reply, &res, &err);
    if (!code)
        res.replicas = p->replicas > 0 ? replicas : -1;
    p->cb(code, code ? NULL : &res, &err, p->privdata);
    free(p);
}

static void on_reply(redisReply *reply, void *privdata)
{
    on_reply_waited(reply, -1, privdata);
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
    struct rc_write_args a;
    const char *words[RC_WRITE_NKEYS + RC_WRITE_ARGV_MAX];
    size_t lens[RC_WRITE_NKEYS + RC_WRITE_ARGV_MAX];
    int rc = rc_write_args_build(b, r, p, now_ms, gw_redis_is_cluster(redis) == 1, &a, err);
    if (rc)
        return rc;
    unsigned n = 0;
    for (unsigned i = 0; i < a.nkeys; i++, n++) {
        words[n] = a.keys[i];
        lens[n] = strlen(a.keys[i]);
    }
    for (unsigned i = 0; i < a.nargv; i++, n++) {
        words[n] = a.argv[i];
        lens[n] = strlen(a.argv[i]);
    }
    struct pending *pd = malloc(sizeof *pd);
    if (!pd)
        return rc_error_set(err, RC_E_INTERNAL, "out of memory");
    pd->board = b;
    pd->replicas = replicas;
    pd->cb = cb;
    pd->privdata = privdata;
    if ((replicas > 0 ? gw_redis_eval_wait(redis, s, (int)a.nkeys, (int)n, words, lens, replicas, replicas_timeout_ms,
                                           on_reply_waited, pd)
                      : gw_redis_eval(redis, s, (int)a.nkeys, (int)n, words, lens, on_reply, pd)) != 0) {
        free(pd);
        return rc_error_set(err, RC_E_UNAVAILABLE, "Redis is unreachable: nothing was written");
    }
    return 0;
}
