/* test_redis_pass.c - where the Redis password comes from (base/gw_redis_pass.c):
 * RANKCAST_REDIS_PASSWORD, else the variable named by password_env, else
 * password_file; the file's rules; errors that never quote a password. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <unistd.h>

#include "base/gw_redis_pass.h"

struct fixture {
    char dir[64];
    char file[128];
    struct rc_conf c;
    struct gw_redis_cred cred;
    struct rc_error err;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/rc-pass-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->file, sizeof f->file, "%s/pass", f->dir);
    rc_conf_defaults(&f->c);
    unsetenv("RANKCAST_REDIS_PASSWORD");
    unsetenv("RC_TEST_PASS");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    unlink(f->file);
    rmdir(f->dir);
    unsetenv("RANKCAST_REDIS_PASSWORD");
    unsetenv("RC_TEST_PASS");
    free(f);
    return 0;
}

static void write_file(struct fixture *f, const char *content, size_t len, mode_t mode)
{
    FILE *fp = fopen(f->file, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(content, 1, len, fp), len);
    fclose(fp);
    assert_int_equal(chmod(f->file, mode), 0);
    snprintf(f->c.redis_password_file, sizeof f->c.redis_password_file, "%s", f->file);
}

static int resolve(struct fixture *f)
{
    return gw_redis_pass_resolve(&f->c, &f->cred, &f->err);
}

static void nothing_configured_means_no_auth(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(resolve(f), 0);
    assert_string_equal(f->cred.password, "");
    assert_string_equal(f->cred.source, "");
}

static void the_environment_beats_password_env_and_the_file(void **state)
{
    struct fixture *f = *state;
    write_file(f, "from-file\n", 10, 0600);
    snprintf(f->c.redis_password_env, sizeof f->c.redis_password_env, "RC_TEST_PASS");
    setenv("RC_TEST_PASS", "from-named-var", 1);
    setenv("RANKCAST_REDIS_PASSWORD", "from-env", 1);
    assert_int_equal(resolve(f), 0);
    assert_string_equal(f->cred.password, "from-env");
    assert_string_equal(f->cred.source, "RANKCAST_REDIS_PASSWORD");
    unsetenv("RANKCAST_REDIS_PASSWORD");
    assert_int_equal(resolve(f), 0);
    assert_string_equal(f->cred.password, "from-named-var");
    assert_string_equal(f->cred.source, "password_env RC_TEST_PASS");
    unsetenv("RC_TEST_PASS"); /* unset: the file is next */
    assert_int_equal(resolve(f), 0);
    assert_string_equal(f->cred.password, "from-file");
}

static void password_env_naming_an_unset_variable_without_a_file_is_an_error(void **state)
{
    struct fixture *f = *state;
    snprintf(f->c.redis_password_env, sizeof f->c.redis_password_env, "RC_TEST_PASS");
    assert_int_equal(resolve(f), RC_E_BAD_REQUEST);
    assert_non_null(strstr(f->err.msg, "password_env names RC_TEST_PASS, which is not set"));
}

static void the_file_loses_its_trailing_line_ends_only(void **state)
{
    struct fixture *f = *state;
    write_file(f, " pass word \r\n\n", 14, 0400);
    assert_int_equal(resolve(f), 0);
    assert_string_equal(f->cred.password, " pass word ");
}

static void a_file_others_can_read_is_refused(void **state)
{
    struct fixture *f = *state;
    write_file(f, "secret-in-file", 14, 0644);
    assert_int_equal(resolve(f), RC_E_BAD_REQUEST);
    assert_non_null(strstr(f->err.msg, "is readable by every user (mode 0644)"));
    assert_null(strstr(f->err.msg, "secret-in-file"));
    assert_int_equal(gw_redis_pass_check_file(&f->c, &f->err), RC_E_BAD_REQUEST);
    assert_int_equal(chmod(f->file, 0640), 0);
    assert_int_equal(gw_redis_pass_check_file(&f->c, &f->err), 0);
}

static void an_empty_oversized_or_binary_file_is_refused(void **state)
{
    struct fixture *f = *state;
    write_file(f, "\n", 1, 0600);
    assert_int_equal(resolve(f), RC_E_BAD_REQUEST);
    assert_non_null(strstr(f->err.msg, "is empty"));
    write_file(f, "a\0b", 3, 0600);
    assert_int_equal(resolve(f), RC_E_BAD_REQUEST);
    assert_non_null(strstr(f->err.msg, "holds a NUL byte"));
    char big[GW_REDIS_PASS_MAX + 1];
    memset(big, 'x', sizeof big);
    write_file(f, big, GW_REDIS_PASS_MAX, 0600);
    assert_int_equal(resolve(f), 0);
    assert_int_equal(strlen(f->cred.password), GW_REDIS_PASS_MAX);
    write_file(f, big, sizeof big, 0600);
    assert_int_equal(resolve(f), RC_E_BAD_REQUEST);
    assert_non_null(strstr(f->err.msg, "is larger than 1024 bytes"));
}

static void a_missing_file_says_why(void **state)
{
    struct fixture *f = *state;
    snprintf(f->c.redis_password_file, sizeof f->c.redis_password_file, "%s/none", f->dir);
    assert_int_equal(resolve(f), RC_E_BAD_REQUEST);
    assert_non_null(strstr(f->err.msg, "cannot be read: No such file or directory"));
    assert_int_equal(gw_redis_pass_check_file(&f->c, &f->err), RC_E_BAD_REQUEST);
}

static void a_username_needs_a_password(void **state)
{
    struct fixture *f = *state;
    snprintf(f->c.redis_username, sizeof f->c.redis_username, "rankcast");
    assert_int_equal(resolve(f), RC_E_BAD_REQUEST);
    assert_non_null(strstr(f->err.msg, "username rankcast needs a password"));
    setenv("RANKCAST_REDIS_PASSWORD", "pw", 1);
    assert_int_equal(resolve(f), 0);
    assert_string_equal(f->cred.username, "rankcast");
    gw_redis_pass_wipe(&f->cred);
    assert_string_equal(f->cred.password, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(nothing_configured_means_no_auth, setup, teardown),
        cmocka_unit_test_setup_teardown(the_environment_beats_password_env_and_the_file, setup, teardown),
        cmocka_unit_test_setup_teardown(password_env_naming_an_unset_variable_without_a_file_is_an_error, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(the_file_loses_its_trailing_line_ends_only, setup, teardown),
        cmocka_unit_test_setup_teardown(a_file_others_can_read_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(an_empty_oversized_or_binary_file_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_missing_file_says_why, setup, teardown),
        cmocka_unit_test_setup_teardown(a_username_needs_a_password, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
