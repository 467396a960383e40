/* test_instances.c - the index of a template's boards (core/rc_instances):
 * its key in the template's own slot, the entries a write records, entries
 * read back (and the malformed ones refused), and the bounded seen set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rc_conf.h"
#include "rc_err.h"
#include "rc_instances.h"

static const char CONF[] = "[board match:*]\nperiod = day\nutc_offset = +08:00\nkeep = 3\n"
                           "[board hot:*]\nops = incr\ndecay = buckets\nbucket_span = 1h\nwindow = 4h\n"
                           "[board fade:*]\ndecay = scale\nscale_factor = 0.5\nscale_every = 1h\n"
                           "[board all:*]\ntiebreak = none\n"
                           "[board daily]\nperiod = day\n";

static struct rc_conf *load(void)
{
    struct rc_conf *c = malloc(sizeof *c);
    struct rc_error err = {0, ""};
    assert_non_null(c);
    if (rc_conf_parse("t.conf", CONF, sizeof CONF - 1, c, &err) != 0)
        fail_msg("%s", err.msg);
    return c;
}

static const struct rc_board *board(const struct rc_conf *c, const char *name)
{
    for (size_t i = 0; i < c->nboards; i++)
        if (strcmp(c->boards[i].name, name) == 0)
            return &c->boards[i];
    fail_msg("no board %s", name);
    return NULL;
}

static void test_only_templates_with_a_period_or_decay_are_indexed(void **state)
{
    (void)state;
    struct rc_conf *c = load();
    char key[128];
    assert_int_equal(rc_instances_indexed(board(c, "match:*")), 1);
    assert_int_equal(rc_instances_indexed(board(c, "hot:*")), 1);
    assert_int_equal(rc_instances_indexed(board(c, "fade:*")), 1);
    assert_int_equal(rc_instances_indexed(board(c, "all:*")), 0);
    assert_int_equal(rc_instances_indexed(board(c, "daily")), 0);
    assert_int_equal(rc_instances_index_key(key, sizeof key, board(c, "all:*")), RC_E_INTERNAL);
    free(c);
}

static void test_the_index_key_is_tagged_with_the_template_name(void **state)
{
    (void)state;
    struct rc_conf *c = load();
    char key[128];
    assert_int_equal(rc_instances_index_key(key, sizeof key, board(c, "match:*")), 0);
    assert_string_equal(key, "rc:{match:*}:periods");
    assert_int_equal(rc_instances_index_key(key, sizeof key, board(c, "hot:*")), 0);
    assert_string_equal(key, "rc:{hot:*}:boards");
    assert_int_equal(rc_instances_index_key(key, 10, board(c, "hot:*")), RC_E_INTERNAL);
    free(c);
}

static void test_a_periodic_entry_is_board_and_period_scored_by_the_period_end(void **state)
{
    (void)state;
    struct rc_conf *c = load();
    const struct rc_board *t = board(c, "match:*");
    struct rc_period p;
    char m[RC_INST_ENTRY_MAX];
    int64_t score = 0;
    /* 2026-11-22T10:00Z is 18:00 on 2026-11-22 at +08:00 */
    assert_int_equal(rc_period_at(&t->period, 1795341600000LL, &p), 0);
    assert_int_equal(rc_instances_entry(t, "match:1842", &p, 1795341600000LL, m, sizeof m, &score), 0);
    assert_string_equal(m, "match:1842|2026-11-22");
    assert_int_equal(score, p.end_ms);
    /* a name the template does not cover, or no period */
    assert_int_equal(rc_instances_entry(t, "other:1", &p, 0, m, sizeof m, &score), RC_E_INTERNAL);
    assert_int_equal(rc_instances_entry(t, "match:", &p, 0, m, sizeof m, &score), RC_E_INTERNAL);
    assert_int_equal(rc_instances_entry(t, "match:1", NULL, 0, m, sizeof m, &score), RC_E_INTERNAL);
    free(c);
}

