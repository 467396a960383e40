/* gw_decay_int.h - the decay jobs' own state, shared by the files of
 * jobs/gw_decay* and by nobody else (the public face is gw_decay.h; the
 * design is in gw_decay.c's banner).
 *
 * Files, bottom to top (each calls only those before it):
 *   gw_decay_job.c   one job: lifetime, the scratch of a call, the rebuild
 *                    lock, the rebuild and scale calls, the ticks of a
 *                    declared board
 *   gw_decay_tmpl.c  a template's job: its boards from the index, in batches
 *   gw_decay.c       start and stop
 */
#ifndef GW_DECAY_INT_H
#define GW_DECAY_INT_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>
#include <hiredis/hiredis.h>

#include "redis/gw_lock.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_conf.h"
#include "rc_decay.h"
#include "rc_keys.h"

struct gw_app;

#define SCALE_CHECK_MS 1000 /* how often a scale job looks at its schedule */
#define FIRST_TRY_MS 50     /* a rebuild job retries this often until Redis is first up */
#define TOKEN_MAX 128
#define NUM_MAX 32          /* one weight or number as text */
#define TMPL_BATCH 64       /* boards of a template handled per tick */

/* The keys of a job that never change. */
enum { K_TMP, K_READ, K_SEQ, K_LOCK, K_REBUILDS, K_SCALED_AT, K_COUNT };

struct tmpl;

struct job {
    struct gw_decay *d;             /* owner */
    struct tmpl *tmpl;              /* a template's job: its state; NULL for an exact board */
    const struct rc_board *board;   /* borrowed from app->conf, which outlives us */
    uv_timer_t timer;
    unsigned busy;                  /* commands of this job not answered yet */
    int owns;                       /* buckets: we hold the lock, as far as we know */
    int started;                    /* buckets: the first lock attempt went out */
    int warned;                     /* an error was logged; quiet until a success */
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
 * template's boards in turn (see the banner, "Templates"). */
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
    struct gw_script rebuild, scale;
    struct gw_lock_scripts lock;     /* the rebuild lock's renewal and release */
    char token[TOKEN_MAX];          /* "host:pid:random": names this gateway in the lock */
    struct job *jobs;
    size_t njobs;
    struct tmpl *tmpls;
    size_t ntmpls;
    int open_timers;
    unsigned inflight;              /* commands sent and not answered, all jobs */
    int stopping;
};

/* ---- gw_decay_job.c ------------------------------------------------------ */

/* Frees d once it is stopping, its timers are closed and nothing it sent is
 * unanswered. */
void gw_dk_maybe_free(struct gw_decay *d);
void gw_dk_on_timer_closed(uv_handle_t *h);
/* Every reply callback starts here (0: go on; -1: stopping, touch nothing). */
int gw_dk_answered(struct job *j);
void gw_dk_sent(struct job *j);
void gw_dk_warn_once(struct job *j, const char *what, const redisReply *r);
void gw_dk_warn_err(struct job *j, const char *what, const char *err);
int gw_dk_send_rebuild_cb(struct job *j, struct gw_redis *redis, gw_redis_reply_cb *cb);
int gw_dk_send_scale(struct job *j, struct gw_redis *redis, int64_t now, gw_redis_reply_cb *cb);
void gw_dk_on_rebuild_tick(uv_timer_t *t);
void gw_dk_on_scale_tick(uv_timer_t *t);
void gw_dk_on_released(int rc, const char *err, void *privdata);
/* The keys of j's board (a template's job: of the board in hand). Returns 0 or -1. */
int gw_dk_job_keys(struct job *j);
/* Keys and, for buckets, the scratch of one rebuild call. Returns 0 or -1. */
int gw_dk_init_job(struct gw_decay *d, struct job *j, const struct rc_board *b);
void gw_dk_log_job(const struct job *j);

/* ---- gw_decay_tmpl.c ----------------------------------------------------- */

/* A template's job: the template copied as the board in hand (renamed for
 * each of its boards), its index key and the names of one batch. */
int gw_dk_init_tmpl(struct gw_decay *d, struct tmpl *tp, const struct rc_board *b);
void gw_dk_log_tmpl(const struct tmpl *tp);
/* ZRANGEBYSCORE of the next batch of the template's boards. */
void gw_dk_on_tmpl_tick(uv_timer_t *t);

#endif
