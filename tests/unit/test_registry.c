/* test_registry.c - rc_registry decides which viewers share a view: same
 * board, same normalized window and same follow mode share one view (one
 * id); anything else gets its own. Boards are found by (name, period), ids
 * are never reused, views move between boards with their id, and thousands
 * of boards stay findable and removable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rc_err.h"
#include "rc_registry.h"

static const struct rc_hash_key KEY = {0x0123456789abcdefull, 0xfedcba9876543210ull};

static struct rc_view top(uint32_t n)
{
    struct rc_view v;
    memset(&v, 0, sizeof v);
    v.kind = RC_VIEW_TOP;
    v.limit = n;
    return v;
}

static struct rc_view page(uint32_t offset, uint32_t limit)
{
    struct rc_view v;
    memset(&v, 0, sizeof v);
    v.kind = RC_VIEW_PAGE;
    v.offset = offset;
    v.limit = limit;
    return v;
}

static struct rc_view around(const char *m, uint32_t radius)
{
    struct rc_view v;
    memset(&v, 0, sizeof v);
    v.kind = RC_VIEW_AROUND;
    snprintf(v.around, sizeof v.around, "%s", m);
    v.radius = radius;
    return v;
}

/* Finds the view (b, spec, follows) or adds *slot for it. */
static struct rc_reg_view *get(struct rc_registry *r, struct rc_reg_board *b, struct rc_reg_view *slot,
                               const struct rc_view *spec, int follows)
{
    struct rc_reg_view *v = rc_registry_view_find(r, b, spec, follows);
    if (v)
        return v;
    memset(slot, 0, sizeof *slot);
    assert_int_equal(rc_registry_view_add(r, slot, b, spec, follows), 0);
    return slot;
}

static void same_window_on_same_board_is_one_view(void **state)
{
    (void)state;
    struct rc_registry r;
    struct rc_reg_board b = {0};
    struct rc_reg_view s1, s2;
    rc_registry_init(&r, KEY);
    assert_int_equal(rc_registry_board_add(&r, &b, "arena", "d:2026-01-01"), 0);
    struct rc_view t10 = top(10), t10b = top(10);
    struct rc_reg_view *a = get(&r, &b, &s1, &t10, RC_FOLLOW_CURRENT);
    struct rc_reg_view *c = get(&r, &b, &s2, &t10b, RC_FOLLOW_CURRENT);
    assert_ptr_equal(a, c);
    assert_ptr_equal(a, &s1);
    assert_string_equal(a->id, "v1");
    assert_int_equal(b.nviews, 1);
    rc_registry_free(&r);
}

static void shared_places_make_another_view_of_the_same_window(void **state)
{
    (void)state;
    struct rc_registry r;
    struct rc_reg_board b = {0};
    struct rc_reg_view s1, s2, s3;
    rc_registry_init(&r, KEY);
    assert_int_equal(rc_registry_board_add(&r, &b, "arena", ""), 0);
    struct rc_view plain = top(10), shared = top(10), shared2 = top(10);
    shared.places = 1;
    shared2.places = 1;
    struct rc_reg_view *a = get(&r, &b, &s1, &plain, RC_FOLLOW_NONE);
    struct rc_reg_view *c = get(&r, &b, &s2, &shared, RC_FOLLOW_NONE);
    assert_ptr_not_equal(a, c);
    assert_string_not_equal(a->id, c->id);
    assert_ptr_equal(get(&r, &b, &s3, &shared2, RC_FOLLOW_NONE), c);
    assert_int_equal(b.nviews, 2);
    rc_registry_free(&r);
}

static void a_top_ignores_any_offset_it_was_given(void **state)
{
    (void)state;
    struct rc_registry r;
    struct rc_reg_board b = {0};
    struct rc_reg_view s1, s2;
    rc_registry_init(&r, KEY);
    assert_int_equal(rc_registry_board_add(&r, &b, "arena", ""), 0);
    struct rc_view t = top(5), t_off = top(5);
    t_off.offset = 7;
    struct rc_reg_view *a = get(&r, &b, &s1, &t, RC_FOLLOW_NONE);
    assert_ptr_equal(get(&r, &b, &s2, &t_off, RC_FOLLOW_NONE), a);
    assert_int_equal(a->spec.offset, 0);
    rc_registry_free(&r);
}

