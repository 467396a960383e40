/* rc_lua.h - the embedded Lua scripts (generated from the .lua files at build).
 *
 * Each script comes with its SHA-1 in hex, computed by CMake at build time
 * from the same bytes (lua/embed.cmake): the name Redis gives it, so EVALSHA
 * can go out before SCRIPT LOAD has answered, with no SHA-1 code of ours. */
#ifndef RC_LUA_H
#define RC_LUA_H

#include <stddef.h>

/* The atomic write script, lua/write.lua, NUL-terminated. */
extern const char rc_lua_write[];
extern const char rc_lua_write_sha[];

/* The consistent board read, lua/read.lua, NUL-terminated. */
extern const char rc_lua_read[];
extern const char rc_lua_read_sha[];

/* A hot board's weighted union of its buckets, lua/rebuild.lua. */
extern const char rc_lua_rebuild[];
extern const char rc_lua_rebuild_sha[];

/* The scale schedule of a decay = scale board, lua/scale.lua. */
extern const char rc_lua_scale[];
extern const char rc_lua_scale_sha[];

/* Compare-and-PEXPIRE of a lock by its owner, lua/lock_renew.lua. */
extern const char rc_lua_lock_renew[];
extern const char rc_lua_lock_renew_sha[];

/* Compare-and-DEL of a lock by its owner, lua/lock_release.lua. */
extern const char rc_lua_lock_release[];
extern const char rc_lua_lock_release_sha[];

/* Admin operations (remove, unblock, reverse, reset), lua/admin.lua. */
extern const char rc_lua_admin[];
extern const char rc_lua_admin_sha[];

/* A profile replaced atomically (DEL + HSET), lua/profile_set.lua. */
extern const char rc_lua_profile_set[];
extern const char rc_lua_profile_set_sha[];

/* A gateway's viewer count of a board, and the others' sum, lua/viewers.lua. */
extern const char rc_lua_viewers[];
extern const char rc_lua_viewers_sha[];

/* Freeze, reveal and the freeze state of a board, lua/freeze.lua. */
extern const char rc_lua_freeze[];
extern const char rc_lua_freeze_sha[];

/* Queues a write of a write_mode = queued board, lua/enqueue.lua. */
extern const char rc_lua_enqueue[];
extern const char rc_lua_enqueue_sha[];

/* Acknowledges and deletes applied queue entries, lua/queue_ack.lua. */
extern const char rc_lua_queue_ack[];
extern const char rc_lua_queue_ack_sha[];

/* One step of a board's history checkpoint job, lua/ckpt.lua. */
extern const char rc_lua_ckpt[];
extern const char rc_lua_ckpt_sha[];

/* Recomputes or empties a team board from its source, lua/teams.lua. */
extern const char rc_lua_teams[];
extern const char rc_lua_teams_sha[];

/* Every embedded script: name (file name without .lua), source, SHA-1 hex
 * (40 digits). Ends with an entry whose name is NULL. */
struct rc_lua_script {
    const char *name;
    const char *source;
    const char *sha;
};
extern const struct rc_lua_script rc_lua_scripts[];

/* The SHA-1 of an embedded script, by identity: source must be one of the
 * rc_lua_* arrays above (not a copy). NULL for any other text. */
const char *rc_lua_sha_of(const char *source);

#endif
