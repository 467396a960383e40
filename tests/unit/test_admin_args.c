/* test_admin_args.c - an admin request becomes the right KEYS/ARGV for
 * lua/admin.lua, and the script's reply decodes back; no Redis involved. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_admin_args.h"
#include "rc_slot.h"

static const char *text = "[board daily]\nperiod = day\n[board plain]\norder = asc\ntiebreak_horizon = 1d\ntiebreak_base = 2026-01-01T00:00:00Z\n";
static struct rc_conf *conf;

static int load(void **state)
{
    (void)state;
    struct rc_error err;
    conf = malloc(sizeof *conf);
    int rc = rc_conf_parse("t.conf", text, strlen(text), conf, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    return rc;
}

static int unload(void **state)
{
    (void)state;
    free(conf);
    return 0;
}

static void remove_with_block_names_the_member_and_period_keys(void **s)
{
    (void)s;
    struct rc_request r;
    struct rc_period p;
    struct rc_admin_args a;
    struct rc_error err = {0, ""};
    memset(&r, 0, sizeof r);
    r.op = RC_OP_REMOVE;
    r.block = 1;
    snprintf(r.board, sizeof r.board, "daily");
    snprintf(r.member, sizeof r.member, "alice");
    const struct rc_board *b = rc_conf_board_find(conf, "daily");
    assert_non_null(b);
    assert_int_equal(rc_period_select(&b->period, "", 1763769600000LL, &p), 0);
    assert_int_equal(rc_admin_args_build(b, &r, &p, 1763769600000LL, 0, 5000, 0, &a, &err), 0);
    assert_non_null(strstr(a.words[0], "daily"));
    assert_non_null(strstr(a.words[0], p.id));
    assert_non_null(strstr(a.words[4], p.id)); /* the period's own blocklist: one slot */
    assert_non_null(strstr(a.words[4], ":blocked"));
    assert_non_null(strstr(a.words[5], "alice"));
    assert_string_equal(a.words[11], "remove");
    assert_string_equal(a.words[12], "alice");
    assert_string_equal(a.words[13], "1");
    assert_string_equal(a.words[14], "1763769600000");
    assert_string_equal(a.words[15], "desc");
    assert_string_equal(a.words[21], "5000");
    assert_string_equal(a.words[22], "PUBLISH"); /* one Redis */
    assert_non_null(strstr(a.words[7], ":epoch")); /* the epoch key, in the same slot (below) */
    assert_non_null(strstr(a.words[7], p.id));
    assert_non_null(strstr(a.words[8], ":arr")); /* the arrival counters, same slot (below) */
    assert_non_null(strstr(a.words[8], p.id));
    assert_non_null(strstr(a.words[9], ":frz")); /* a reset ends a freeze: its keys, same slot */
    assert_non_null(strstr(a.words[10], ":fz"));
    assert_string_equal(a.words[23], ""); /* the caller's random epoch goes here */
    for (size_t i = 0; i < RC_ADMIN_NKEYS + RC_ADMIN_NARGV; i++)
        assert_int_equal(a.lens[i], strlen(a.words[i]));
    /* one cluster slot for every key (no CROSSSLOT on a cluster) */
    for (size_t i = 1; i < RC_ADMIN_NKEYS; i++)
        assert_int_equal(rc_slot_of_key(a.words[i], a.lens[i]), rc_slot_of_key(a.words[0], a.lens[0]));
}

static void reverse_names_the_req_keys_and_block_is_off(void **s)
{
    (void)s;
    struct rc_request r;
    struct rc_period p = {0};
    struct rc_admin_args a;
    struct rc_error err = {0, ""};
    memset(&r, 0, sizeof r);
    r.op = RC_OP_REVERSE;
    r.block = 1; /* only remove blocks */
    snprintf(r.board, sizeof r.board, "plain");
    snprintf(r.req, sizeof r.req, "w-42");
    const struct rc_board *b = rc_conf_board_find(conf, "plain");
    assert_int_equal(rc_admin_args_build(b, &r, &p, 1, 7, 0, 1, &a, &err), 0);
    assert_non_null(strstr(a.words[5], "w-42"));
    assert_non_null(strstr(a.words[6], "w-42:reversed"));
    assert_string_equal(a.words[22], "SPUBLISH"); /* a cluster: sharded pub/sub */
    assert_string_equal(a.words[11], "reverse");
    assert_string_equal(a.words[13], "0");
    assert_string_equal(a.words[15], "asc");
    assert_string_equal(a.words[16], "7");
}

static struct rc_reply_item str(const char *v) { return (struct rc_reply_item){0, 0, v}; }
static struct rc_reply_item num(long long v) { return (struct rc_reply_item){1, v, NULL}; }

