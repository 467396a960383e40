# Writes OUT: one `const char rc_lua_NAME[]` per script in SCRIPTS, as bytes.
file(WRITE ${OUT} "/* generated from the lua/ scripts by lua/embed.cmake: do not edit */\n#include \"rc_lua.h\"\n")
string(REPLACE "," ";" script_list "${SCRIPTS}")
foreach(s ${script_list})
  file(READ ${SRC_DIR}/${s}.lua hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  file(APPEND ${OUT} "const char rc_lua_${s}[] = {${bytes}0x00};\n")
endforeach()
