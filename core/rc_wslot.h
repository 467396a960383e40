/* rc_wslot.h - one worker's counters in a region every worker of a group
 * maps (gateway/base/gw_group.c makes it, shared, before the first fork).
 * Each slot has one writer (its worker, or the supervisor once that worker
 * is dead) and any number of readers in other processes, so a slot is a
 * seqlock: the writer makes `seq` odd, stores the words, makes it even
 * again; a reader copies the words and keeps the copy only when `seq` was
 * the same even number before and after. Pure memory, no system calls. */
#ifndef RC_WSLOT_H
#define RC_WSLOT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define RC_WSLOT_WORDS 128

struct rc_wslot {
    _Atomic uint32_t seq;                 /* odd while the writer is storing */
    _Atomic uint64_t w[RC_WSLOT_WORDS];   /* what the owner publishes */
};

/* Stores n words (n <= RC_WSLOT_WORDS; the rest become 0). One writer at a
 * time per slot. */
void rc_wslot_publish(struct rc_wslot *s, const uint64_t *words, size_t n);

/* Copies n words into out. Returns 0, or -1 when no consistent copy was
 * had in `tries` attempts (a writer busy all along, or one that died
 * mid-store: the supervisor clears such a slot). */
int rc_wslot_read(const struct rc_wslot *s, uint64_t *out, size_t n, unsigned tries);

/* sum[i] += w[i] for i < n. */
void rc_wslot_sum(uint64_t *sum, const uint64_t *w, size_t n);

#endif
