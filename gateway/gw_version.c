/* gw_version.c - `rankcast --version` (gw_version.h). */
#include "gw_version.h"

#include <uv.h>
#include <libwebsockets.h>
#include <hiredis/hiredis.h>

#ifndef RC_VERSION
#error "RC_VERSION comes from CMake's project(VERSION) (gateway/CMakeLists.txt)"
#endif

void gw_version_print(FILE *f)
{
    fprintf(f, "rankcast %s\n", RC_VERSION);
    fprintf(f, "libwebsockets %s\n", lws_get_library_version());
    fprintf(f, "hiredis %d.%d.%d\n", HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH);
    fprintf(f, "libuv %s\n", uv_version_string());
}
