/* gw_archive_copy.h - private to the archive job: step 5 of an archive run
 * (jobs/gw_archive_run.c), a finished period's rows copied into the archive
 * database page by page: lua/read.lua "range" pages (a sharded board: its
 * shards' pages merged, jobs/gw_archive_shard.c), each written in one
 * transaction on the threadpool before the next is read, so a large board
 * never holds the loop; a seq or total that moves between pages starts the
 * copy over (at most MAX_RESTARTS times). */
#ifndef GW_ARCHIVE_COPY_H
#define GW_ARCHIVE_COPY_H

#include <stdint.h>

#include "rc_conf.h"

struct gw_archive;
struct gw_ashard;

struct gw_acopy {
    /* set by the run, borrowed */
    struct gw_archive *a;
    const struct rc_board *decl;     /* the board archived */
    const char *period;              /* its period's id */
    struct gw_ashard *merge;         /* a sharded board: its shards' rows merged; else NULL */
    /* The run's hooks: the run is the layer above, so the copy calls it
     * through these and never by name. read_on: before every page (the run
     * renews its lock when a third of its expiry is gone), then calls
     * gw_archive_copy_read. done: the copy ended; why NULL: every row is in
     * (seq and total below say of which version), else why it failed (or
     * stopped: the archive is stopping). */
    void (*read_on)(struct gw_acopy *c);
    void (*done)(struct gw_acopy *c, const char *why);
    /* the copy's own */
    int64_t seq, total;              /* from the first page */
    int64_t next;                    /* 0-based index of the next page's first row */
    int restarts;
};

/* Reads the page at c->next (lua/read.lua, or the merge's next page); its
 * answer goes to SQLite, then to c->read_on or c->done. */
void gw_archive_copy_read(struct gw_acopy *c);

#endif
