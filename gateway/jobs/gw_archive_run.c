/* gw_archive_run.c - the archive run: one finished period of one board
 * copied from Redis into the archive database exactly once, across gateways
 * (DESIGN.md, Periodic boards). Redis steps run on the loop, SQLite steps as
 * jobs of store/gw_archive_db.
 *
 * Exactly once. Every TICK_MS the job (jobs/gw_archive.c) picks finished
 * board-periods, over for at least GRACE_MS (so writes in flight have
 * landed): each exact board's periods still in Redis, oldest first, and the
 * boards of periodic templates from their index. For one not yet archived:
 *   1. EXISTS rc:{B|P}:archived           set: done, by us or another gateway
 *   2. EXISTS rc:{B|P}:z                  none: an empty period, recorded in
 *                                         SQLite (step 6) without touching Redis
 *                                         (a template's board: passed over)
 *   3. SET rc:{B|P}:archiving TOKEN NX PX LOCK_MS (redis/gw_lock)
 *                                         taken: another gateway is on it;
 *                                         renewed (compare-and-PEXPIRE) once a
 *                                         third of LOCK_MS has gone by, before
 *                                         the next page of step 5, and always
 *                                         right before steps 6 and 7
 *   4. SQLite: is the period row there?   yes: only the Redis marker is missing
 *   5. lua/read.lua "range" pages, each written in one transaction on the
 *      threadpool before the next page is read, so a large board never
 *      holds the loop; a seq or total that moves between pages restarts the
 *      copy (jobs/gw_archive_copy.c)
 *   6. SQLite: the period row (INSERT OR IGNORE: only its first writer logs)
 *   7. SET rc:{B|P}:archived 1 PX TTL     expires with the period's keys
 * A sharded board (docs/sharded.md, "Periods and templates") keeps its
 * marker and lock in its own tag {B|P}; step 2 asks every shard's set, and
 * step 5 takes the pages of its shards merged (jobs/gw_archive_shard.c).
 * The run ends by releasing the lock (compare-and-DEL: only our token), after
 * step 7, or on a failure or stop so the next attempt need not wait for the
 * expiry. Since step 1 comes before step 3, a gateway that gets the lock after
 * another finished sees the marker or (step 4) the period row, unless it
 * looked for the marker just before it was set: then it copies the same rows
 * of the finished period again (INSERT OR REPLACE, INSERT OR IGNORE: no
 * duplicates), as after an expiry. A gateway that dies mid-archive leaves a lock
 * that expires within LOCK_MS; the next attempt starts over. A renewal that
 * finds the lock gone (expired, or taken by another gateway) ends the run at
 * once: no period row, no marker, the lock left to its owner. Since a
 * renewal comes right before steps 6 and 7, the marker is only ever set
 * while the lock is ours for LOCK_MS more. Should two
 * attempts overlap (an archive outliving its lock), both write the same rows
 * of a finished period and the primary key keeps one period row. Gateways on
 * other hosts, with files of their own, share the Redis marker: each period
 * with rows lands in the file of the gateway that archived it (empty periods
 * in every file).
 */
#include "jobs/gw_archive_run.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_clock.h"
#include "base/gw_log.h"
#include "jobs/gw_archive_copy.h"
#include "jobs/gw_archive_shard.h"
#include "jobs/gw_webhook.h"
#include "store/gw_archive_db.h"
#include "store/gw_archive_sql.h"
#include "store/gw_read.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_err.h"
#include "rc_expiry.h"
#include "rc_keys.h"
#include "rc_read_args.h"

#define LOCK_MS (r->a->lock_ms) /* expiry of rc:{B|P}:archiving (GW_ARCHIVE_LOCK_MS) */
#define ERR_MAX GW_ADB_ERR_MAX

/* ---- one archive run: Redis steps on the loop, SQLite steps as jobs -------- */

struct run {
    struct gw_archive *a;
    struct board_state *bs;
    struct rc_period period;         /* the finished period */
    char zkey[RC_KEY_MAX];
    char marker[RC_KEY_MAX];         /* rc:{B|P}:archived */
    char lock[RC_KEY_MAX];           /* rc:{B|P}:archiving */
    struct gw_acopy copy;            /* step 5; its seq and total are the period row's */
    int empty;                       /* no sorted set: recorded as seq 0, total 0, no marker */
    int owns;                        /* we hold r->lock */
    int64_t locked_at;               /* when it was taken or last renewed (monotonic ms) */
    unsigned renewals;               /* how often it was renewed */
    void (*then)(struct run *r);     /* the step after the renewal in flight */
    struct gw_ashard *merge;         /* a sharded board: its shards' rows merged (gw_archive_shard.h) */
};

