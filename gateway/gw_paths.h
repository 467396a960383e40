/* gw_paths.h - where an installed rankcast finds its files. */
#ifndef GW_PATHS_H
#define GW_PATHS_H

#include <stddef.h>

/* A relative [server] web_root names a folder under the installation's data
 * directory, <prefix>/share/rankcast/ (the binary's own path, /proc/self/exe,
 * gives <prefix>/bin), when that folder exists there: an installed binary
 * serves the installed pages, whatever its working directory (/ under
 * systemd). Otherwise it stays relative to the working directory, where a
 * build run from a clone finds web/. An absolute web_root is kept as is.
 * Rewrites web_root (size bytes) to the absolute path when it picks the
 * installed one. Returns 1 when it did, else 0. */
int gw_paths_web_root(char *web_root, size_t size);

#endif
