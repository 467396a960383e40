/* gw_cli_page.h - what `rankcast export` reads and prints a page at a time
 * (cli/ only): a page of a board's rows from lua/read.lua, the same script
 * as every read of the gateway (one page is one consistent snapshot with its
 * seq), and its lines on stdout with the members' profile names (one
 * pipelined HGET batch per page). */
#ifndef GW_CLI_PAGE_H
#define GW_CLI_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "cli/gw_cli_int.h"
#include "rc_read_args.h"

#define GW_CLI_PAGE 1000
#define GW_CLI_LINE_MIN 512

struct gw_cli_page {
    size_t n;
    int64_t rank[GW_CLI_PAGE];
    char member[GW_CLI_PAGE][RC_MEMBER_MAX + 1];
    double c[GW_CLI_PAGE];
};

/* The output line buffer (grown as needed) and the rows written so far. */
struct gw_cli_sink {
    char *buf;
    size_t cap;
    int64_t rows;
};

/* Writes s->buf[0..need) to stdout. Returns 0 or the exit code. */
int gw_cli_page_put_line(const struct gw_cli *c, struct gw_cli_sink *s, size_t need);

/* Writes the page's rows (ranks as in pg) with their members' profile
 * names. Returns 0 or the exit code after printing why. */
int gw_cli_page_emit(const struct gw_cli *c, struct gw_cli_redis *r, struct gw_cli_sink *s, const struct gw_cli_page *pg);

/* Rows first..first+GW_CLI_PAGE-1 of the board stored as `store` (c->board,
 * or a shard "B#i" of it) in period: one call of lua/read.lua, live through
 * a freeze. pg->rank holds the ranks in that stored board. Returns 0 or the
 * exit code after printing why. */
int gw_cli_page_read_page(const struct gw_cli *c, struct gw_cli_redis *r, const char *store, const char *period,
                     int64_t first, struct rc_read_head *head, struct gw_cli_page *pg);

#endif
