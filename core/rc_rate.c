/* rc_rate.c - the rate gate of a view (see rc_rate.h). */
#include "rc_rate.h"

int64_t rc_rate_interval_us(unsigned rate)
{
    if (!rate)
        return 0;
    return (1000000 + (int64_t)rate - 1) / (int64_t)rate;
}

int64_t rc_rate_next_us(const struct rc_rate_gate *g)
{
    if (!g->rate || !g->sent)
        return INT64_MIN;
    return g->last_us + rc_rate_interval_us(g->rate);
}

int rc_rate_may_send(const struct rc_rate_gate *g, int64_t now_us)
{
    return now_us >= rc_rate_next_us(g);
}

void rc_rate_sent(struct rc_rate_gate *g, int64_t now_us)
{
    g->sent = 1;
    g->last_us = now_us;
}
