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

/* Raw replies: once ac is connected, every reply read from it goes to cb
 * (borrowed for the call; freed after) instead of hiredis' callback lists.
 * For a subscribe connection: hiredis 0.14 knows SUBSCRIBE and PSUBSCRIBE but
 * not the sharded pub/sub of Redis 7 (SSUBSCRIBE, smessage, sunsubscribe), and
 * aborts on a push it cannot place. Commands for such a context go out with
 * gw_redis_uv_send, never redisAsyncCommand (no callback list is kept).
 * Read errors and protocol errors still end in hiredis' disconnect callback.
 * Freeing ac from inside cb is allowed (deferred like hiredis does). */
typedef void gw_redis_uv_raw_cb(redisAsyncContext *ac, redisReply *reply, void *data);
int gw_redis_uv_set_raw(redisAsyncContext *ac, gw_redis_uv_raw_cb *cb, void *data);

/* Reads what ac's socket holds now (as a readable event would: up to about
 * 1 MB) and hands on the replies; for a deadline that runs before the
 * loop's reads (gw_node_link.c: the PING's answer may be waiting there). */
void gw_redis_uv_read_now(redisAsyncContext *ac);

/* Queues a command on a raw context (argvlen NULL: strlen) and asks for a
 * write. Returns 0 or RC_E_UNAVAILABLE (not connected, or out of memory). */
int gw_redis_uv_send(redisAsyncContext *ac, int argc, const char **argv, const size_t *argvlen);

#endif
