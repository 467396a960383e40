/* test_ipcount.c - core/rc_ipcount: per-address counts with one writer.
 * A count set is read back; a count of 0 frees its slot for another
 * address; an address is held at most once (a second set updates it); the
 * window holds RC_IPCOUNT_WINDOW addresses of one hash and refuses one more;
 * clear empties the table; a reader in another process sees the writer's
 * counts (the table in a shared mapping across fork). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rc_ipcount.h"

static struct rc_ipcount *table(void)
{
    struct rc_ipcount *t = calloc(1, sizeof *t);
    assert_non_null(t);
    return t;
}

static void a_count_set_is_read_back_and_others_read_zero(void **state)
{
    (void)state;
    struct rc_ipcount *t = table();
    const uint64_t a[2] = {0, 0xffff7f000001ull}, b[2] = {0, 0xffff7f000002ull};
    assert_int_equal(rc_ipcount_get(t, a, 5), 0);
    assert_int_equal(rc_ipcount_set(t, a, 5, 3), 0);
    assert_int_equal(rc_ipcount_get(t, a, 5), 3);
    assert_int_equal(rc_ipcount_get(t, b, 5), 0); /* same hash, another address */
    assert_int_equal(rc_ipcount_set(t, a, 5, 4), 0); /* updated in place, not twice */
    assert_int_equal(rc_ipcount_get(t, a, 5), 4);
    assert_int_equal(rc_ipcount_set(t, a, 5, 0), 0);
    assert_int_equal(rc_ipcount_get(t, a, 5), 0);
    free(t);
}

static void a_full_window_refuses_one_more_until_a_slot_is_freed(void **state)
{
    (void)state;
    struct rc_ipcount *t = table();
    uint64_t k[2] = {1, 0};
    const uint64_t h = RC_IPCOUNT_SLOTS - 3; /* the window wraps around the end */
    for (unsigned i = 0; i < RC_IPCOUNT_WINDOW; i++) {
        k[1] = i;
        assert_int_equal(rc_ipcount_set(t, k, h, i + 1), 0);
    }
    k[1] = 999;
    assert_int_equal(rc_ipcount_set(t, k, h, 1), -1);
    assert_int_equal(rc_ipcount_get(t, k, h), 0);
    assert_int_equal(rc_ipcount_set(t, k, h, 0), 0); /* freeing what is not there: nothing */
    const uint64_t seventh[2] = {1, 7};
    assert_int_equal(rc_ipcount_set(t, seventh, h, 0), 0);
    assert_int_equal(rc_ipcount_set(t, k, h, 2), 0); /* takes the freed slot */
    assert_int_equal(rc_ipcount_get(t, k, h), 2);
    for (unsigned i = 0; i < RC_IPCOUNT_WINDOW; i++) {
        k[1] = i;
        assert_int_equal(rc_ipcount_get(t, k, h), i == 7 ? 0 : i + 1);
    }
    free(t);
}

static void an_address_is_held_once_even_after_an_earlier_slot_frees(void **state)
{
    (void)state;
    struct rc_ipcount *t = table();
    const uint64_t a[2] = {2, 1}, b[2] = {2, 2};
    assert_int_equal(rc_ipcount_set(t, a, 40, 1), 0); /* slot 40 */
    assert_int_equal(rc_ipcount_set(t, b, 40, 1), 0); /* slot 41 */
    assert_int_equal(rc_ipcount_set(t, a, 40, 0), 0); /* 40 free */
    assert_int_equal(rc_ipcount_set(t, b, 40, 5), 0); /* b found at 41, not put at 40 again */
    assert_int_equal(rc_ipcount_set(t, b, 40, 0), 0);
    assert_int_equal(rc_ipcount_get(t, b, 40), 0); /* no stale copy left behind */
    free(t);
}

static void clear_empties_every_slot(void **state)
{
    (void)state;
    struct rc_ipcount *t = table();
    uint64_t k[2] = {3, 0};
    for (unsigned i = 0; i < 100; i++) {
        k[1] = i;
        assert_int_equal(rc_ipcount_set(t, k, i * 977u, 1), 0);
    }
    rc_ipcount_clear(t);
    for (unsigned i = 0; i < 100; i++) {
        k[1] = i;
        assert_int_equal(rc_ipcount_get(t, k, i * 977u), 0);
    }
    free(t);
}

static void a_reader_in_another_process_sees_the_writers_counts(void **state)
{
    (void)state;
    struct rc_ipcount *t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(t != MAP_FAILED);
    const uint64_t a[2] = {0, 0xffff0a000001ull};
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        _exit(rc_ipcount_set(t, a, 12345, 7) == 0 ? 0 : 1);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(rc_ipcount_get(t, a, 12345), 7);
    munmap(t, sizeof *t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_count_set_is_read_back_and_others_read_zero),
        cmocka_unit_test(a_full_window_refuses_one_more_until_a_slot_is_freed),
        cmocka_unit_test(an_address_is_held_once_even_after_an_earlier_slot_frees),
        cmocka_unit_test(clear_empties_every_slot),
        cmocka_unit_test(a_reader_in_another_process_sees_the_writers_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
