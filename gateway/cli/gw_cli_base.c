/* gw_cli_base.c - what every command-line tool uses: its error line, the
 * wall clock, the connection to the configured Redis (gw_cli_int.h). */
#include "cli/gw_cli_int.h"

#include "base/gw_redis_pass.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

int gw_cli_base_fail(const struct gw_cli *c, int code, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rankcast %s: ", c->tool);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

int64_t gw_cli_base_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct gw_cli_redis *gw_cli_base_connect(const struct gw_cli *c)
{
    char err[GW_CLI_ERR_MAX];
    struct gw_redis_cred cred;
    struct rc_error perr = {0, ""};
    if (gw_redis_pass_resolve(c->conf, &cred, &perr) != 0) {
        gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "%s", perr.msg);
        return NULL;
    }
    struct gw_cli_redis *r = gw_cli_redis_open(c->conf->redis, cred.username, cred.password, GW_CLI_TIMEOUT_MS,
                                               err, sizeof err);
    gw_redis_pass_wipe(&cred);
    if (!r)
        gw_cli_base_fail(c, GW_CLI_UNAVAILABLE, "%s", err);
    return r;
}
