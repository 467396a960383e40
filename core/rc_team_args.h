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
#define RC_TEAM_NARGV 10

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
int rc_team_args_roster_at(const struct rc_board *b, const char *period, const char *team, int by_time,
                           int64_t target, struct rc_team_args *out, struct rc_error *err);

/* Its reply items[0..n): "ok", the count, then that many members (each a
 * valid member name: items[2..2 + *nmembers), *gone 0); or "gone" and the
 * oldest seq a roster can show (*gone 1, *oldest). Returns 0 or
 * RC_E_INTERNAL. */
int rc_team_args_roster_at_parse(const struct rc_reply_item *items, size_t n, int *gone, int64_t *oldest,
                                 size_t *nmembers);

/* ---- a period's membership (docs/teams.md, "Periods") ----------------
 * A periodic source keeps one membership per period, rc:{B|P}:tm (and its
 * log rc:{B|P}:tml), so that a write and a move touch one slot. A period
 * whose membership does not exist yet is seeded from the latest earlier
 * period's: the gateway reads it there (HGETALL) and passes it to
 * lua/teams.lua's seed on the new period's slot, which refuses when the
 * period was seeded meanwhile. The earlier period looked for: the one just
 * before, then the board's pointer to its latest seeded period
 * (rc:{B|}:tmp, moved forward by teams.lua's point), then the ones before
 * back to RC_TEAM_SEED_WALK periods; none: the period starts with no
 * membership. */
#define RC_TEAM_SEED_WALK 32

/* Board `name`'s membership key `what` ("tm", "tml") in `period` ("" for
 * all-time; "tmp" is the pointer: period ignored). Returns 0 or -1 (too
 * long). */
int rc_team_args_tm_key(char *out, size_t cap, const char *name, const char *period, const char *what);

/* The i-th period before p (i >= 1) where a seed may be looked for: 0 and
 * *out, or -1 when i is past RC_TEAM_SEED_WALK or the calendar. */
int rc_team_args_seed_source(const struct rc_board *b, const struct rc_period *p, unsigned i, struct rc_period *out);

/* The pointer's value ("START_MS PERIOD") as a period of b before p: 0 and
 * *out, or -1 when it names none (unparsable, another calendar, not before
 * p). */
int rc_team_args_seed_pointer(const struct rc_board *b, const struct rc_period *p, const char *value,
                              struct rc_period *out);

/* Where to look next for the membership a period p starts from (the order
 * of the comment above, kept here once for the gateway and the CLI). Start
 * with a zeroed walk; after each READ that found no membership, or after
 * POINTER with the pointer's value (NULL when none), call again. */
enum rc_team_walk_step {
    RC_TEAM_WALK_READ,    /* *out: read its membership; one there is the seed */
    RC_TEAM_WALK_POINTER, /* read the pointer rc:{B|}:tmp, then call again with it */
    RC_TEAM_WALK_NONE,    /* no earlier membership: the period starts with none */
};
struct rc_team_walk {
    int state;
    unsigned i;
};
enum rc_team_walk_step rc_team_args_walk_next(struct rc_team_walk *w, const struct rc_board *b,
                                              const struct rc_period *p, const char *pointer, struct rc_period *out);

/* 1 when a copy made for period p at now_ms is the board's latest
 * membership (p is not finished): then the pointer moves to p and the
 * earlier membership it came from expires with its period. A finished
 * period's copy (a rebuild or admin op of a period no write reached)
 * changes neither and expires with its own keys. */
int rc_team_args_seed_is_latest(const struct rc_period *p, int64_t now_ms);

/* The seed call's words for b's period p at now_ms: KEYS tm and tml of p,
 * then "seed" and the copy's lifetime in ms (0, none, while p is current or
 * to come: the latest membership never expires; a finished period's, seeded
 * by a rebuild or an admin op of it, expires with its keys); the caller
 * appends the field/value pairs. words[0..RC_TEAM_SEED_NWORDS) point into
 * out. Returns 0 or -1. */
#define RC_TEAM_SEED_NKEYS 2
#define RC_TEAM_SEED_NWORDS 4
int rc_team_args_seed(const struct rc_board *b, const struct rc_period *p, int64_t now_ms, struct rc_team_args *out);

/* The head of the seed call, the same for the gateway and the CLI: argv
 * and lens of "EVAL", script, the key count and a's words (from
 * rc_team_args_seed); the caller appends the pairs after them. Returns the
 * count written, RC_TEAM_SEED_HEAD. */
#define RC_TEAM_SEED_HEAD (3 + RC_TEAM_SEED_NWORDS)
size_t rc_team_args_seed_head(const struct rc_team_args *a, const char *script, const char **argv, size_t *lens);

/* The pointer's call: KEYS tmp, then "point", the start and the id of p. */
#define RC_TEAM_POINT_NKEYS 1
#define RC_TEAM_POINT_NWORDS 4
int rc_team_args_point(const char *name, const struct rc_period *p, struct rc_team_args *out);

#endif
