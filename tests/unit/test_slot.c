/* test_slot.c - core/rc_slot: key slots against Redis' own answers, the
 * cluster error replies that steer a command, and the checks of one
 * CLUSTER SLOTS entry. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rc_slot.h"

static unsigned slot(const char *key)
{
    return rc_slot_of_key(key, strlen(key));
}

/* The values are what CLUSTER KEYSLOT answers on Redis 7.0 (and, for the
 * tags, the examples of the cluster specification). */
static void key_slots_are_redis_own(void **state)
{
    (void)state;
    assert_int_equal(slot("123456789"), 0x31C3 % 16384); /* CRC16/XMODEM's check value */
    assert_int_equal(slot("foo"), 12182);
    assert_int_equal(slot("bar"), 5061);
    assert_int_equal(slot(""), 0);
    /* a tag: only what is inside the first {...} counts */
    assert_int_equal(slot("{user1000}.following"), slot("{user1000}.followers"));
    assert_int_equal(slot("{user1000}.following"), slot("user1000"));
    assert_int_equal(slot("foo{bar}{zap}"), slot("bar"));
    assert_int_equal(slot("foo{{bar}}zap"), slot("{bar"));
    /* an empty tag, or no closing brace: the whole key */
    assert_int_equal(slot("foo{}{bar}"), rc_slot_of_key("foo{}{bar}", 10));
    assert_int_not_equal(slot("foo{}{bar}"), slot("bar"));
    assert_int_not_equal(slot("foo{bar"), slot("bar"));
    /* rankcast's keys: one board period, one slot */
    assert_int_equal(slot("rc:{daily|2026-11-22}:z"), slot("rc:{daily|2026-11-22}:blocked"));
    assert_int_equal(slot("rc:{daily|2026-11-22}:ch"), slot("daily|2026-11-22"));
    /* len is honoured: bytes after it do not count */
    assert_int_equal(rc_slot_of_key("foo-and-more", 3), 12182);
    for (unsigned i = 0; i < 1000; i++) {
        char k[16];
        int n = 0;
        for (unsigned v = i * 2654435761u; n < 10; v /= 7)
            k[n++] = (char)('a' + v % 26);
        assert_true(rc_slot_of_key(k, (size_t)n) < RC_SLOTS);
    }
}

