# make_conf.cmake - the production config (/etc/rankcast/rankcast.conf) from
# the shipped one, so every key keeps the one comment that documents it:
# conf/rankcast.conf up to its boards, with production values, then the one
# example board of dist/board.conf.
#   cmake -DIN=conf/rankcast.conf -DBOARD=dist/board.conf -DOUT=FILE -P make_conf.cmake
# A value this no longer finds fails the build (the shipped file changed).
file(READ "${IN}" text)
string(FIND "${text}" "# Boards. " cut)
if(cut LESS 0)
  message(FATAL_ERROR "make_conf: no '# Boards. ' header in ${IN}")
endif()
string(SUBSTRING "${text}" 0 ${cut} text)
# drop the rule line just above the header (dist/board.conf has its own)
string(REGEX REPLACE "\n*# -+\n$" "\n\n" text "${text}")
function(rc_swap from to)
  string(FIND "${text}" "${from}" at)
  if(at LESS 0)
    message(FATAL_ERROR "make_conf: '${from}' not found in ${IN}")
  endif()
  string(REPLACE "${from}" "${to}" text "${text}")
  set(text "${text}" PARENT_SCOPE)
endfunction()
rc_swap("# rankcast.conf - the shipped configuration of the rankcast gateway.\n"
        "# /etc/rankcast/rankcast.conf - rankcast installed as a service.\n#\n# Made at build time from conf/rankcast.conf (the demo configuration of a\n# clone) with production values: Redis on loopback at its usual port 6379,\n# state in /var/lib/rankcast, and one example board instead of the demo set.\n# The comments are the shipped file's: where they speak of the run script, the\n# demo boards or port 6390, the value below is what the service uses.\n# The unit runs: rankcast --config /etc/rankcast/rankcast.conf\n# Secrets go in /etc/rankcast/environment (mode 0600), read by the unit.\n#\n# What follows is the shipped file's own header.\n")
rc_swap("\nstate_dir = state\n" "\nstate_dir = /var/lib/rankcast\n")
rc_swap("\naddress = 127.0.0.1:6390\n" "\naddress = 127.0.0.1:6379\n")
file(READ "${BOARD}" board)
file(WRITE "${OUT}" "${text}${board}")
