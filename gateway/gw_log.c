/* gw_log.c - timestamped single-line log records on stderr. */
#include "gw_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void emit(const char *level, const char *fmt, va_list ap)
{
    char line[1024], stamp[32];
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    int n = snprintf(line, sizeof line, "%s.%03ldZ rankcast[%ld] %s ", stamp, (long)(tv.tv_usec / 1000),
                     (long)getpid(), level);
    if (n > 0 && (size_t)n < sizeof line)
        vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    /* one write per record so concurrent processes do not interleave lines */
    fprintf(stderr, "%s\n", line);
}

void gw_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("error", fmt, ap);
    va_end(ap);
}

void gw_log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("warn", fmt, ap);
    va_end(ap);
}

void gw_log_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("info", fmt, ap);
    va_end(ap);
}
