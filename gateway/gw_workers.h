/* gw_workers.h - the supervisor of a worker group ([server] workers = N > 1,
 * --workers, RANKCAST_WORKERS): the first process forks N workers before
 * any loop, lws context or Redis connection exists, restarts one that dies
 * (with a backoff, core/rc_workers.h), stops them all on SIGTERM or SIGINT,
 * and does no gateway work itself. Each worker is a whole gateway on the
 * same port (SO_REUSEPORT: the kernel spreads connections over the
 * listening workers). docs/gateway.md, "Workers". */
#ifndef GW_WORKERS_H
#define GW_WORKERS_H

#include <stdint.h>

struct gw_group;

/* Who a worker is: handed to it at fork. */
struct gw_worker_id {
    unsigned index;     /* 0..count-1 */
    unsigned count;
    uint64_t restarts;  /* times its slot was started again before this start */
};

/* Runs the group of n workers over the shared region g (base/gw_group.h,
 * mapped already). Returns twice, as fork does:
 *   1 in a new worker, with *me filled: the caller goes on to start the
 *     gateway, and exits with RC_WORKER_EXIT_START when that fails;
 *   0 in the supervisor once the group has ended, with *exit_code: 0 after a
 *     stop by signal in which every worker ended cleanly, 1 otherwise (a
 *     worker that could not start, a worker that would not stop). */
int gw_workers_run(unsigned n, struct gw_group *g, struct gw_worker_id *me, int *exit_code);

#endif
