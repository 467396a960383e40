/* rc_test_writer.c - blocking wrapper around the async write path. */
#include "rc_test_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis/gw_redis_uv.h"
#include "rc_lua.h"
#include "rc_proto.h"

static void on_connect(const redisAsyncContext *ac, int status)
{
    int *pending = ac->data;
    (*pending)--;
    if (status != REDIS_OK)
        fprintf(stderr, "rc_test_writer: connect failed: %s\n", ac->errstr);
}

int rc_test_writer_open(struct rc_test_writer *w, int port, unsigned nconns)
{
    static int pending;
    memset(w, 0, sizeof *w);
    if (nconns > RC_TEST_MAX_CONNS || uv_loop_init(&w->loop) != 0)
        return -1;
    gw_script_init(&w->script, rc_lua_write);
    pending = (int)nconns;
    for (unsigned i = 0; i < nconns; i++) {
        redisAsyncContext *ac = redisAsyncConnect("127.0.0.1", port);
        if (!ac || ac->err || gw_redis_uv_attach(ac, &w->loop) != 0)
            return -1;
        ac->data = &pending;
        redisAsyncSetConnectCallback(ac, on_connect);
        w->ac[i] = ac;
        w->nconns++;
    }
    while (pending > 0)
        uv_run(&w->loop, UV_RUN_ONCE);
    for (unsigned i = 0; i < nconns; i++)
        if (!(w->ac[i]->c.flags & REDIS_CONNECTED))
            return -1;
    return 0;
}

void rc_test_writer_close(struct rc_test_writer *w)
{
    for (unsigned i = 0; i < w->nconns; i++)
        if (w->ac[i])
            redisAsyncDisconnect(w->ac[i]);
    w->nconns = 0;
    uv_run(&w->loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&w->loop) != 0)
        fprintf(stderr, "rc_test_writer: loop still has handles\n");
}

struct one {
    int done;
    int code;
    struct rc_write_result *res;
    struct rc_error *err;
};

static void on_write(int code, const struct rc_write_result *res, const struct rc_error *err, void *privdata)
{
    struct one *o = privdata;
    o->done = 1;
    o->code = code;
    if (res)
        *o->res = *res;
    if (code && err)
        *o->err = *err;
}

int rc_test_write(struct rc_test_writer *w, const struct rc_conf *c, const char *json, int64_t now_ms,
                  struct rc_write_result *res, struct rc_error *err)
{
    struct rc_request r;
    struct rc_period p;
    struct one o = {0, 0, res, err};
    int rc = rc_request_decode(json, strlen(json), &r, err);
    const struct rc_board *b = rc ? NULL : rc_conf_find_board(c, r.board);
    if (!rc && !b)
        rc = rc_error_set(err, RC_E_UNKNOWN_BOARD, "unknown board %s", r.board);
    if (!rc && rc_period_select(&b->period, r.period, now_ms, &p))
        rc = rc_error_set(err, RC_E_BAD_REQUEST, "bad period");
    if (!rc)
        rc = gw_write_submit(&w->script, w->ac[0], b, &r, &p, now_ms, on_write, &o, err);
    if (!rc) {
        while (!o.done)
            uv_run(&w->loop, UV_RUN_ONCE);
        rc = o.code;
    }
    rc_request_free(&r);
    return rc;
}

struct rc_conf *rc_test_conf(const char *text)
{
    struct rc_conf *c = malloc(sizeof *c);
    struct rc_error err = {0, ""};
    if (!c || rc_conf_parse("test.conf", text, strlen(text), c, &err) != 0) {
        fprintf(stderr, "rc_test_conf: %s\n", err.msg);
        abort();
    }
    return c;
}
