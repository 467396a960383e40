/* gw_node_probe.c - whether the server sends the keyspace notifications the
 * gateway needs, found out by trying when CONFIG GET cannot say (an ACL
 * user limited to what rankcast runs has no CONFIG; see docs/security.md).
 *
 * Once the node is up: ZADD GW_NODE_PROBE_KEY, DEL it (command connection),
 * then PING on the subscribe connection. Redis writes a notification into
 * every subscriber's output as the command runs, so by the time our PING is
 * answered the "zadd" (classes K and z) and "del" (K and g) notifications,
 * if enabled, have been read before it. Both heard: on (keyspace_ok 1);
 * otherwise missing (0), with a warning saying what to set. A probe that
 * cannot run (MOVED on a cluster node that does not own the key's slot, a
 * refused command) leaves it unknown (-1). Expired and evicted (x, e) cannot
 * be tried without waiting; the warning asks for them too. */
#include "redis/gw_node_probe.h"

#include <string.h>

#include "base/gw_log.h"
#include "redis/gw_node_int.h"
#include "redis/gw_redis_uv.h"

enum { PROBE_NONE, PROBE_WANTED, PROBE_WRITING, PROBE_PINGED };

void gw_node_probe_want(struct gw_node *r)
{
    for (size_t i = 0; i < r->npatterns; i++)
        if (strncmp(r->patterns[i], "__keyspace@", 11) == 0) {
            r->probe = PROBE_WANTED;
            return;
        }
}

static void give_up(struct gw_node *r, const char *why)
{
    r->probe = PROBE_NONE;
    gw_log_info("redis %s:%d: cannot tell whether keyspace notifications are on (%s)", r->host, r->opts.port, why);
}

static void on_probe_written(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct gw_node *r = privdata;
    redisReply *rep = reply;
    if (!gw_node_link_is_live(r, &r->cmd, ac, rep) || r->probe != PROBE_WRITING)
        return;
    if (rep->type == REDIS_REPLY_ERROR)
        give_up(r, rep->str);
}

/* The DEL answered: every notification is on its way; PING behind them. */
static void on_probe_deleted(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct gw_node *r = privdata;
    redisReply *rep = reply;
    if (!gw_node_link_is_live(r, &r->cmd, ac, rep) || r->probe != PROBE_WRITING)
        return;
    if (rep->type == REDIS_REPLY_ERROR) {
        give_up(r, rep->str);
        return;
    }
    const char *argv[] = {"PING"};
    if (!gw_node_link_connected(&r->sub) || gw_redis_uv_send(r->sub.ac, 1, argv, NULL) != 0) {
        r->probe = PROBE_NONE; /* the connection is going: the next attempt probes again */
        return;
    }
    r->probe = PROBE_PINGED;
}

void gw_node_probe_after_up(struct gw_node *r)
{
    if (r->probe != PROBE_WANTED)
        return;
    r->probe_heard = 0;
    if (redisAsyncCommand(r->cmd.ac, on_probe_written, r, "ZADD %s 0 probe", GW_NODE_PROBE_KEY) != REDIS_OK ||
        redisAsyncCommand(r->cmd.ac, on_probe_deleted, r, "DEL %s", GW_NODE_PROBE_KEY) != REDIS_OK) {
        r->probe = PROBE_NONE;
        return;
    }
    r->probe = PROBE_WRITING;
}

int gw_node_probe_heard(struct gw_node *r, const char *channel)
{
    size_t n = strlen(channel), k = strlen(":" GW_NODE_PROBE_KEY);
    if (strncmp(channel, "__keyspace@", 11) != 0 || n < k || strcmp(channel + n - k, ":" GW_NODE_PROBE_KEY) != 0)
        return 0;
    if (r->probe == PROBE_WRITING || r->probe == PROBE_PINGED)
        r->probe_heard++;
    return 1;
}

void gw_node_probe_pong(struct gw_node *r)
{
    if (r->probe != PROBE_PINGED)
        return;
    r->probe = PROBE_NONE;
    r->keyspace_ok = r->probe_heard >= 2;
    if (!r->keyspace_ok)
        gw_log_warn("redis %s:%d: keyspace notifications are off: changes made outside rankcast will not reach "
                    "viewers; set notify-keyspace-events to include Kghzxe in redis.conf (docs/security.md)",
                    r->host, r->opts.port);
}