static void replies_decode_by_status(void **s)
{
    (void)s;
    struct rc_admin_result res;
    struct rc_reply_item ok[6] = {str("ok"), num(12), str("bob"), str("150"), num(3), str("")};
    assert_int_equal(rc_admin_args_result_parse(ok, 6, &res), 0);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.duplicate, 0);
    assert_int_equal(res.seq, 12);
    assert_string_equal(res.member, "bob");
    assert_true(res.score == 150.0);
    assert_int_equal(res.rank, 3);
    struct rc_reply_item dup[6] = {str("duplicate"), num(12), str("bob"), str("150"), str(""), str("")};
    assert_int_equal(rc_admin_args_result_parse(dup, 6, &res), 0);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.duplicate, 1);
    assert_int_equal(res.rank, 0);
    struct rc_reply_item oor[6] = {str("out_of_range"), num(0), str(""), str(""), num(0), str("too big")};
    assert_int_equal(rc_admin_args_result_parse(oor, 6, &res), 0);
    assert_int_equal(res.status, RC_E_OUT_OF_RANGE);
    assert_string_equal(res.detail, "too big");
    struct rc_reply_item bad[6] = {str("bad_request"), num(0), str(""), str(""), num(0), num(1)};
    assert_int_equal(rc_admin_args_result_parse(bad, 6, &res), 0);
    assert_int_equal(res.status, RC_E_BAD_REQUEST);
    assert_string_equal(res.detail, "");
}

static void admin_call_built_as_a_shard_names_only_shard_keys(void **s)
{
    (void)s;
    struct rc_request r;
    struct rc_period p;
    struct rc_admin_args a;
    struct rc_error err = {0, ""};
    memset(&r, 0, sizeof r);
    r.op = RC_OP_REMOVE;
    snprintf(r.board, sizeof r.board, "plain");
    snprintf(r.member, sizeof r.member, "alice");
    const struct rc_board *b = rc_conf_board_find(conf, "plain");
    assert_int_equal(rc_period_select(&b->period, "", 1763769600000LL, &p), 0);
    assert_int_equal(rc_admin_args_build_as(b, &r, &p, 1763769600000LL, 0, 0, 1, "plain#5", &a, &err), 0);
    unsigned slot = rc_slot_of_key(a.words[0], a.lens[0]);
    for (unsigned i = 0; i < RC_ADMIN_NKEYS; i++) {
        if (strncmp(a.words[i], "rc:{plain#5|}:", 14) != 0)
            fail_msg("KEYS[%u] %s is not shard 5's", i + 1, a.words[i]);
        assert_int_equal(rc_slot_of_key(a.words[i], a.lens[i]), slot);
    }
    assert_string_equal(a.words[5], "rc:{plain#5|}:f:alice");
    assert_string_equal(a.words[12], "alice");
}

static void unknown_req_is_a_bad_request_marked_as_such(void **s)
{
    (void)s;
    struct rc_admin_result res;
    struct rc_reply_item none[6] = {str("unknown_req"), num(0), str(""), str(""), num(0), str("no write")};
    assert_int_equal(rc_admin_args_result_parse(none, 6, &res), 0);
    assert_int_equal(res.status, RC_E_BAD_REQUEST);
    assert_int_equal(res.unknown_req, 1);
    assert_string_equal(res.detail, "no write");
    struct rc_reply_item bad[6] = {str("bad_request"), num(0), str(""), str(""), num(0), str("x")};
    assert_int_equal(rc_admin_args_result_parse(bad, 6, &res), 0);
    assert_int_equal(res.unknown_req, 0);
}

static void odd_replies_are_internal_errors(void **s)
{
    (void)s;
    struct rc_admin_result res;
    struct rc_reply_item five[5] = {str("ok"), num(1), str(""), str(""), num(0)};
    assert_int_equal(rc_admin_args_result_parse(five, 5, &res), RC_E_INTERNAL);
    struct rc_reply_item seqstr[6] = {str("ok"), str("1"), str(""), str(""), num(0), str("")};
    assert_int_equal(rc_admin_args_result_parse(seqstr, 6, &res), RC_E_INTERNAL);
    struct rc_reply_item nostatus[6] = {num(0), num(1), str(""), str(""), num(0), str("")};
    assert_int_equal(rc_admin_args_result_parse(nostatus, 6, &res), RC_E_INTERNAL);
    assert_int_equal(rc_admin_args_result_parse(NULL, 0, &res), RC_E_INTERNAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(remove_with_block_names_the_member_and_period_keys),
        cmocka_unit_test(reverse_names_the_req_keys_and_block_is_off),
        cmocka_unit_test(replies_decode_by_status),
        cmocka_unit_test(odd_replies_are_internal_errors),
        cmocka_unit_test(admin_call_built_as_a_shard_names_only_shard_keys),
        cmocka_unit_test(unknown_req_is_a_bad_request_marked_as_such),
    };
    return cmocka_run_group_tests(tests, load, unload);
}