static void renew_then(struct run *r, void (*then)(struct run *r));

struct check_job {                   /* step 4 */
    struct gw_adb_job job;
    struct run *r;
    int found;
};

struct finish_job {                  /* step 6 */
    struct gw_adb_job job;
    struct run *r;
    int64_t archived_at;
    int inserted;
};

/* A release in flight holds the archive (its scripts) like a run does. */
static void on_released(int rc, const char *err, void *privdata)
{
    struct gw_archive *a = privdata;
    (void)rc;
    (void)err;
    a->runs--;
    a->idle(a);
}

/* Ends the run; a lock we hold is given up (compare-and-DEL), so a run that
 * failed or was stopped is retried (here or elsewhere) without waiting for
 * the expiry. After the marker is set, a next taker sees it. */
static void run_end(struct run *r)
{
    struct gw_archive *a = r->a;
    struct gw_app *app = a->app;
    if (r->owns && app->redis && gw_lock_release(&a->lock, app->redis, r->lock, a->token, on_released, a) == 0)
        a->runs++;
    struct board_state *bs = r->bs;
    bs->busy = 0;
    gw_archive_shard_free(r->merge);
    free(r);
    if (a->ended && !a->rel.stopping)
        a->ended(a, bs); /* may begin the next run of bs */
    a->runs--;
    a->idle(a);
}

/* Gives up this attempt; the lock (if ours) expires and a later tick retries. */
static void run_fail(struct run *r, const char *why)
{
    if (!r->a->rel.stopping)
        gw_log_warn("archive %s %s: %s; retrying within %d s", r->bs->decl->name, r->period.id, why,
                    (int)((LOCK_MS + 999) / 1000));
    run_end(r);
}

/* Sends one single-key command for r (argv[1] is the key it is routed by).
 * Returns 0, or -1 when Redis is not up or we are stopping (cb not called). */
static int run_command(struct run *r, gw_redis_reply_cb *cb, int argc, const char *const *argv)
{
    struct gw_app *app = r->a->app;
    if (r->a->rel.stopping || !app->redis)
        return -1;
    return gw_redis_command(app->redis, argv[1], strlen(argv[1]), argc, argv, NULL, cb, r) == 0 ? 0 : -1;
}

/* The marker lives as long as the period's keys: until the end of the period
 * `keep` periods later (as rc_write_args computes the keys' TTL). */
static void on_marked(redisReply *rep, void *privdata)
{
    struct run *r = privdata;
    if (rep && rep->type == REDIS_REPLY_STATUS) {
        snprintf(r->bs->done, sizeof r->bs->done, "%s", r->period.id);
        gw_webhook_archived(r->a->app, r->bs->decl, r->bs->decl->name, &r->period); /* the period-close webhook */
    }
    run_end(r);
}

/* Step 7, behind a renewal of the lock: set only while it is ours. */
static void set_marker_now(struct run *r);

static void set_marker(struct run *r)
{
    renew_then(r, set_marker_now);
}

static void set_marker_now(struct run *r)
{
    /* the marker lives as long as the period's keys (rc_expiry.h) */
    int64_t ttl;
    if (rc_expiry_period_ttl_ms(r->bs->decl, &r->period, gw_now_ms(r->a->app), &ttl, NULL) != 0)
        ttl = 86400000; /* past the calendar: a day is plenty */
    char px[24];
    snprintf(px, sizeof px, "%lld", (long long)ttl);
    const char *argv[] = {"SET", r->marker, "1", "PX", px};
    if (run_command(r, on_marked, 5, argv) != 0)
        run_end(r);
}

static void work_finish(struct gw_adb_job *j, sqlite3 *db)
{
    struct finish_job *f = (struct finish_job *)j;
    struct run *r = f->r;
    gw_archive_sql_put_period(j, db, r->bs->decl->name, r->period.id, r->copy.seq, r->copy.total, f->archived_at, &f->inserted);
}

