/* gw_group.c - one job: the worker group's shared region (gw_group.h).
 * A slot's words: pid, redis_up, restarts, then struct gw_metrics as
 * uint64_t words (it has only those). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "base/gw_group.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rc_wslot.h"

enum { W_PID, W_REDIS_UP, W_RESTARTS, W_METRICS, W_COUNT = W_METRICS + GW_METRICS_WORDS };
_Static_assert(W_COUNT <= RC_WSLOT_WORDS, "struct gw_metrics outgrew a shared slot: raise RC_WSLOT_WORDS");

#define READ_TRIES 1000 /* a writer stores ~100 words: a reader never waits long */

struct gw_group {
    unsigned n;
    size_t bytes;
    struct rc_wslot slot[]; /* n of them, then the retired workers' counters (the supervisor's) */
};

struct gw_group *gw_group_create(unsigned n)
{
    if (n == 0)
        return NULL;
    size_t bytes = sizeof(struct gw_group) + ((size_t)n + 1) * sizeof(struct rc_wslot);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    struct gw_group *g = p; /* zero-filled: every slot empty, seq 0 */
    g->n = n;
    g->bytes = bytes;
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
