/* rc_test_rng.h - the property tests' random inputs: splitmix64, tiny, good
 * enough, and the same on every platform, so a failing seed replays. */
#ifndef RC_TEST_RNG_H
#define RC_TEST_RNG_H

#include <stddef.h>
#include <stdint.h>

struct rng {
    uint64_t s;
};

static inline uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* 0..n-1 (0 when n is 0) */
static inline size_t below(struct rng *r, size_t n)
{
    return n > 0 ? (size_t)(rng_next(r) % n) : 0;
}

#endif
