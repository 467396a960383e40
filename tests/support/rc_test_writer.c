/* rc_test_writer.c - blocking wrapper around the async write path. */
#include "rc_test_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_lua.h"
#include "rc_proto.h"

int rc_test_writer_open_seeds(struct rc_test_writer *w, const char *seeds, unsigned nconns)
{
    memset(w, 0, sizeof *w);
    if (nconns > RC_TEST_MAX_CONNS || uv_loop_init(&w->loop) != 0)
        return -1;
    gw_script_init(&w->script, rc_lua_write);
    struct gw_redis_opts o = {.seeds = seeds, .backoff_min_ms = 20, .backoff_max_ms = 500, .ping_every_ms = 1000,
                              .ping_timeout_ms = 5000};
    for (unsigned i = 0; i < nconns; i++) {
        if (!(w->redis[i] = gw_redis_start(&w->loop, &o, NULL)))
            return -1;
        gw_redis_add_script(w->redis[i], &w->script);
        w->nconns++;
    }
    uint64_t deadline = uv_now(&w->loop) + 30000;
    for (unsigned i = 0; i < nconns; i++)
        while (!gw_redis_is_up(w->redis[i])) {
            if (uv_now(&w->loop) > deadline) {
                fprintf(stderr, "rc_test_writer: %s not up within 30 s: %s\n", seeds, gw_redis_why_down(w->redis[i]));
                return -1;
            }
            uv_run(&w->loop, UV_RUN_ONCE);
        }
    return 0;
}

int rc_test_writer_open(struct rc_test_writer *w, int port, unsigned nconns)
{
    char seeds[32];
    snprintf(seeds, sizeof seeds, "127.0.0.1:%d", port);
    return rc_test_writer_open_seeds(w, seeds, nconns);
}

void rc_test_writer_close(struct rc_test_writer *w)
{
    for (unsigned i = 0; i < w->nconns; i++)
        if (w->redis[i])
            gw_redis_stop(w->redis[i]);
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
    int rc = rc_proto_decode(json, strlen(json), &r, err);
    const struct rc_board *b = rc ? NULL : rc_conf_board_find(c, r.board);
    if (!rc && !b)
        rc = rc_err_set(err, RC_E_UNKNOWN_BOARD, "unknown board %s", r.board);
    if (!rc && rc_period_select(&b->period, r.period, now_ms, &p))
        rc = rc_err_set(err, RC_E_BAD_REQUEST, "bad period");
    if (!rc)
        rc = gw_write_submit(w->redis[0], &w->script, b, &r, &p, now_ms, on_write, &o, err);
    if (!rc) {
        while (!o.done)
            uv_run(&w->loop, UV_RUN_ONCE);
        rc = o.code;
    }
    rc_proto_decode_free(&r);
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
