/* test_vindex.c - rc_vindex reports exactly the windows a span of positions
 * touches (start <= hi and end > lo), each once, and nothing else, however
 * many windows sit beside them; its largest end follows adds and removes;
 * removing everything frees every node. A few items cost no node and no
 * link (list mode, issue 24: a board with one view must stay small); the
 * tree is built past RC_VINDEX_SMALL items and dropped at
 * RC_VINDEX_SMALL_LOW, with the same answers either side.
 *
 * The property tests run random adds, removes and queries against a brute
 * force over the same intervals, from a fixed seed (RC_TEST_SEED=<n>).
 * malloc and calloc are wrapped (tests/CMakeLists.txt) to fail on demand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rc_test_rng.h"

#include "rc_vindex.h"

#define ITEMS 300

/* Allocations to let through before failing them all (-1: never fail). */
static long alloc_budget = -1;
static unsigned long alloc_failed;

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);

static int alloc_denied(void)
{
    if (alloc_budget < 0)
        return 0;
    if (alloc_budget == 0) {
        alloc_failed++;
        return 1;
    }
    alloc_budget--;
    return 0;
}

void *__wrap_malloc(size_t n)
{
    return alloc_denied() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
    return alloc_denied() ? NULL : __real_calloc(k, n);
}

struct win {
    struct rc_vindex_item it; /* first: the visit callback casts back */
    size_t start, end;
    int in;
    unsigned seen;
};

static void mark(struct rc_vindex_item *it, void *arg)
{
    (void)arg;
    ((struct win *)(void *)it)->seen++;
}

/* Runs a query and checks it against the brute force over w[0..n). */
static void check_query(const struct rc_vindex *ix, struct win *w, size_t n, size_t lo, size_t hi)
{
    for (size_t i = 0; i < n; i++)
        w[i].seen = 0;
    size_t got = rc_vindex_each(ix, lo, hi, mark, NULL);
    size_t want = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned expect = w[i].in && w[i].start <= hi && w[i].end > lo;
        want += expect;
        if (w[i].seen != expect)
            fail_msg("window [%zu,%zu) in %d: seen %u times by [%zu,%zu]", w[i].start, w[i].end, w[i].in,
                     w[i].seen, lo, hi);
    }
    assert_int_equal(got, want);
}

static void top_n_views_touched_at_rank_900_are_those_reaching_it(void **state)
{
    (void)state;
    static struct win w[1000];
    struct rc_vindex ix;
    rc_vindex_init(&ix);
    for (size_t i = 0; i < 1000; i++) {
        w[i].start = 0;
        w[i].end = i + 1; /* top 1 .. top 1000 */
        w[i].in = 1;
        assert_int_equal(rc_vindex_add(&ix, &w[i].it, w[i].start, w[i].end), 0);
    }
    for (size_t i = 0; i < 1000; i++)
        w[i].seen = 0;
    /* a member moving from rank 900 to rank 905: positions 899 .. 904 */
    assert_int_equal(rc_vindex_each(&ix, 899, 904, mark, NULL), 1000 - 899);
    for (size_t i = 0; i < 1000; i++)
        assert_int_equal(w[i].seen, i + 1 > 899);
    assert_int_equal(rc_vindex_max_end(&ix), 1000);
    for (size_t i = 0; i < 1000; i++)
        rc_vindex_remove(&ix, &w[i].it);
    assert_null(ix.root);
    assert_int_equal(ix.count, 0);
}

