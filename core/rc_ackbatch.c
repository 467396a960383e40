/* rc_ackbatch.c - sharing WAITs between writes (rc_ackbatch.h). */
#include "rc_ackbatch.h"

#include <stddef.h>

void rc_ackbatch_init(struct rc_ackbatch *b)
{
    b->pending = NULL;
    b->tail = &b->pending;
    b->busy = 0;
    b->busy_until = 0;
}

int rc_ackbatch_add(struct rc_ackbatch *b, struct rc_ackbatch_item *item)
{
    item->next = NULL;
    *b->tail = item;
    b->tail = &item->next;
    return !b->busy;
}

struct rc_ackbatch_item *rc_ackbatch_start(struct rc_ackbatch *b, uint64_t now_ms, int *replicas,
                                           int64_t *timeout_ms)
{
    if (b->busy || !b->pending)
        return NULL;
    int n = 0;
    int64_t ms = 0;
    for (struct rc_ackbatch_item *it = b->pending; it; it = it->next) {
        if (it->replicas > n)
            n = it->replicas;
        if (it->timeout_ms > ms)
            ms = it->timeout_ms;
    }
    struct rc_ackbatch_item *batch = b->pending;
    b->pending = NULL;
    b->tail = &b->pending;
    b->busy = 1;
    b->busy_until = now_ms + (uint64_t)ms;
    *replicas = n;
    *timeout_ms = ms;
    return batch;
}

int rc_ackbatch_done(struct rc_ackbatch *b)
{
    b->busy = 0;
    b->busy_until = 0;
    return b->pending != NULL;
}

struct rc_ackbatch_item *rc_ackbatch_take_pending(struct rc_ackbatch *b)
{
    struct rc_ackbatch_item *list = b->pending;
    b->pending = NULL;
    b->tail = &b->pending;
    return list;
}

uint64_t rc_ackbatch_delay(const struct rc_ackbatch *b, uint64_t now_ms)
{
    return b->busy && b->busy_until > now_ms ? b->busy_until - now_ms : 0;
}
