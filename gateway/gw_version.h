/* gw_version.h - `rankcast --version`. */
#ifndef GW_VERSION_H
#define GW_VERSION_H

#include <stdio.h>

/* Prints "rankcast VERSION" (CMake's project(VERSION)), then the
 * libwebsockets and libuv versions the process runs with (asked at run time)
 * and the hiredis version it was built with (hiredis has no run-time query;
 * its soname pins the minor version). */
void gw_version_print(FILE *f);

#endif
