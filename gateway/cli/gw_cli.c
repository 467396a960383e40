/* gw_cli.c - the command line of `rankcast export`, `rankcast import` and
 * `rankcast teams rebuild`: options, the config (the gateway's file, flags
 * and environment), the board; then the tool (gw_cli_export.c,
 * gw_cli_import.c, gw_cli_teams.c). */
#include "cli/gw_cli.h"
#include "cli/gw_cli_int.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gw_conf.h"
#include "base/gw_env.h"
#include "rc_err.h"

int gw_cli_is_command(const char *cmd)
{
    return cmd && (strcmp(cmd, "export") == 0 || strcmp(cmd, "import") == 0 || strcmp(cmd, "teams") == 0);
}

static int usage(const char *tool)
{
    if (!tool || strcmp(tool, "export") == 0)
        fprintf(stderr, "usage: rankcast export BOARD [--period P] [--format csv|jsonl]\n"
                        "                       [--config FILE] [--redis HOST:PORT[,...]] [--state DIR]\n");
    if (!tool || strcmp(tool, "import") == 0)
        fprintf(stderr, "usage: rankcast import BOARD FILE [--format csv|jsonl] [--quiet]\n"
                        "                       [--config FILE] [--redis HOST:PORT[,...]] [--state DIR]\n");
    if (!tool || strcmp(tool, "teams") == 0)
        fprintf(stderr, "usage: rankcast teams rebuild BOARD [--period P]\n"
                        "                       [--config FILE] [--redis HOST:PORT[,...]] [--state DIR]\n");
    return GW_CLI_USAGE;
}

/* A file name ending in .jsonl or .ndjson is JSON Lines, anything else CSV. */
static enum rc_export_format format_of(const char *file)
{
    size_t n = strlen(file);
    if ((n > 6 && strcmp(file + n - 6, ".jsonl") == 0) || (n > 7 && strcmp(file + n - 7, ".ndjson") == 0))
        return RC_EXPORT_JSONL;
    return RC_EXPORT_CSV;
}

static int parse_args(int argc, char **argv, struct gw_cli *c, const char **config, struct gw_env_flags *flags)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'}, {"redis", required_argument, NULL, 'r'},
        {"state", required_argument, NULL, 's'},  {"period", required_argument, NULL, 'p'},
        {"format", required_argument, NULL, 'f'}, {"quiet", no_argument, NULL, 'q'},
        {NULL, 0, NULL, 0},
    };
    /* teams rebuild takes what export takes: one BOARD, --period */
    int export = strcmp(c->tool, "export") == 0 || strcmp(c->tool, "teams") == 0, ch;
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'c': *config = optarg; break;
        case 'r': flags->redis = optarg; break;
        case 's': flags->state = optarg; break;
        case 'p':
            if (!export)
                return gw_cli_base_fail(c, GW_CLI_USAGE, "--period is for export: an import writes the current period");
            c->period = optarg;
            break;
        case 'f':
            if (rc_export_fmt_format_parse(optarg, &c->format) != 0)
                return gw_cli_base_fail(c, GW_CLI_USAGE, "--format must be csv or jsonl, not '%s'", optarg);
            c->format_given = 1;
            break;
        case 'q': c->quiet = 1; break;
        default:
            gw_cli_base_fail(c, GW_CLI_USAGE, "unknown option or missing value: %s", argv[optind - 1]);
            return usage(c->tool);
        }
    }
    int want = export ? 1 : 2;
    if (argc - optind != want) {
        gw_cli_base_fail(c, GW_CLI_USAGE, "expected %s", export ? "one BOARD" : "BOARD and FILE");
        return usage(c->tool);
    }
    const char *board = argv[optind];
    if (!rc_names_board_name_valid(board, strlen(board)))
        return gw_cli_base_fail(c, GW_CLI_USAGE, "'%s' is not a board name (1..%d of A-Z a-z 0-9 _ . : -)", board,
                           RC_BOARD_MAX);
    strcpy(c->board, board);
    if (!export) {
        c->file = argv[optind + 1];
        if (!c->format_given)
            c->format = format_of(c->file);
    }
    return 0;
}

int gw_cli_main(int argc, char **argv)
{
    struct gw_cli c;
    struct gw_env_flags flags = {NULL, NULL, NULL};
    const char *config = "conf/rankcast.conf";
    struct rc_error err = {0, ""};
    int rc;
    memset(&c, 0, sizeof c);
    c.tool = argv[1];
    /* a reader that goes away (| head) is a write error on stdout, not a signal */
    signal(SIGPIPE, SIG_IGN);
    int shift = 1;
    if (strcmp(c.tool, "teams") == 0) {
        if (argc < 3 || strcmp(argv[2], "rebuild") != 0) {
            gw_cli_base_fail(&c, GW_CLI_USAGE, "expected: teams rebuild BOARD");
            return usage(c.tool);
        }
        shift = 2;
    }
    if ((rc = parse_args(argc - shift, argv + shift, &c, &config, &flags)) != 0)
        return rc;
    if (!(c.conf = malloc(sizeof *c.conf)))
        return gw_cli_base_fail(&c, GW_CLI_UNAVAILABLE, "out of memory");
    if (gw_conf_load(config, c.conf, &err) != 0) {
        rc = gw_cli_base_fail(&c, GW_CLI_USAGE, "config: %s", err.msg);
    } else if (gw_env_apply_overrides(c.conf, &flags) != 0) {
        rc = GW_CLI_USAGE; /* logged */
    } else if (!(c.b = rc_conf_board_find(c.conf, c.board))) {
        rc = gw_cli_base_fail(&c, GW_CLI_USAGE, "no board is declared for '%s' in %s", c.board, config);
    } else {
        rc = strcmp(c.tool, "export") == 0 ? gw_cli_export(&c)
             : strcmp(c.tool, "teams") == 0 ? gw_cli_teams(&c)
                                            : gw_cli_import(&c);
    }
    free(c.conf);
    return rc;
}
