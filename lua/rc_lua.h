/* rc_lua.h - the embedded Lua scripts (generated from the .lua files at build). */
#ifndef RC_LUA_H
#define RC_LUA_H

/* The atomic write script, lua/write.lua, NUL-terminated. */
extern const char rc_lua_write[];

/* The consistent board read, lua/read.lua, NUL-terminated. */
extern const char rc_lua_read[];

#endif
