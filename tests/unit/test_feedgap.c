/* test_feedgap.c - a feed viewer's step for each event and the fill of a gap
 * (core/rc_feedgap): never a skipped seq without a reset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rc_feedgap.h"

static void the_next_seq_goes_out_and_older_ones_are_skipped(void **state)
{
    (void)state;
    assert_int_equal(rc_feedgap_step(4, "e1", 5, "", 0), RC_FEEDGAP_DELIVER);
    assert_int_equal(rc_feedgap_step(4, "e1", 4, "", 0), RC_FEEDGAP_SKIP);
    assert_int_equal(rc_feedgap_step(4, "e1", 1, "", 0), RC_FEEDGAP_SKIP);
    assert_int_equal(rc_feedgap_step(0, "", 1, "", 0), RC_FEEDGAP_DELIVER);
}

static void a_skipped_seq_is_filled_before_the_later_event(void **state)
{
    (void)state;
    assert_int_equal(rc_feedgap_step(4, "e1", 6, "", 0), RC_FEEDGAP_FILL);
    assert_int_equal(rc_feedgap_step(4, "e1", 100, "", 0), RC_FEEDGAP_FILL);
    /* the first event of the history was lost: event 2 names no epoch */
    assert_int_equal(rc_feedgap_step(0, "", 2, "", 0), RC_FEEDGAP_FILL);
}

static void a_history_that_begins_is_followed_or_starts_the_viewer_over(void **state)
{
    (void)state;
    assert_int_equal(rc_feedgap_step(0, "", 1, "e1", 0), RC_FEEDGAP_BEGIN);
    assert_int_equal(rc_feedgap_step(0, "", 3, "e1", 0), RC_FEEDGAP_OVER);
    assert_int_equal(rc_feedgap_step(9, "e1", 1, "e2", 0), RC_FEEDGAP_OVER);  /* older seq, newer history */
    assert_int_equal(rc_feedgap_step(9, "e1", 10, "e2", 0), RC_FEEDGAP_OVER);
    assert_int_equal(rc_feedgap_step(9, "e1", 10, "e2", 1), RC_FEEDGAP_DELIVER); /* a reset event says it */
    assert_int_equal(rc_feedgap_step(9, "e1", 10, "e1", 0), RC_FEEDGAP_DELIVER); /* its own epoch: not newer */
}

static void a_gap_the_log_holds_is_replayed_without_a_snapshot(void **state)
{
    (void)state;
    assert_int_equal(rc_feedgap_fill(4, "e1", 6, "e1", 6, 1, "e1"), RC_FEEDGAP_REPLAY);
    assert_int_equal(rc_feedgap_fill(4, "e1", 6, "e1", 2, 5, ""), RC_FEEDGAP_REPLAY);
    assert_int_equal(rc_feedgap_fill(4, "e1", 4, "e1", 0, 0, ""), RC_FEEDGAP_REPLAY); /* nothing was missed */
    /* the first event, lost: the log begins the history after the cursor */
    assert_int_equal(rc_feedgap_fill(0, "", 2, "e1", 2, 1, "e1"), RC_FEEDGAP_REPLAY);
}

static void a_gap_the_log_lost_or_another_history_resets(void **state)
{
    (void)state;
    assert_int_equal(rc_feedgap_fill(4, "e1", 300, "e1", 256, 45, ""), RC_FEEDGAP_RESET); /* trimmed */
    assert_int_equal(rc_feedgap_fill(4, "e1", 6, "e1", 0, 0, ""), RC_FEEDGAP_RESET);      /* log empty */
    assert_int_equal(rc_feedgap_fill(4, "e1", 6, "e2", 6, 1, "e2"), RC_FEEDGAP_RESET);    /* started over */
    assert_int_equal(rc_feedgap_fill(0, "", 9, "e1", 3, 7, ""), RC_FEEDGAP_RESET);        /* began long ago */
    assert_int_equal(rc_feedgap_fill(0, "", 2, "e1", 2, 1, "e2"), RC_FEEDGAP_RESET);
}

static void a_quiet_board_is_checked_once_after_its_last_event(void **state)
{
    (void)state;
    assert_false(rc_feedgap_quiet_due(1, 5000000, 5400000, 1000000)); /* still busy */
    assert_true(rc_feedgap_quiet_due(1, 5000000, 6000000, 1000000));
    assert_false(rc_feedgap_quiet_due(0, 5000000, 9000000, 1000000)); /* checked already */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_next_seq_goes_out_and_older_ones_are_skipped),
        cmocka_unit_test(a_skipped_seq_is_filled_before_the_later_event),
        cmocka_unit_test(a_history_that_begins_is_followed_or_starts_the_viewer_over),
        cmocka_unit_test(a_gap_the_log_holds_is_replayed_without_a_snapshot),
        cmocka_unit_test(a_gap_the_log_lost_or_another_history_resets),
        cmocka_unit_test(a_quiet_board_is_checked_once_after_its_last_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
