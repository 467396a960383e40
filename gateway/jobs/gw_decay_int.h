/* gw_decay_int.h - the decay jobs' own state, shared by gw_decay.c (start
 * and stop, the design in its banner) and gw_decay_job.c (the jobs), and by
 * nobody else (the public face is gw_decay.h). gw_decay.c calls
 * gw_decay_job.c, never the other way. */
#ifndef GW_DECAY_INT_H
#define GW_DECAY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "base/gw_release.h"
#include "jobs/gw_job.h"
#include "redis/gw_lock.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_conf.h"
#include "rc_decay.h"
#include "rc_keys.h"

struct gw_app;

#define TOKEN_MAX 128
#define TMPL_BATCH 64       /* boards of a template handled per tick */

/* The keys of a job that never change. */
enum { K_TMP, K_READ, K_SEQ, K_LOCK, K_REBUILDS, K_SCALED_AT, K_COUNT };

struct tmpl;

struct job {
    struct gw_job base;             /* timer, commands in flight, warn-once (jobs/gw_job.h) */
    struct gw_decay *d;             /* owner */
    struct tmpl *tmpl;              /* a template's job: its state; NULL for an exact board */
    const struct rc_board *board;   /* borrowed from app->conf, which outlives us */
    int owns;                       /* buckets: we hold the lock, as far as we know */
    int started;                    /* buckets: the first lock attempt went out */
    int has_last;                   /* scale: last_ms is known */
    int64_t last_ms;                /* scale: scaled_at from the script's last answer */
    char keys[K_COUNT][RC_KEY_MAX];
    /* buckets: scratch for one call (probe or rebuild), sized at start for the window
     * (gw_script_call copies what it sends) */
    struct rc_decay_bucket *win;
    unsigned nwin;
    const char **words;
    size_t *lens;
    size_t nwords;
    char *text;
    size_t text_cap;
};

/* A template with decay: one job whose board is renamed for each of the
 * template's boards in turn (see gw_decay.c's banner, "Templates"). */
struct tmpl {
    struct job job;                 /* job.board = &inst, job.tmpl = this */
    struct rc_board inst;           /* the template, named for the board in hand */
    const struct rc_board *decl;    /* the template, in app->conf */
    char key[RC_KEY_MAX];           /* its index */
    char (*names)[RC_BOARD_MAX + 1]; /* boards read at this tick */
    size_t n, at;                   /* how many; the next to handle */
    size_t cursor;                  /* where the next read of the index starts */
};

struct gw_decay {
    struct gw_app *app;             /* borrowed */
    struct gw_release rel;          /* held by every job's timer and every command in flight */
    struct gw_script rebuild, scale;
    struct gw_lock_scripts lock;     /* the rebuild lock's renewal and release */
    char token[TOKEN_MAX];          /* "host:pid:random": names this gateway in the lock */
    struct job *jobs;
    size_t njobs;
    struct tmpl *tmpls;
    size_t ntmpls;
};

/* ---- gw_decay_job.c ------------------------------------------------------ */

/* A declared board's job: keys and, for buckets, the scratch of one rebuild
 * call. Returns 0 or -1 (then gw_decay_job_free frees what it got). */
int gw_decay_job_init(struct gw_decay *d, struct job *j, const struct rc_board *b);
/* A template's job: the template copied as the board in hand (renamed for
 * each of its boards), its index key and the names of one batch. */
int gw_decay_job_init_tmpl(struct gw_decay *d, struct tmpl *tp, const struct rc_board *b);
/* Starts j's timer (a template's job: tp->job) and logs what it does. */
void gw_decay_job_start(struct job *j);
/* Closes j's timer and sends the releases of the locks it holds (redis NULL:
 * not up). Returns how many went out (the caller flushes them). */
size_t gw_decay_job_stop(struct job *j, struct gw_redis *redis);
/* Frees j's scratch (and a template's batch); not j itself. */
void gw_decay_job_free(struct job *j);

#endif
