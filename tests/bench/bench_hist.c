/* bench_hist.c - log-linear latency histogram (see bench_hist.h). */
#include "bench_hist.h"

#define SUB (1u << BENCH_HIST_SUB_BITS)

/* Values below SUB get a bucket each; above, the top BENCH_HIST_SUB_BITS
 * bits after the leading one pick the sub-bucket of its power of two. */
static unsigned bucket_of(uint64_t v)
{
    if (v < SUB)
        return (unsigned)v;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v);
    unsigned shift = msb - BENCH_HIST_SUB_BITS;
    return ((shift + 1) << BENCH_HIST_SUB_BITS) + (unsigned)((v >> shift) & (SUB - 1));
}

static uint64_t bucket_upper(unsigned b)
{
    if (b < SUB)
        return b;
    unsigned shift = (b >> BENCH_HIST_SUB_BITS) - 1;
    uint64_t mant = SUB + (b & (SUB - 1));
    return ((mant + 1) << shift) - 1;
}

void bench_hist_add(struct bench_hist *h, int64_t us)
{
    uint64_t v = us < 0 ? 0 : (uint64_t)us;
    h->bucket[bucket_of(v)]++;
    h->count++;
    h->sum_us += (double)v;
    if (v > h->max_us)
        h->max_us = v;
}

uint64_t bench_hist_quantile(const struct bench_hist *h, double q)
{
    if (!h->count)
        return 0;
    uint64_t rank = (uint64_t)(q * (double)h->count);
    if (rank >= h->count)
        rank = h->count - 1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < BENCH_HIST_BUCKETS; b++) {
        seen += h->bucket[b];
        if (seen > rank) {
            uint64_t up = bucket_upper(b);
            return up < h->max_us ? up : h->max_us;
        }
    }
    return h->max_us;
}
