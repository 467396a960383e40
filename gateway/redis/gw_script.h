/* gw_script.h - a Lua script called by EVALSHA on an async Redis connection.
 *
 * The script's SHA-1 is computed locally, so calls can go out before SCRIPT
 * LOAD has answered (or at all). When Redis answers NOSCRIPT (after a restart,
 * a failover or SCRIPT FLUSH) the call sends SCRIPT LOAD and the same EVALSHA
 * again, pipelined on the same connection, once; only the second answer
 * reaches the caller.
 */
#ifndef GW_SCRIPT_H
#define GW_SCRIPT_H

#include <stddef.h>

#include <hiredis/async.h>

struct gw_script {
    const char *source;   /* borrowed; lives as long as the struct (embedded scripts) */
    char sha[41];
    unsigned long reloads; /* NOSCRIPT answers that made us reload */
};

/* reply is borrowed for the duration of the callback; NULL when the
 * connection went away before Redis answered (nothing is known about the
 * write then; the caller answers unavailable). */
typedef void gw_script_reply_cb(redisReply *reply, void *privdata);

/* Sets up s for source (borrowed). */
void gw_script_init(struct gw_script *s, const char *source);

/* Sends SCRIPT LOAD (a warm-up after each connect). cb may be NULL. */
int gw_script_load(struct gw_script *s, redisAsyncContext *ac, gw_script_reply_cb *cb, void *privdata);

/* EVALSHA with nkeys keys followed by the other args: argv[0..argc) (keys
 * first). Copies argv. Returns 0, or -1 when the command could not be queued
 * (connection down, out of memory): cb is not called then. */
int gw_script_call(struct gw_script *s, redisAsyncContext *ac, int nkeys, int argc, const char *const *argv,
                   const size_t *argvlen, gw_script_reply_cb *cb, void *privdata);

#endif
