/* rc_wslot.c - one job: the seqlock over a worker's shared counters
 * (rc_wslot.h). The words are atomics read and written relaxed; the fences
 * order them against `seq`, so neither side ever takes a lock. */
#include "rc_wslot.h"

void rc_wslot_publish(struct rc_wslot *s, const uint64_t *words, size_t n)
{
    uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    atomic_store_explicit(&s->seq, seq | 1u, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    for (size_t i = 0; i < RC_WSLOT_WORDS; i++)
        atomic_store_explicit(&s->w[i], i < n ? words[i] : 0, memory_order_relaxed);
    atomic_store_explicit(&s->seq, (seq | 1u) + 1u, memory_order_release);
}

int rc_wslot_read(const struct rc_wslot *s, uint64_t *out, size_t n, unsigned tries)
{
    if (n > RC_WSLOT_WORDS)
        n = RC_WSLOT_WORDS;
    for (unsigned t = 0; t < tries; t++) {
        uint32_t before = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (before & 1u)
            continue;
        for (size_t i = 0; i < n; i++)
            out[i] = atomic_load_explicit(&s->w[i], memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) == before)
            return 0;
    }
    return -1;
}

void rc_wslot_sum(uint64_t *sum, const uint64_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sum[i] += w[i];
}
