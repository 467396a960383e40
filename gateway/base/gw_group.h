/* gw_group.h - what the processes of a worker group ([server] workers > 1)
 * share: one region of memory, mapped MAP_SHARED by the supervisor before it
 * forks the first worker, with one slot per worker (core/rc_wslot.h). Each
 * worker publishes its counters to its own slot from its tick and before it
 * renders /metrics; the worker a scrape lands on reads every slot, so one
 * scrape sees the whole group. The supervisor empties a dead worker's slot
 * and adds its counters to one more slot of retired counters, so the group's
 * totals never go back when a worker is restarted.
 *
 * The region also holds what must be the group's, not each worker's
 * (docs/gateway.md, "Workers"): the test clock's offset (one word), and
 * per worker its accepted sockets open now and its open sockets per source
 * address (core/rc_ipcount.h), kept live by the worker as sockets come and
 * go, so an accept checks max_conns and max_conns_per_ip against the whole
 * group. The supervisor empties a dead worker's counts with its slot.
 * No locks, no system calls after the mapping. */
#ifndef GW_GROUP_H
#define GW_GROUP_H

#include <stdatomic.h>
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

/* The group's test clock offset (base/gw_clock.h): one word every worker
 * reads and the test clock endpoint sets. NULL without a group. */
_Atomic int64_t *gw_group_clock_offset(struct gw_group *g);

/* Worker i's accepted sockets open now (only worker i calls it). */
void gw_group_set_sockets(struct gw_group *g, unsigned i, uint64_t open);

/* Worker i's open sockets from address addr (16 bytes: IPv4 as
 * ::ffff:a.b.c.d). Returns 0, or -1 when its table has no room for one more
 * address near this one's hash (then the others do not see it: logged by
 * the caller). Only worker i calls it. */
int gw_group_set_addr(struct gw_group *g, unsigned i, const uint8_t addr[16], uint32_t open);

/* The other workers' (all but `me`) accepted sockets open now, and their
 * open sockets from addr: read at once, no lock, so an accept another
 * worker makes at the same instant may not be counted yet. */
uint64_t gw_group_sockets_others(const struct gw_group *g, unsigned me);
uint64_t gw_group_addr_others(const struct gw_group *g, unsigned me, const uint8_t addr[16]);

#endif
