# install_etc.cmake - the files whose place or text depends on the install
# prefix, known only at install time (`cmake --install --prefix P`, or cpack's
# /usr): the config (/etc for prefix /usr, else PREFIX/etc, as GNUInstallDirs
# does) and the systemd unit (its ExecStart names the installed binary).
# Set by dist/CMakeLists.txt before this runs: RC_DIST_SRC, RC_DIST_BIN, RC_BINDIR.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(RC_ETC "/etc")
else()
  set(RC_ETC "${CMAKE_INSTALL_PREFIX}/etc")
endif()
set(RC_EXEC "${CMAKE_INSTALL_PREFIX}/${RC_BINDIR}/rankcast")
set(RC_CONF "${RC_ETC}/rankcast/rankcast.conf")
configure_file("${RC_DIST_SRC}/rankcast.service.in" "${RC_DIST_BIN}/rankcast.service" @ONLY)
file(INSTALL DESTINATION "${RC_ETC}/rankcast" TYPE FILE FILES "${RC_DIST_BIN}/rankcast.conf")
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/systemd/system" TYPE FILE FILES "${RC_DIST_BIN}/rankcast.service")
