/* rc_edge.c - the leading edge of the fan-out's tick (see rc_edge.h). */
#include "rc_edge.h"

int rc_edge_quiet(const struct rc_edge *e, int64_t now_us, int64_t tick_us)
{
    return !e->sent || now_us - e->last_us >= tick_us;
}

void rc_edge_sent_edge(struct rc_edge *e, int64_t now_us, uint64_t ticks)
{
    e->sent = 1;
    e->last_us = now_us;
    e->edge_period = ticks + 1;
}

int rc_edge_tick_may_send(const struct rc_edge *e, uint64_t ticks)
{
    return e->edge_period != ticks + 1;
}

void rc_edge_sent_tick(struct rc_edge *e, int64_t now_us)
{
    e->sent = 1;
    e->last_us = now_us;
}