static void done_finish(struct gw_adb_job *j)
{
    struct finish_job *f = (struct finish_job *)j;
    struct run *r = f->r;
    int rc = j->rc, inserted = f->inserted;
    char err[ERR_MAX];
    memcpy(err, j->err, sizeof err);
    free(f);
    if (rc) {
        run_fail(r, err);
        return;
    }
    if (inserted)
        gw_log_info("archived %s %s: %" PRId64 " rows", r->bs->decl->name, r->period.id, r->copy.total);
    if (r->empty) {
        snprintf(r->bs->done, sizeof r->bs->done, "%s", r->period.id);
        run_end(r);
        return;
    }
    set_marker(r);
}

/* Step 6, behind a renewal of the lock. */
static void finish_run_now(struct run *r);

static void finish_run(struct run *r)
{
    renew_then(r, finish_run_now);
}

static void finish_run_now(struct run *r)
{
    struct finish_job *f = calloc(1, sizeof *f);
    if (!f) {
        run_fail(r, "out of memory");
        return;
    }
    f->r = r;
    f->archived_at = gw_now_ms(r->a->app);
    if (gw_archive_db_submit(r->a->db, &f->job, work_finish, done_finish) != 0) {
        free(f);
        run_fail(r, "the archive is closing");
    }
}

/* Step 5: the copy of the rows (gw_archive_copy.c), page after page. */
static void read_page_now(struct run *r);
static void read_page(struct run *r);

static int64_t mono_ms(void)
{
    return gw_clock_mono_us() / 1000;
}

static void on_renewed(int rc, const char *err, void *privdata)
{
    struct run *r = privdata;
    if (rc == 1 && !r->a->rel.stopping) {
        r->locked_at = mono_ms();
        r->renewals++;
        if (r->copy.next > 0) /* a long copy: one line per third of the lock's expiry */
            gw_log_info("archive %s %s: %" PRId64 " of %" PRId64 " rows copied, lock renewed", r->bs->decl->name,
                        r->period.id, r->copy.next, r->copy.total);
        r->then(r);
        return;
    }
    if (rc == 0)
        r->owns = 0; /* expired or taken: not ours to release, and no marker from us */
    run_fail(r, rc == 0 ? "the archive lock was lost (expired or taken over)" : err ? err : "Redis went away");
}

/* Renews our lock (compare-and-PEXPIRE), then goes on with then(r); a lock
 * found lost ends the run without a period row or a marker. Runs then(r)
 * straight away when the run holds no lock (an empty period). */
static void renew_then(struct run *r, void (*then)(struct run *r))
{
    struct gw_app *app = r->a->app;
    if (!r->owns) {
        then(r);
        return;
    }
    r->then = then;
    if (r->a->rel.stopping || !app->redis ||
        gw_lock_renew(&r->a->lock, app->redis, r->lock, r->a->token, LOCK_MS, on_renewed, r) != 0)
        run_fail(r, "Redis is unavailable");
}

/* A long run renews its lock (a third of the expiry gone, on the monotonic
 * clock: the test clock may jump) before the next page, so a big board never
 * outlives it. */
static void read_page(struct run *r)
{
    if (r->owns && mono_ms() - r->locked_at >= LOCK_MS / 3)
        renew_then(r, read_page_now);
    else
        read_page_now(r);
}

static void read_page_now(struct run *r)
{
    gw_archive_copy_read(&r->copy);
}

/* The copy's hooks (gw_archive_copy.h). */
static struct run *run_of(struct gw_acopy *c)
{
    return (struct run *)((char *)c - offsetof(struct run, copy));
}

static void copy_read_on(struct gw_acopy *c)
{
    read_page(run_of(c));
}

static void copy_done(struct gw_acopy *c, const char *why)
{
    if (why)
        run_fail(run_of(c), why);
    else
        finish_run(run_of(c));
}

static void work_check(struct gw_adb_job *j, sqlite3 *db)
{
    struct check_job *c = (struct check_job *)j;
    gw_archive_sql_has_period(j, db, c->r->bs->decl->name, c->r->period.id, &c->found);
}

static void done_check(struct gw_adb_job *j)
{
    struct check_job *c = (struct check_job *)j;
    struct run *r = c->r;
    int rc = j->rc, found = c->found;
    char err[ERR_MAX];
    memcpy(err, j->err, sizeof err);
    free(c);
    if (rc)
        run_fail(r, err);
    else if (r->a->rel.stopping)
        run_end(r);
    else if (found)
        set_marker(r); /* archived here; the Redis marker was lost or expired */
    else
        read_page(r);
}

