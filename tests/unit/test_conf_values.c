/* test_conf_values.c - the config's internal value parsers (core/
 * rc_conf_value.c) at their edges: sizes with units and overflow, decimals,
 * HOST:PORT, word sets and comma lists. The public parsers (durations,
 * timestamps, offsets, integers) are tested in test_conf.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rc_conf_int.h"
#include "rc_err.h"

static void test_sizes_take_k_and_m_units_in_either_case(void **state)
{
    (void)state;
    static const struct { const char *s; int64_t v; } ok[] = {
        {"0", 0}, {"300", 300}, {"1k", 1024}, {"1K", 1024}, {"64k", 65536}, {"1m", 1048576},
        {"2M", 2097152}, {"9223372036854775807", INT64_MAX},
        {"9007199254740991k", INT64_C(9007199254740991) * 1024},
        {"8796093022207m", INT64_C(8796093022207) * 1048576}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t v = -1;
        if (rc_conf__parse_bytes(ok[i].s, &v) != 0)
            fail_msg("size '%s' refused", ok[i].s);
        assert_int_equal(v, ok[i].v);
    }
}

static void test_sizes_refuse_empty_signs_other_units_and_overflow(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "k", "-1", "+1", " 1", "1 ", "1 k", "1kb", "1g", "1.5k", "0x10",
                                      "9223372036854775808", "9007199254740992k", "8796093022208m",
                                      "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v = -1;
        if (rc_conf__parse_bytes(bad[i], &v) != RC_E_BAD_REQUEST)
            fail_msg("size '%s' accepted", bad[i]);
        assert_int_equal(v, -1);
    }
}

static void test_decimals_are_plain_digits_with_one_point(void **state)
{
    (void)state;
    static const struct { const char *s; double v; } ok[] = {
        {"0.5", 0.5}, {".5", 0.5}, {"1", 1.0}, {"1.", 1.0}, {"0.125", 0.125},
        {"123456789012345678", 123456789012345678.0}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        double v = -1;
        if (rc_conf__parse_decimal(ok[i].s, &v) != 0)
            fail_msg("decimal '%s' refused", ok[i].s);
        assert_true(v == ok[i].v);
    }
    static const char *const bad[] = {"", ".", "1.2.3", "-0.5", "+0.5", "1e3", "0,5", " 1", "1 ",
                                      "1234567890123456789"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double v = -1;
        if (rc_conf__parse_decimal(bad[i], &v) != RC_E_BAD_REQUEST)
            fail_msg("decimal '%s' accepted", bad[i]);
        assert_true(v == -1);
    }
}

static void test_hostport_needs_a_host_and_a_port_from_1_to_65535(void **state)
{
    (void)state;
    static const char *const ok[] = {"127.0.0.1:8080", "redis:6379", "a-b_c.d:1", "h:65535", "[::1]:80",
                                     "[fe80::1]:443", "[::ffff:1.2.3.4]:9"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (!rc_conf__hostport_valid(ok[i]))
            fail_msg("address '%s' refused", ok[i]);
    static const char *const bad[] = {"", "h", ":80", "h:", "h:0", "h:65536", "h:123456", "h:8x",
                                      "h: 80", "h:+80", "ho st:80", "h/x:80", "[]:80", "[::1]80",
                                      "[::1]", "[1.2.3.4]:80", "[::g]:80", "::1:80x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (rc_conf__hostport_valid(bad[i]))
            fail_msg("address '%s' accepted", bad[i]);
}

static void test_word_index_finds_exact_words_only(void **state)
{
    (void)state;
    static const char *const words[] = {"off", "on"};
    assert_int_equal(rc_conf__word_index("off", words, 2), 0);
    assert_int_equal(rc_conf__word_index("on", words, 2), 1);
    assert_int_equal(rc_conf__word_index("On", words, 2), -1);
    assert_int_equal(rc_conf__word_index("", words, 2), -1);
    assert_int_equal(rc_conf__word_index("onn", words, 2), -1);
}

static void test_comma_lists_split_and_trim_every_item(void **state)
{
    (void)state;
    char buf[] = " read ,\twrite,admin , ,";
    char *rest = buf;
    assert_string_equal(rc_conf__next_item(&rest), "read");
    assert_string_equal(rc_conf__next_item(&rest), "write");
    assert_string_equal(rc_conf__next_item(&rest), "admin");
    assert_string_equal(rc_conf__next_item(&rest), "");
    assert_non_null(rest);
    assert_string_equal(rc_conf__next_item(&rest), "");
    assert_null(rest);
    char blank[] = " \t ";
    assert_string_equal(rc_conf__trim(blank), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_take_k_and_m_units_in_either_case),
        cmocka_unit_test(test_sizes_refuse_empty_signs_other_units_and_overflow),
        cmocka_unit_test(test_decimals_are_plain_digits_with_one_point),
        cmocka_unit_test(test_hostport_needs_a_host_and_a_port_from_1_to_65535),
        cmocka_unit_test(test_word_index_finds_exact_words_only),
        cmocka_unit_test(test_comma_lists_split_and_trim_every_item),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
