/* rc_hmap.h - a small intrusive hash table, and the keyed hash to feed it.
 *
 * The caller embeds a `struct rc_hnode` in its own struct, computes the hash
 * (rc_hmap_hash, keyed with a secret seed so clients cannot pick names that all
 * land in one chain) and supplies the equality test; the table stores only
 * pointers and never allocates or frees entries. Insert and remove are O(1)
 * on average: the bucket array doubles when entries outnumber buckets and
 * halves when they fall below an eighth of them, so its memory follows the
 * entries actually present.
 *
 * Pure: no I/O, no clock; the seed is a parameter.
 */
#ifndef RC_HMAP_H
#define RC_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct rc_hnode {
    struct rc_hnode *next; /* in its bucket */
    uint64_t hash;
};

struct rc_hmap {
    struct rc_hnode **buckets; /* NULL until the first insert */
    size_t nbuckets;           /* a power of two, or 0 */
    size_t min_buckets;        /* never shrinks below this */
    size_t count;
};

/* 128-bit key for rc_hmap_hash. */
struct rc_hash_key {
    uint64_t k0, k1;
};

/* SipHash-2-4 of data[0..len) under key. */
uint64_t rc_hmap_hash(const struct rc_hash_key *key, const void *data, size_t len);

/* An empty table; the first insert allocates max(min_buckets, 16) buckets
 * (rounded up to a power of two). Allocates nothing itself. */
void rc_hmap_init(struct rc_hmap *m, size_t min_buckets);

/* Frees the bucket array (not the entries: they are the caller's). */
void rc_hmap_free(struct rc_hmap *m);

/* Returns 1 when node n (whose hash matched) holds key. */
typedef int rc_hmap_eq(const struct rc_hnode *n, const void *key);

/* The entry with this hash for which eq(entry, key) holds, or NULL. */
struct rc_hnode *rc_hmap_find(const struct rc_hmap *m, uint64_t hash, rc_hmap_eq *eq, const void *key);

/* Adds n (borrowed, must stay valid until removed) under hash; does not
 * look for duplicates. Returns 0, or RC_E_INTERNAL when the first bucket
 * array cannot be allocated (n is then not in the table). A failed resize
 * later just keeps longer chains. */
int rc_hmap_insert(struct rc_hmap *m, struct rc_hnode *n, uint64_t hash);

/* Removes n; nothing happens when n is not in m (an insert that failed). */
void rc_hmap_remove(struct rc_hmap *m, struct rc_hnode *n);

#endif
