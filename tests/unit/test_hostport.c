/* test_hostport.c - rc_hostport_split: the address forms --listen and --redis
 * accept, and the ones they refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rc_err.h"
#include "rc_hostport.h"

static void test_host_and_port_split_at_the_last_colon(void **state)
{
    (void)state;
    char host[64];
    int port = 0;
    assert_int_equal(rc_hostport_split("127.0.0.1:8080", host, sizeof host, &port), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 8080);
    assert_int_equal(rc_hostport_split("redis:6379", host, sizeof host, &port), 0);
    assert_string_equal(host, "redis");
    assert_int_equal(port, 6379);
}

static void test_a_redis_url_prefix_is_dropped(void **state)
{
    (void)state;
    char host[64];
    int port = 0;
    assert_int_equal(rc_hostport_split("redis://localhost:7000", host, sizeof host, &port), 0);
    assert_string_equal(host, "localhost");
    assert_int_equal(port, 7000);
}

static void test_an_ipv6_literal_loses_its_brackets(void **state)
{
    (void)state;
    char host[64];
    int port = 0;
    assert_int_equal(rc_hostport_split("[::1]:9000", host, sizeof host, &port), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 9000);
}

/* Names for messages and labels split back into what they were made of. */
static void test_formatted_names_bracket_ipv6_and_split_back(void **state)
{
    (void)state;
    static const struct {
        const char *host, *want;
        int port;
    } cases[] = {{"127.0.0.1", "127.0.0.1:7000", 7000}, {"redis-2.internal", "redis-2.internal:6379", 6379},
                 {"::1", "[::1]:7000", 7000}, {"fe80::1", "[fe80::1]:65535", 65535}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[RC_HOSTPORT_NAME_MAX], host[RC_SEED_HOST_MAX];
        int port = 0;
        assert_int_equal(rc_hostport_format(name, sizeof name, cases[i].host, cases[i].port),
                         (int)strlen(cases[i].want));
        assert_string_equal(name, cases[i].want);
        assert_int_equal(rc_hostport_split(name, host, sizeof host, &port), 0);
        assert_string_equal(host, cases[i].host);
        assert_int_equal(port, cases[i].port);
    }
    /* the length it needs, as snprintf: room can be asked first */
    assert_int_equal(rc_hostport_format(NULL, 0, "::1", 7000), 10);
}

static void test_ports_outside_1_to_65535_are_refused(void **state)
{
    (void)state;
    char host[64] = "untouched";
    int port = 42;
    assert_int_equal(rc_hostport_split("h:0", host, sizeof host, &port), RC_E_BAD_REQUEST);
    assert_int_equal(rc_hostport_split("h:65536", host, sizeof host, &port), RC_E_BAD_REQUEST);
    assert_int_equal(rc_hostport_split("h:99999999999999999999", host, sizeof host, &port), RC_E_BAD_REQUEST);
    assert_int_equal(rc_hostport_split("h:65535", host, sizeof host, &port), 0);
    assert_int_equal(port, 65535);
    assert_int_equal(rc_hostport_split("h:1", host, sizeof host, &port), 0);
    assert_int_equal(port, 1);
}

static void test_malformed_addresses_are_refused_and_outputs_untouched(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "nocolon", ":80", "h:", "h:80x", "h:-1", "[]:80",
                                      "redis://:80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char host[64] = "untouched";
        int port = 42;
        assert_int_equal(rc_hostport_split(bad[i], host, sizeof host, &port), RC_E_BAD_REQUEST);
        assert_string_equal(host, "untouched");
        assert_int_equal(port, 42);
    }
}

static void test_a_host_that_does_not_fit_is_refused(void **state)
{
    (void)state;
    char host[4];
    int port = 0;
    assert_int_equal(rc_hostport_split("abcd:80", host, sizeof host, &port), RC_E_BAD_REQUEST);
    assert_int_equal(rc_hostport_split("abc:80", host, sizeof host, &port), 0);
    assert_string_equal(host, "abc");
}

static void test_seed_lists_split_into_hosts_and_ports(void **state)
{
    (void)state;
    struct rc_seed seeds[4];
    size_t n = 99;
    assert_int_equal(rc_hostport_split_seeds("127.0.0.1:7000", seeds, 4, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(seeds[0].host, "127.0.0.1");
    assert_int_equal(seeds[0].port, 7000);
    assert_int_equal(rc_hostport_split_seeds("a:1, redis://b:2 ,[::1]:3,a:1", seeds, 4, &n), 0);
    assert_int_equal(n, 3); /* a:1 twice is kept once */
    assert_string_equal(seeds[0].host, "a");
    assert_string_equal(seeds[1].host, "b");
    assert_int_equal(seeds[1].port, 2);
    assert_string_equal(seeds[2].host, "::1");
    assert_int_equal(seeds[2].port, 3);
}

static void test_bad_seed_lists_are_refused(void **state)
{
    (void)state;
    struct rc_seed seeds[2];
    size_t n;
    const char *bad[] = {"", ",", "a:1,", ",a:1", "a:1,,b:2", "a:1,b", "a:0", "a:1,b:2,c:3", " "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(rc_hostport_split_seeds(bad[i], seeds, 2, &n), RC_E_BAD_REQUEST);
    assert_int_equal(rc_hostport_split_seeds(NULL, seeds, 2, &n), RC_E_BAD_REQUEST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_and_port_split_at_the_last_colon),
        cmocka_unit_test(test_a_redis_url_prefix_is_dropped),
        cmocka_unit_test(test_an_ipv6_literal_loses_its_brackets),
        cmocka_unit_test(test_ports_outside_1_to_65535_are_refused),
        cmocka_unit_test(test_malformed_addresses_are_refused_and_outputs_untouched),
        cmocka_unit_test(test_a_host_that_does_not_fit_is_refused),
        cmocka_unit_test(test_seed_lists_split_into_hosts_and_ports),
        cmocka_unit_test(test_bad_seed_lists_are_refused),
        cmocka_unit_test(test_formatted_names_bracket_ipv6_and_split_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