static void on_locked(int rc, const char *err, void *privdata)
{
    struct run *r = privdata;
    (void)err;
    if (rc == 1) {
        r->owns = 1;
        r->locked_at = mono_ms();
    }
    if (rc != 1 || r->a->rel.stopping) {
        run_end(r); /* 0: another gateway holds the lock; a later tick sees its marker */
        return;
    }
    struct check_job *c = calloc(1, sizeof *c);
    if (!c) {
        run_fail(r, "out of memory");
        return;
    }
    c->r = r;
    if (gw_archive_db_submit(r->a->db, &c->job, work_check, done_check) != 0) {
        free(c);
        run_fail(r, "the archive is closing");
    }
}

/* Step 2: an empty period is recorded straight away, without writing to
 * Redis (no lock, no marker): the period row's INSERT OR IGNORE is enough to
 * log it once per file, and Redis is left untouched by every idle board. */
static void board_exists(struct run *r, int exists)
{
    if (!exists && r->bs->skip_empty) {
        /* a template's board: no sorted set means no write landed (one the
         * script refused was still recorded in the index): nothing to keep */
        snprintf(r->bs->done, sizeof r->bs->done, "%s", r->period.id);
        run_end(r);
        return;
    }
    if (!exists) {
        r->empty = 1;
        finish_run(r);
        return;
    }
    if (r->a->rel.stopping || gw_lock_acquire(r->a->app->redis, r->lock, r->a->token, LOCK_MS, on_locked, r) != 0)
        run_end(r);
}

static void on_board_exists(redisReply *rep, void *privdata)
{
    struct run *r = privdata;
    if (!rep || rep->type != REDIS_REPLY_INTEGER || r->a->rel.stopping)
        run_end(r);
    else
        board_exists(r, rep->integer != 0);
}

/* A sharded board: any shard's sorted set counts. */
static void on_shards_exist(int code, int any, void *privdata)
{
    struct run *r = privdata;
    if (code || r->a->rel.stopping)
        run_end(r);
    else
        board_exists(r, any);
}

static void on_marker(redisReply *rep, void *privdata)
{
    struct run *r = privdata;
    if (!rep || rep->type != REDIS_REPLY_INTEGER || r->a->rel.stopping) {
        run_end(r);
        return;
    }
    if (rep->integer == 1) {
        snprintf(r->bs->done, sizeof r->bs->done, "%s", r->period.id);
        gw_webhook_archived(r->a->app, r->bs->decl, r->bs->decl->name, &r->period); /* the period-close webhook */
        run_end(r);
        return;
    }
    const char *argv[] = {"EXISTS", r->zkey};
    if (r->merge ? gw_archive_shard_exists(r->merge, on_shards_exist, r) != 0
                 : run_command(r, on_board_exists, 2, argv) != 0)
        run_end(r);
}

static int board_key(char *out, const struct run *r, const char *suffix)
{
    return rc_keys_board(out, RC_KEY_MAX, r->bs->decl->name, r->period.id, suffix, NULL);
}

/* Step 1 for period p of bs. */
void gw_archive_run_begin(struct gw_archive *a, struct board_state *bs, const struct rc_period *p)
{
    struct run *r = calloc(1, sizeof *r);
    if (!r)
        return;
    r->a = a;
    r->bs = bs;
    r->period = *p;
    /* a sharded board's marker and lock are in its own tag {B|P}, beside
     * its shards' {B#i|P} (docs/sharded.md, "Periods") */
    if (board_key(r->zkey, r, "z") || board_key(r->marker, r, "archived") || board_key(r->lock, r, "archiving") ||
        (bs->decl->shards > 1 && !(r->merge = gw_archive_shard_new(a->app, bs->decl, bs->decl->name, p->id)))) {
        free(r);
        return;
    }
    r->copy = (struct gw_acopy){.a = a, .decl = bs->decl, .period = r->period.id, .merge = r->merge,
                                .read_on = copy_read_on, .done = copy_done};
    bs->busy = 1;
    a->runs++;
    const char *argv[] = {"EXISTS", r->marker};
    if (run_command(r, on_marker, 2, argv) != 0)
        run_end(r);
}

