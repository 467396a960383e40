/* test_vindex.c - rc_vindex reports exactly the windows a span of positions
 * touches (start <= hi and end > lo), each once, and nothing else, however
 * many windows sit beside them; its largest end follows adds and removes;
 * removing everything frees every node.
 *
 * The property test runs random adds, removes and queries against a brute
 * force over the same intervals, from a fixed seed (RC_TEST_SEED=<n>).
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
    assert_int_equal(rc_vindex_add(&ix, &w[1].it, 4000, 9000), 0);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(top_n_views_touched_at_rank_900_are_those_reaching_it),
        cmocka_unit_test(pages_are_found_by_the_span_they_overlap),
        cmocka_unit_test(adding_an_item_twice_is_refused),
        cmocka_unit_test(out_of_span_and_empty_intervals_are_clamped),
        cmocka_unit_test(random_adds_removes_and_queries_match_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
