/* gw_redis_uv.c - hiredis event hooks on a uv_poll_t (see gw_redis_uv.h). */
#include "gw_redis_uv.h"

#include <stdlib.h>

#include <hiredis/hiredis.h>

struct uv_events {
    redisAsyncContext *ac; /* NULL once hiredis has let go of us */
    uv_poll_t poll;
    int events;
};

/* On an error status we must not return quietly (the stock adapter's bug):
 * hiredis only learns that a connect failed or a socket died when it tries to
 * write (while connecting) or read, and then runs its callbacks. */
static void on_poll(uv_poll_t *handle, int status, int events)
{
    struct uv_events *p = handle->data;
    if (status != 0) {
        if (!p->ac)
            return;
        if (!(p->ac->c.flags & REDIS_CONNECTED))
            redisAsyncHandleWrite(p->ac);
        else
            redisAsyncHandleRead(p->ac);
        return;
    }
    if (p->ac && (events & UV_READABLE))
        redisAsyncHandleRead(p->ac);
    if (p->ac && (events & UV_WRITABLE))
        redisAsyncHandleWrite(p->ac);
}

static void update(struct uv_events *p)
{
    if (p->events)
        uv_poll_start(&p->poll, p->events, on_poll);
    else
        uv_poll_stop(&p->poll);
}

static void add_read(void *data)
{
    struct uv_events *p = data;
    p->events |= UV_READABLE;
    update(p);
}

static void del_read(void *data)
{
    struct uv_events *p = data;
    p->events &= ~UV_READABLE;
    update(p);
}

static void add_write(void *data)
{
    struct uv_events *p = data;
    p->events |= UV_WRITABLE;
    update(p);
}

static void del_write(void *data)
{
    struct uv_events *p = data;
    p->events &= ~UV_WRITABLE;
    update(p);
}

static void on_closed(uv_handle_t *handle)
{
    free(handle->data);
}

/* hiredis is freeing the context: detach, and free our state only after libuv
 * has closed the handle (libuv owns it until the close callback). */
static void cleanup(void *data)
{
    struct uv_events *p = data;
    p->ac = NULL;
    uv_close((uv_handle_t *)&p->poll, on_closed);
}

int gw_redis_uv_attach(redisAsyncContext *ac, uv_loop_t *loop)
{
    if (ac->ev.data != NULL)
        return -1;
    struct uv_events *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    if (uv_poll_init(loop, &p->poll, ac->c.fd) != 0) {
        free(p);
        return -1;
    }
    p->ac = ac;
    p->poll.data = p;
    ac->ev.addRead = add_read;
    ac->ev.delRead = del_read;
    ac->ev.addWrite = add_write;
    ac->ev.delWrite = del_write;
    ac->ev.cleanup = cleanup;
    ac->ev.data = p;
    return 0;
}
