/* rc_team_args.h - the KEYS and ARGV of lua/teams.lua (header comment
 * there): recompute (rebuild) or empty (reset) the team board of a source
 * board with teams = T (docs/teams.md). Pure: the caller sends the call. */
#ifndef RC_TEAM_ARGS_H
#define RC_TEAM_ARGS_H

#include <stdint.h>

#include "rc_epoch.h"
#include "rc_keys.h"
#include "rc_layout.h"
#include "rc_period.h"
#include "rc_write_args.h" /* struct rc_reply_item */

#define RC_TEAM_NKEYS 7
#define RC_TEAM_NARGV 8

struct rc_team_args {
    char keys[RC_TEAM_NKEYS][RC_KEY_MAX];
    char num[RC_TEAM_NARGV][40];
    /* the epoch the team board starts over with, if the call starts one;
     * the builder leaves it "" and the caller fills it (rc_epoch_hex) */
    char epoch[RC_EPOCH_MAX + 1];
    const char *words[RC_TEAM_NKEYS + RC_TEAM_NARGV]; /* keys, then ARGV */
};

/* Builds the call for source board b (which has teams) in period p at
 * now_ms; reset 1: empty T, 0: rebuild it; cluster 1: SPUBLISH. Returns 0,
 * or RC_E_BAD_REQUEST (b has no team board) / RC_E_INTERNAL. words[] point
 * into out and into b. */
int rc_team_args_build(const struct rc_board *b, const struct rc_period *p, int reset, int64_t now_ms, int cluster,
                       struct rc_team_args *out, struct rc_error *err);

/* lua/teams.lua's roster_at call (read only; docs/history.md, "Rosters at
 * a moment"): KEYS tm, tml and B's seq, ARGV roster_at, the team, seq or
 * time, the target: words[0..RC_TEAM_AT_NWORDS) point into out and team. */
#define RC_TEAM_AT_NKEYS 3
#define RC_TEAM_AT_NWORDS 7
int rc_team_args_roster_at(const struct rc_board *b, const char *team, int by_time, int64_t target,
                           struct rc_team_args *out, struct rc_error *err);

/* Its reply items[0..n): "ok", the count, then that many members (each a
 * valid member name: items[2..2 + *nmembers), *gone 0); or "gone" and the
 * oldest seq a roster can show (*gone 1, *oldest). Returns 0 or
 * RC_E_INTERNAL. */
int rc_team_args_roster_at_parse(const struct rc_reply_item *items, size_t n, int *gone, int64_t *oldest,
                                 size_t *nmembers);

#endif
