/* gw_archive_run.h - private to the archive job (jobs/gw_archive.c and
 * jobs/gw_archive_run.c): its state, and the run of one board-period. */
#ifndef GW_ARCHIVE_RUN_H
#define GW_ARCHIVE_RUN_H

#include <stddef.h>

#include <uv.h>

#include "redis/gw_lock.h"
#include "rc_conf.h"
#include "rc_period.h"

struct gw_app;

/* One exact-name periodic board the job looks after. */
struct board_state {
    const struct rc_board *decl;     /* points into app->conf */
    char done[RC_PERIOD_ID_MAX];     /* newest period known archived (marker seen or set) */
    int busy;                        /* a run of this board is in flight */
};

struct gw_archive {
    struct gw_app *app;
    struct gw_adb *db;               /* the database; also app->store.adb, for reads */
    unsigned setup_wait;             /* ticks since the last setup failed */
    unsigned setups;                 /* setups queued (they report to us) */
    int stopping;
    uv_timer_t timer;
    int timer_closed;
    char token[33];                  /* ours, in rc:{B|P}:archiving */
    struct gw_lock_scripts lock;     /* renewal and release of rc:{B|P}:archiving */
    unsigned runs;                   /* archive runs in flight (they hold us) */
    size_t nboards;
    struct board_state *boards;
    void (*idle)(struct gw_archive *a); /* a run ended: the job may free itself */
};

/* Archives period p of bs once (the steps: gw_archive_run.c). Sets bs->busy
 * and counts in a->runs until the run ends, then calls a->idle. */
void gw_archive_run_begin(struct gw_archive *a, struct board_state *bs, const struct rc_period *p);

#endif
