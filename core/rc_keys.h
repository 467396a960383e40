/* rc_keys.h - Redis key names of DESIGN.md. For board B in period P (P empty
 * for boards without periods) every key carries the hash tag {B|P}, so one
 * board-period lives in one cluster slot:
 *   rc:{B|P}:z  :seq  :log  :ch  :req:ID  :f:MEMBER  :epoch   and rc:profile:MEMBER
 */
#ifndef RC_KEYS_H
#define RC_KEYS_H

#include <stddef.h>

#define RC_KEY_MAX 320 /* fits rc:{64|23}:f:<128> and rc:{..}:req:<64> */

/* Writes "rc:{B|P}:SUFFIX" (or "rc:{B|P}:SUFFIX:ARG" when arg is non-NULL) into
 * out[cap]. Returns 0, or RC_E_INTERNAL when it does not fit. Borrows all. */
int rc_keys_board(char *out, size_t cap, const char *board, const char *period_id, const char *suffix,
                 const char *arg);

/* Team boards (docs/teams.md): team board T of source board S keeps its keys
 * in S's tag, rc:{S|P}{T}:SUFFIX (the hash tag is the first {..}; the
 * channel and keyspace patterns rc:{*}:ch and rc:{*}:z match it), so the write script changes a member and
 * its team's sum in one slot. rc_keys_board names them so for every caller
 * (views, feeds, admin, archive): which boards are team boards is set once
 * per config load (rc_conf_parse calls these); a process has one config. */
void rc_keys_teams_reset(void);
int rc_keys_team_board(const char *team, const char *source);
/* The source of team board `team`, or NULL when it is none. */
const char *rc_keys_team_source(const char *team);

/* A channel or key name "...rc:{B|P}:SUFFIX" (or a team board's
 * "rc:{S|P}{T}:SUFFIX") -> the board (T for a team board) and P, in
 * board[bcap] and period[pcap]. Returns 0 or -1. */
int rc_keys_parse_tag(const char *name, char *board, size_t bcap, char *period, size_t pcap);

/* "rc:profile:MEMBER". */
int rc_keys_profile(char *out, size_t cap, const char *member);

#endif