static void pages_are_found_by_the_span_they_overlap(void **state)
{
    (void)state;
    struct win w[3] = {{.start = 10, .end = 20}, {.start = 20, .end = 30}, {.start = 5, .end = 6}};
    struct rc_vindex ix;
    rc_vindex_init(&ix);
    for (int i = 0; i < 3; i++) {
        w[i].in = 1;
        assert_int_equal(rc_vindex_add(&ix, &w[i].it, w[i].start, w[i].end), 0);
    }
    check_query(&ix, w, 3, 19, 19); /* the last row of the first only */
    check_query(&ix, w, 3, 20, 20); /* the first row of the second only */
    check_query(&ix, w, 3, 6, 9);   /* between them: none */
    check_query(&ix, w, 3, 0, SIZE_MAX);
    check_query(&ix, w, 3, 25, SIZE_MAX);
    assert_int_equal(rc_vindex_each(&ix, RC_VINDEX_SPAN, SIZE_MAX, mark, NULL), 0);
    assert_int_equal(rc_vindex_max_end(&ix), 30);
    rc_vindex_remove(&ix, &w[1].it);
    w[1].in = 0;
    assert_int_equal(rc_vindex_max_end(&ix), 20);
    check_query(&ix, w, 3, 0, SIZE_MAX);
    rc_vindex_free(&ix);
    assert_int_equal(w[0].it.in, 0);
}

static void adding_an_item_twice_is_refused(void **state)
{
    (void)state;
    struct win w = {0};
    struct rc_vindex ix;
    rc_vindex_init(&ix);
    assert_int_equal(rc_vindex_add(&ix, &w.it, 3, 4), 0);
    assert_int_equal(rc_vindex_add(&ix, &w.it, 3, 4), -1);
    assert_int_equal(ix.count, 1);
    rc_vindex_remove(&ix, &w.it);
    rc_vindex_remove(&ix, &w.it); /* a no-op */
    assert_null(ix.root);
}

static void out_of_span_and_empty_intervals_are_clamped(void **state)
{
    (void)state;
    struct win w[2] = {0};
    struct rc_vindex ix;
    rc_vindex_init(&ix);
    assert_int_equal(rc_vindex_add(&ix, &w[0].it, 5, 5), 0); /* empty: [5, 6) */
    assert_int_equal(rc_vindex_add(&ix, &w[1].it, RC_VINDEX_SPAN + 4000, RC_VINDEX_SPAN + 9000), 0);
    assert_int_equal(w[0].it.end, 6);
    assert_int_equal(w[1].it.start, RC_VINDEX_SPAN - 1);
    assert_int_equal(w[1].it.end, RC_VINDEX_SPAN);
    assert_int_equal(rc_vindex_max_end(&ix), RC_VINDEX_SPAN);
    rc_vindex_remove(&ix, &w[1].it);
    rc_vindex_remove(&ix, &w[0].it);
    assert_null(ix.root);
}

static void random_adds_removes_and_queries_match_brute_force(void **state)
{
    (void)state;
    const char *env = getenv("RC_TEST_SEED");
    struct rng r = {env && *env ? strtoull(env, NULL, 0) : 20261127u};
    static struct win w[ITEMS];
    struct rc_vindex ix;
    rc_vindex_init(&ix);
    memset(w, 0, sizeof w);
    for (int step = 0; step < 20000; step++) {
        struct win *x = &w[below(&r, ITEMS)];
        if (!x->in) {
            /* top-N views, short pages and long ones, some near the span's end */
            size_t s = below(&r, 4) == 0 ? 0 : below(&r, RC_VINDEX_SPAN);
            size_t len = 1 + (below(&r, 2) ? below(&r, 50) : below(&r, RC_VINDEX_SPAN));
            if (s + len > RC_VINDEX_SPAN)
                len = RC_VINDEX_SPAN - s;
            x->start = s;
            x->end = s + len;
            assert_int_equal(rc_vindex_add(&ix, &x->it, s, s + len), 0);
            x->in = 1;
        } else if (below(&r, 3) == 0) {
            rc_vindex_remove(&ix, &x->it);
            x->in = 0;
        }
        size_t lo = below(&r, RC_VINDEX_SPAN + 8);
        size_t hi = below(&r, 4) == 0 ? SIZE_MAX : lo + below(&r, 64);
        check_query(&ix, w, ITEMS, lo, hi);
        size_t max = 0, count = 0;
        for (size_t i = 0; i < ITEMS; i++) {
            if (w[i].in && w[i].end > max)
                max = w[i].end;
            count += (size_t)w[i].in;
        }
        assert_int_equal(rc_vindex_max_end(&ix), max);
        assert_int_equal(ix.count, count);
    }
    for (size_t i = 0; i < ITEMS; i++)
        rc_vindex_remove(&ix, &w[i].it);
    assert_null(ix.root); /* every node freed */
}

