/* rc_ackbatch.c - sharing WAITs between writes (rc_ackbatch.h). */
#include "rc_ackbatch.h"

#include <stddef.h>

void rc_ackbatch_init(struct rc_ackbatch *b)
{
    *b = (struct rc_ackbatch){0};
    b->tail = &b->pending;
    b->itail = &b->inflight;
}

uint64_t rc_ackbatch_sent(struct rc_ackbatch *b)
{
    return ++b->sent;
}

static void append(struct rc_ackbatch_item ***tail, struct rc_ackbatch_item *item)
{
    item->next = NULL;
    **tail = item;
    *tail = &item->next;
}

int rc_ackbatch_add(struct rc_ackbatch *b, struct rc_ackbatch_item *item, uint64_t seq)
{
    if (b->busy && seq <= b->wait_seq && item->replicas <= b->wait_replicas &&
        item->timeout_ms <= b->wait_timeout_ms) {
        append(&b->itail, item);
        return 0;
    }
    append(&b->tail, item);
    return !b->busy;
}

int rc_ackbatch_start(struct rc_ackbatch *b, uint64_t now_ms, int *replicas, int64_t *timeout_ms)
{
    if (b->busy || !b->pending)
        return 0;
    int n = 0;
    int64_t ms = 0;
    for (struct rc_ackbatch_item *it = b->pending; it; it = it->next) {
        if (it->replicas > n)
            n = it->replicas;
        if (it->timeout_ms > ms)
            ms = it->timeout_ms;
    }
    b->inflight = b->pending;
    b->itail = b->tail;
    b->pending = NULL;
    b->tail = &b->pending;
    b->busy = 1;
    b->wait_replicas = n;
    b->wait_timeout_ms = ms;
    b->busy_until = now_ms + (uint64_t)ms;
    b->wait_seq = b->sent;
    *replicas = n;
    *timeout_ms = ms;
    return 1;
}

struct rc_ackbatch_item *rc_ackbatch_done(struct rc_ackbatch *b)
{
    struct rc_ackbatch_item *batch = b->inflight;
    b->inflight = NULL;
    b->itail = &b->inflight;
    b->busy = 0;
    b->busy_until = 0;
    return batch;
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
