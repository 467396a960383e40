/* rc_hmap.c - intrusive chained hash table and SipHash-2-4 (see rc_hmap.h).
 *
 * SipHash (Aumasson and Bernstein, 2012) is the keyed hash Redis, Python and
 * Rust use for tables whose keys come from clients: without the key, nobody
 * can compute which names collide. Written from the paper's description;
 * tests/unit/test_hmap.c checks it against the paper's test vectors.
 */
#include "rc_hmap.h"

#include <stdlib.h>

#include "rc_err.h"

#define MIN_BUCKETS 16

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND                                                                                                  \
    do {                                                                                                          \
        v0 += v1;                                                                                                 \
        v1 = ROTL(v1, 13);                                                                                        \
        v1 ^= v0;                                                                                                 \
        v0 = ROTL(v0, 32);                                                                                        \
        v2 += v3;                                                                                                 \
        v3 = ROTL(v3, 16);                                                                                        \
        v3 ^= v2;                                                                                                 \
        v0 += v3;                                                                                                 \
        v3 = ROTL(v3, 21);                                                                                        \
        v3 ^= v0;                                                                                                 \
        v2 += v1;                                                                                                 \
        v1 = ROTL(v1, 17);                                                                                        \
        v1 ^= v2;                                                                                                 \
        v2 = ROTL(v2, 32);                                                                                        \
    } while (0)

static uint64_t load_le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

uint64_t rc_hmap_hash(const struct rc_hash_key *key, const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t v0 = 0x736f6d6570736575ULL ^ key->k0;
    uint64_t v1 = 0x646f72616e646f6dULL ^ key->k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ key->k0;
    uint64_t v3 = 0x7465646279746573ULL ^ key->k1;
    size_t whole = len - len % 8;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = load_le(p + i, 8);
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = ((uint64_t)len << 56) | load_le(p + whole, len % 8);
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

void rc_hmap_init(struct rc_hmap *m, size_t min_buckets)
{
    size_t n = MIN_BUCKETS;
    while (n < min_buckets)
        n *= 2;
    *m = (struct rc_hmap){.min_buckets = n};
}

void rc_hmap_free(struct rc_hmap *m)
{
    free(m->buckets);
    m->buckets = NULL;
    m->nbuckets = 0;
    m->count = 0;
}

/* Moves every entry into a fresh array of n buckets; keeps the old one when
 * that cannot be allocated. */
static void resize(struct rc_hmap *m, size_t n)
{
    struct rc_hnode **b = calloc(n, sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < m->nbuckets; i++) {
        struct rc_hnode *e = m->buckets[i];
        while (e) {
            struct rc_hnode *next = e->next;
            struct rc_hnode **at = &b[e->hash & (n - 1)];
            e->next = *at;
            *at = e;
            e = next;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = n;
}

struct rc_hnode *rc_hmap_find(const struct rc_hmap *m, uint64_t hash, rc_hmap_eq *eq, const void *key)
{
    if (!m->nbuckets)
        return NULL;
    for (struct rc_hnode *e = m->buckets[hash & (m->nbuckets - 1)]; e; e = e->next)
        if (e->hash == hash && eq(e, key))
            return e;
    return NULL;
}

int rc_hmap_insert(struct rc_hmap *m, struct rc_hnode *n, uint64_t hash)
{
    if (!m->nbuckets) {
        resize(m, m->min_buckets);
        if (!m->nbuckets)
            return RC_E_INTERNAL;
    } else if (m->count >= m->nbuckets) {
        resize(m, m->nbuckets * 2);
    }
    struct rc_hnode **at = &m->buckets[hash & (m->nbuckets - 1)];
    n->hash = hash;
    n->next = *at;
    *at = n;
    m->count++;
    return 0;
}

void rc_hmap_remove(struct rc_hmap *m, struct rc_hnode *n)
{
    if (!m->nbuckets)
        return;
    struct rc_hnode **at = &m->buckets[n->hash & (m->nbuckets - 1)];
    while (*at && *at != n)
        at = &(*at)->next;
    if (!*at)
        return; /* not in the table */
    *at = n->next;
    n->next = NULL;
    m->count--;
    if (m->count == 0) {
        rc_hmap_free(m); /* back to nothing until the next insert */
    } else if (m->nbuckets > m->min_buckets && m->count < m->nbuckets / 8) {
        resize(m, m->nbuckets / 2);
    }
}
