/* test_query.c - REST query strings map to the right view, with the same
 * errors as before they moved out of the HTTP glue (core/rc_query.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "rc_query.h"

/* Maps args to a view; returns the code. */
static int map(struct rc_request *r, const char *const *args, size_t n)
{
    struct rc_query q = {args, n};
    struct rc_error err = {0, ""};
    memset(r, 0, sizeof *r);
    int code = rc_query_check(&q, &err);
    return code ? code : rc_query_view(&q, r, &err);
}

static void no_view_means_top_10(void **s)
{
    (void)s;
    struct rc_request r;
    assert_int_equal(map(&r, NULL, 0), 0);
    assert_int_equal(r.view.kind, RC_VIEW_TOP);
    assert_int_equal(r.view.limit, 10);
}

static void places_shared_or_unique_and_nothing_else(void **s)
{
    (void)s;
    struct rc_request r;
    const char *shared[] = {"offset=2", "limit=3", "places=shared"};
    assert_int_equal(map(&r, shared, 3), 0);
    assert_int_equal(r.view.kind, RC_VIEW_PAGE);
    assert_int_equal(r.view.places, 1);
    const char *unique[] = {"places=unique"};
    assert_int_equal(map(&r, unique, 1), 0);
    assert_int_equal(r.view.places, 0);
    assert_int_equal(map(&r, NULL, 0), 0);
    assert_int_equal(r.view.places, 0);
    const char *bad[] = {"top=3", "places=dense"};
    assert_int_equal(map(&r, bad, 2), RC_E_BAD_REQUEST);
    const char *empty[] = {"places="};
    assert_int_equal(map(&r, empty, 1), RC_E_BAD_REQUEST);
}

static void top_n_is_top_view(void **s)
{
    (void)s;
    struct rc_request r;
    const char *a[] = {"top=25"};
    assert_int_equal(map(&r, a, 1), 0);
    assert_int_equal(r.view.kind, RC_VIEW_TOP);
    assert_int_equal(r.view.limit, 25);
}

static void offset_and_limit_make_a_page(void **s)
{
    (void)s;
    struct rc_request r;
    const char *a[] = {"offset=40", "limit=20"};
    assert_int_equal(map(&r, a, 2), 0);
    assert_int_equal(r.view.kind, RC_VIEW_PAGE);
    assert_int_equal(r.view.offset, 40);
    assert_int_equal(r.view.limit, 20);
    const char *b[] = {"offset=7"};
    assert_int_equal(map(&r, b, 1), 0);
    assert_int_equal(r.view.kind, RC_VIEW_PAGE);
    assert_int_equal(r.view.limit, 10);
    const char *c[] = {"limit=3"};
    assert_int_equal(map(&r, c, 1), 0);
    assert_int_equal(r.view.offset, 0);
    assert_int_equal(r.view.limit, 3);
}

static void around_with_default_and_given_radius(void **s)
{
    (void)s;
    struct rc_request r;
    const char *a[] = {"around=alice"};
    assert_int_equal(map(&r, a, 1), 0);
    assert_int_equal(r.view.kind, RC_VIEW_AROUND);
    assert_string_equal(r.view.around, "alice");
    assert_int_equal(r.view.radius, 5);
    const char *b[] = {"around=bob", "radius=50"};
    assert_int_equal(map(&r, b, 2), 0);
    assert_int_equal(r.view.radius, 50);
    const char *c[] = {"around=bob", "radius=51"};
    assert_int_equal(map(&r, c, 2), RC_E_BAD_REQUEST);
    const char *d[] = {"around=no spaces"};
    assert_int_equal(map(&r, d, 1), RC_E_BAD_REQUEST);
}

static void top_wins_over_around_and_page(void **s)
{
    (void)s;
    struct rc_request r;
    const char *a[] = {"around=alice", "top=3", "offset=5"};
    assert_int_equal(map(&r, a, 3), 0);
    assert_int_equal(r.view.kind, RC_VIEW_TOP);
    assert_int_equal(r.view.limit, 3);
}

static void bad_integers_are_refused(void **s)
{
    (void)s;
    struct rc_request r;
    static const char *const bad[] = {"top=0", "top=1001", "top=-1", "top=+5", "top=5x", "top=", "top= 5",
                                      "limit=0", "limit=1001", "offset=-1", "offset=2147483648",
                                      "offset=99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(map(&r, &bad[i], 1), RC_E_BAD_REQUEST);
    const char *edge[] = {"offset=2147483647", "limit=1000"};
    assert_int_equal(map(&r, edge, 2), 0);
    assert_int_equal(r.view.offset, 2147483647u);
}

static void the_first_of_duplicates_wins(void **s)
{
    (void)s;
    struct rc_request r;
    const char *a[] = {"top=4", "top=9"};
    assert_int_equal(map(&r, a, 2), 0);
    assert_int_equal(r.view.limit, 4);
    const char *b[] = {"top=4", "top=bad"};
    assert_int_equal(map(&r, b, 2), 0);
    const char *c[] = {"top=bad", "top=4"};
    assert_int_equal(map(&r, c, 2), RC_E_BAD_REQUEST);
}

static void period_is_copied_and_capped(void **s)
{
    (void)s;
    struct rc_request r;
    const char *a[] = {"period=2026-11-24"};
    assert_int_equal(map(&r, a, 1), 0);
    assert_string_equal(r.period, "2026-11-24");
    char longp[RC_PERIOD_SEL_MAX + 16] = "period=";
    memset(longp + 7, '1', RC_PERIOD_SEL_MAX + 1);
    longp[7 + RC_PERIOD_SEL_MAX + 1] = '\0';
    const char *b[] = {longp};
    assert_int_equal(map(&r, b, 1), RC_E_BAD_REQUEST);
}

static void an_over_long_fragment_is_refused_whatever_its_name(void **s)
{
    (void)s;
    struct rc_request r;
    char f[RC_QUERY_VALUE_MAX + 2];
    memset(f, 'x', sizeof f - 1);
    f[sizeof f - 1] = '\0';
    const char *a[] = {"top=3", f};
    assert_int_equal(map(&r, a, 2), RC_E_BAD_REQUEST);
    f[sizeof f - 2] = '\0'; /* exactly RC_QUERY_VALUE_MAX: fine */
    assert_int_equal(map(&r, a, 2), 0);
}

static void names_match_whole(void **s)
{
    (void)s;
    const char *a[] = {"topx=1", "top", "xtop=2", "block=true"};
    struct rc_query q = {a, 4};
    assert_null(rc_query_get(&q, "top"));
    assert_int_equal(rc_query_block(&q), 1);
    const char *b[] = {"block=yes"};
    struct rc_query q2 = {b, 1};
    assert_int_equal(rc_query_block(&q2), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_view_means_top_10),
        cmocka_unit_test(top_n_is_top_view),
        cmocka_unit_test(places_shared_or_unique_and_nothing_else),
        cmocka_unit_test(offset_and_limit_make_a_page),
        cmocka_unit_test(around_with_default_and_given_radius),
        cmocka_unit_test(top_wins_over_around_and_page),
        cmocka_unit_test(bad_integers_are_refused),
        cmocka_unit_test(the_first_of_duplicates_wins),
        cmocka_unit_test(period_is_copied_and_capped),
        cmocka_unit_test(an_over_long_fragment_is_refused_whatever_its_name),
        cmocka_unit_test(names_match_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
