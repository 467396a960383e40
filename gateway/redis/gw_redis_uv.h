/* gw_redis_uv.h - hiredis async contexts on a libuv loop.
 *
 * Our own adapter instead of hiredis 0.14's adapters/libuv.h: that one returns
 * early when libuv reports an error on the socket, so a failed connect never
 * reaches the connect callback and the context hangs forever (STYLE.md, Known
 * traps). This one still lets hiredis handle the event, so hiredis notices the
 * failure and calls the connect/disconnect callback, after which it frees the
 * context. This is the only file that touches hiredis' event hooks.
 */
#ifndef GW_REDIS_UV_H
#define GW_REDIS_UV_H

#include <uv.h>
#include <hiredis/async.h>

/* Attaches ac to loop. Call before setting the connect/disconnect callbacks.
 * Returns 0, or RC_E_INTERNAL when ac is already attached, memory runs out or
 * libuv refuses the socket (the caller then frees ac with redisAsyncFree).
 * The adapter's state is freed by hiredis' cleanup hook once the context
 * goes away. */
int gw_redis_uv_attach(redisAsyncContext *ac, uv_loop_t *loop);

#endif
