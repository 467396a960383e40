# Writes OUT: for each script NAME in SCRIPTS, `const char rc_lua_NAME[]` (its
# bytes) and `rc_lua_NAME_sha[]` (the hex SHA-1 of those same bytes, which is
# the name Redis gives the script for EVALSHA), then the table of them all.
file(WRITE ${OUT} "/* generated from the lua/ scripts by lua/embed.cmake: do not edit */\n#include \"rc_lua.h\"\n\n#include <stddef.h>\n#include <string.h>\n")
string(REPLACE "," ";" script_list "${SCRIPTS}")
set(table "")
foreach(s ${script_list})
  file(READ ${SRC_DIR}/${s}.lua hex HEX)
  file(SHA1 ${SRC_DIR}/${s}.lua sha)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  file(APPEND ${OUT} "const char rc_lua_${s}[] = {${bytes}0x00};\n")
  file(APPEND ${OUT} "const char rc_lua_${s}_sha[] = \"${sha}\";\n")
  string(APPEND table "    {\"${s}\", rc_lua_${s}, rc_lua_${s}_sha},\n")
endforeach()
file(APPEND ${OUT} "\nconst struct rc_lua_script rc_lua_scripts[] = {\n${table}    {NULL, NULL, NULL},\n};\n")
file(APPEND ${OUT} "
const char *rc_lua_sha_of(const char *source)
{
    for (const struct rc_lua_script *s = rc_lua_scripts; s->name; s++)
        if (s->source == source)
            return s->sha;
    return NULL;
}
")
