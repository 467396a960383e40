/* test_freeze.c - core/rc_freeze: the freeze state's order, the control
 * events of lua/freeze.lua, and that script's call and reply. No Redis
 * (tests/e2e/freeze.test.js runs the script). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rc_err.h"
#include "rc_freeze.h"
#include "rc_slot.h"

#define EV(s) s, strlen(s)

static void events_parse(void **state)
{
    (void)state;
    struct rc_freeze_event e;
    assert_true(rc_freeze_is_event(EV("{\"ctl\":\"freeze\",\"v\":1,\"frozen\":3,\"shown\":3}")));
    assert_false(rc_freeze_is_event(EV("{\"seq\":4,\"member\":\"a\"}")));
    assert_int_equal(rc_freeze_event_parse(EV("{\"ctl\":\"freeze\",\"v\":1,\"frozen\":3,\"shown\":3}"), &e), 0);
    assert_int_equal(e.kind, RC_CTL_FREEZE);
    assert_int_equal(e.state.frozen, 1);
    assert_int_equal(e.state.seq, 3);
    assert_int_equal(e.state.shown, 3);
    assert_int_equal(e.state.version, 1);
    assert_int_equal(
        rc_freeze_event_parse(EV("{\"ctl\":\"reveal\",\"v\":2,\"frozen\":3,\"from\":3,\"shown\":6,\"skipped\":2}"), &e), 0);
    assert_int_equal(e.kind, RC_CTL_REVEAL);
    assert_int_equal(e.from, 3);
    assert_int_equal(e.to, 6);
    assert_int_equal(e.skipped, 2);
    assert_int_equal(e.state.shown, 6);
    assert_int_equal(rc_freeze_event_parse(EV("{\"ctl\":\"unfreeze\",\"v\":3,\"from\":6,\"shown\":9}"), &e), 0);
    assert_int_equal(e.kind, RC_CTL_UNFREEZE);
    assert_int_equal(e.state.frozen, 0);
    assert_int_equal(e.state.version, 3);
    assert_int_equal(e.to, 9);
}

static void events_refused(void **state)
{
    (void)state;
    struct rc_freeze_event e;
    const char *bad[] = {
        "{\"ctl\":\"melt\",\"v\":1}",                                          /* unknown */
        "{\"ctl\":\"freeze\",\"frozen\":3,\"shown\":3}",                          /* no version */
        "{\"ctl\":\"freeze\",\"v\":0,\"frozen\":3,\"shown\":3}",                  /* version 0 */
        "{\"ctl\":\"freeze\",\"v\":1,\"frozen\":3,\"shown\":4}",                  /* shown != seq at a freeze */
        "{\"ctl\":\"freeze\",\"v\":1,\"frozen\":-3,\"shown\":-3}",                /* negative */
        "{\"ctl\":\"freeze\",\"v\":1.5,\"frozen\":3,\"shown\":3}",                /* fractional */
        "{\"ctl\":\"reveal\",\"v\":2,\"frozen\":3,\"from\":5,\"shown\":4,\"skipped\":0}", /* backwards */
        "{\"ctl\":\"reveal\",\"v\":2,\"frozen\":3,\"from\":2,\"shown\":4,\"skipped\":0}", /* from before the freeze */
        "{\"ctl\":\"reveal\",\"v\":2,\"frozen\":3,\"from\":3,\"shown\":4}",       /* no skipped */
        "{\"ctl\":\"unfreeze\",\"v\":3,\"from\":6,\"shown\":5}",                  /* backwards */
        "{\"ctl\":\"freeze\",\"v\":1,\"frozen\":3,\"shown\":3",                   /* cut short */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(rc_freeze_event_parse(bad[i], strlen(bad[i]), &e), RC_E_BAD_REQUEST);
        assert_int_equal(e.state.version, 0);
    }
    assert_int_equal(rc_freeze_event_parse(NULL, 0, &e), RC_E_BAD_REQUEST);
}

static void newer_and_same(void **state)
{
    (void)state;
    struct rc_freeze a = {1, 3, 3, 1}, b = {1, 3, 5, 2}, c = {0, 0, 0, 3}, d = {1, 3, 3, 4};
    assert_true(rc_freeze_newer(&a, &b));
    assert_false(rc_freeze_newer(&b, &a));
    assert_false(rc_freeze_newer(&a, &a));
    assert_false(rc_freeze_same(&a, &b)); /* shown moved */
    assert_false(rc_freeze_same(&b, &c));
    assert_true(rc_freeze_same(&a, &d));  /* the same freeze again (versions differ) */
    struct rc_freeze e = {0, 0, 0, 9};
    assert_true(rc_freeze_same(&c, &e));  /* live is live */
    assert_int_equal(rc_freeze_pending(&b, 9), 4);
    assert_int_equal(rc_freeze_pending(&c, 9), 0);
}

