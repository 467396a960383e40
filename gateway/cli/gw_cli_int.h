/* gw_cli_int.h - what the command-line tools share (gateway/cli/ only). */
#ifndef GW_CLI_INT_H
#define GW_CLI_INT_H

#include <stdint.h>

#include "cli/gw_cli.h"
#include "cli/gw_cli_redis.h"
#include "rc_conf.h"
#include "rc_export_fmt.h"
#include "rc_names.h"

#define GW_CLI_TIMEOUT_MS 10000 /* connects and each answer from Redis */

struct gw_cli {
    const char *tool;                 /* "export" or "import", for messages */
    struct rc_conf *conf;             /* loaded, overrides applied */
    const struct rc_board *b;         /* the board's declaration (borrowed from conf) */
    char board[RC_BOARD_MAX + 1];
    const char *period;               /* --period, NULL when not given */
    enum rc_export_format format;
    int format_given;
    const char *file;                 /* import: the file, "-" for stdin */
    int quiet;                        /* import: no progress lines */
};

/* Prints "rankcast TOOL: message" on stderr and returns code. */
int gw_cli_base_fail(const struct gw_cli *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Connects to the configured Redis; NULL after printing why. */
struct gw_cli_redis *gw_cli_base_connect(const struct gw_cli *c);

/* The wall clock, ms since the epoch. */
int64_t gw_cli_base_now_ms(void);

int gw_cli_export(struct gw_cli *c);
int gw_cli_import(struct gw_cli *c);
int gw_cli_teams(struct gw_cli *c); /* teams rebuild (gw_cli_teams.c) */

#endif
