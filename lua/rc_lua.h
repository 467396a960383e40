/* rc_lua.h - the embedded Lua scripts (generated from the .lua files at build). */
#ifndef RC_LUA_H
#define RC_LUA_H

/* The atomic write script, lua/write.lua, NUL-terminated. */
extern const char rc_lua_write[];

/* The consistent board read, lua/read.lua, NUL-terminated. */
extern const char rc_lua_read[];

/* A hot board's weighted union of its buckets, lua/rebuild.lua. */
extern const char rc_lua_rebuild[];

/* The scale schedule of a decay = scale board, lua/scale.lua. */
extern const char rc_lua_scale[];

/* Compare-and-PEXPIRE of a lock by its owner, lua/lock_renew.lua. */
extern const char rc_lua_lock_renew[];

/* Compare-and-DEL of a lock by its owner, lua/lock_release.lua. */
extern const char rc_lua_lock_release[];

/* Admin operations (remove, unblock, reverse, reset), lua/admin.lua. */
extern const char rc_lua_admin[];

#endif
