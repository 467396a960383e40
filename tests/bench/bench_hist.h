/* bench_hist.h - a log-linear latency histogram for rankcast-bench.
 *
 * Values are microseconds. Each power of two is split into 64 sub-buckets,
 * so a reported percentile is within 1.6 % of the true value; max is exact.
 * Fixed size, no allocation: adding a sample is a few instructions, which
 * matters at millions of write deliveries per second.
 */
#ifndef BENCH_HIST_H
#define BENCH_HIST_H

#include <stdint.h>

#define BENCH_HIST_SUB_BITS 6
#define BENCH_HIST_BUCKETS ((64 - BENCH_HIST_SUB_BITS + 1) << BENCH_HIST_SUB_BITS)

struct bench_hist {
    uint64_t count;
    uint64_t max_us;
    double sum_us;
    uint64_t bucket[BENCH_HIST_BUCKETS];
};

void bench_hist_add(struct bench_hist *h, int64_t us);

/* The value at quantile q (0..1) in microseconds: the upper edge of the
 * bucket holding it, capped at the exact max. 0 when empty. */
uint64_t bench_hist_quantile(const struct bench_hist *h, double q);

#endif
