/* gw_archive_run.h - private to the archive job (jobs/gw_archive.c,
 * jobs/gw_archive_run.c, jobs/gw_archive_copy.c): its state, and the run of
 * one board-period. */
#ifndef GW_ARCHIVE_RUN_H
#define GW_ARCHIVE_RUN_H

#include <stddef.h>

#include <uv.h>

#include "base/gw_release.h"
#include "redis/gw_lock.h"
#include "rc_conf.h"
#include "rc_instances.h"
#include "rc_keys.h"
#include "rc_period.h"

struct gw_app;

#define GW_ARCHIVE_LOCK_MS 60000 /* expiry of rc:{B|P}:archiving, renewed every third of it */

/* One periodic board the job looks after: an exact-name board, or the
 * board of a template in the run (then decl is tmpl_state.inst). */
struct board_state {
    const struct rc_board *decl;     /* points into app->conf (or tmpl_state.inst) */
    char done[RC_PERIOD_ID_MAX];     /* period of the last run that archived it (marker seen or set) */
    int busy;                        /* a run of this board is in flight */
    struct rc_period next;           /* exact boards: the oldest period not known archived */
    int has_next;
    unsigned budget;                 /* runs it may still start this tick */
    int skip_empty;                  /* a template's board: a period without rows gets no period row */
};

/* One periodic template: its boards come from its index (core/rc_instances.h),
 * ended periods oldest first, one run at a time. */
struct tmpl_state {
    struct gw_archive *a;            /* owner */
    const struct rc_board *decl;     /* the template, in app->conf */
    struct rc_board inst;            /* *decl named for the board in the run */
    struct board_state bs;           /* bs.decl = &inst */
    char key[RC_KEY_MAX];            /* its index, rc:{T}:periods */
    char (*queue)[RC_INST_ENTRY_MAX]; /* entries fetched at the last tick, oldest first */
    size_t nqueue, at;               /* how many; the one in the run (or next) */
    int fetching;                    /* the index read is in flight */
};

struct gw_archive {
    struct gw_app *app;
    struct gw_adb *db;               /* the database; also app->store.adb, for reads */
    unsigned setup_wait;             /* ticks since the last setup failed */
    unsigned setups;                 /* setups queued (they report to us) */
    struct gw_release rel;           /* held by the timer until its close callback; busy while
                                        runs, setups or index commands are in flight */
    uv_timer_t timer;
    char token[GW_LOCK_TOKEN_MAX];                  /* ours, in rc:{B|P}:archiving */
    struct gw_lock_scripts lock;     /* renewal and release of rc:{B|P}:archiving */
    unsigned runs;                   /* archive runs in flight (they hold us) */
    size_t nboards;
    struct board_state *boards;
    size_t ntmpls;
    struct tmpl_state *tmpls;
    unsigned pending;                /* index commands in flight (they hold us) */
    int64_t lock_ms;                 /* expiry of rc:{B|P}:archiving (LOCK_MS; tests may shorten it) */
    void (*idle)(struct gw_archive *a); /* a run ended: the job may free itself */
    void (*ended)(struct gw_archive *a, struct board_state *bs); /* a run of bs ended (before idle) */
};

/* Archives period p of bs once (the steps: gw_archive_run.c). Sets bs->busy
 * and counts in a->runs until the run ends, then calls a->ended and a->idle.
 * bs->done names p afterwards when p is archived (by this run or before). */
void gw_archive_run_begin(struct gw_archive *a, struct board_state *bs, const struct rc_period *p);

#endif