static void test_a_bucket_entry_is_scored_by_the_end_of_the_bucket_written(void **state)
{
    (void)state;
    struct rc_conf *c = load();
    char m[RC_INST_ENTRY_MAX];
    int64_t score = 0;
    assert_int_equal(rc_instances_entry(board(c, "hot:*"), "hot:a", NULL, 3600000LL * 5 + 17, m, sizeof m, &score), 0);
    assert_string_equal(m, "hot:a");
    assert_int_equal(score, 3600000LL * 6);
    assert_int_equal(rc_instances_entry(board(c, "fade:*"), "fade:x", NULL, 123456, m, sizeof m, &score), 0);
    assert_string_equal(m, "fade:x");
    assert_int_equal(score, 0);
    free(c);
}

static void test_an_entry_reads_back_into_board_and_period(void **state)
{
    (void)state;
    struct rc_conf *c = load();
    const struct rc_board *t = board(c, "match:*");
    char name[RC_BOARD_MAX + 1];
    struct rc_period p;
    const char *m = "match:1842|2026-11-22";
    assert_int_equal(rc_instances_entry_parse(t, m, strlen(m), name, &p), 0);
    assert_string_equal(name, "match:1842");
    assert_string_equal(p.id, "2026-11-22");
    /* at +08:00 the day starts at 16:00Z the day before */
    assert_int_equal(p.start_ms, 1795276800000LL); /* 2026-11-21T16:00Z */
    free(c);
}

static void test_malformed_entries_are_refused(void **state)
{
    (void)state;
    struct rc_conf *c = load();
    const struct rc_board *t = board(c, "match:*");
    char name[RC_BOARD_MAX + 1];
    struct rc_period p;
    const char *bad[] = {"match:1842", "match:1842|", "|2026-11-22", "other:1|2026-11-22", "match:|2026-11-22",
                         "match:1|2026-11-31", "match:1|2026-W47", "match:1 x|2026-11-22",
                         "match:1|2026-11-22|x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(rc_instances_entry_parse(t, bad[i], strlen(bad[i]), name, &p), RC_E_BAD_REQUEST);
    /* an embedded NUL in the period */
    assert_int_equal(rc_instances_entry_parse(t, "match:1|2026\0-11", 16, name, &p), RC_E_BAD_REQUEST);
    free(c);
}

static void test_the_seen_set_remembers_pairs_and_stays_bounded(void **state)
{
    (void)state;
    struct rc_inst_seen *s = malloc(sizeof *s);
    assert_non_null(s);
    rc_instances_seen_init(s, (struct rc_hash_key){1, 2});
    assert_int_equal(rc_instances_seen_has(s, "match:1|2026-11-22", 5), 0);
    rc_instances_seen_add(s, "match:1|2026-11-22", 5);
    assert_int_equal(rc_instances_seen_has(s, "match:1|2026-11-22", 5), 1);
    assert_int_equal(rc_instances_seen_has(s, "match:1|2026-11-22", 6), 0);
    assert_int_equal(rc_instances_seen_has(s, "match:2|2026-11-22", 5), 0);
    rc_instances_seen_add(s, "match:1|2026-11-22", 5);
    assert_int_equal(s->count, 1);
    /* many more than it holds: never full, the newest always there */
    char m[64];
    for (int i = 0; i < 5 * RC_INST_SEEN_SLOTS; i++) {
        snprintf(m, sizeof m, "hot:%d", i);
        rc_instances_seen_add(s, m, i);
        assert_int_equal(rc_instances_seen_has(s, m, i), 1);
        assert_true(s->count <= RC_INST_SEEN_SLOTS / 4 * 3);
    }
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_only_templates_with_a_period_or_decay_are_indexed),
        cmocka_unit_test(test_the_index_key_is_tagged_with_the_template_name),
        cmocka_unit_test(test_a_periodic_entry_is_board_and_period_scored_by_the_period_end),
        cmocka_unit_test(test_a_bucket_entry_is_scored_by_the_end_of_the_bucket_written),
        cmocka_unit_test(test_an_entry_reads_back_into_board_and_period),
        cmocka_unit_test(test_malformed_entries_are_refused),
        cmocka_unit_test(test_the_seen_set_remembers_pairs_and_stays_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
