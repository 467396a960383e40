/* rc_sha1.h - SHA-1, used only to name Lua scripts the way Redis does
 * (EVALSHA takes the hex SHA-1 of the script body), so a script can be called
 * before SCRIPT LOAD has answered. Not for anything security-related. */
#ifndef RC_SHA1_H
#define RC_SHA1_H

#include <stddef.h>

/* Writes the 40 hex digits of SHA-1(data[0..len)) and a NUL into hex[41]. */
void rc_sha1_hex(const void *data, size_t len, char hex[41]);

#endif
