/* rc_ipcount.c - one job: per-address socket counts in shared memory, one
 * writer, many readers (rc_ipcount.h). */
#include "rc_ipcount.h"

#define READ_TRIES 64 /* a store is four words: a reader never waits long */

static struct rc_ipcount_slot *slot_at(struct rc_ipcount *t, uint64_t hash, unsigned i)
{
    return &t->slot[(hash + i) & (RC_IPCOUNT_SLOTS - 1)];
}

static void store(struct rc_ipcount_slot *s, const uint64_t key[2], uint32_t count)
{
    uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    atomic_store_explicit(&s->seq, seq | 1u, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&s->key[0], key[0], memory_order_relaxed);
    atomic_store_explicit(&s->key[1], key[1], memory_order_relaxed);
    atomic_store_explicit(&s->count, count, memory_order_relaxed);
    atomic_store_explicit(&s->seq, (seq | 1u) + 1u, memory_order_release);
}

/* The writer's own view of a slot: nobody else stores to it. */
static int holds(struct rc_ipcount_slot *s, const uint64_t key[2])
{
    return atomic_load_explicit(&s->count, memory_order_relaxed) != 0 &&
           atomic_load_explicit(&s->key[0], memory_order_relaxed) == key[0] &&
           atomic_load_explicit(&s->key[1], memory_order_relaxed) == key[1];
}

int rc_ipcount_set(struct rc_ipcount *t, const uint64_t key[2], uint64_t hash, uint32_t count)
{
    struct rc_ipcount_slot *free_slot = NULL;
    for (unsigned i = 0; i < RC_IPCOUNT_WINDOW; i++) {
        struct rc_ipcount_slot *s = slot_at(t, hash, i);
        if (holds(s, key)) {
            store(s, key, count);
            return 0;
        }
        if (!free_slot && atomic_load_explicit(&s->count, memory_order_relaxed) == 0)
            free_slot = s;
    }
    if (count == 0)
        return 0; /* not there: nothing to free */
    if (!free_slot)
        return -1;
    store(free_slot, key, count);
    return 0;
}

/* One consistent copy of s: 0, or -1 when the writer kept storing. */
static int read_slot(const struct rc_ipcount_slot *s, uint64_t key[2], uint32_t *count)
{
    for (unsigned t = 0; t < READ_TRIES; t++) {
        uint32_t before = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (before & 1u)
            continue;
        key[0] = atomic_load_explicit(&s->key[0], memory_order_relaxed);
        key[1] = atomic_load_explicit(&s->key[1], memory_order_relaxed);
        *count = atomic_load_explicit(&s->count, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) == before)
            return 0;
    }
    return -1;
}

uint32_t rc_ipcount_get(const struct rc_ipcount *t, const uint64_t key[2], uint64_t hash)
{
    for (unsigned i = 0; i < RC_IPCOUNT_WINDOW; i++) {
        uint64_t k[2];
        uint32_t n;
        if (read_slot(&t->slot[(hash + i) & (RC_IPCOUNT_SLOTS - 1)], k, &n) == 0 && n && k[0] == key[0] &&
            k[1] == key[1])
            return n;
    }
    return 0;
}

void rc_ipcount_clear(struct rc_ipcount *t)
{
    static const uint64_t none[2] = {0, 0};
    for (size_t i = 0; i < RC_IPCOUNT_SLOTS; i++)
        if (atomic_load_explicit(&t->slot[i].count, memory_order_relaxed))
            store(&t->slot[i], none, 0);
}