static void different_window_follow_mode_or_board_is_another_view(void **state)
{
    (void)state;
    struct rc_registry r;
    struct rc_reg_board b1 = {0}, b2 = {0};
    struct rc_reg_view slots[8];
    rc_registry_init(&r, KEY);
    assert_int_equal(rc_registry_board_add(&r, &b1, "arena", "d:2026-01-01"), 0);
    assert_int_equal(rc_registry_board_add(&r, &b2, "arena", "d:2026-01-02"), 0);
    struct rc_view specs[] = {top(10), top(11), page(10, 10), page(20, 10), around("alice", 2), around("alice", 3),
                              around("bob", 2)};
    for (size_t i = 0; i < 7; i++)
        get(&r, &b1, &slots[i], &specs[i], RC_FOLLOW_CURRENT);
    assert_int_equal(b1.nviews, 7);
    /* a page at offset 0 is not a top: they are encoded differently */
    struct rc_view p0 = page(0, 10), t10 = top(10);
    assert_null(rc_registry_view_find(&r, &b1, &p0, RC_FOLLOW_CURRENT));
    assert_ptr_equal(rc_registry_view_find(&r, &b1, &t10, RC_FOLLOW_CURRENT), &slots[0]);
    assert_null(rc_registry_view_find(&r, &b1, &t10, RC_FOLLOW_NONE));
    assert_null(rc_registry_view_find(&r, &b1, &t10, RC_FOLLOW_PREVIOUS));
    assert_null(rc_registry_view_find(&r, &b2, &t10, RC_FOLLOW_CURRENT));
    for (size_t i = 0; i < 7; i++)
        for (size_t j = i + 1; j < 7; j++)
            assert_string_not_equal(slots[i].id, slots[j].id);
    rc_registry_free(&r);
}

static void another_max_rate_is_another_view(void **state)
{
    (void)state;
    struct rc_registry r;
    struct rc_reg_board b = {0};
    struct rc_reg_view s[4];
    rc_registry_init(&r, KEY);
    assert_int_equal(rc_registry_board_add(&r, &b, "arena", ""), 0);
    struct rc_view every = top(10), two = top(10), two_b = top(10), five = top(10);
    two.max_rate = two_b.max_rate = 2;
    five.max_rate = 5;
    struct rc_reg_view *a = get(&r, &b, &s[0], &every, RC_FOLLOW_NONE);
    struct rc_reg_view *c = get(&r, &b, &s[1], &two, RC_FOLLOW_NONE);
    struct rc_reg_view *d = get(&r, &b, &s[2], &two_b, RC_FOLLOW_NONE);
    struct rc_reg_view *e = get(&r, &b, &s[3], &five, RC_FOLLOW_NONE);
    assert_ptr_equal(c, d); /* the same rate: shared */
    assert_ptr_not_equal(a, c);
    assert_ptr_not_equal(c, e);
    assert_ptr_not_equal(a, e);
    assert_string_not_equal(a->id, c->id);
    assert_string_not_equal(c->id, e->id);
    assert_int_equal(c->spec.max_rate, 2);
    assert_int_equal(b.nviews, 3);
    rc_registry_free(&r);
}

static void boards_are_found_by_name_and_period(void **state)
{
    (void)state;
    struct rc_registry r;
    struct rc_reg_board a = {0}, b = {0}, c = {0};
    rc_registry_init(&r, KEY);
    assert_int_equal(rc_registry_board_add(&r, &a, "arena", "d:2026-01-01"), 0);
    assert_int_equal(rc_registry_board_add(&r, &b, "arena", "d:2026-01-02"), 0);
    assert_int_equal(rc_registry_board_add(&r, &c, "arena|d:2026", "01-01"), 0);
    assert_ptr_equal(rc_registry_board_find(&r, "arena", "d:2026-01-01"), &a);
    assert_ptr_equal(rc_registry_board_find(&r, "arena", "d:2026-01-02"), &b);
    assert_ptr_equal(rc_registry_board_find(&r, "arena|d:2026", "01-01"), &c);
    assert_null(rc_registry_board_find(&r, "arena", ""));
    assert_null(rc_registry_board_find(&r, "arena2", "d:2026-01-01"));
    assert_int_equal(rc_registry_nboards(&r), 3);
    rc_registry_board_remove(&r, &a);
    assert_null(rc_registry_board_find(&r, "arena", "d:2026-01-01"));
    assert_int_equal(rc_registry_nboards(&r), 2);
    rc_registry_free(&r);
}

