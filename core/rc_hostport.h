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
int rc_hostport_split(const char *s, char *host, size_t cap, int *port);

/* One seed of a --redis list. */
#define RC_SEED_HOST_MAX 256
#define RC_SEEDS_MAX 64
struct rc_seed {
    char host[RC_SEED_HOST_MAX];
    int port;
};

/* "A,B,C" (each as rc_hostport_split takes it; spaces around the commas
 * allowed) -> out[0..*n). A repeated seed is kept once. Returns 0, or
 * RC_E_BAD_REQUEST for an empty list, an empty or malformed entry, or more
 * than max entries (nothing meaningful in out then). */
int rc_hostport_split_seeds(const char *list, struct rc_seed *out, size_t max, size_t *n);

/* The other way round, for messages and labels: "host:port", or
 * "[host]:port" when host is an IPv6 literal (it holds a ':'), so the text
 * splits back with rc_hostport_split. Writes at most cap bytes with the NUL,
 * as snprintf, and returns the length the whole text needs. */
#define RC_HOSTPORT_NAME_MAX (RC_SEED_HOST_MAX + 8) /* brackets, ':', 5 digits, NUL */
int rc_hostport_format(char *out, size_t cap, const char *host, int port);

#endif