static int is_tree(const struct rc_vindex *ix)
{
    return ix->tree != 0;
}

/* The shape the index must be in for its count: a list (no node, no link)
 * up to RC_VINDEX_SMALL, a tree above it, either in between. */
static void check_mode(const struct rc_vindex *ix, const struct win *w, size_t n)
{
    if (ix->count > RC_VINDEX_SMALL)
        assert_int_equal(is_tree(ix), 1);
    if (ix->count <= RC_VINDEX_SMALL_LOW)
        assert_int_equal(is_tree(ix), 0);
    if (is_tree(ix))
        assert_non_null(ix->root);
    else if (ix->count == 0)
        assert_null(ix->list);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(w[i].it.in, w[i].in);
        if (!w[i].in) {
            assert_null(w[i].it.u.links);
            assert_int_equal(w[i].it.nlinks, 0);
        } else if (!is_tree(ix)) {
            assert_int_equal(w[i].it.nlinks, 0);
        } else {
            assert_non_null(w[i].it.u.links);
            assert_true(w[i].it.nlinks >= 1 && w[i].it.nlinks <= RC_VINDEX_LINKS);
        }
    }
}

static void check_all(const struct rc_vindex *ix, struct win *w, size_t n)
{
    size_t max = 0, count = 0;
    for (size_t i = 0; i < n; i++) {
        if (w[i].in && w[i].end > max)
            max = w[i].end;
        count += (size_t)w[i].in;
    }
    assert_int_equal(ix->count, count);
    assert_int_equal(rc_vindex_max_end(ix), max);
    check_mode(ix, w, n);
    /* every single position, the whole span, and a few spans */
    for (size_t p = 0; p < 40; p++)
        check_query(ix, w, n, p, p);
    check_query(ix, w, n, 0, SIZE_MAX);
    check_query(ix, w, n, 3, 12);
    check_query(ix, w, n, 25, 31);
    check_query(ix, w, n, RC_VINDEX_SPAN - 1, SIZE_MAX);
}

static void an_index_item_embeds_no_links(void **state)
{
    (void)state;
    /* (it embedded RC_VINDEX_LINKS links: 528 bytes in every view) */
    assert_true(sizeof(struct rc_vindex_item) <= 2 * sizeof(void *));
    assert_true(sizeof(struct rc_vindex) <= 2 * sizeof(void *));
}

static void a_few_items_make_no_node_and_the_tree_comes_and_goes_with_hysteresis(void **state)
{
    (void)state;
    struct win w[RC_VINDEX_SMALL + 4];
    const size_t n = RC_VINDEX_SMALL + 4;
    memset(w, 0, sizeof w);
    struct rc_vindex ix;
    rc_vindex_init(&ix);
    for (size_t i = 0; i < n; i++) {
        w[i].start = i * 3;
        w[i].end = i * 3 + 1 + i % 5; /* some overlap, some do not */
    }
    for (size_t i = 0; i < RC_VINDEX_SMALL; i++) {
        assert_int_equal(rc_vindex_add(&ix, &w[i].it, w[i].start, w[i].end), 0);
        w[i].in = 1;
        assert_false(is_tree(&ix)); /* a list: no node */
        check_all(&ix, w, n);
    }
    /* one more: the tree */
    assert_int_equal(rc_vindex_add(&ix, &w[RC_VINDEX_SMALL].it, w[RC_VINDEX_SMALL].start, w[RC_VINDEX_SMALL].end), 0);
    w[RC_VINDEX_SMALL].in = 1;
    assert_int_equal(is_tree(&ix), 1);
    assert_non_null(ix.root);
    check_all(&ix, w, n);
    /* in and out at the boundary: the tree stays */
    for (int k = 0; k < 5; k++) {
        rc_vindex_remove(&ix, &w[RC_VINDEX_SMALL].it);
        w[RC_VINDEX_SMALL].in = 0;
        assert_int_equal(is_tree(&ix), 1);
        check_all(&ix, w, n);
        assert_int_equal(rc_vindex_add(&ix, &w[RC_VINDEX_SMALL].it, w[RC_VINDEX_SMALL].start, w[RC_VINDEX_SMALL].end), 0);
        w[RC_VINDEX_SMALL].in = 1;
        assert_int_equal(is_tree(&ix), 1);
        check_all(&ix, w, n);
    }
    /* down to RC_VINDEX_SMALL_LOW + 1: still the tree; one less: the list */
    size_t i = RC_VINDEX_SMALL + 1;
    while (ix.count > RC_VINDEX_SMALL_LOW + 1) {
        rc_vindex_remove(&ix, &w[--i].it);
        w[i].in = 0;
        assert_int_equal(is_tree(&ix), 1);
        check_all(&ix, w, n);
    }
    rc_vindex_remove(&ix, &w[--i].it);
    w[i].in = 0;
    assert_int_equal(is_tree(&ix), 0);
    check_all(&ix, w, n);
    /* and back up: the list until it passes RC_VINDEX_SMALL */
    for (; ix.count < RC_VINDEX_SMALL; i++) {
        assert_int_equal(rc_vindex_add(&ix, &w[i].it, w[i].start, w[i].end), 0);
        w[i].in = 1;
        assert_int_equal(is_tree(&ix), 0);
        check_all(&ix, w, n);
    }
    rc_vindex_free(&ix);
    for (size_t j = 0; j < n; j++)
        assert_int_equal(w[j].it.in, 0);
}