static void names_that_do_not_fit_are_refused(void **state)
{
    (void)state;
    struct rc_registry r;
    struct rc_reg_board b = {0};
    char name[RC_BOARD_MAX + 2];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    rc_registry_init(&r, KEY);
    assert_int_equal(rc_registry_board_add(&r, &b, name, ""), RC_E_TOO_LARGE);
    assert_int_equal(rc_registry_nboards(&r), 0);
    name[RC_BOARD_MAX] = '\0';
    assert_int_equal(rc_registry_board_add(&r, &b, name, ""), 0);
    assert_ptr_equal(rc_registry_board_find(&r, name, ""), &b);
    rc_registry_free(&r);
}

static void removed_view_is_not_found_and_its_id_is_not_reused(void **state)
{
    (void)state;
    struct rc_registry r;
    struct rc_reg_board b = {0};
    struct rc_reg_view s1, s2;
    rc_registry_init(&r, KEY);
    assert_int_equal(rc_registry_board_add(&r, &b, "arena", ""), 0);
    struct rc_view t = top(3);
    struct rc_reg_view *v = get(&r, &b, &s1, &t, RC_FOLLOW_NONE);
    char old_id[RC_VIEW_ID_MAX];
    snprintf(old_id, sizeof old_id, "%s", v->id);
    rc_registry_view_remove(&r, v);
    assert_null(v->board);
    assert_null(b.views);
    assert_int_equal(b.nviews, 0);
    assert_null(rc_registry_view_find(&r, &b, &t, RC_FOLLOW_NONE));
    rc_registry_view_remove(&r, v); /* twice: harmless */
    struct rc_reg_view *w = get(&r, &b, &s2, &t, RC_FOLLOW_NONE);
    assert_string_not_equal(w->id, old_id);
    rc_registry_free(&r);
}

static void a_moved_view_keeps_its_id_and_is_found_on_its_new_board(void **state)
{
    (void)state;
    struct rc_registry r;
    struct rc_reg_board day1 = {0}, day2 = {0};
    struct rc_reg_view s1, s2;
    rc_registry_init(&r, KEY);
    assert_int_equal(rc_registry_board_add(&r, &day1, "arena", "d:2026-01-01"), 0);
    assert_int_equal(rc_registry_board_add(&r, &day2, "arena", "d:2026-01-02"), 0);
    struct rc_view t = top(10);
    struct rc_reg_view *v = get(&r, &day1, &s1, &t, RC_FOLLOW_CURRENT);
    v->viewers = 3;
    assert_int_equal(rc_registry_view_move(&r, v, &day2), 0);
    assert_string_equal(v->id, "v1");
    assert_int_equal(v->viewers, 3);
    assert_ptr_equal(v->board, &day2);
    assert_int_equal(day1.nviews, 0);
    assert_int_equal(day2.nviews, 1);
    assert_null(rc_registry_view_find(&r, &day1, &t, RC_FOLLOW_CURRENT));
    assert_ptr_equal(rc_registry_view_find(&r, &day2, &t, RC_FOLLOW_CURRENT), v);
    /* a new subscriber of the old board's window gets a new view */
    assert_ptr_equal(get(&r, &day1, &s2, &t, RC_FOLLOW_CURRENT), &s2);
    rc_registry_free(&r);
}

static void board_lists_its_views_newest_first_and_unlinks_from_the_middle(void **state)
{
    (void)state;
    struct rc_registry r;
    struct rc_reg_board b = {0};
    struct rc_reg_view s[3];
    rc_registry_init(&r, KEY);
    assert_int_equal(rc_registry_board_add(&r, &b, "arena", ""), 0);
    struct rc_view specs[3] = {top(1), top(2), top(3)};
    for (int i = 0; i < 3; i++)
        get(&r, &b, &s[i], &specs[i], RC_FOLLOW_NONE);
    assert_ptr_equal(b.views, &s[2]);
    assert_ptr_equal(s[2].next, &s[1]);
    assert_ptr_equal(s[1].next, &s[0]);
    rc_registry_view_remove(&r, &s[1]);
    assert_ptr_equal(s[2].next, &s[0]);
    assert_ptr_equal(s[0].prev, &s[2]);
    assert_int_equal(b.nviews, 2);
    rc_registry_free(&r);
}