static void errors_are_classified_by_their_first_word(void **state)
{
    (void)state;
    static const struct {
        const char *err;
        enum rc_redis_err kind;
    } cases[] = {
        {"MOVED 3999 127.0.0.1:6381", RC_REDIS_ERR_MOVED},
        {"ASK 3999 127.0.0.1:6381", RC_REDIS_ERR_ASK},
        {"TRYAGAIN Multiple keys request during rehashing of slot", RC_REDIS_ERR_TRYAGAIN},
        {"CLUSTERDOWN The cluster is down", RC_REDIS_ERR_CLUSTERDOWN},
        {"CLUSTERDOWN Hash slot not served", RC_REDIS_ERR_CLUSTERDOWN},
        {"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", RC_REDIS_ERR_MASTERDOWN},
        {"LOADING Redis is loading the dataset in memory", RC_REDIS_ERR_LOADING},
        {"NOSCRIPT No matching script. Please use EVAL.", RC_REDIS_ERR_NOSCRIPT},
        {"READONLY You can't write against a read only replica.", RC_REDIS_ERR_READONLY},
        {"ERR wrong number of arguments", RC_REDIS_ERR_OTHER},
        {"CROSSSLOT Keys in request don't hash to the same slot", RC_REDIS_ERR_OTHER},
        {"MOVEDX 1 a:1", RC_REDIS_ERR_OTHER},
        {"ASKING", RC_REDIS_ERR_OTHER},
        {"TRYAGAIN", RC_REDIS_ERR_TRYAGAIN},
        {"", RC_REDIS_ERR_OTHER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (rc_slot_classify_error(cases[i].err, strlen(cases[i].err)) != cases[i].kind)
            fail_msg("%s: %d", cases[i].err, (int)rc_slot_classify_error(cases[i].err, strlen(cases[i].err)));
    assert_int_equal(rc_slot_classify_error(NULL, 0), RC_REDIS_ERR_OTHER);
    assert_int_equal(rc_slot_classify_error("MOVED 1 a:1", 4), RC_REDIS_ERR_OTHER); /* "MOVE" */
}

static void redirects_are_parsed_strictly(void **state)
{
    (void)state;
    struct rc_redirect r;
    const char *e = "MOVED 3999 127.0.0.1:6381";
    assert_int_equal(rc_slot_parse_redirect(e, strlen(e), &r), 0);
    assert_int_equal(r.kind, RC_REDIS_ERR_MOVED);
    assert_int_equal(r.slot, 3999);
    assert_string_equal(r.host, "127.0.0.1");
    assert_int_equal(r.port, 6381);
    e = "ASK 16383 redis-2.internal:7000";
    assert_int_equal(rc_slot_parse_redirect(e, strlen(e), &r), 0);
    assert_int_equal(r.kind, RC_REDIS_ERR_ASK);
    assert_int_equal(r.slot, 16383);
    assert_string_equal(r.host, "redis-2.internal");
    assert_int_equal(r.port, 7000);
    e = "MOVED 0 ::1:6380"; /* IPv6 as Redis prints it */
    assert_int_equal(rc_slot_parse_redirect(e, strlen(e), &r), 0);
    assert_string_equal(r.host, "::1");
    assert_int_equal(r.port, 6380);
    e = "MOVED 0 [fe80::1]:6380";
    assert_int_equal(rc_slot_parse_redirect(e, strlen(e), &r), 0);
    assert_string_equal(r.host, "fe80::1");
    e = "MOVED 12 :6380"; /* no endpoint named: the node that answered */
    assert_int_equal(rc_slot_parse_redirect(e, strlen(e), &r), 0);
    assert_string_equal(r.host, "");
    assert_int_equal(r.port, 6380);
    /* len is honoured */
    e = "MOVED 5 10.0.0.1:7001 trailing";
    assert_int_equal(rc_slot_parse_redirect(e, 21, &r), 0);
    assert_int_equal(r.port, 7001);
    static const char *const bad[] = {
        "MOVED", "MOVED ", "MOVED 3999", "MOVED 3999 ", "MOVED 16384 h:1", "MOVED -1 h:1", "MOVED x h:1",
        "MOVED 3999 host", "MOVED 3999 host:", "MOVED 3999 host:0", "MOVED 3999 host:65536", "MOVED 3999 host:12a",
        "MOVED 3999 h:1 extra", "MOVED  3999 h:1", "TRYAGAIN 1 h:1", "ERR 1 h:1", "ASK 1 h:99999999999",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (rc_slot_parse_redirect(bad[i], strlen(bad[i]), &r) == 0)
            fail_msg("accepted %s", bad[i]);
    char longhost[400] = "MOVED 1 ";
    memset(longhost + 8, 'h', 300);
    memcpy(longhost + 308, ":1", 3);
    assert_int_equal(rc_slot_parse_redirect(longhost, strlen(longhost), &r), -1);
}

static void slot_map_entries_are_checked(void **state)
{
    (void)state;
    /* a range inside 0..16383 and a port 1..65535 */
    assert_true(rc_slot_range_ok(0, 16383, 6379));
    assert_true(rc_slot_range_ok(5, 5, 1));
    assert_true(rc_slot_range_ok(0, 0, 65535));
    assert_false(rc_slot_range_ok(-1, 10, 6379));
    assert_false(rc_slot_range_ok(10, 9, 6379));
    assert_false(rc_slot_range_ok(0, 16384, 6379));
    assert_false(rc_slot_range_ok(0, 10, 0));
    assert_false(rc_slot_range_ok(0, 10, 65536));
    /* no endpoint ("" or "?"): the node asked */
    assert_string_equal(rc_slot_map_host("", "10.0.0.1"), "10.0.0.1");
    assert_string_equal(rc_slot_map_host("?", "10.0.0.1"), "10.0.0.1");
    assert_string_equal(rc_slot_map_host("10.0.0.2", "10.0.0.1"), "10.0.0.2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(key_slots_are_redis_own),
        cmocka_unit_test(errors_are_classified_by_their_first_word),
        cmocka_unit_test(redirects_are_parsed_strictly),
        cmocka_unit_test(slot_map_entries_are_checked),
    };
    return cmocka_run_group_tests_name("slot", tests, NULL, NULL);
}
