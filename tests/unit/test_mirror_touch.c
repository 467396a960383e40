/* test_mirror_touch.c - rc_mirror records which positions its events
 * touched: a window outside the span [lo, end) it reports holds the same
 * rows after the events as before, a change of total is reported as
 * touching everything, a load touches everything (but at the version and
 * total an exact mirror holds: the rows from the first that differs), and
 * untouch forgets.
 *
 * The property test drives a mirror with random events from a reference
 * board and compares the rows before and after each batch, from a fixed
 * seed (RC_TEST_SEED=<n>).
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

#include "rc_mirror.h"

#define MEMBERS 60

struct ref {
    char name[MEMBERS][8];
    double c[MEMBERS];
    int present[MEMBERS];
};

/* desc board order: score descending, then member descending */
static int cmp_desc(const void *a, const void *b)
{
    const struct rc_mirror_row *x = a, *y = b;
    if (x->c != y->c)
        return x->c > y->c ? -1 : 1;
    return -strcmp(x->member, y->member);
}

static int64_t reload(struct rc_mirror *m, const struct ref *r, int64_t seq)
{
    struct rc_mirror_row rows[MEMBERS];
    size_t n = 0;
    for (size_t i = 0; i < MEMBERS; i++)
        if (r->present[i])
            rows[n++] = (struct rc_mirror_row){(char *)r->name[i], r->c[i]};
    qsort(rows, n, sizeof rows[0], cmp_desc);
    assert_int_equal(rc_mirror_load(m, seq, (int64_t)n, rows, n), 0);
    return (int64_t)n;
}

static void row_moving_inside_touches_the_rows_between_its_places(void **state)
{
    (void)state;
    struct rc_mirror m;
    struct rc_mirror_row rows[4] = {{"d", 40}, {"c", 30}, {"b", 20}, {"a", 10}};
    size_t lo, end;
    rc_mirror_init(&m, RC_ORDER_DESC);
    rc_mirror_set_want(&m, 4);
    assert_int_equal(rc_mirror_load(&m, 1, 4, rows, 4), 0);
    assert_int_equal(rc_mirror_touched(&m, &lo, &end), RC_MIRROR_TOUCHED_ALL); /* a load */
    rc_mirror_untouch(&m);
    assert_int_equal(rc_mirror_touched(&m, &lo, &end), RC_MIRROR_UNTOUCHED);
    assert_int_equal(rc_mirror_apply(&m, 2, "a", 1, 35, 1, NULL), RC_MIRROR_APPLIED); /* 4th -> 2nd */
    assert_int_equal(rc_mirror_touched(&m, &lo, &end), RC_MIRROR_TOUCHED_SPAN);
    assert_int_equal(lo, 1);
    assert_int_equal(end, 4);
    rc_mirror_untouch(&m);
    assert_int_equal(rc_mirror_apply(&m, 3, "d", 1, 40, 1, NULL), RC_MIRROR_APPLIED); /* same score */
    assert_int_equal(rc_mirror_touched(&m, &lo, &end), RC_MIRROR_UNTOUCHED);
    assert_int_equal(rc_mirror_apply(&m, 4, "e", 1, 1, 0, NULL), RC_MIRROR_APPLIED); /* a new member */
    assert_int_equal(rc_mirror_touched(&m, &lo, &end), RC_MIRROR_TOUCHED_ALL);
    rc_mirror_free(&m);
}

/* Issue 23: a burst of subscribes to larger top N reloads an exact mirror
 * at the same seq to hold more rows; the views of the rows it held keep
 * them, so the load must not touch them. */
