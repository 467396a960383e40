/* gw_instances.h - the writes' side of the index of a template's boards
 * (core/rc_instances.h, docs/periods.md "Boards of a template"): a write to
 * a board of a periodic or decaying template records the board (and its
 * period) in the template's index, so the archive and decay jobs of every
 * gateway find it, also after a restart. */
#ifndef GW_INSTANCES_H
#define GW_INSTANCES_H

struct gw_app;
struct gw_instances;
struct rc_board;
struct rc_period;

/* Called once a write to board `name` (covered by template decl) in period
 * p was sent to Redis at now: ZADD rc:{T}:... GT SCORE MEMBER, fire and
 * forget, unless this process already had that entry acknowledged. Does
 * nothing for exact boards and templates without an index. A failure is
 * logged (once until a success) and the entry goes again with the next
 * write. Borrows everything. */
void gw_instances_note(struct gw_app *app, const struct rc_board *decl, const char *name, const struct rc_period *p);

/* Frees what app->instances holds (NULL is fine); at shutdown, once no
 * reply can come back. */
void gw_instances_free(struct gw_instances *in);

#endif
