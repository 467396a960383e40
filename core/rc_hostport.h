/* rc_hostport.h - splitting an address given on the command line, in the
 * environment or the config file into host and port. Pure. */
#ifndef RC_HOSTPORT_H
#define RC_HOSTPORT_H

#include <stddef.h>

/* "host:port", "[v6]:port" or "redis://host:port" -> host (copied into
 * `host`, `cap` bytes with the NUL) and *port (1..65535). The brackets of an
 * IPv6 literal are dropped. Returns 0, or RC_E_BAD_REQUEST for anything else
 * (no colon, empty host, host too long, port not a number in range); the
 * outputs are untouched then. */
int rc_split_hostport(const char *s, char *host, size_t cap, int *port);

#endif
