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
/* Roster view v's member list taken from its board's membership now (when
 * read), and v read again (its viewers get a snapshot: absent and total
 * changed with the list). */
void gw_rowteam_load_roster_view(struct gw_view *v);

#endif
