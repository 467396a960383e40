/* test_httpstrict.c - rc_httpstrict: a Content-Length is one plain decimal
 * number; a request line's path with %2F inside a segment or a "." / ".."
 * segment (plain or encoded) is caught, wherever the bytes are split, and
 * names with dots inside ("a..b", "...") pass. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rc_httpstrict.h"

static int cl(const char *s, uint64_t *v)
{
    return rc_httpstrict_content_length(s, strlen(s), v);
}

static void content_length_takes_one_decimal_number(void **state)
{
    (void)state;
    uint64_t v = 99;
    assert_int_equal(cl("37", &v), 0);
    assert_int_equal(v, 37);
    assert_int_equal(cl(" 0\t", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(cl("000000000000000042", &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(cl("999999999999999999", &v), 0);
}

static void content_length_refuses_signs_lists_hex_and_junk(void **state)
{
    (void)state;
    uint64_t v = 0;
    const char *bad[] = {"+37", "-1", "37,37", "37, 40", "3a", "0x25", "", "  ", "1 2", "37;", "1e3",
                         "9999999999999999999", "\xd9\xa3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 12345;
        assert_int_equal(cl(bad[i], &v), -1);
        assert_int_equal(v, 12345); /* untouched */
    }
}

/* The verdict for line fed whole, then split at every position. */
static enum rc_httpstrict_verdict verdict(const char *line)
{
    struct rc_httpstrict_path p;
    size_t n = strlen(line);
    rc_httpstrict_path_init(&p);
    rc_httpstrict_path_feed(&p, (const unsigned char *)line, n);
    enum rc_httpstrict_verdict whole = rc_httpstrict_path_verdict(&p);
    for (size_t cut = 0; cut <= n; cut++) {
        rc_httpstrict_path_init(&p);
        rc_httpstrict_path_feed(&p, (const unsigned char *)line, cut);
        rc_httpstrict_path_feed(&p, (const unsigned char *)line + cut, n - cut);
        assert_int_equal(rc_httpstrict_path_verdict(&p), whole);
    }
    for (size_t i = 0; i < n; i++) { /* a byte at a time */
        if (i == 0)
            rc_httpstrict_path_init(&p);
        rc_httpstrict_path_feed(&p, (const unsigned char *)line + i, 1);
    }
    assert_int_equal(rc_httpstrict_path_verdict(&p), whole);
    return whole;
}

static void an_encoded_slash_inside_a_segment_is_caught(void **state)
{
    (void)state;
    assert_int_equal(verdict("POST /api/v1/boards/laps%2F..%2Fmatch:1/scores HTTP/1.1\r\n"),
                     RC_HTTPSTRICT_ENCODED_SLASH);
    assert_int_equal(verdict("GET /a%2fb HTTP/1.1\r\n"), RC_HTTPSTRICT_ENCODED_SLASH);
    assert_int_equal(verdict("GET /%2F HTTP/1.1\r\n"), RC_HTTPSTRICT_ENCODED_SLASH);
}

static void dot_segments_plain_or_encoded_are_caught(void **state)
{
    (void)state;
    const char *bad[] = {
        "GET /api/v1/boards/x/../match:1 HTTP/1.1\r\n", "GET /./x HTTP/1.1\r\n",
        "GET /x/.. HTTP/1.1\r\n",                      "GET /x/..?top=3 HTTP/1.1\r\n",
        "GET /x/.#frag HTTP/1.1\r\n",                  "GET /x/%2e%2E/y HTTP/1.1\r\n",
        "GET /x/.%2e/y HTTP/1.1\r\n",                  "GET /x/%2e/y HTTP/1.1\r\n",
        "GET /.. HTTP/1.0\r\n",                        "GET /x/..\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(verdict(bad[i]), RC_HTTPSTRICT_DOT_SEGMENT);
}

static void dots_inside_names_and_anything_in_the_query_pass(void **state)
{
    (void)state;
    const char *good[] = {
        "GET / HTTP/1.1\r\n",
        "GET /api/v1/boards/match:a..b HTTP/1.1\r\n",
        "GET /api/v1/boards/... HTTP/1.1\r\n",
        "GET /x/.hidden/..y HTTP/1.1\r\n",
        "GET /api/v1/boards/%64emo HTTP/1.1\r\n",
        "GET /api/v1/boards/demo?x=a%2Fb/../. HTTP/1.1\r\n",
        "GET //healthz HTTP/1.1\r\n",
        "POST /api/v1/boards/demo/scores HTTP/1.1\r\nContent-Length: 3\r\n\r\n/..",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        assert_int_equal(verdict(good[i]), RC_HTTPSTRICT_OK);
}

static void the_verdict_is_unknown_until_the_path_ends(void **state)
{
    (void)state;
    struct rc_httpstrict_path p;
    rc_httpstrict_path_init(&p);
    assert_int_equal(rc_httpstrict_path_verdict(&p), RC_HTTPSTRICT_UNKNOWN);
    rc_httpstrict_path_feed(&p, (const unsigned char *)"GET /x/..", 9);
    assert_int_equal(rc_httpstrict_path_verdict(&p), RC_HTTPSTRICT_UNKNOWN);
    rc_httpstrict_path_feed(&p, (const unsigned char *)" ", 1);
    assert_int_equal(rc_httpstrict_path_verdict(&p), RC_HTTPSTRICT_DOT_SEGMENT);
    /* what follows the request line changes nothing */
    rc_httpstrict_path_feed(&p, (const unsigned char *)"HTTP/1.1\r\nX: /a%2Fb/..\r\n", 24);
    assert_int_equal(rc_httpstrict_path_verdict(&p), RC_HTTPSTRICT_DOT_SEGMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(content_length_takes_one_decimal_number),
        cmocka_unit_test(content_length_refuses_signs_lists_hex_and_junk),
        cmocka_unit_test(an_encoded_slash_inside_a_segment_is_caught),
        cmocka_unit_test(dot_segments_plain_or_encoded_are_caught),
        cmocka_unit_test(dots_inside_names_and_anything_in_the_query_pass),
        cmocka_unit_test(the_verdict_is_unknown_until_the_path_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