static void a_load_at_the_same_version_touches_only_rows_that_differ(void **state)
{
    (void)state;
    struct rc_mirror m;
    struct rc_mirror_row rows[6] = {{"f", 60}, {"e", 50}, {"d", 40}, {"c", 30}, {"b", 20}, {"a", 10}};
    size_t lo, end;
    rc_mirror_init(&m, RC_ORDER_DESC);
    rc_mirror_set_want(&m, 2); /* keeps 2 + 16 */
    assert_int_equal(rc_mirror_load(&m, 7, 6, rows, 3), 0); /* (held: the top 3 of 6) */
    assert_int_equal(rc_mirror_touched(&m, &lo, &end), RC_MIRROR_TOUCHED_ALL); /* the first load */
    rc_mirror_untouch(&m);
    assert_int_equal(rc_mirror_load(&m, 7, 6, rows, 6), 0); /* grown, same version */
    assert_int_equal(rc_mirror_touched(&m, &lo, &end), RC_MIRROR_TOUCHED_SPAN);
    assert_int_equal(lo, 3);
    assert_int_equal(end, 6);
    rc_mirror_untouch(&m);
    assert_int_equal(rc_mirror_load(&m, 7, 6, rows, 6), 0); /* the same rows again */
    assert_int_equal(rc_mirror_touched(&m, &lo, &end), RC_MIRROR_UNTOUCHED);
    /* changed outside the scripts (no seq): the rows from the first that differs */
    struct rc_mirror_row other[6] = {{"f", 60}, {"e", 50}, {"c", 45}, {"d", 40}, {"b", 20}, {"a", 10}};
    assert_int_equal(rc_mirror_load(&m, 7, 6, other, 6), 0);
    assert_int_equal(rc_mirror_touched(&m, &lo, &end), RC_MIRROR_TOUCHED_SPAN);
    assert_int_equal(lo, 2);
    assert_int_equal(end, 6);
    rc_mirror_untouch(&m);
    assert_int_equal(rc_mirror_load(&m, 7, 6, other, 5), 0); /* fewer rows: the one gone */
    assert_int_equal(rc_mirror_touched(&m, &lo, &end), RC_MIRROR_TOUCHED_SPAN);
    assert_int_equal(lo, 5);
    assert_int_equal(end, 6);
    rc_mirror_untouch(&m);
    assert_int_equal(rc_mirror_load(&m, 9, 6, rows, 6), 0); /* another version: everything */
    assert_int_equal(rc_mirror_touched(&m, &lo, &end), RC_MIRROR_TOUCHED_ALL);
    rc_mirror_untouch(&m);
    assert_int_equal(rc_mirror_load(&m, 9, 7, rows, 6), 0); /* another total: everything */
    assert_int_equal(rc_mirror_touched(&m, &lo, &end), RC_MIRROR_TOUCHED_ALL);
    rc_mirror_free(&m);
}

static void random_events_leave_rows_outside_the_touched_span_alone(void **state)
{
    (void)state;
    const char *env = getenv("RC_TEST_SEED");
    struct rng g = {env && *env ? strtoull(env, NULL, 0) : 20261127u};
    static struct ref r;
    struct rc_mirror m;
    char before[MEMBERS][8];
    double bc[MEMBERS];
    size_t spans = 0, alls = 0;
    for (int board = 0; board < 200; board++) {
        memset(&r, 0, sizeof r);
        for (size_t i = 0; i < MEMBERS; i++) {
            snprintf(r.name[i], sizeof r.name[i], "m%zu", i);
            r.c[i] = (double)below(&g, 40);
            r.present[i] = below(&g, 2);
        }
        rc_mirror_init(&m, RC_ORDER_DESC);
        rc_mirror_set_want(&m, 1 + below(&g, 30));
        int64_t seq = 1, total = reload(&m, &r, seq);
        for (int batch = 0; batch < 50; batch++) {
            if (rc_mirror_needs_reload(&m))
                total = reload(&m, &r, seq);
            rc_mirror_untouch(&m);
            size_t len = m.len;
            for (size_t i = 0; i < len; i++) {
                memcpy(before[i], m.rows[i].member, strlen(m.rows[i].member) + 1);
                bc[i] = m.rows[i].c;
            }
            int64_t total0 = m.total;
            for (size_t k = 1 + below(&g, 3); k > 0; k--) {
                size_t i = below(&g, MEMBERS);
                int has_new = below(&g, 5) != 0;
                double c = (double)below(&g, 40);
                int was = r.present[i];
                int rc = rc_mirror_apply(&m, ++seq, r.name[i], has_new, c, was, NULL);
                assert_int_equal(rc, RC_MIRROR_APPLIED);
                r.present[i] = has_new;
                r.c[i] = c;
            }
            (void)total;
            size_t lo, end;
            int t = rc_mirror_touched(&m, &lo, &end);
            if (t == RC_MIRROR_TOUCHED_ALL) {
                alls++;
                continue;
            }
            assert_int_equal(m.total, total0); /* any change of total is "all" */
            spans += t == RC_MIRROR_TOUCHED_SPAN;
            size_t n = len > m.len ? len : m.len;
            for (size_t p = 0; p < n; p++) {
                if (t == RC_MIRROR_TOUCHED_SPAN && p >= lo && p < end)
                    continue;
                /* outside the span: the same row at the same place */
                assert_true(p < len && p < m.len);
                assert_string_equal(m.rows[p].member, before[p]);
                assert_true(m.rows[p].c == bc[p]);
            }
        }
        rc_mirror_free(&m);
    }
    print_message("touch property: %zu batches touched a span, %zu everything\n", spans, alls);
    assert_true(spans > 1000 && alls > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(row_moving_inside_touches_the_rows_between_its_places),
        cmocka_unit_test(random_events_leave_rows_outside_the_touched_span_alone),
        cmocka_unit_test(a_load_at_the_same_version_touches_only_rows_that_differ),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
