/* gw_slotmap.c - reading a CLUSTER SLOTS answer (gw_slotmap.h). */
#include "redis/gw_slotmap.h"

#include "rc_slot.h"

/* One entry: [start, end, [host, port, id...], replicas...]. */
static int entry_ok(const redisReply *e)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 3)
        return 0;
    const redisReply *a = e->element[0], *b = e->element[1], *m = e->element[2];
    return a->type == REDIS_REPLY_INTEGER && b->type == REDIS_REPLY_INTEGER && m->type == REDIS_REPLY_ARRAY &&
           m->elements >= 2 && m->element[0]->type == REDIS_REPLY_STRING &&
           m->element[1]->type == REDIS_REPLY_INTEGER &&
           rc_slot_range_ok(a->integer, b->integer, m->element[1]->integer);
}

int gw_slotmap_check(const redisReply *rep)
{
    if (!rep || rep->type != REDIS_REPLY_ARRAY)
        return -1;
    for (size_t i = 0; i < rep->elements; i++)
        if (!entry_ok(rep->element[i]))
            return -1;
    return 0;
}

void gw_slotmap_range(const redisReply *rep, size_t i, const char *asked_host, struct gw_slotmap_range *out)
{
    const redisReply *e = rep->element[i], *m = e->element[2];
    out->start = (unsigned)e->element[0]->integer;
    out->end = (unsigned)e->element[1]->integer;
    out->host = rc_slot_map_host(m->element[0]->str, asked_host);
    out->port = (int)m->element[1]->integer;
}
