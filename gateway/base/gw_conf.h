/* gw_conf.h - reads the config file from disk and hands its text to the pure
 * parser in core/rc_conf.c. */
#ifndef GW_CONF_H
#define GW_CONF_H

#include "rc_conf.h"

/* Loads path into *c (allocated by the caller: it is large). Returns 0, or
 * RC_E_BAD_REQUEST with err->msg "FILE:LINE: reason" or "FILE: <errno text>". */
int gw_conf_load(const char *path, struct rc_conf *c, struct rc_error *err);

#endif
