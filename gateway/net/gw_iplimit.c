/* gw_iplimit.c - per-address entries (see gw_iplimit.h), found through the
 * project's one hash table (core/rc_hmap, keyed SipHash) and listed once more
 * in insertion order for the sweep. */
#include "net/gw_iplimit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/gw_read_gate.h"

struct entry {
    struct rc_hnode node;       /* in l->map */
    struct entry *next, *prev;  /* in l->all */
    struct gw_ipentry e;
    char ip[];
};

struct gw_iplimit {
    struct rc_hmap map;
    struct rc_hash_key seed;
    struct entry *all;
};

static int ip_eq(const struct rc_hnode *n, const void *key)
{
    const struct entry *e = (const struct entry *)(const void *)n; /* node is the first member */
    return strcmp(e->ip, key) == 0;
}

static uint64_t ip_hash(const struct gw_iplimit *l, const char *ip)
{
    return rc_hmap_hash(&l->seed, ip, strlen(ip));
}

static struct entry *lookup(const struct gw_iplimit *l, const char *ip, uint64_t h)
{
    return (struct entry *)(void *)rc_hmap_find(&l->map, h, ip_eq, ip);
}

struct gw_iplimit *gw_iplimit_new(struct rc_hash_key seed)
{
    struct gw_iplimit *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->seed = seed;
    rc_hmap_init(&l->map, 64);
    return l;
}

void gw_iplimit_free(struct gw_iplimit *l)
{
    if (!l)
        return;
    for (struct entry *e = l->all, *next; e; e = next) {
        next = e->next;
        gw_read_gate_owner_unref(e->e.read_rows);
        free(e);
    }
    rc_hmap_free(&l->map);
    free(l);
}

struct gw_ipentry *gw_iplimit_find(struct gw_iplimit *l, const char *ip)
{
    struct entry *e = lookup(l, ip, ip_hash(l, ip));
    return e ? &e->e : NULL;
}

struct gw_ipentry *gw_iplimit_get(struct gw_iplimit *l, const char *ip)
{
    uint64_t h = ip_hash(l, ip);
    struct entry *e = lookup(l, ip, h);
    if (e)
        return &e->e;
    size_t n = strlen(ip) + 1;
    e = calloc(1, sizeof *e + n);
    if (!e)
        return NULL;
    memcpy(e->ip, ip, n);
    if (rc_hmap_insert(&l->map, &e->node, h) != 0) {
        free(e);
        return NULL;
    }
    e->next = l->all;
    if (l->all)
        l->all->prev = e;
    l->all = e;
    return &e->e;
}

/* 1 when b, last used at b->last_ms, is full again at now_ms. */
static int refilled(const struct rc_bucket *b, int64_t now_ms, double rate, double burst)
{
    if (b->last_ms == 0)
        return 1;
    return b->tokens + (double)(now_ms - b->last_ms) * rate / 1000.0 >= burst;
}

unsigned gw_iplimit_sweep(struct gw_iplimit *l, int64_t now_ms, const struct gw_iplimit_rates *r)
{
    unsigned left = 0;
    for (struct entry *e = l->all, *next; e; e = next) {
        next = e->next;
        if (e->e.count != 0 || !refilled(&e->e.reads, now_ms, r->read_rate, r->read_burst) ||
            !refilled(&e->e.handshakes, now_ms, r->handshake_rate, r->handshake_burst) ||
            (e->e.read_rows && e->e.read_rows->rows > 0)) {
            left++;
            continue;
        }
        rc_hmap_remove(&l->map, &e->node);
        if (e->prev)
            e->prev->next = e->next;
        else
            l->all = e->next;
        if (e->next)
            e->next->prev = e->prev;
        gw_read_gate_owner_unref(e->e.read_rows);
        free(e);
    }
    return left;
}
