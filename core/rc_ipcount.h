/* rc_ipcount.h - one worker's open sockets per source address, in the
 * region a worker group shares (gateway/base/gw_group.c maps it before the
 * first fork), so that every worker can check [limits] max_conns_per_ip
 * against the whole group's count for an address (docs/gateway.md,
 * "Workers").
 *
 * One writer per table (its worker; the supervisor once that worker is
 * dead), readers in every other process. An address lives in one of the
 * RC_IPCOUNT_WINDOW slots that follow its hash, at most once; a slot whose
 * count is 0 is free for any address whose window holds it. Each slot is a
 * small seqlock (as core/rc_wslot.h): the writer makes `seq` odd, stores,
 * makes it even; a reader keeps a copy only when `seq` was the same even
 * number before and after. No locks, no allocation, no system calls.
 *
 * Addresses are 16 bytes (IPv4 as ::ffff:a.b.c.d) passed as two words;
 * the hash is the caller's (keyed, the same in every worker). */
#ifndef RC_IPCOUNT_H
#define RC_IPCOUNT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define RC_IPCOUNT_SLOTS 16384 /* a power of two; 512 KiB a table */
#define RC_IPCOUNT_WINDOW 32   /* slots an address may live in, from its hash on */

struct rc_ipcount_slot {
    _Atomic uint32_t seq;   /* odd while the writer stores */
    _Atomic uint32_t count; /* sockets open from key now; 0: the slot is free */
    _Atomic uint64_t key[2];
};

struct rc_ipcount {
    struct rc_ipcount_slot slot[RC_IPCOUNT_SLOTS];
};

/* The writer: sets key's count (0 frees its slot). Returns 0, or -1 when
 * its window has no free slot (count > 0 only; the table is unchanged). */
int rc_ipcount_set(struct rc_ipcount *t, const uint64_t key[2], uint64_t hash, uint32_t count);

/* Any process: key's count, 0 when it has none. A slot the writer is
 * storing to at that instant reads as free (a count a moment old). */
uint32_t rc_ipcount_get(const struct rc_ipcount *t, const uint64_t key[2], uint64_t hash);

/* The writer, or the supervisor once the writer is dead: every count 0. */
void rc_ipcount_clear(struct rc_ipcount *t);

#endif
