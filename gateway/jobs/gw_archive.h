/* gw_archive.h - the archive of finished periods (DESIGN.md, Periodic boards):
 * when a period ends, its final standings go to an embedded SQLite database
 * ([server] archive_path), exactly once even with several gateways, and reads
 * of a period whose keys have expired from Redis are answered from it. */
#ifndef GW_ARCHIVE_H
#define GW_ARCHIVE_H

#include "store/gw_read.h"

struct gw_app;

/* Opens (creates) the database and starts the archive job. Returns 0 or -1. */
int gw_archive_start(struct gw_app *app);

/* Stops the job; work in flight finishes, then the database is closed (the
 * loop must run on until then). */
void gw_archive_stop(struct gw_app *app);

/* Reads board `board` (declared by b), period `period`, from the archive, as
 * gw_read does from Redis (same window shape; profiles joined). cb gets
 * RC_E_NOT_FOUND when that period was never archived. Returns 0 when started
 * (cb runs once, later) or an RC_E_* (cb not called). */
int gw_archive_read(struct gw_app *app, const struct rc_board *b, const char *board, const char *period,
                    const struct gw_read_spec *spec, gw_read_cb *cb, void *privdata);

#endif
