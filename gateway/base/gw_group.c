/* gw_group.c - one job: the worker group's shared region (gw_group.h).
 * A slot's words: pid, redis_up, restarts, then struct gw_metrics as
 * uint64_t words (it has only those). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "base/gw_group.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "rc_hmap.h"
#include "rc_ipcount.h"
#include "rc_wslot.h"

enum { W_PID, W_REDIS_UP, W_RESTARTS, W_METRICS, W_COUNT = W_METRICS + GW_METRICS_WORDS };
_Static_assert(W_COUNT <= RC_WSLOT_WORDS, "struct gw_metrics outgrew a shared slot: raise RC_WSLOT_WORDS");

#define READ_TRIES 1000 /* a writer stores ~100 words: a reader never waits long */

/* A worker's live counts (gw_group.h): written by the worker as sockets
 * come and go, read by the others at each accept. */
struct live {
    _Atomic uint64_t sockets;
    struct rc_ipcount addrs;
};

struct gw_group {
    unsigned n;
    size_t bytes;
    size_t live_at;                  /* byte offset of the n struct live */
    struct rc_hash_key seed;         /* the addresses' hash, the same in every worker */
    _Atomic int64_t clock_offset_ms; /* the test clock (base/gw_clock.h) */
    struct rc_wslot slot[];          /* n of them, then the retired workers' counters (the supervisor's) */
};

static struct live *live_of(const struct gw_group *g, unsigned i)
{
    return (struct live *)(void *)((char *)(uintptr_t)g + g->live_at) + i;
}

struct gw_group *gw_group_create(unsigned n)
{
    if (n == 0)
        return NULL;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t head = sizeof(struct gw_group) + ((size_t)n + 1) * sizeof(struct rc_wslot);
    size_t live_at = (head + page - 1) / page * page;
    size_t bytes = live_at + (size_t)n * sizeof(struct live);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    struct gw_group *g = p; /* zero-filled: every slot empty, seq 0, no counts */
    g->n = n;
    g->bytes = bytes;
    g->live_at = live_at;
    /* A random key, so clients cannot pick addresses that crowd one
     * window of the tables; the clock when the system has none to give. */
    if (getrandom(&g->seed, sizeof g->seed, GRND_NONBLOCK) != (ssize_t)sizeof g->seed) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        g->seed.k0 = (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 32;
        g->seed.k1 = (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)p;
    }
    return g;
}

void gw_group_free(struct gw_group *g)
{
    if (g)
        munmap(g, g->bytes);
}

unsigned gw_group_size(const struct gw_group *g)
{
    return g ? g->n : 0;
}

void gw_group_publish(struct gw_group *g, unsigned i, long pid, int redis_up, uint64_t restarts,
                      const struct gw_metrics *m)
{
    uint64_t w[W_COUNT];
    if (!g || i >= g->n)
        return;
    w[W_PID] = (uint64_t)pid;
    w[W_REDIS_UP] = redis_up ? 1 : 0;
    w[W_RESTARTS] = restarts;
    memcpy(&w[W_METRICS], m, sizeof *m);
    rc_wslot_publish(&g->slot[i], w, W_COUNT);
}

void gw_group_retire(struct gw_group *g, unsigned i, uint64_t restarts)
{
    uint64_t w[W_COUNT], retired[GW_METRICS_WORDS];
    uint64_t empty[W_RESTARTS + 1] = {0, 0, restarts};
    if (!g || i >= g->n)
        return;
    /* its writer is dead: a slot left mid-store reads as nothing */
    if (rc_wslot_read(&g->slot[i], w, W_COUNT, READ_TRIES) == 0 &&
        rc_wslot_read(&g->slot[g->n], retired, GW_METRICS_WORDS, READ_TRIES) == 0) {
        struct gw_metrics m;
        memcpy(&m, &w[W_METRICS], sizeof m);
        gw_metrics_keep_counters(&m);
        memcpy(&w[W_METRICS], &m, sizeof m);
        rc_wslot_sum(retired, &w[W_METRICS], GW_METRICS_WORDS);
        rc_wslot_publish(&g->slot[g->n], retired, GW_METRICS_WORDS);
    }
    rc_wslot_publish(&g->slot[i], empty, W_RESTARTS + 1);
    /* its sockets died with it */
    atomic_store_explicit(&live_of(g, i)->sockets, 0, memory_order_relaxed);
    rc_ipcount_clear(&live_of(g, i)->addrs);
}

unsigned gw_group_read_all(const struct gw_group *g, struct gw_group_worker *each, struct gw_metrics *sum)
{
    uint64_t total[GW_METRICS_WORDS], w[W_COUNT];
    unsigned live = 0;
    memset(total, 0, sizeof total);
    for (unsigned i = 0; g && i < g->n; i++) {
        if (rc_wslot_read(&g->slot[i], w, W_COUNT, READ_TRIES) != 0)
            memset(w, 0, sizeof w);
        each[i].pid = (long)w[W_PID];
        each[i].redis_up = w[W_REDIS_UP] != 0;
        each[i].restarts = w[W_RESTARTS];
        memcpy(&each[i].m, &w[W_METRICS], sizeof each[i].m);
        rc_wslot_sum(total, &w[W_METRICS], GW_METRICS_WORDS);
        live += each[i].pid > 0;
    }
    if (g && rc_wslot_read(&g->slot[g->n], w, GW_METRICS_WORDS, READ_TRIES) == 0)
        rc_wslot_sum(total, w, GW_METRICS_WORDS);
    memcpy(sum, total, sizeof *sum);
    return live;
}

_Atomic int64_t *gw_group_clock_offset(struct gw_group *g)
{
    return g ? &g->clock_offset_ms : NULL;
}

void gw_group_set_sockets(struct gw_group *g, unsigned i, uint64_t open)
{
    if (g && i < g->n)
        atomic_store_explicit(&live_of(g, i)->sockets, open, memory_order_relaxed);
}

static void addr_key(const struct gw_group *g, const uint8_t addr[16], uint64_t key[2], uint64_t *hash)
{
    memcpy(key, addr, 16);
    *hash = rc_hmap_hash(&g->seed, addr, 16);
}

int gw_group_set_addr(struct gw_group *g, unsigned i, const uint8_t addr[16], uint32_t open)
{
    uint64_t key[2], h;
    if (!g || i >= g->n)
        return 0;
    addr_key(g, addr, key, &h);
    return rc_ipcount_set(&live_of(g, i)->addrs, key, h, open);
}

uint64_t gw_group_sockets_others(const struct gw_group *g, unsigned me)
{
    uint64_t sum = 0;
    for (unsigned i = 0; g && i < g->n; i++)
        if (i != me)
            sum += atomic_load_explicit(&live_of(g, i)->sockets, memory_order_relaxed);
    return sum;
}

uint64_t gw_group_addr_others(const struct gw_group *g, unsigned me, const uint8_t addr[16])
{
    uint64_t key[2], h, sum = 0;
    if (!g)
        return 0;
    addr_key(g, addr, key, &h);
    for (unsigned i = 0; i < g->n; i++)
        if (i != me)
            sum += rc_ipcount_get(&live_of(g, i)->addrs, key, h);
    return sum;
}