static void freeing_a_tree_or_a_list_leaves_every_item_out(void **state)
{
    (void)state;
    struct win w[3 * RC_VINDEX_SMALL];
    const size_t n = 3 * RC_VINDEX_SMALL;
    for (size_t k = 1; k <= n; k += RC_VINDEX_SMALL - 1) { /* a list, then trees */
        memset(w, 0, sizeof w);
        struct rc_vindex ix;
        rc_vindex_init(&ix);
        for (size_t i = 0; i < k; i++)
            assert_int_equal(rc_vindex_add(&ix, &w[i].it, i, i + 1 + i % 7), 0);
        assert_int_equal(is_tree(&ix), k > RC_VINDEX_SMALL);
        rc_vindex_free(&ix); /* (the sanitizer build checks nothing leaks) */
        assert_null(ix.root);
        assert_int_equal(is_tree(&ix), 0);
        assert_int_equal(ix.count, 0);
        check_all(&ix, w, n);
        /* and they can go in again */
        for (size_t i = 0; i < k; i++) {
            assert_int_equal(rc_vindex_add(&ix, &w[i].it, i, i + 2), 0);
            w[i].start = i;
            w[i].end = i + 2;
            w[i].in = 1;
        }
        check_all(&ix, w, n);
        for (size_t i = 0; i < k; i++)
            rc_vindex_remove(&ix, &w[i].it);
        assert_null(ix.root);
    }
}

