/* gw_cli_redis.h - a blocking Redis client for the command-line tools
 * (export, import): hiredis' synchronous API, one server or a Redis Cluster.
 *
 * The gateway's own client (redis/) is asynchronous and lives on the event
 * loop; a command-line tool has no loop and waits for each answer, so it
 * gets this small one. On a cluster it keeps the slot map (CLUSTER SLOTS),
 * sends each command to the primary of its key's slot (core/rc_slot.h),
 * follows MOVED (and refreshes the map) and ASK (ASKING first), waits and
 * retries on TRYAGAIN / CLUSTERDOWN, and loads a script on a node that
 * answers NOSCRIPT. A batch of commands is pipelined: every command of one
 * node is written before the first answer is read.
 */
#ifndef GW_CLI_REDIS_H
#define GW_CLI_REDIS_H

#include <stddef.h>

#include <hiredis/hiredis.h>

#define GW_CLI_ERR_MAX 256

struct gw_cli_redis;

/* One command of a batch. argv/lens are borrowed until the batch returns;
 * key (argv[key_at]) picks the node; key_at may be argc for a command
 * without a key (WAIT) sent to a key's node: argv[argc] is then that key,
 * used for routing only. script: the source of the script an EVALSHA runs
 * (to load it on NOSCRIPT), else NULL. */
struct gw_cli_cmd {
    int argc;
    const char **argv;
    const size_t *lens;
    int key_at;
    const char *script;
};

/* Connects to the first seed of `seeds` ("H:P[,H:P...]", as --redis) that
 * answers and finds out whether it is a cluster. password (NULL or "":
 * none), with username when not empty, is sent as AUTH first on every
 * connection, seeds and the nodes found later alike (copied; never in err).
 * timeout_ms bounds connects and every answer. Returns NULL with err filled
 * on failure. */
struct gw_cli_redis *gw_cli_redis_open(const char *seeds, const char *username, const char *password,
                                       int timeout_ms, char *err, size_t cap);
void gw_cli_redis_close(struct gw_cli_redis *r);

/* 1 on a Redis Cluster, 0 on one server. */
int gw_cli_redis_is_cluster(const struct gw_cli_redis *r);

/* Runs cmds[0..n) and puts each answer in replies[i] (owned by the caller:
 * freeReplyObject). Commands of one node keep their order; an answer that
 * asks for a redirect, a retry or a script load is sent again alone, after
 * the batch. An error reply of the command itself is a reply like any other.
 * Returns 0, or -1 with err filled when a node cannot be reached or the
 * connection is lost (replies[] then hold what arrived, others NULL; a
 * command without a reply may or may not have run). */
int gw_cli_redis_batch(struct gw_cli_redis *r, struct gw_cli_cmd *cmds, size_t n, redisReply **replies, char *err,
                       size_t cap);

/* One command, as a batch of one. Returns the reply or NULL (err filled). */
redisReply *gw_cli_redis_command(struct gw_cli_redis *r, struct gw_cli_cmd *cmd, char *err, size_t cap);

#endif