static void follow_mode_follows_the_requested_period(void **state)
{
    (void)state;
    assert_int_equal(rc_registry_follow_mode(0, ""), RC_FOLLOW_NONE);
    assert_int_equal(rc_registry_follow_mode(0, "current"), RC_FOLLOW_NONE);
    assert_int_equal(rc_registry_follow_mode(1, ""), RC_FOLLOW_CURRENT);
    assert_int_equal(rc_registry_follow_mode(1, NULL), RC_FOLLOW_CURRENT);
    assert_int_equal(rc_registry_follow_mode(1, "current"), RC_FOLLOW_CURRENT);
    assert_int_equal(rc_registry_follow_mode(1, "previous"), RC_FOLLOW_PREVIOUS);
    assert_int_equal(rc_registry_follow_mode(1, "d:2026-01-01"), RC_FOLLOW_NONE);
}

static void thousands_of_boards_stay_findable_and_removable(void **state)
{
    (void)state;
    enum { N = 5000 };
    struct rc_registry r;
    struct rc_reg_board *b = calloc(N, sizeof *b);
    struct rc_reg_view *v = calloc(N, sizeof *v);
    char name[32];
    assert_non_null(b);
    assert_non_null(v);
    rc_registry_init(&r, KEY);
    struct rc_view t = top(10);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "match:%d", i);
        assert_int_equal(rc_registry_board_add(&r, &b[i], name, ""), 0);
        assert_int_equal(rc_registry_view_add(&r, &v[i], &b[i], &t, RC_FOLLOW_NONE), 0);
    }
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "match:%d", i);
        assert_ptr_equal(rc_registry_board_find(&r, name, ""), &b[i]);
        assert_ptr_equal(rc_registry_view_find(&r, &b[i], &t, RC_FOLLOW_NONE), &v[i]);
    }
    for (int i = 0; i < N; i += 2) {
        rc_registry_view_remove(&r, &v[i]);
        rc_registry_board_remove(&r, &b[i]);
    }
    assert_int_equal(rc_registry_nboards(&r), N / 2);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "match:%d", i);
        assert_ptr_equal(rc_registry_board_find(&r, name, ""), i % 2 ? &b[i] : NULL);
    }
    rc_registry_free(&r);
    free(b);
    free(v);
}

static void view_rows_are_what_its_snapshot_reads(void **state)
{
    (void)state;
    struct rc_view top = {.kind = RC_VIEW_TOP, .limit = 1000};
    struct rc_view page = {.kind = RC_VIEW_PAGE, .offset = 40000, .limit = 50};
    struct rc_view around = {.kind = RC_VIEW_AROUND, .radius = 5};
    struct rc_view feed = {.kind = RC_VIEW_FEED};
    assert_int_equal(rc_registry_view_rows(&top), 1000);
    assert_int_equal(rc_registry_view_rows(&page), 50);
    assert_int_equal(rc_registry_view_rows(&around), 11);
    assert_int_equal(rc_registry_view_rows(&feed), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(view_rows_are_what_its_snapshot_reads),
        cmocka_unit_test(same_window_on_same_board_is_one_view),
        cmocka_unit_test(a_top_ignores_any_offset_it_was_given),
        cmocka_unit_test(shared_places_make_another_view_of_the_same_window),
        cmocka_unit_test(different_window_follow_mode_or_board_is_another_view),
        cmocka_unit_test(boards_are_found_by_name_and_period),
        cmocka_unit_test(names_that_do_not_fit_are_refused),
        cmocka_unit_test(removed_view_is_not_found_and_its_id_is_not_reused),
        cmocka_unit_test(a_moved_view_keeps_its_id_and_is_found_on_its_new_board),
        cmocka_unit_test(board_lists_its_views_newest_first_and_unlinks_from_the_middle),
        cmocka_unit_test(another_max_rate_is_another_view),
        cmocka_unit_test(follow_mode_follows_the_requested_period),
        cmocka_unit_test(thousands_of_boards_stay_findable_and_removable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
