/* gw_paths.c - where an installed rankcast finds its files (gw_paths.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "gw_paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef RC_BIN_TO_DATA
#error "RC_BIN_TO_DATA: the path from the bin directory to share/rankcast (gateway/CMakeLists.txt)"
#endif

int gw_paths_web_root(char *web_root, size_t size)
{
    char exe[PATH_MAX], want[PATH_MAX];
    if (web_root[0] == '/' || web_root[0] == '\0')
        return 0;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0'; /* the bin directory */
    int len = snprintf(want, sizeof want, "%s/%s/%s", exe, RC_BIN_TO_DATA, web_root);
    struct stat st;
    char real[PATH_MAX]; /* /usr/share/rankcast/web, not /usr/bin/../share/... */
    if (len < 0 || (size_t)len >= sizeof want || stat(want, &st) != 0 || !S_ISDIR(st.st_mode) || !realpath(want, real) ||
        strlen(real) >= size)
        return 0;
    memcpy(web_root, real, strlen(real) + 1);
    return 1;
}