/* A small pool, so the count keeps crossing both thresholds. */
static void random_walks_across_the_mode_switch_match_brute_force(void **state)
{
    (void)state;
    const char *env = getenv("RC_TEST_SEED");
    struct rng r = {env && *env ? strtoull(env, NULL, 0) : 20261128u};
    enum { POOL = 3 * RC_VINDEX_SMALL };
    static struct win w[POOL];
    memset(w, 0, sizeof w);
    struct rc_vindex ix;
    rc_vindex_init(&ix);
    unsigned builds = 0, drops = 0;
    int was_tree = 0, rising = 1;
    for (int step = 0; step < 30000; step++) {
        /* drift up past RC_VINDEX_SMALL, then down to RC_VINDEX_SMALL_LOW or
         * below, and again (with steps against the drift) */
        if (ix.count > RC_VINDEX_SMALL + below(&r, 3))
            rising = 0;
        else if (ix.count + below(&r, 2) <= RC_VINDEX_SMALL_LOW)
            rising = 1;
        int up = rising ? below(&r, 4) != 0 : below(&r, 4) == 0;
        struct win *x = &w[below(&r, POOL)];
        if (up && !x->in) {
            size_t s = below(&r, 3) == 0 ? 0 : below(&r, 60);
            size_t e = s + 1 + below(&r, 30);
            if (below(&r, 50) == 0) {
                s = below(&r, RC_VINDEX_SPAN);
                e = s + below(&r, RC_VINDEX_SPAN);
            }
            assert_int_equal(rc_vindex_add(&ix, &x->it, s, e), 0);
            x->start = x->it.start;
            x->end = x->it.end;
            x->in = 1;
        } else if (!up && x->in) {
            rc_vindex_remove(&ix, &x->it);
            x->in = 0;
        }
        if (is_tree(&ix) != was_tree) {
            builds += (unsigned)is_tree(&ix);
            drops += (unsigned)!is_tree(&ix);
            was_tree = is_tree(&ix);
        }
        size_t lo = below(&r, 70);
        size_t hi = below(&r, 5) == 0 ? SIZE_MAX : lo + below(&r, 20);
        check_query(&ix, w, POOL, lo, hi);
        size_t max = 0, count = 0;
        for (size_t i = 0; i < POOL; i++) {
            if (w[i].in && w[i].end > max)
                max = w[i].end;
            count += (size_t)w[i].in;
        }
        assert_int_equal(rc_vindex_max_end(&ix), max);
        assert_int_equal(ix.count, count);
        check_mode(&ix, w, POOL);
    }
    assert_true(builds >= 100 && drops >= 100); /* it did cross, many times */
    for (size_t i = 0; i < POOL; i++)
        rc_vindex_remove(&ix, &w[i].it);
    assert_null(ix.root);
    assert_int_equal(ix.count, 0);
}

/* Adds under every allocation failing after k, for each k: the add either
 * succeeds or returns -1 with the index as it was (same answers, same mode,
 * no node more); a removal needs no memory, the drop to a list included. */
static void out_of_memory_leaves_the_index_as_it_was(void **state)
{
    (void)state;
    enum { N = 2 * RC_VINDEX_SMALL };
    struct win w[N];
    memset(w, 0, sizeof w);
    struct rc_vindex ix;
    rc_vindex_init(&ix);
    for (size_t i = 0; i < N; i++) {
        w[i].start = i * 2;
        w[i].end = i * 2 + 1 + (i * 7) % 13;
        unsigned long failures = 0;
        for (long k = 0;; k++) {
            int tree_before = is_tree(&ix);
            alloc_budget = k;
            alloc_failed = 0;
            int rc = rc_vindex_add(&ix, &w[i].it, w[i].start, w[i].end);
            alloc_budget = -1;
            if (rc == 0) {
                w[i].in = 1;
                break;
            }
            failures++;
            assert_true(alloc_failed > 0);
            assert_int_equal(w[i].it.in, 0);
            assert_int_equal(is_tree(&ix), tree_before);
            check_all(&ix, w, N);
        }
        if (i < RC_VINDEX_SMALL)
            assert_int_equal(failures, 0); /* a list needs no memory */
        else
            assert_true(failures > 0);
        check_all(&ix, w, N);
    }
    assert_int_equal(is_tree(&ix), 1);
    alloc_budget = 0; /* nothing may be allocated from here */
    for (size_t i = N; i-- > 0;) {
        rc_vindex_remove(&ix, &w[i].it);
        w[i].in = 0;
        check_all(&ix, w, N);
    }
    alloc_budget = -1;
    assert_null(ix.root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(top_n_views_touched_at_rank_900_are_those_reaching_it),
        cmocka_unit_test(pages_are_found_by_the_span_they_overlap),
        cmocka_unit_test(adding_an_item_twice_is_refused),
        cmocka_unit_test(out_of_span_and_empty_intervals_are_clamped),
        cmocka_unit_test(random_adds_removes_and_queries_match_brute_force),
        cmocka_unit_test(an_index_item_embeds_no_links),
        cmocka_unit_test(a_few_items_make_no_node_and_the_tree_comes_and_goes_with_hysteresis),
        cmocka_unit_test(freeing_a_tree_or_a_list_leaves_every_item_out),
        cmocka_unit_test(random_walks_across_the_mode_switch_match_brute_force),
        cmocka_unit_test(out_of_memory_leaves_the_index_as_it_was),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
