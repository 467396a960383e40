/* gw_script.h - a Lua script called by EVALSHA on an async Redis connection.
 *
 * The SHA-1 of an embedded script (lua/) is computed at build time (rc_lua.h),
 * so calls can go out before SCRIPT LOAD has answered (or at all); any other
 * script learns it from its first SCRIPT LOAD answer. When Redis answers NOSCRIPT (after a restart,
 * a failover or SCRIPT FLUSH) the call sends SCRIPT LOAD and the same EVALSHA
 * again, pipelined on the same connection, once; only the second answer
 * reaches the caller.
 */
#ifndef GW_SCRIPT_H
#define GW_SCRIPT_H

#include <stddef.h>

#include <hiredis/async.h>

#include "rc_keys.h"

struct rc_error;
#include "rc_write_args.h" /* struct rc_reply_item */

struct gw_script {
    const char *source;   /* borrowed; lives as long as the struct (embedded scripts) */
    char sha[41];          /* hex SHA-1, "" while unknown */
    unsigned long reloads; /* NOSCRIPT answers that made us reload */
};

/* reply is borrowed for the duration of the callback; NULL when the
 * connection went away before Redis answered (nothing is known about the
 * write then; the caller answers unavailable). */
typedef void gw_script_reply_cb(redisReply *reply, void *privdata);

/* Sets up s for source (borrowed). An embedded script (one of the rc_lua_*
 * arrays itself, rc_lua.h) gets its build-time SHA-1; any other source has
 * none until gw_script_load's answer gives it. */
void gw_script_init(struct gw_script *s, const char *source);

/* Sets up s for source (borrowed) whose SHA-1 (40 hex digits) the caller
 * knows; sha NULL or malformed: as for a source that is not embedded. */
void gw_script_init_sha(struct gw_script *s, const char *source, const char *sha);

/* Sends SCRIPT LOAD (a warm-up after each connect); its answer sets s->sha
 * when s had none. cb may be NULL. Returns 0, RC_E_INTERNAL (out of memory)
 * or RC_E_UNAVAILABLE (the connection cannot take it). */
int gw_script_load(struct gw_script *s, redisAsyncContext *ac, gw_script_reply_cb *cb, void *privdata);

/* EVALSHA with nkeys keys followed by the other args: argv[0..argc) (keys
 * first). Copies argv. Returns 0, or when the command could not be queued
 * (cb is not called then): RC_E_UNAVAILABLE (connection down), RC_E_INTERNAL
 * (out of memory, or s has no SHA-1 yet). */
int gw_script_call(struct gw_script *s, redisAsyncContext *ac, int nkeys, int argc, const char *const *argv,
                   const size_t *argvlen, gw_script_reply_cb *cb, void *privdata);

/* The shape of a script's array reply r, for core's reply parsers: items
 * borrow r's strings (STRING and STATUS replies; a string with a NUL inside
 * is none the scripts send, and reads as NULL). Returns the element count,
 * or 0 when r is NULL, not an array, or longer than max. */
size_t gw_script_reply_items(const redisReply *r, struct rc_reply_item *items, size_t max);

/* The client's side of a Redis error reply r to a script or command (what:
 * "the write script", ...): logs r's text once through the rate-limited
 * client log, and sets err to code with GW_REDIS_REFUSED_MSG, never r's
 * text (it names keys, script SHA-1s and line numbers: docs/security.md,
 * "What errors say"). r is borrowed. Returns code. */
#define GW_REDIS_REFUSED_MSG "Redis refused the operation (the gateway's log has Redis' reply)"
int gw_script_reply_error(struct rc_error *err, int code, const char *what, const redisReply *r);

/* A script call's words as gw_redis_eval takes them: keys[0..nkeys) then
 * argv[0..nargv) into words and lens (room for nkeys + nargv). Returns the
 * count. */
unsigned gw_script_call_words(const char (*keys)[RC_KEY_MAX], unsigned nkeys, const char *const *argv, unsigned nargv,
                       const char **words, size_t *lens);

#endif
