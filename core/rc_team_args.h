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

#endif
