/* test_event.c - rc_event_parse reads the change events lua/write.lua and
 * lua/admin.lua publish: every field of a write, a removal (c null), a
 * reset (no member), and refuses what the fan-out could not use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rc_err.h"
#include "rc_event.h"

static int parse(const char *text, struct rc_event *ev)
{
    return rc_event_parse(text, strlen(text), ev);
}

static void write_event_gives_every_field(void **state)
{
    (void)state;
    struct rc_event ev;
    assert_int_equal(parse("{\"seq\":42,\"member\":\"alice\",\"op\":\"incr\",\"score\":15,\"old_score\":10,"
                           "\"c\":15,\"old_c\":10,\"rank\":2,\"old_rank\":3,\"at\":1700000000123}",
                           &ev),
                     0);
    assert_int_equal(ev.seq, 42);
    assert_string_equal(ev.member, "alice");
    assert_string_equal(ev.op, "incr");
    assert_true(ev.has_new);
    assert_true(ev.c == 15.0);
    assert_true(ev.has_old);
    assert_true(ev.old_c == 10.0);
    assert_int_equal(ev.rank, 2);
    assert_int_equal(ev.old_rank, 3);
    assert_int_equal(ev.at_ms, 1700000000123);
}

static void new_member_has_no_old_score_and_old_rank_zero(void **state)
{
    (void)state;
    struct rc_event ev;
    assert_int_equal(parse("{\"seq\":1,\"member\":\"bob\",\"op\":\"set\",\"score\":5,\"old_score\":null,\"c\":5,"
                           "\"old_c\":null,\"rank\":1,\"old_rank\":null,\"at\":7}",
                           &ev),
                     0);
    assert_true(ev.has_new);
    assert_false(ev.has_old);
    assert_int_equal(ev.old_rank, 0);
}

static void removal_has_no_new_score(void **state)
{
    (void)state;
    struct rc_event ev;
    assert_int_equal(parse("{\"seq\":9,\"member\":\"bob\",\"op\":\"remove\",\"c\":null,\"old_c\":5,\"rank\":null,"
                           "\"old_rank\":1,\"at\":8}",
                           &ev),
                     0);
    assert_false(ev.has_new);
    assert_true(ev.has_old);
    assert_int_equal(ev.rank, 0);
}

static void reset_needs_no_member_and_leaves_it_empty(void **state)
{
    (void)state;
    struct rc_event ev;
    assert_int_equal(parse("{\"seq\":3,\"op\":\"reset\",\"at\":9}", &ev), 0);
    assert_string_equal(ev.op, "reset");
    assert_string_equal(ev.member, "");
    assert_int_equal(ev.seq, 3);
}

static void an_event_that_begins_a_history_names_its_epoch(void **state)
{
    (void)state;
    struct rc_event ev;
    assert_int_equal(parse("{\"seq\":4,\"op\":\"reset\",\"at\":9,\"epoch\":\"9a8b7c6d5e4f3a2b\"}", &ev), 0);
    assert_string_equal(ev.epoch, "9a8b7c6d5e4f3a2b");
    assert_int_equal(parse("{\"seq\":4,\"member\":\"a\",\"op\":\"incr\",\"c\":1,\"at\":9}", &ev), 0);
    assert_string_equal(ev.epoch, "");
    /* an epoch a script never writes: the event is refused */
    assert_int_equal(parse("{\"seq\":4,\"op\":\"reset\",\"at\":9,\"epoch\":5}", &ev), RC_E_BAD_REQUEST);
    assert_int_equal(parse("{\"seq\":4,\"op\":\"reset\",\"at\":9,\"epoch\":\"a b\"}", &ev), RC_E_BAD_REQUEST);
    assert_int_equal(ev.seq, 0);
}

static void seq_at_and_member_are_required(void **state)
{
    (void)state;
    struct rc_event ev;
    assert_int_equal(parse("{\"member\":\"a\",\"op\":\"incr\",\"c\":1,\"at\":1}", &ev), RC_E_BAD_REQUEST);
    assert_int_equal(parse("{\"seq\":1,\"member\":\"a\",\"op\":\"incr\",\"c\":1}", &ev), RC_E_BAD_REQUEST);
    assert_int_equal(parse("{\"seq\":1,\"op\":\"incr\",\"c\":1,\"at\":1}", &ev), RC_E_BAD_REQUEST);
    assert_int_equal(parse("{\"seq\":\"1\",\"member\":\"a\",\"op\":\"incr\",\"at\":1}", &ev), RC_E_BAD_REQUEST);
}

static void a_refused_event_is_zeroed(void **state)
{
    (void)state;
    struct rc_event ev;
    memset(&ev, 0x5a, sizeof ev);
    assert_int_equal(parse("{\"op\":\"incr\",\"member\":\"a\"}", &ev), RC_E_BAD_REQUEST);
    assert_int_equal(ev.seq, 0);
    assert_string_equal(ev.op, "");
    assert_string_equal(ev.member, "");
}

static void member_longer_than_the_limit_is_refused(void **state)
{
    (void)state;
    struct rc_event ev;
    char text[512], member[RC_MEMBER_MAX + 2];
    memset(member, 'm', sizeof member - 1);
    member[sizeof member - 1] = '\0';
    snprintf(text, sizeof text, "{\"seq\":1,\"member\":\"%s\",\"op\":\"incr\",\"c\":1,\"at\":1}", member);
    assert_int_equal(parse(text, &ev), RC_E_BAD_REQUEST);
    member[RC_MEMBER_MAX] = '\0'; /* exactly the limit: fine */
    snprintf(text, sizeof text, "{\"seq\":1,\"member\":\"%s\",\"op\":\"incr\",\"c\":1,\"at\":1}", member);
    assert_int_equal(parse(text, &ev), 0);
    assert_int_equal(strlen(ev.member), RC_MEMBER_MAX);
}

