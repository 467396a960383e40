/* gw_cli.h - rankcast's command-line tools (DESIGN.md, "Operating it"):
 *
 *   rankcast export BOARD [--period P] [--format csv|jsonl]
 *   rankcast import BOARD FILE [--format csv|jsonl] [--quiet]
 *
 * each with the gateway's --config FILE, --redis HOST:PORT[,...] and
 * --state DIR (and RANKCAST_REDIS, RANKCAST_STATE). Formats and exit codes:
 * docs/export-import.md. main.c hands its argv over when argv[1] names one.
 */
#ifndef GW_CLI_H
#define GW_CLI_H

/* Exit codes. */
#define GW_CLI_OK 0          /* done */
#define GW_CLI_BAD_ROW 1     /* import: a bad row stopped it (rows before it are written) */
#define GW_CLI_USAGE 2       /* the command line, the config, the board or the period */
#define GW_CLI_UNAVAILABLE 3 /* Redis, the archive, the file or stdout failed */

/* 1 when cmd ("export", "import") is a tool's name. */
int gw_cli_is_command(const char *cmd);

/* Runs the tool argv[1] names. Returns the exit code. */
int gw_cli_main(int argc, char **argv);

#endif
