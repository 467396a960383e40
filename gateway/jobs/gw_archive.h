/* gw_archive.h - the archive of finished periods (DESIGN.md, Periodic boards):
 * when a period ends, its final standings go to an embedded SQLite database
 * ([server] archive_path), exactly once even with several gateways, and reads
 * of a period whose keys have expired from Redis are answered from it
 * (store/gw_archive_read.h, through app->store.adb). */
#ifndef GW_ARCHIVE_H
#define GW_ARCHIVE_H

struct gw_app;

/* Opens (creates) the database and starts the archive job. Returns 0 or an RC_E_*. */
int gw_archive_start(struct gw_app *app);

/* Stops the job; work in flight finishes, then the database is closed (the
 * loop must run on until then). */
void gw_archive_stop(struct gw_app *app);

#endif
