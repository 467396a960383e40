/* test_log.c - base/gw_log under systemd: when JOURNAL_STREAM names the
 * device and inode of stderr (systemd sets it when stderr is the journal),
 * a line is "<P>[PID] LEVEL MESSAGE": no timestamp of its own (the journal
 * stamps every line) and a syslog priority the journal reads; otherwise (no
 * variable, or one naming another file: a child whose stderr was redirected)
 * the usual timestamped line. Lines about clients are throttled, and what
 * the throttle held back is counted: by the next line let through, or by
 * gw_log_abuse_flush once the bucket has a token again. stderr is a
 * temporary file here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/gw_log.h"

/* Logs one line of each level with stderr on a fresh file; returns the
 * file's text (static buffer). journal: 1 = JOURNAL_STREAM names that
 * file, 0 = unset, -1 = names another file. */
static const char *logged(int journal)
{
    static char text[4096];
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(2);
    assert_true(dup2(fileno(tmp), 2) == 2);
    struct stat st;
    assert_int_equal(fstat(2, &st), 0);
    char val[64];
    snprintf(val, sizeof val, "%llu:%llu", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino + (journal < 0 ? 1 : 0));
    if (journal)
        setenv("JOURNAL_STREAM", val, 1);
    else
        unsetenv("JOURNAL_STREAM");
    gw_log_detect();
    gw_log_error("bad %d", 1);
    gw_log_warn("odd");
    gw_log_info("fine");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    unsetenv("JOURNAL_STREAM");
    gw_log_detect();
    rewind(tmp);
    size_t n = fread(text, 1, sizeof text - 1, tmp);
    text[n] = '\0';
    fclose(tmp);
    return text;
}

static void journal_lines_are_plain_with_a_priority(void **state)
{
    (void)state;
    char want[256];
    long pid = (long)getpid();
    snprintf(want, sizeof want, "<3>[%ld] error bad 1\n<4>[%ld] warn odd\n<6>[%ld] info fine\n", pid, pid, pid);
    assert_string_equal(logged(1), want);
}

static void without_the_journal_lines_keep_their_timestamp(void **state)
{
    (void)state;
    for (int j = 0; j >= -1; j--) {
        const char *t = logged(j);
        /* 2026-11-22T10:00:00.123Z rankcast[1234] error bad 1 */
        assert_true(strlen(t) > 25 && t[4] == '-' && t[10] == 'T' && t[23] == 'Z');
        assert_non_null(strstr(t, " rankcast["));
        assert_non_null(strstr(t, "] error bad 1\n"));
        assert_null(strchr(t, '<'));
    }
}

/* Sums the N of every "suppressed N" in text; *lines gets the "client"
 * lines let through. */
static unsigned long suppressed_in(const char *text, int *lines)
{
    unsigned long sum = 0;
    *lines = 0;
    for (const char *p = text; (p = strstr(p, "] warn ")) != NULL; p++) {
        unsigned long n;
        if (sscanf(p, "] warn suppressed %lu", &n) == 1)
            sum += n;
        else if (strncmp(p, "] warn client ", 14) == 0)
            (*lines)++;
    }
    return sum;
}

static void a_floods_tail_is_counted_by_the_flush(void **state)
{
    (void)state;
    static char text[65536];
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(2);
    assert_true(dup2(fileno(tmp), 2) == 2);
    unsetenv("JOURNAL_STREAM");
    gw_log_detect();
    /* 60 lines at once: 20 go through (the burst), the rest are held back
     * (60 in a row take microseconds; refilling 40 tokens takes 8 s). */
    for (int i = 0; i < 60; i++)
        gw_log_abuse("client %d", i);
    fflush(stderr);
    long before_flush = ftell(stderr);
    assert_true(gw_log_abuse_suppressed() > 0);
    /* Once a token is back (5 a second: 200 ms), the flush reports the tail
     * by itself, with no further client line. */
    struct timespec pause = {0, 300000000L};
    nanosleep(&pause, NULL);
    gw_log_abuse_flush();
    assert_int_equal(gw_log_abuse_suppressed(), 0);
    gw_log_abuse_flush(); /* nothing held back: prints nothing */
    fflush(stderr);
    long after = ftell(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(text, 1, sizeof text - 1, tmp);
    text[n] = '\0';
    fclose(tmp);
    int lines;
    unsigned long sum = suppressed_in(text, &lines);
    /* Every line is either printed or counted, never both, never neither. */
    assert_int_equal((unsigned long)lines + sum, 60);
    assert_true(sum > 0);
    /* The flush printed exactly one line (the report). */
    assert_true(after > before_flush);
    assert_non_null(strstr(text + before_flush, "suppressed "));
    const char *nl = strchr(text + before_flush, '\n');
    assert_non_null(nl);
    assert_int_equal(nl[1], '\0');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(journal_lines_are_plain_with_a_priority),
        cmocka_unit_test(without_the_journal_lines_keep_their_timestamp),
        cmocka_unit_test(a_floods_tail_is_counted_by_the_flush),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
