/* gw_redis_chan.c - board channels on a cluster (gw_redis_int.h): each one
 * SSUBSCRIBEd on the node that owns its slot, and moved when that changes.
 *
 * A channel is "placed" on a node when SSUBSCRIBE was sent there, and
 * "active" once the node confirmed it; only then does on_channel_ready run,
 * and only messages from the node it is placed on are delivered (during a
 * move the old node may still send a few: the new node's subscription and a
 * re-read by the caller cover them, so they are dropped rather than given
 * twice). When the server ends a subscription itself (its slot left the
 * node: Redis sends sunsubscribe), the map is read again and the channel
 * placed anew. In single mode channels are only counted: the pattern covers
 * them.
 */
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "base/gw_log.h"
#include "rc_err.h"
#include "rc_slot.h"
#include "redis/gw_redis_int.h"

static int chan_eq(const struct rc_hnode *h, const void *key)
{
    const struct gw_rchan *c = (const struct gw_rchan *)(const void *)h;
    return strcmp(c->name, key) == 0;
}

static struct gw_rchan *find(struct gw_redis *r, const char *name)
{
    uint64_t hash = rc_hmap_hash(&r->chan_key, name, strlen(name));
    return (struct gw_rchan *)(void *)rc_hmap_find(&r->chans, hash, chan_eq, name);
}

void gw_redis_chan_init(struct gw_redis *r)
{
    rc_hmap_init(&r->chans, 16);
    uint64_t seed = uv_hrtime() ^ (uint64_t)(uintptr_t)r;
    r->chan_key.k0 = seed * 0x9e3779b97f4a7c15ULL;
    r->chan_key.k1 = (seed ^ 0xd1b54a32d192ed03ULL) * 0xbf58476d1ce4e5b9ULL;
}

/* Puts c on its slot's node when it is not there already. */
static void place(struct gw_redis *r, struct gw_rchan *c)
{
    if (r->mode != GW_MODE_CLUSTER || r->stopped)
        return;
    struct gw_rnode *want = r->slots[c->slot];
    if (want && !want->up)
        want = NULL;
    if (c->on == want)
        return;
    if (c->on && c->on->up)
        gw_node_sub_sunsubscribe(c->on->node, c->name);
    c->on = NULL;
    c->active = 0;
    if (want && gw_node_sub_ssubscribe(want->node, c->name) == 0)
        c->on = want;
    /* (each placement is logged: a feed that stalls on a cluster is read
     * against where its channel was, docs/reliability.md, "Run 3") */
    if (c->on)
        gw_log_info("redis cluster: channel %s (slot %u) subscribed on %s:%d", c->name, c->slot, c->on->host,
                    c->on->port);
    else
        gw_log_info("redis cluster: channel %s (slot %u) waits for a node serving its slot", c->name, c->slot);
}

int gw_redis_chan_add(struct gw_redis *r, const char *channel)
{
    struct gw_rchan *c = find(r, channel);
    if (c) {
        c->refs++;
        return 0;
    }
    c = calloc(1, sizeof *c);
    if (!c || !(c->name = strdup(channel))) {
        free(c);
        return RC_E_INTERNAL;
    }
    c->slot = rc_slot_of_key(channel, strlen(channel));
    c->refs = 1;
    if (rc_hmap_insert(&r->chans, &c->h, rc_hmap_hash(&r->chan_key, channel, strlen(channel))) != 0) {
        free(c->name);
        free(c);
        return RC_E_INTERNAL;
    }
    c->next = r->chan_list;
    r->chan_list = c;
    place(r, c);
    return 0;
}

static void chan_free(struct gw_redis *r, struct gw_rchan *c)
{
    rc_hmap_remove(&r->chans, &c->h);
    for (struct gw_rchan **p = &r->chan_list; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    free(c->name);
    free(c);
}

void gw_redis_chan_remove(struct gw_redis *r, const char *channel)
{
    struct gw_rchan *c = find(r, channel);
    if (!c || --c->refs > 0)
        return;
    if (c->on && c->on->up && !r->stopped)
        gw_node_sub_sunsubscribe(c->on->node, c->name);
    chan_free(r, c);
}

void gw_redis_chan_place_all(struct gw_redis *r)
{
    for (struct gw_rchan *c = r->chan_list; c; c = c->next)
        place(r, c);
}

void gw_redis_chan_node_down(struct gw_redis *r, struct gw_rnode *n)
{
    for (struct gw_rchan *c = r->chan_list; c; c = c->next)
        if (c->on == n) {
            c->on = NULL;
            c->active = 0;
        }
}

void gw_redis_chan_on_shard(struct gw_redis *r, struct gw_rnode *n, const char *channel, int subscribed)
{
    struct gw_rchan *c = find(r, channel);
    if (!c || c->on != n) {
        /* a subscription we moved away from (or dropped) already: ours ended,
         * or a late confirmation, which we end now */
        if (subscribed && n->up)
            gw_node_sub_sunsubscribe(n->node, channel);
        return;
    }
    if (subscribed) {
        if (!c->active) {
            c->active = 1;
            if (r->hooks.on_channel_ready)
                r->hooks.on_channel_ready(r->hooks.data, channel);
        }
        return;
    }
    /* the server ended it: the slot left n */
    gw_log_info("redis cluster: %s:%d ended the subscription of %s (slot %u moved); reading the slot map", n->host,
                n->port, channel, c->slot);
    c->on = NULL;
    c->active = 0;
    gw_redis_nodes_refresh_soon(r, 0);
}

int gw_redis_chan_accepts(struct gw_redis *r, struct gw_rnode *n, const char *channel)
{
    struct gw_rchan *c = find(r, channel);
    return c && c->on == n && c->active;
}

void gw_redis_chan_free_all(struct gw_redis *r)
{
    while (r->chan_list)
        chan_free(r, r->chan_list);
    rc_hmap_free(&r->chans);
}
