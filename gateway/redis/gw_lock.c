/* gw_lock.c - the owned Redis lock (gw_lock.h): one request struct per
 * command carries the caller's callback through hiredis, so every reply shape
 * (OK, nil, 1/0, error, none) becomes one rc. */
#include "redis/gw_lock.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "rc_err.h"
#include "rc_lua.h"

struct req {
    gw_lock_cb *cb;
    void *privdata;
};

void gw_lock_scripts_init(struct gw_lock_scripts *s)
{
    gw_script_init(&s->renew, rc_lua_lock_renew);
    gw_script_init(&s->release, rc_lua_lock_release);
}

/* OK or 1: held; nil or 0: not held. */
static void finish(struct req *q, const redisReply *r)
{
    int rc;
    const char *err = NULL;
    if (!r)
        rc = RC_E_UNAVAILABLE;
    else if (r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0)
        rc = 1;
    else if (r->type == REDIS_REPLY_INTEGER)
        rc = r->integer == 1;
    else if (r->type == REDIS_REPLY_NIL)
        rc = 0;
    else {
        rc = RC_E_INTERNAL;
        err = r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply";
    }
    if (q->cb)
        q->cb(rc, err, q->privdata);
    free(q);
}

static void on_reply(redisReply *reply, void *privdata)
{
    finish(privdata, reply);
}

static struct req *req_new(gw_lock_cb *cb, void *privdata)
{
    struct req *q = malloc(sizeof *q);
    if (q) {
        q->cb = cb;
        q->privdata = privdata;
    }
    return q;
}

int gw_lock_acquire(struct gw_redis *redis, const char *key, const char *token, int64_t ttl_ms, gw_lock_cb *cb,
                    void *privdata)
{
    char ttl[24];
    snprintf(ttl, sizeof ttl, "%" PRId64, ttl_ms);
    const char *argv[] = {"SET", key, token, "NX", "PX", ttl};
    size_t lens[6];
    for (int i = 0; i < 6; i++)
        lens[i] = strlen(argv[i]);
    struct req *q = req_new(cb, privdata);
    if (!q)
        return RC_E_INTERNAL;
    int rc = gw_redis_command(redis, key, lens[1], 6, argv, lens, on_reply, q);
    if (rc != 0) {
        free(q);
        return rc;
    }
    return 0;
}

static int call(struct gw_script *s, struct gw_redis *redis, int argc, const char *const *argv, gw_lock_cb *cb,
                void *privdata)
{
    size_t lens[3];
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    struct req *q = req_new(cb, privdata);
    if (!q)
        return RC_E_INTERNAL;
    int rc = gw_redis_eval(redis, s, 1, argc, argv, lens, on_reply, q);
    if (rc != 0) {
        free(q);
        return rc;
    }
    return 0;
}

int gw_lock_renew(struct gw_lock_scripts *s, struct gw_redis *redis, const char *key, const char *token,
                  int64_t ttl_ms, gw_lock_cb *cb, void *privdata)
{
    char ttl[24];
    snprintf(ttl, sizeof ttl, "%" PRId64, ttl_ms);
    const char *argv[] = {key, token, ttl};
    return call(&s->renew, redis, 3, argv, cb, privdata);
}

int gw_lock_release(struct gw_lock_scripts *s, struct gw_redis *redis, const char *key, const char *token,
                    gw_lock_cb *cb, void *privdata)
{
    const char *argv[] = {key, token};
    return call(&s->release, redis, 2, argv, cb, privdata);
}

void gw_lock_token(char *out)
{
    unsigned char raw[(GW_LOCK_TOKEN_MAX - 1) / 2];
    if (uv_random(NULL, NULL, raw, sizeof raw, 0, NULL) != 0) {
        uint64_t x = uv_hrtime() ^ ((uint64_t)uv_os_getpid() << 32);
        memcpy(raw, &x, sizeof x);
        memcpy(raw + 8, &x, sizeof x);
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
}
