/* test_epoch.c - epoch ids (core/rc_epoch): what a resume may name, and the
 * hex form of the gateway's random bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rc_epoch.h"

static void ids_of_letters_and_digits_up_to_the_cap_are_valid(void **state)
{
    (void)state;
    char max[RC_EPOCH_MAX + 2];
    memset(max, 'a', sizeof max);
    assert_true(rc_epoch_valid("", 0)); /* a board without a history */
    assert_true(rc_epoch_valid("0123456789abcdef", 16));
    assert_true(rc_epoch_valid("AbC9", 4));
    assert_true(rc_epoch_valid(max, RC_EPOCH_MAX));
    assert_false(rc_epoch_valid(max, RC_EPOCH_MAX + 1));
    assert_false(rc_epoch_valid("ab-c", 4));
    assert_false(rc_epoch_valid("ab c", 4));
    assert_false(rc_epoch_valid("ab\"c", 4)); /* it goes into JSON unescaped in the scripts */
    assert_false(rc_epoch_valid("a\0b", 3));
    assert_false(rc_epoch_valid(NULL, 0));
}

static void random_bytes_become_sixteen_lowercase_hex_characters(void **state)
{
    (void)state;
    const unsigned char b[RC_EPOCH_RANDOM_BYTES] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xcd, 0xef, 0xff};
    char out[2 * RC_EPOCH_RANDOM_BYTES + 1];
    rc_epoch_hex(out, b);
    assert_string_equal(out, "00017f80abcdefff");
    assert_true(rc_epoch_valid(out, strlen(out)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ids_of_letters_and_digits_up_to_the_cap_are_valid),
        cmocka_unit_test(random_bytes_become_sixteen_lowercase_hex_characters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
