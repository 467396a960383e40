/* rc_slot.h - Redis Cluster's key slots and the errors that steer a command
 * on a cluster (https://redis.io/docs/reference/cluster-spec/). Pure.
 *
 * A key's slot is CRC16 (XMODEM: polynomial 0x1021, initial 0) of the key,
 * modulo 16384; when the key holds a non-empty "{...}" (the first '{' and
 * the first '}' after it), only what is between them is hashed, so keys
 * that share a hash tag share a slot. rankcast's board keys all carry the
 * tag {B|P} (docs/cluster.md).
 */
#ifndef RC_SLOT_H
#define RC_SLOT_H

#include <stddef.h>

#define RC_SLOTS 16384
#define RC_REDIRECT_HOST_MAX 255

/* What an error reply asks of the client. */
enum rc_redis_err {
    RC_REDIS_ERR_OTHER,       /* an error of the command itself */
    RC_REDIS_ERR_MOVED,       /* MOVED slot host:port: the slot lives there now */
    RC_REDIS_ERR_ASK,         /* ASK slot host:port: this once, there, after ASKING */
    RC_REDIS_ERR_TRYAGAIN,    /* a multi-key command during a slot's migration */
    RC_REDIS_ERR_CLUSTERDOWN, /* the cluster cannot serve the slot */
    RC_REDIS_ERR_MASTERDOWN,  /* a replica lost its primary */
    RC_REDIS_ERR_LOADING,     /* the node is loading its data */
    RC_REDIS_ERR_NOSCRIPT,    /* EVALSHA of a script the node does not hold */
    RC_REDIS_ERR_READONLY     /* a write sent to a replica */
};

struct rc_redirect {
    enum rc_redis_err kind;   /* RC_REDIS_ERR_MOVED or RC_REDIS_ERR_ASK */
    unsigned slot;            /* < RC_SLOTS */
    char host[RC_REDIRECT_HOST_MAX + 1]; /* "" when Redis names no endpoint: the node that answered */
    int port;                 /* 1..65535 */
};

/* The slot of key[0..len). */
unsigned rc_slot_of_key(const char *key, size_t len);

/* The kind of the error reply err[0..len) (without the leading '-'), by its
 * first word. */
enum rc_redis_err rc_slot_classify_error(const char *err, size_t len);

/* Parses "MOVED 3999 127.0.0.1:6381" or "ASK ..." (err[0..len), no NUL
 * needed). The endpoint is split at its last ':' (an IPv6 address keeps its
 * colons, with or without brackets). Returns 0, or -1 when err is not such a
 * redirect (unknown kind, a slot that is not 0..16383, a port that is not
 * 1..65535, a host over RC_REDIRECT_HOST_MAX, anything after the endpoint). */
int rc_slot_parse_redirect(const char *err, size_t len, struct rc_redirect *out);

/* One entry of a CLUSTER SLOTS answer ([start, end, [host, port, ...], ...]):
 * 1 when start..end is a range of slots (0 <= start <= end < RC_SLOTS) and
 * port is 1..65535, else 0. The one check of the gateway's and the tools'
 * slot maps (redis/gw_slotmap.c). */
int rc_slot_range_ok(long long start, long long end, long long port);

/* The host an entry names: its own, or `asked` (the node that answered)
 * when Redis names none ("" or "?"). Borrows both. */
const char *rc_slot_map_host(const char *host, const char *asked);

#endif
