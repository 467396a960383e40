/* gw_group.h - what the processes of a worker group ([server] workers > 1)
 * share: one region of memory, mapped MAP_SHARED by the supervisor before it
 * forks the first worker, with one slot per worker (core/rc_wslot.h). Each
 * worker publishes its counters to its own slot from its tick and before it
 * renders /metrics; the worker a scrape lands on reads every slot, so one
 * scrape sees the whole group. The supervisor empties a dead worker's slot
 * and adds its counters to one more slot of retired counters, so the group's
 * totals never go back when a worker is restarted.
 * No locks, no system calls after the mapping. */
#ifndef GW_GROUP_H
#define GW_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "base/gw_metrics.h"

struct gw_group;

/* One worker's slot as read. */
struct gw_group_worker {
    long pid;            /* 0: no worker (not started yet, or being restarted) */
    int redis_up;
    uint64_t restarts;
    struct gw_metrics m;
};

/* Maps the region for n workers (anonymous, shared across fork). NULL when
 * n is 0 or the mapping fails. */
struct gw_group *gw_group_create(unsigned n);

/* Unmaps it (each process that holds it, at exit; optional). */
void gw_group_free(struct gw_group *g);

unsigned gw_group_size(const struct gw_group *g);

/* Worker i's own publication: its pid, Redis state, restart count and
 * counters (m borrowed for the call). Only worker i calls it. */
void gw_group_publish(struct gw_group *g, unsigned i, long pid, int redis_up, uint64_t restarts,
                      const struct gw_metrics *m);

/* The supervisor, once worker i is dead: its last published counters (not
 * its gauges) join the retired ones, and its slot is left empty (pid 0,
 * counters 0) but for the restart count. */
void gw_group_retire(struct gw_group *g, unsigned i, uint64_t restarts);

/* Reads every slot into each[0..size) and sums their counters, and the
 * retired workers' counters, into *sum.
 * A slot that gives no consistent copy (a writer mid-store) reads as empty.
 * Returns how many slots have a worker. */
unsigned gw_group_read_all(const struct gw_group *g, struct gw_group_worker *each, struct gw_metrics *sum);

#endif
