/* gw_enqueue.c - sends a queued board's write to lua/enqueue.lua and decodes
 * the answer (see gw_enqueue.h). */
#include "redis/gw_enqueue.h"

#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "rc_err.h"
#include "redis/gw_write.h"

struct pending {
    gw_enqueue_cb *cb;
    void *privdata;
};

static void on_reply_waited(redisReply *reply, int replicas, void *privdata)
{
    struct pending *p = privdata;
    struct rc_reply_item items[4];
    struct rc_queue_result res;
    struct rc_error err = {0, ""};
    int code = 0;
    if (!reply && gw_redis_route_why_null() != GW_REDIS_NULL_LOST) {
        /* never run by Redis: certain, so the writer may retry freely */
        code = rc_err_set(&err, RC_E_UNAVAILABLE, "%s: the write was not queued (retry)",
                            gw_redis_route_why_text(gw_redis_route_why_null()));
    } else if (!reply) {
        code = rc_err_set(&err, RC_E_UNAVAILABLE, "Redis connection lost before the write was queued (retry "
                                                    "with the same req: it is answered duplicate if it was)");
    } else if (reply->type == REDIS_REPLY_ERROR) {
        code = gw_script_reply_error(&err, RC_E_INTERNAL, "the enqueue script", reply);
    } else if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 || reply->elements > 4) {
        code = rc_err_set(&err, RC_E_INTERNAL, "enqueue script answered an unexpected reply");
    } else {
        if (rc_queue_result_parse(items, gw_script_reply_items(reply, items, 4), &res) != 0)
            code = rc_err_set(&err, RC_E_INTERNAL, "enqueue script answered an unexpected reply");
    }
    p->cb(code, code ? NULL : &res, replicas, &err, p->privdata);
    free(p);
}

static void on_reply(redisReply *reply, void *privdata)
{
    on_reply_waited(reply, -1, privdata);
}

int gw_enqueue_submit(struct gw_redis *redis, struct gw_script *s, const struct rc_board *b,
                      const struct rc_request *r, int64_t now_ms, int replicas, int64_t replicas_timeout_ms,
                      unsigned flags, gw_enqueue_cb *cb, void *privdata, struct rc_error *err)
{
    struct rc_queue_enqueue a;
    const char *words[RC_QUEUE_NKEYS + RC_QUEUE_ARGV_MAX];
    size_t lens[RC_QUEUE_NKEYS + RC_QUEUE_ARGV_MAX];
    int rc = rc_queue_enqueue_build(b, r, now_ms, &a, err);
    if (rc)
        return rc;
    if (flags & GW_WRITE_F_NO_NEW_RECORD)
        rc_queue_enqueue_no_new_record(&a);
    unsigned n = gw_script_call_words(a.keys, a.nkeys, a.argv, a.nargv, words, lens);
    struct pending *p = malloc(sizeof *p);
    if (!p)
        return rc_err_set(err, RC_E_INTERNAL, "out of memory");
    p->cb = cb;
    p->privdata = privdata;
    if ((replicas > 0 ? gw_redis_eval_wait(redis, s, (int)a.nkeys, (int)n, words, lens, replicas,
                                           replicas_timeout_ms, on_reply_waited, p)
                      : gw_redis_eval_write(redis, s, (int)a.nkeys, (int)n, words, lens, on_reply, p)) != 0) {
        free(p);
        return rc_err_set(err, RC_E_UNAVAILABLE, "Redis is unreachable: nothing was queued");
    }
    return 0;
}
