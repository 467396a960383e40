/* gw_rowteam.h - a board with teams' membership (docs/teams.md): member ->
 * team, for the "team" of its rows and its rosters (gw_rowteam.c). Internal
 * to fanout/ (gw_fanout_int.h includes it). */
#ifndef GW_ROWTEAM_H
#define GW_ROWTEAM_H

#include <stddef.h>
#include <stdint.h>

#include "rc_ksteam.h"

#include "rc_hmap.h"

struct gw_board;
struct gw_window;
struct gw_rowteam_name;
struct gw_rowteam_entry;

/* A board with teams' membership (docs/teams.md): member -> interned team. */
struct gw_rowteam {
    struct rc_hash_key key;
    struct rc_hmap names, members;
    struct gw_rowteam_name *names_all;      /* every interned id (freed with the board) */
    struct gw_rowteam_entry *entries;       /* every member entry */
    int loaded;                  /* read from Redis at least once */
    int loading;                 /* a read is out */
    int again;                   /* read again once the read out is back */
    /* The membership's version (core/rc_event.h, rc_event_team_judge): the
     * one held, the one the last read saw, and the newest a message named
     * while a read was out (the read must reach it, or it is done again) */
    uint64_t ver, read_ver, heard_ver;
    /* Changes made outside rankcast (gw_rowteam_load_keyspace): the hash's
     * keyspace notifications against the writes the team messages explain
     * (core/rc_ksteam.h) */
    struct rc_ksteam ks;
    /* a periodic board's current period read with no membership yet: seeded
     * from an earlier period's (redis/gw_teamseed.c) once, then read again */
    int seed_tried;
};

struct gw_rowteam *gw_rowteam_new(struct rc_hash_key key);
void gw_rowteam_free(struct gw_rowteam *rt);
/* Forgets every member (a new read follows). */
void gw_rowteam_clear(struct gw_rowteam *rt);
/* member's team is now team ("": none). Returns 0 or RC_E_INTERNAL. */
int gw_rowteam_set(struct gw_rowteam *rt, const char *member, const char *team);
/* member's team (interned), or NULL. rt may be NULL. */
const char *gw_rowteam_of(const struct gw_rowteam *rt, const char *member);
/* Sets every row's team of w from b's membership (nothing when b has no teams). */
void gw_rowteam_fill(const struct gw_board *b, struct gw_window *w);
/* The members of team `team`, sorted by name and packed (core/rc_members.h)
 * into *out (malloc'd; NULL when none), *n names, *len bytes. Returns 0 or
 * RC_E_INTERNAL. */
int gw_rowteam_roster(const struct gw_rowteam *rt, const char *team, char **out, uint32_t *n, uint32_t *len);
/* 1 while rt has keyspace notifications of its membership to judge
 * (gw_rowteam_load_keyspace); rt may be NULL. */
int gw_rowteam_ks_pending(const struct gw_rowteam *rt);
/* 1 when member is on team (the view's own kind of "listed", for rosters). */
int gw_rowteam_on(const struct gw_rowteam *rt, const char *member, const char *team);

#endif