static void args_build(void **state)
{
    (void)state;
    struct rc_freeze_args a;
    assert_int_equal(rc_freeze_args_build("match:1", "", RC_FREEZE_DO_REVEAL, 3, 0, &a), 0);
    assert_string_equal(a.words[0], "rc:{match:1|}:z");
    assert_string_equal(a.words[5], "rc:{match:1|}:frz");
    assert_string_equal(a.words[6], "rc:{match:1|}:fz");
    assert_string_equal(a.words[7], "reveal");
    assert_string_equal(a.words[8], "3");
    assert_string_equal(a.words[9], "PUBLISH");
    for (size_t i = 0; i < RC_FREEZE_NKEYS; i++) /* one slot (a cluster takes the script) */
        assert_int_equal(rc_slot_of_key(a.words[i], a.lens[i]), rc_slot_of_key(a.words[0], a.lens[0]));
    assert_int_equal(rc_freeze_args_build("b", "2026-11-26", RC_FREEZE_DO_REVEAL, RC_FREEZE_STEPS_ALL, 1, &a), 0);
    assert_string_equal(a.words[8], "all");
    assert_string_equal(a.words[9], "SPUBLISH");
    assert_int_equal(rc_freeze_args_build("b", "", RC_FREEZE_DO_FREEZE, 0, 0, &a), 0);
    assert_string_equal(a.words[7], "freeze");
    assert_int_equal(rc_freeze_args_build("b", "", RC_FREEZE_DO_REVEAL, 0, 0, &a), RC_E_BAD_REQUEST);
    assert_int_equal(rc_freeze_args_build("b", "", RC_FREEZE_DO_REVEAL, -5, 0, &a), RC_E_BAD_REQUEST);
    for (size_t i = 0; i < RC_FREEZE_NKEYS + RC_FREEZE_NARGV; i++)
        assert_int_equal(a.lens[i], strlen(a.words[i]));
}

#define S(x) {0, 0, x}
#define I(x) {1, x, NULL}

static void result_parse(void **state)
{
    (void)state;
    struct rc_freeze_result r;
    struct rc_reply_item frozen[] = {S("ok"), I(1), I(3), I(5), I(9), I(4), I(2), I(1)};
    assert_int_equal(rc_freeze_result_parse(frozen, 8, &r), 0);
    assert_int_equal(r.state.frozen, 1);
    assert_int_equal(r.state.seq, 3);
    assert_int_equal(r.state.shown, 5);
    assert_int_equal(r.seq, 9);
    assert_int_equal(r.state.version, 4);
    assert_int_equal(r.skipped, 2);
    assert_int_equal(r.changed, 1);
    struct rc_reply_item live[] = {S("ok"), I(0), I(0), I(9), I(9), I(5), I(0), I(1)};
    assert_int_equal(rc_freeze_result_parse(live, 8, &r), 0);
    assert_int_equal(r.state.frozen, 0);
    assert_int_equal(r.state.shown, 0);
    struct {
        size_t at;
        struct rc_reply_item item;
    } swaps[] = {
        {0, S("no")}, {1, I(2)}, {2, S("3")}, {3, I(2)} /* shown before the freeze */, {3, I(10)} /* past live */,
        {4, I(-1)}, {5, S("4")}, {6, I(-1)}, {7, I(2)},
    };
    for (size_t i = 0; i < sizeof swaps / sizeof *swaps; i++) {
        struct rc_reply_item x[8];
        memcpy(x, frozen, sizeof x);
        x[swaps[i].at] = swaps[i].item;
        assert_int_equal(rc_freeze_result_parse(x, 8, &r), RC_E_INTERNAL);
    }
    assert_int_equal(rc_freeze_result_parse(frozen, 7, &r), RC_E_INTERNAL);
    struct rc_reply_item bad_live[] = {S("ok"), I(0), I(3), I(9), I(9), I(5), I(0), I(1)};
    assert_int_equal(rc_freeze_result_parse(bad_live, 8, &r), RC_E_INTERNAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(events_parse),  cmocka_unit_test(events_refused), cmocka_unit_test(newer_and_same),
        cmocka_unit_test(args_build),    cmocka_unit_test(result_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
