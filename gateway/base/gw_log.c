/* gw_log.c - single-line log records on stderr: timestamped, or plain for the journal. */
#include "base/gw_log.h"

#include "rc_auth.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* -1: not looked yet; 0: a terminal or file (timestamped lines); 1: the
 * journal. systemd sets JOURNAL_STREAM to "DEVICE:INODE" of the stream it
 * gave as stderr; a child whose stderr was redirected inherits the variable,
 * so the numbers must match stderr's own (systemd.exec(5)). */
static int journal = -1;

void gw_log_detect(void)
{
    const char *v = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    journal = v && sscanf(v, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
              (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static void emit(int priority, const char *level, const char *fmt, va_list ap)
{
    char line[1024], stamp[32];
    struct timeval tv;
    struct tm tm;
    int n;
    if (journal < 0)
        gw_log_detect();
    if (journal) {
        n = snprintf(line, sizeof line, "<%d>[%ld] %s ", priority, (long)getpid(), level);
    } else {
        gettimeofday(&tv, NULL);
        gmtime_r(&tv.tv_sec, &tm);
        strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
        n = snprintf(line, sizeof line, "%s.%03ldZ rankcast[%ld] %s ", stamp, (long)(tv.tv_usec / 1000),
                     (long)getpid(), level);
    }
    if (n > 0 && (size_t)n < sizeof line)
        vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    /* one write per record so concurrent processes do not interleave lines */
    fprintf(stderr, "%s\n", line);
}

void gw_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(3, "error", fmt, ap);
    va_end(ap);
}

void gw_log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(4, "warn", fmt, ap);
    va_end(ap);
}

/* Lines about what clients do: a bucket of ABUSE_BURST lines refilled at
 * ABUSE_RATE a second, process-wide (one bucket per address would let many
 * addresses flood the log all the same). The bucket is core's token bucket
 * (core/rc_auth.h), the one behind rate_limited. */
#define ABUSE_RATE 5.0
#define ABUSE_BURST 20.0

static struct rc_bucket abuse_bucket;
static unsigned long abuse_suppressed;

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void report_suppressed(void)
{
    gw_log_warn("suppressed %lu log lines about clients (more than %g a second)", abuse_suppressed, ABUSE_RATE);
    abuse_suppressed = 0;
}

void gw_log_abuse(const char *fmt, ...)
{
    if (!rc_auth_bucket_take(&abuse_bucket, ABUSE_RATE, ABUSE_BURST, mono_ms())) {
        abuse_suppressed++;
        return;
    }
    if (abuse_suppressed)
        report_suppressed();
    va_list ap;
    va_start(ap, fmt);
    emit(4, "warn", fmt, ap);
    va_end(ap);
}

void gw_log_abuse_flush(void)
{
    if (abuse_suppressed && rc_auth_bucket_take(&abuse_bucket, ABUSE_RATE, ABUSE_BURST, mono_ms()))
        report_suppressed();
}

unsigned long gw_log_abuse_suppressed(void)
{
    return abuse_suppressed;
}

void gw_log_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(6, "info", fmt, ap);
    va_end(ap);
}
