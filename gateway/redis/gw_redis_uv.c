/* gw_redis_uv.c - hiredis event hooks on a uv_poll_t (see gw_redis_uv.h). */
#include "redis/gw_redis_uv.h"

#include <stdlib.h>
#include <sys/ioctl.h>

#include <hiredis/hiredis.h>

#include "rc_err.h"

struct uv_events {
    redisAsyncContext *ac; /* NULL once hiredis has let go of us */
    uv_poll_t poll;
    uv_check_t flush;      /* writes queued commands at the end of this loop turn */
    int events;
    int open_handles;      /* freed when both handles are closed */
    gw_redis_uv_raw_cb *raw; /* non-NULL: replies go here (gw_redis_uv_set_raw) */
    void *raw_data;
};

/* Reads what the socket has and hands every complete reply to p->raw. A read
 * or protocol error is left in c->err; hiredis' own read handler then sees it
 * at once (redisBufferRead returns early on c->err) and runs its disconnect
 * path, so the connection ends the same way as any other. IN_CALLBACK makes
 * a redisAsyncFree from inside the callback wait until we are done. */
static void raw_read(struct uv_events *p)
{
    redisAsyncContext *ac = p->ac;
    redisContext *c = &ac->c;
    if (redisBufferRead(c) != REDIS_OK) {
        redisAsyncHandleRead(ac);
        return;
    }
    c->flags |= REDIS_IN_CALLBACK;
    for (;;) {
        void *reply = NULL;
        if (redisGetReplyFromReader(c, &reply) != REDIS_OK) {
            c->flags &= ~REDIS_IN_CALLBACK;
            if (!(c->flags & REDIS_FREEING))
                redisAsyncHandleRead(ac);
            else
                redisAsyncFree(ac);
            return;
        }
        if (!reply)
            break;
        p->raw(ac, reply, p->raw_data);
        freeReplyObject(reply);
        if (c->flags & REDIS_FREEING)
            break;
    }
    c->flags &= ~REDIS_IN_CALLBACK;
    if (c->flags & REDIS_FREEING)
        redisAsyncFree(ac);
}

/* Reads per readable event: one read takes at most hiredis' buffer (16 KB),
 * and a loop turn held long by other work (the tick of thousands of views:
 * issue 26, bench case M) then let the replies fall behind by more each
 * turn, until the watchdog PING's answer sat unread past its deadline and
 * Redis was taken for dead (tests/e2e/redis_backlog.test.js). Up to this
 * many reads (1 MB) while the socket has more; the rest waits one turn. */
#define READS_PER_EVENT 64

/* 1 when p's connection is up and its socket holds bytes not read yet. */
static int more_to_read(const struct uv_events *p)
{
    int n = 0;
    return p->ac && (p->ac->c.flags & REDIS_CONNECTED) && !(p->ac->c.flags & (REDIS_FREEING | REDIS_DISCONNECTING)) &&
           ioctl(p->ac->c.fd, FIONREAD, &n) == 0 && n > 0;
}

static void add_read(void *data);

/* One readable event's reads (READS_PER_EVENT at most). */
static void read_some(struct uv_events *p)
{
    for (int i = 0; p->ac && i < READS_PER_EVENT; i++) {
        if (p->raw && (p->ac->c.flags & REDIS_CONNECTED))
            raw_read(p);
        else
            redisAsyncHandleRead(p->ac);
        if (!more_to_read(p))
            break;
    }
}

void gw_redis_uv_read_now(redisAsyncContext *ac)
{
    struct uv_events *p = ac ? ac->ev.data : NULL;
    if (p && ac->ev.addRead == add_read)
        read_some(p);
}

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
        else if (p->raw)
            raw_read(p);
        else
            redisAsyncHandleRead(p->ac);
        return;
    }
    if (events & UV_READABLE)
        read_some(p);
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

/* Commands queued during this loop turn go out at its end, in one write,
 * instead of a turn later when the poll reports the socket writable: a score
 * write then costs one loop turn less (bench case C). Only once connected:
 * before that hiredis would take the flush for a finished connect. */
static void on_flush(uv_check_t *handle)
{
    struct uv_events *p = handle->data;
    uv_check_stop(handle);
    if (p->ac && (p->ac->c.flags & REDIS_CONNECTED) && (p->events & UV_WRITABLE))
        redisAsyncHandleWrite(p->ac);
}

static void add_write(void *data)
{
    struct uv_events *p = data;
    p->events |= UV_WRITABLE;
    update(p);
    if (p->ac && (p->ac->c.flags & REDIS_CONNECTED))
        uv_check_start(&p->flush, on_flush);
}

static void del_write(void *data)
{
    struct uv_events *p = data;
    p->events &= ~UV_WRITABLE;
    update(p);
}

static void on_closed(uv_handle_t *handle)
{
    struct uv_events *p = handle->data;
    if (--p->open_handles == 0)
        free(p);
}

/* hiredis is freeing the context: detach, and free our state only after libuv
 * has closed the handle (libuv owns it until the close callback). */
static void cleanup(void *data)
{
    struct uv_events *p = data;
    p->ac = NULL;
    uv_close((uv_handle_t *)&p->poll, on_closed);
    uv_close((uv_handle_t *)&p->flush, on_closed);
}

int gw_redis_uv_attach(redisAsyncContext *ac, uv_loop_t *loop)
{
    if (ac->ev.data != NULL)
        return RC_E_INTERNAL;
    struct uv_events *p = calloc(1, sizeof *p);
    if (!p)
        return RC_E_INTERNAL;
    if (uv_poll_init(loop, &p->poll, ac->c.fd) != 0) {
        free(p);
        return RC_E_INTERNAL;
    }
    uv_check_init(loop, &p->flush);
    p->open_handles = 2;
    p->ac = ac;
    p->poll.data = p;
    p->flush.data = p;
    ac->ev.addRead = add_read;
    ac->ev.delRead = del_read;
    ac->ev.addWrite = add_write;
    ac->ev.delWrite = del_write;
    ac->ev.cleanup = cleanup;
    ac->ev.data = p;
    return 0;
}

int gw_redis_uv_set_raw(redisAsyncContext *ac, gw_redis_uv_raw_cb *cb, void *data)
{
    struct uv_events *p = ac->ev.data;
    if (!p || ac->ev.addRead != add_read)
        return RC_E_INTERNAL;
    p->raw = cb;
    p->raw_data = data;
    return 0;
}

int gw_redis_uv_send(redisAsyncContext *ac, int argc, const char **argv, const size_t *argvlen)
{
    redisContext *c = &ac->c;
    if (!(c->flags & REDIS_CONNECTED) || (c->flags & (REDIS_DISCONNECTING | REDIS_FREEING)))
        return RC_E_UNAVAILABLE;
    if (redisAppendCommandArgv(c, argc, argv, argvlen) != REDIS_OK)
        return RC_E_UNAVAILABLE;
    if (ac->ev.addWrite)
        ac->ev.addWrite(ac->ev.data);
    return 0;
}
