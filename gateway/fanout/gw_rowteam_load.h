/* gw_rowteam_load.h - a board with teams' membership read from Redis and
 * kept current from its channel (gw_rowteam_load.c). Internal to fanout/
 * (gw_fanout_int.h includes it). */
#ifndef GW_ROWTEAM_LOAD_H
#define GW_ROWTEAM_LOAD_H

#include <stddef.h>

struct gw_board;
struct gw_view;

/* Reads b's membership from Redis (once; again when asked with `again`),
 * then refreshes every view of b. A no-op for a board without teams. */
void gw_rowteam_load(struct gw_board *b, int again);
/* A team message on b's channel (core/rc_event.h, rc_event_team_parse). */
void gw_rowteam_load_heard(struct gw_board *b, const char *payload, size_t len);
/* A keyspace notification (payload: the command, "hset", "del", ...) on b's
 * membership hash rc:{B|}:tm. Each team op's writes come just before its
 * team message (same script, same connection): the tick reads the
 * membership again when some stay unexplained (gw_rowteam_load_tick). */
void gw_rowteam_load_keyspace(struct gw_board *b, const char *payload, size_t len);
/* The tick's look: notifications no team message explained for a whole
 * tick were changes made outside rankcast: the membership is read again
 * (rows and rosters follow, roster viewers get a snapshot). */
void gw_rowteam_load_tick(struct gw_board *b);
/* Roster view v's member list taken from its board's membership now (when
 * read), and v read again (its viewers get a snapshot: absent and total
 * changed with the list). */
void gw_rowteam_load_roster_view(struct gw_view *v);

#endif
