/* test_hmap.c - rc_hmap_hash is SipHash-2-4 (the paper's test vectors) and
 * rc_hmap finds, removes and resizes by it: entries stay findable through
 * growth and shrinking, equal hashes are told apart by the caller's equality,
 * and an emptied table holds no memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rc_hmap.h"

struct item {
    struct rc_hnode node; /* first: a node pointer is the item pointer */
    char name[32];
};

static const struct rc_hash_key test_key = {0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};

static int item_eq(const struct rc_hnode *n, const void *key)
{
    return strcmp(((const struct item *)n)->name, key) == 0;
}

static uint64_t hash_of(const char *name)
{
    return rc_hmap_hash(&test_key, name, strlen(name));
}

static struct item *find(struct rc_hmap *m, const char *name)
{
    return (struct item *)rc_hmap_find(m, hash_of(name), item_eq, name);
}

/* The paper's key 00..0f over messages 00, 00 01, ...: outputs 0, 1, 2, 7,
 * 8 and 15 bytes long cover the empty tail, partial and whole words. */
static void siphash_matches_the_reference_vectors(void **state)
{
    (void)state;
    unsigned char msg[16];
    for (int i = 0; i < 16; i++)
        msg[i] = (unsigned char)i;
    assert_true(rc_hmap_hash(&test_key, msg, 0) == 0x726fdb47dd0e0e31ULL);
    assert_true(rc_hmap_hash(&test_key, msg, 1) == 0x74f839c593dc67fdULL);
    assert_true(rc_hmap_hash(&test_key, msg, 2) == 0x0d6c8009d9a94f5aULL);
    assert_true(rc_hmap_hash(&test_key, msg, 15) == 0xa129ca6149be45e5ULL);
}

static void a_different_key_gives_different_hashes(void **state)
{
    (void)state;
    struct rc_hash_key other = {1, 2};
    assert_true(rc_hmap_hash(&test_key, "match:1", 7) != rc_hmap_hash(&other, "match:1", 7));
    assert_true(rc_hmap_hash(&test_key, "match:1", 7) == rc_hmap_hash(&test_key, "match:1", 7));
}

static void an_empty_table_finds_nothing_and_holds_no_memory(void **state)
{
    (void)state;
    struct rc_hmap m;
    rc_hmap_init(&m, 0);
    assert_null(find(&m, "demo"));
    assert_null(m.buckets);
    rc_hmap_free(&m);
}

static void ten_thousand_entries_are_found_through_growth_and_shrinking(void **state)
{
    (void)state;
    enum { N = 10000 };
    struct item *items = calloc(N, sizeof *items);
    struct rc_hmap m;
    rc_hmap_init(&m, 0);
    for (int i = 0; i < N; i++) {
        snprintf(items[i].name, sizeof items[i].name, "match:%d", i);
        assert_int_equal(rc_hmap_insert(&m, &items[i].node, hash_of(items[i].name)), 0);
    }
    assert_int_equal(m.count, N);
    assert_true(m.nbuckets >= N);
    for (int i = 0; i < N; i++)
        assert_ptr_equal(find(&m, items[i].name), &items[i]);
    assert_null(find(&m, "match:-1"));
    /* remove the odd ones, then all but ten: the array shrinks */
    for (int i = 1; i < N; i += 2)
        rc_hmap_remove(&m, &items[i].node);
    for (int i = 0; i < N; i++)
        assert_ptr_equal(find(&m, items[i].name), i % 2 ? NULL : &items[i]);
    for (int i = 20; i < N; i += 2)
        rc_hmap_remove(&m, &items[i].node);
    assert_int_equal(m.count, 10);
    assert_true(m.nbuckets <= 128);
    for (int i = 0; i < 20; i += 2)
        assert_ptr_equal(find(&m, items[i].name), &items[i]);
    for (int i = 0; i < 20; i += 2)
        rc_hmap_remove(&m, &items[i].node);
    assert_int_equal(m.count, 0);
    assert_null(m.buckets);
    rc_hmap_free(&m);
    free(items);
}

/* Same hash, different keys: one chain, told apart by eq; removing the
 * middle one keeps the others. */
static void equal_hashes_are_told_apart_by_the_equality(void **state)
{
    (void)state;
    struct item a = {.name = "a"}, b = {.name = "b"}, c = {.name = "c"};
    struct rc_hmap m;
    rc_hmap_init(&m, 0);
    assert_int_equal(rc_hmap_insert(&m, &a.node, 42), 0);
    assert_int_equal(rc_hmap_insert(&m, &b.node, 42), 0);
    assert_int_equal(rc_hmap_insert(&m, &c.node, 42), 0);
    assert_ptr_equal(rc_hmap_find(&m, 42, item_eq, "b"), &b);
    rc_hmap_remove(&m, &b.node);
    assert_null(rc_hmap_find(&m, 42, item_eq, "b"));
    assert_ptr_equal(rc_hmap_find(&m, 42, item_eq, "a"), &a);
    assert_ptr_equal(rc_hmap_find(&m, 42, item_eq, "c"), &c);
    assert_int_equal(m.count, 2);
    rc_hmap_remove(&m, &b.node); /* not there any more: nothing happens */
    assert_int_equal(m.count, 2);
    rc_hmap_free(&m);
    rc_hmap_remove(&m, &a.node); /* nor in a table without buckets */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(siphash_matches_the_reference_vectors),
        cmocka_unit_test(a_different_key_gives_different_hashes),
        cmocka_unit_test(an_empty_table_finds_nothing_and_holds_no_memory),
        cmocka_unit_test(ten_thousand_entries_are_found_through_growth_and_shrinking),
        cmocka_unit_test(equal_hashes_are_told_apart_by_the_equality),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
