/* gw_archive_read.h - reads of archived periods: a past period whose keys
 * have expired from Redis is answered from the archive database
 * (store/gw_archive_db.h), in the window shape gw_read gives. */
#ifndef GW_ARCHIVE_READ_H
#define GW_ARCHIVE_READ_H

#include "store/gw_read.h"

struct gw_store;

/* Reads board `board` (declared by b), period `period`, from s->adb, as
 * gw_read does from Redis (same window shape; profiles joined). cb gets
 * RC_E_NOT_FOUND when that period was never archived. Returns 0 when started
 * (cb runs once, later) or an RC_E_* (cb not called). */
int gw_archive_read(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                    const struct gw_read_spec *spec, gw_read_cb *cb, void *privdata);

#endif