static void unknown_long_op_is_kept_empty_not_truncated(void **state)
{
    (void)state;
    struct rc_event ev;
    assert_int_equal(parse("{\"seq\":1,\"member\":\"a\",\"op\":\"averyveryverylongop\",\"c\":1,\"at\":1}", &ev), 0);
    assert_string_equal(ev.op, "");
}

static void text_is_read_only_up_to_len(void **state)
{
    (void)state;
    struct rc_event ev;
    const char *text = "{\"seq\":5,\"member\":\"a\",\"op\":\"incr\",\"c\":1,\"at\":1}garbage";
    assert_int_equal(rc_event_parse(text, strlen(text) - strlen("garbage"), &ev), 0);
    assert_int_equal(ev.seq, 5);
    assert_int_equal(rc_event_parse("{\"seq\":5", 8, &ev), RC_E_BAD_REQUEST);
    assert_int_equal(rc_event_parse("", 0, &ev), RC_E_BAD_REQUEST);
    assert_int_equal(rc_event_parse("[1,2]", 5, &ev), RC_E_BAD_REQUEST);
}

static void a_team_message_is_told_from_change_events_and_parsed(void **state)
{
    (void)state;
    char m[RC_MEMBER_MAX + 1], t[RC_MEMBER_MAX + 1];
    uint64_t v = 9;
    const char *in = "{\"team_of\":\"user:1\",\"team\":\"red\"}";
    assert_true(rc_event_team_is(in, strlen(in)));
    assert_int_equal(rc_event_team_parse(in, strlen(in), m, t, &v), 0);
    assert_int_equal(v, 0); /* (a script before versions) */
    assert_string_equal(m, "user:1");
    assert_string_equal(t, "red");
    const char *out = "{\"team_of\":\"user:1\",\"team\":null,\"v\":42}";
    assert_int_equal(rc_event_team_parse(out, strlen(out), m, t, &v), 0);
    assert_string_equal(t, "");
    assert_int_equal(v, 42);
    const char *badv[] = {"{\"team_of\":\"a\",\"team\":null,\"v\":0}", "{\"team_of\":\"a\",\"team\":null,\"v\":1.5}",
                          "{\"team_of\":\"a\",\"team\":null,\"v\":\"3\"}", "{\"team_of\":\"a\",\"team\":null,\"v\":-2}"};
    for (size_t i = 0; i < sizeof badv / sizeof *badv; i++)
        assert_int_equal(rc_event_team_parse(badv[i], strlen(badv[i]), m, t, &v), RC_E_BAD_REQUEST);
    const char *bad = "{\"team_of\":\"no space\",\"team\":null}";
    assert_int_equal(rc_event_team_parse(bad, strlen(bad), m, t, &v), RC_E_BAD_REQUEST);
    const char *ev = "{\"seq\":1,\"op\":\"incr\",\"member\":\"a\",\"at\":1}";
    assert_false(rc_event_team_is(ev, strlen(ev)));
}

static void a_team_message_is_applied_at_the_next_version_only(void **state)
{
    (void)state;
    /* held 5 (the last read saw 3, messages 4 and 5 applied since) */
    assert_int_equal(rc_event_team_judge(5, 3, 6), RC_TEAMV_APPLY);
    assert_int_equal(rc_event_team_judge(5, 3, 0), RC_TEAMV_APPLY); /* (no version) */
    assert_int_equal(rc_event_team_judge(5, 3, 3), RC_TEAMV_KNOWN);
    assert_int_equal(rc_event_team_judge(5, 3, 1), RC_TEAMV_KNOWN);
    /* a version applied from a message again: a woken ex-primary's */
    assert_int_equal(rc_event_team_judge(5, 3, 4), RC_TEAMV_READ);
    assert_int_equal(rc_event_team_judge(5, 3, 5), RC_TEAMV_READ);
    /* a lost message */
    assert_int_equal(rc_event_team_judge(5, 3, 7), RC_TEAMV_READ);
    /* right after a read of version 5 */
    assert_int_equal(rc_event_team_judge(5, 5, 5), RC_TEAMV_KNOWN);
    assert_int_equal(rc_event_team_judge(5, 5, 6), RC_TEAMV_APPLY);
    /* a membership never changed through rankcast: version 0 */
    assert_int_equal(rc_event_team_judge(0, 0, 1), RC_TEAMV_APPLY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(write_event_gives_every_field),
        cmocka_unit_test(an_event_that_begins_a_history_names_its_epoch),
        cmocka_unit_test(new_member_has_no_old_score_and_old_rank_zero),
        cmocka_unit_test(removal_has_no_new_score),
        cmocka_unit_test(reset_needs_no_member_and_leaves_it_empty),
        cmocka_unit_test(seq_at_and_member_are_required),
        cmocka_unit_test(a_refused_event_is_zeroed),
        cmocka_unit_test(member_longer_than_the_limit_is_refused),
        cmocka_unit_test(unknown_long_op_is_kept_empty_not_truncated),
        cmocka_unit_test(text_is_read_only_up_to_len),
        cmocka_unit_test(a_team_message_is_told_from_change_events_and_parsed),
        cmocka_unit_test(a_team_message_is_applied_at_the_next_version_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
