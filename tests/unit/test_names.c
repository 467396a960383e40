/* test_names.c - PROTOCOL.md's name rules and the UTF-8 check. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rc_err.h"
#include "rc_names.h"

static int board(const char *s) { return rc_names_board_name_valid(s, strlen(s)); }
static int member(const char *s) { return rc_names_member_name_valid(s, strlen(s)); }

static void test_board_names_follow_protocol(void **state)
{
    (void)state;
    char b64[65], b65[66];
    memset(b64, 'a', 64);
    b64[64] = '\0';
    memset(b65, 'a', 65);
    b65[65] = '\0';
    assert_true(board("demo"));
    assert_true(board("match:1842"));
    assert_true(board("A-Z_0.9:x"));
    assert_true(board(b64));
    assert_false(board(b65));
    assert_false(board(""));
    assert_false(board("has space"));
    assert_false(board("user@x")); /* @ is for members only */
    assert_false(board("tab\t"));
    assert_false(board("{tag}"));
    assert_false(board("caf\xc3\xa9"));
    assert_false(rc_names_board_name_valid("ab\0c", 4)); /* embedded NUL */
}

static void test_member_names_follow_protocol(void **state)
{
    (void)state;
    char m128[129], m129[130];
    memset(m128, 'm', 128);
    m128[128] = '\0';
    memset(m129, 'm', 129);
    m129[129] = '\0';
    assert_true(member("user:101"));
    assert_true(member("someone@example.com"));
    assert_true(member(m128));
    assert_false(member(m129));
    assert_false(member(""));
    assert_false(member("{\"id\":1}")); /* never a serialized object */
    assert_false(member("a\"b"));
    assert_false(member("a/b"));
}

static void test_req_ids_are_1_to_64_printable(void **state)
{
    (void)state;
    char r64[65], r65[66];
    memset(r64, 'r', 64);
    r64[64] = '\0';
    memset(r65, 'r', 65);
    r65[65] = '\0';
    assert_true(rc_names_req_valid("7f3a-01", 7));
    assert_true(rc_names_req_valid(r64, 64));
    assert_false(rc_names_req_valid(r65, 65));
    assert_false(rc_names_req_valid("", 0));
    assert_false(rc_names_req_valid("a b", 3));
    assert_false(rc_names_req_valid("a\nb", 3));
}

static void test_field_names_and_templates(void **state)
{
    (void)state;
    assert_true(rc_names_field_name_valid("first_clear_ms", 14));
    assert_false(rc_names_field_name_valid("1st", 3));
    assert_false(rc_names_field_name_valid("Clears", 6));
    assert_true(rc_names_board_template_valid("match:*", 7));
    assert_false(rc_names_board_template_valid("*", 1));
    assert_false(rc_names_board_template_valid("match:", 6));
    assert_false(rc_names_board_template_valid("ma*ch", 5));
}

static void test_utf8_validation(void **state)
{
    (void)state;
    const char *good[] = {"", "plain", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x8f\x86", "\xf4\x8f\xbf\xbf"};
    const char *bad[] = {"\x80", "\xc3", "\xc0\xaf" /* overlong / */, "\xe0\x80\xaf", "\xed\xa0\x80" /* surrogate */,
                         "\xf4\x90\x80\x80" /* > U+10FFFF */, "\xff", "ok\xe2\x82"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        assert_true(rc_names_utf8_valid(good[i], strlen(good[i])));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(rc_names_utf8_valid(bad[i], strlen(bad[i])));
}

static void test_error_codes_map_to_protocol_and_http(void **state)
{
    (void)state;
    static const struct { int code; const char *name; int http; } table[] = {
        {RC_E_BAD_REQUEST, "bad_request", 400}, {RC_E_UNKNOWN_BOARD, "unknown_board", 404},
        {RC_E_UNAUTHORIZED, "unauthorized", 401}, {RC_E_FORBIDDEN, "forbidden", 403},
        {RC_E_OUT_OF_RANGE, "out_of_range", 422}, {RC_E_RATE_LIMITED, "rate_limited", 429},
        {RC_E_UNAVAILABLE, "unavailable", 503}, {RC_E_TOO_LARGE, "too_large", 413},
        {RC_E_INTERNAL, "internal", 500},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        assert_string_equal(rc_err_code_name(table[i].code), table[i].name);
        assert_int_equal(rc_err_code_http_status(table[i].code), table[i].http);
    }
    struct rc_error e;
    assert_int_equal(rc_err_set(&e, RC_E_BAD_REQUEST, "delta must be %s", "finite"), RC_E_BAD_REQUEST);
    assert_string_equal(e.msg, "delta must be finite");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_board_names_follow_protocol),
        cmocka_unit_test(test_member_names_follow_protocol),
        cmocka_unit_test(test_req_ids_are_1_to_64_printable),
        cmocka_unit_test(test_field_names_and_templates),
        cmocka_unit_test(test_utf8_validation),
        cmocka_unit_test(test_error_codes_map_to_protocol_and_http),
    };
    return cmocka_run_group_tests_name("names", tests, NULL, NULL);
}
