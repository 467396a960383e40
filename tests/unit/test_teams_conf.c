/* test_teams_conf.c - `teams = T` (docs/teams.md): the team board a source
 * declares, every refusal with its line, and the key names of a team board
 * (in its source's hash tag) read back by the fan-out. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_conf.h"
#include "rc_err.h"
#include "rc_keys.h"
#include "rc_slot.h"

static int parse(const char *text, struct rc_conf *c, struct rc_error *err)
{
    memset(err, 0, sizeof *err);
    return rc_conf_parse("t.conf", text, strlen(text), c, err);
}

static void test_a_source_declares_its_team_board(void **state)
{
    (void)state;
    struct rc_conf *c = malloc(sizeof *c);
    struct rc_error err;
    assert_int_equal(parse("[board p]\norder = asc\ntiebreak = none\npoints_max = 5000\nteams = s\n", c, &err), 0);
    assert_int_equal(c->nboards, 2);
    const struct rc_board *s = rc_conf_board_find(c, "s");
    assert_non_null(s);
    assert_string_equal(s->team_of, "p");
    assert_string_equal(s->teams, "");
    assert_int_equal(s->ops, 0);
    assert_int_equal(s->layout.order, RC_ORDER_ASC);
    assert_int_equal(s->layout.points_max, 5000);
    assert_int_equal(s->config_line, 5);
    free(c);
}

/* A periodic source (docs/teams.md, "Periods"): its team board has its period. */
static void test_a_periodic_source_gives_its_team_board_its_period(void **state)
{
    (void)state;
    struct rc_conf *c = malloc(sizeof *c);
    struct rc_error err;
    assert_int_equal(parse("[board p]\nperiod = day\ntiebreak = none\nteams = s\n", c, &err), 0);
    const struct rc_board *s = rc_conf_board_find(c, "s");
    assert_non_null(s);
    assert_string_equal(s->team_of, "p");
    assert_int_equal(s->period.kind, rc_conf_board_find(c, "p")->period.kind);
    assert_int_not_equal(s->period.kind, RC_PERIOD_NONE);
    free(c);
}

static void test_where_teams_cannot_work_is_refused_at_the_line_of_teams(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[board m:*]\ntiebreak = none\nteams = s\n", "t.conf:3: teams needs an exact board name"},
        {"[board p]\ndecay = scale\nscale_factor = 0.5\ntiebreak = none\nteams = s\n", "t.conf:5: teams cannot be combined with decay"},
        {"[board p]\nfields = a desc 8\ntiebreak = none\nteams = s\n", "t.conf:4: teams cannot be combined with fields"},
        {"[board p]\nshards = 2\ntiebreak = none\nteams = s\n", "t.conf:4: teams cannot be combined with shards"},
        {"[board p]\nwrite_mode = queued\ntiebreak = none\nteams = s\n", "t.conf:4: teams cannot be combined with write_mode = queued"},
        {"[board p]\ntiebreak = arrival\nteams = s\n", "t.conf:3: teams cannot be combined with tiebreak = arrival"},
        {"[board p]\ntiebreak = none\nteams = p\n", "t.conf:3: teams = p names the board itself"},
        {"[board s]\ntiebreak = none\n[board p]\ntiebreak = none\nteams = s\n", "t.conf:5: teams = s: board s is declared at line 1"},
        {"[board p]\ntiebreak = none\nteams = s\n[board s]\n", "t.conf:4: board 's' is the team board of line 3's teams"},
        {"[board p]\ntiebreak = none\nteams = a b\n", "t.conf:3: teams = 'a b' is not a board name"},
    };
    struct rc_conf *c = malloc(sizeof *c);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct rc_error err;
        assert_int_equal(parse(cases[i].text, c, &err), RC_E_BAD_REQUEST);
        if (strncmp(err.msg, cases[i].want, strlen(cases[i].want)) != 0)
            fail_msg("case %zu: got '%s', want '%s...'", i, err.msg, cases[i].want);
    }
    free(c);
}

static void test_team_board_keys_are_in_the_source_slot_and_read_back(void **state)
{
    (void)state;
    struct rc_conf *c = malloc(sizeof *c);
    struct rc_error err;
    assert_int_equal(parse("[board players]\ntiebreak = none\nteams = squads\n", c, &err), 0);
    char k[RC_KEY_MAX], src[RC_KEY_MAX], board[80], period[40];
    assert_int_equal(rc_keys_board(k, sizeof k, "squads", "", "ch", NULL), 0);
    assert_string_equal(k, "rc:{players|}{squads}:ch");
    assert_int_equal(rc_keys_board(src, sizeof src, "players", "", "z", NULL), 0);
    assert_int_equal(rc_slot_of_key(k, strlen(k)), rc_slot_of_key(src, strlen(src)));
    assert_int_equal(rc_keys_parse_tag(k, board, sizeof board, period, sizeof period), 0);
    assert_string_equal(board, "squads");
    assert_string_equal(period, "");
    assert_int_equal(rc_keys_parse_tag("__keyspace@0__:rc:{players|}:z", board, sizeof board, period, sizeof period), 0);
    assert_string_equal(board, "players");
    /* a new config without teams: names are plain again */
    assert_int_equal(parse("[board squads]\ntiebreak = none\n", c, &err), 0);
    assert_int_equal(rc_keys_board(k, sizeof k, "squads", "", "ch", NULL), 0);
    assert_string_equal(k, "rc:{squads|}:ch");
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_source_declares_its_team_board),
        cmocka_unit_test(test_a_periodic_source_gives_its_team_board_its_period),
        cmocka_unit_test(test_where_teams_cannot_work_is_refused_at_the_line_of_teams),
        cmocka_unit_test(test_team_board_keys_are_in_the_source_slot_and_read_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
