/* gw_archive.c - the archive of finished periods (DESIGN.md, Periodic boards;
 * docs/gateway.md, Archive).
 *
 * When a period of a periodic board ends, its final standings are copied from
 * Redis into an embedded SQLite database ([server] archive_path, default
 * STATE_DIR/archive.sqlite3), once, even when several gateways share Redis and
 * the file. Reads of a past period whose keys have expired from Redis are
 * answered from it (store/gw_archive_read.c).
 *
 * The database, its schema and its job queue: store/gw_archive_db.c; the
 * SQL written: store/gw_archive_sql.c; reads: store/gw_archive_read.c.
 *
 * The exactly-once run of one board-period: jobs/gw_archive_run.c. This
 * file starts and stops the job and, every TICK_MS, picks the runs:
 *
 * Exact boards: a walk over the finished periods that may still be in Redis
 * (core/rc_expiry.h, rc_expiry_archive_walk), oldest first, one run at a time per
 * board, at most RUNS_PER_TICK per board and tick; a period is passed once
 * it is archived (its marker seen or set), so a gateway that starts after
 * every gateway was down for some periods archives each of them, in order,
 * without blocking its start. A failed run (the lock held elsewhere, Redis
 * away) is tried again at the next tick; the walk does not skip it.
 *
 * Templates ("match:*" with a period): their boards are found in the
 * template's index (core/rc_instances.h), which every write of such a board
 * feeds (ops/gw_instances.c). Each tick reads up to RUNS_PER_TICK entries
 * whose period ended at least GRACE_MS ago, oldest first (ZRANGEBYSCORE by
 * the period's end), and archives them one after the other; an entry leaves
 * the index once its period is archived, or when its keys have expired
 * (logged: nothing left to copy). A failed entry stays for a later tick.
 *
 * Lifetime: gw_archive_stop closes the timer and takes no new work. Runs in
 * flight end at their next step (their Redis callbacks still come back, with
 * NULL replies once gw_redis_stop runs), then the archive is freed and the
 * database closed after its queued jobs (gw_archive_db_close).
 */
#include "jobs/gw_archive.h"
#include "jobs/gw_archive_run.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>
#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "redis/gw_lock.h"
#include "store/gw_archive_db.h"
#include "redis/gw_redis.h"
#include "rc_expiry.h"
#include "rc_instances.h"
#include "rc_err.h"
#include "rc_period.h"

#define TICK_MS 1000         /* how often the boards are looked at */
#define GRACE_MS 2000        /* a period is archived this long after it ended */
#define SETUP_RETRY_TICKS 30 /* a failed setup is tried again after this many ticks */
#define RUNS_PER_TICK 32     /* runs begun per board (or template) and tick, at most */

/* The archive is freed once it is stopping and nothing holds it any more
 * (base/gw_release): the timer closed, no run in flight, no setup queued, no
 * index read; the database closes after whatever reads are still queued. */
static struct gw_archive *archive_of(const struct gw_release *rel)
{
    return (struct gw_archive *)((char *)rel - offsetof(struct gw_archive, rel));
}

static int archive_busy(const struct gw_release *rel)
{
    const struct gw_archive *a = archive_of(rel);
    return a->runs || a->setups || a->pending;
}

static void archive_free(struct gw_release *rel)
{
    struct gw_archive *a = archive_of(rel);
    gw_archive_db_close(a->db);
    for (size_t i = 0; i < a->ntmpls; i++)
        free(a->tmpls[i].queue);
    free(a->tmpls);
    free(a->boards);
    free(a);
}

/* The database's setup reports here (first at start, then after retries). */
/* Work of ours ended (a run, a setup, an index read): freed if that was the last. */
static void maybe_close(struct gw_archive *a)
{
    gw_release_check(&a->rel);
}

static void on_setup(int rc, const char *err, void *data)
{
    struct gw_archive *a = data;
    a->setups--;
    if (rc)
        gw_log_error("archive %s: %s; nothing is archived until it works (next try in %d s)", gw_archive_db_path(a->db),
                     err, SETUP_RETRY_TICKS * TICK_MS / 1000);
    else if (err[0])
        gw_log_warn("archive %s: %s; gateways sharing the file may wait on each other", gw_archive_db_path(a->db), err);
    else
        gw_log_info("archive: %s, %zu periodic boards, %zu periodic templates", gw_archive_db_path(a->db), a->nboards,
                    a->ntmpls);
    maybe_close(a);
}

/* A setup that failed (a file another gateway held locked longer than the
 * busy timeout, a full disk) is tried again now and then. */
static void setup_again(struct gw_archive *a)
{
    a->setup_wait = 0;
    if (gw_archive_db_setup(a->db) == 0)
        a->setups++;
}

/* ---- exact boards: the walk over finished periods ------------------------------ */

/* Begins the run of the board's next due period, if any and if the tick's
 * budget allows. */
static void step_board(struct gw_archive *a, struct board_state *bs)
{
    if (bs->busy || a->rel.stopping || bs->budget == 0)
        return;
    int due = rc_expiry_archive_walk(bs->decl, gw_now_ms(a->app), GRACE_MS, bs->has_next, &bs->next);
    bs->has_next = due >= 0;
    if (due != 1)
        return;
    bs->budget--;
    bs->done[0] = '\0';
    gw_archive_run_begin(a, bs, &bs->next);
}

/* ---- templates: their boards from the index ------------------------------------ */

static void forget_entry(struct gw_archive *a, struct tmpl_state *t, const char *member)
{
    const char *argv[] = {"ZREM", t->key, member};
    if (a->app->redis)
        gw_redis_command(a->app->redis, t->key, strlen(t->key), 3, argv, NULL, NULL, NULL);
}

/* Begins the run of the next entry of the queue, dropping the ones that
 * cannot be archived on the way. */
static void step_tmpl(struct gw_archive *a, struct tmpl_state *t)
{
    int64_t now = gw_now_ms(a->app);
    while (!t->bs.busy && !a->rel.stopping && t->bs.budget > 0 && t->at < t->nqueue) {
        const char *m = t->queue[t->at];
        char name[RC_BOARD_MAX + 1];
        struct rc_period p;
        if (rc_instances_entry_parse(t->decl, m, strlen(m), name, &p) != 0) {
            gw_log_warn("archive: template %s: index entry '%.80s' is not BOARD|PERIOD of it; dropped",
                        t->decl->name, m);
            forget_entry(a, t, m);
            t->at++;
            continue;
        }
        if (!rc_expiry_period_kept(t->decl, &p, now)) {
            gw_log_warn("archive %s %s: ended more than keep periods ago, its keys are gone (no gateway archived "
                        "it in time); dropped from the index", name, p.id);
            forget_entry(a, t, m);
            t->at++;
            continue;
        }
        memcpy(t->inst.name, name, strlen(name) + 1);
        t->bs.budget--;
        t->bs.done[0] = '\0';
        t->bs.next = p; /* what on_ended compares bs.done with */
        gw_archive_run_begin(a, &t->bs, &t->bs.next);
        return; /* on_ended goes on */
    }
}

/* The entries whose period ended at least GRACE_MS ago, oldest first. */
static void on_index(redisReply *rep, void *privdata)
{
    struct tmpl_state *t = privdata;
    struct gw_archive *a = t->a;
    t->fetching = 0;
    a->pending--;
    if (a->rel.stopping) {
        maybe_close(a);
        return;
    }
    t->nqueue = t->at = 0;
    if (rep && rep->type == REDIS_REPLY_ARRAY) {
        for (size_t i = 0; i < rep->elements && t->nqueue < RUNS_PER_TICK; i++) {
            const redisReply *e = rep->element[i];
            if (e->type == REDIS_REPLY_STRING && e->len < RC_INST_ENTRY_MAX && !memchr(e->str, '\0', e->len)) {
                memcpy(t->queue[t->nqueue], e->str, e->len);
                t->queue[t->nqueue++][e->len] = '\0';
            }
        }
    } else if (rep) {
        gw_log_warn("archive: template %s: reading %s failed: %.150s", t->decl->name, t->key,
                    rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    }
    step_tmpl(a, t);
}

static void fetch_index(struct gw_archive *a, struct tmpl_state *t)
{
    char until[24], count[16];
    snprintf(until, sizeof until, "%lld", (long long)(gw_now_ms(a->app) - GRACE_MS));
    snprintf(count, sizeof count, "%d", RUNS_PER_TICK);
    const char *argv[] = {"ZRANGEBYSCORE", t->key, "-inf", until, "LIMIT", "0", count};
    if (gw_redis_command(a->app->redis, t->key, strlen(t->key), 7, argv, NULL, on_index, t) == 0) {
        t->fetching = 1;
        a->pending++;
    }
}

/* A run ended (before a->idle): the walk or the queue goes on. */
static void on_ended(struct gw_archive *a, struct board_state *bs)
{
    for (size_t i = 0; i < a->ntmpls; i++) {
        struct tmpl_state *t = &a->tmpls[i];
        if (bs != &t->bs)
            continue;
        if (t->at < t->nqueue) {
            if (strcmp(bs->done, bs->next.id) == 0)
                forget_entry(a, t, t->queue[t->at]);
            t->at++; /* a failed one stays in the index for a later tick */
        }
        step_tmpl(a, t);
        return;
    }
    if (strcmp(bs->done, bs->next.id) == 0 && rc_period_next(&bs->decl->period, &bs->next, &bs->next) == 0)
        step_board(a, bs);
}

/* Each tick: every board's walk and every template's index, each with a
 * fresh budget. Cheap when everything is archived: one ZRANGEBYSCORE per
 * template, nothing for a board whose walk is caught up. */
static void on_tick(uv_timer_t *tm)
{
    struct gw_archive *a = tm->data;
    int state = gw_archive_db_state(a->db);
    if (state < 0 && !a->setups && ++a->setup_wait >= SETUP_RETRY_TICKS)
        setup_again(a);
    if (state <= 0 || a->rel.stopping || !a->app->redis || !gw_redis_is_up(a->app->redis))
        return;
    for (size_t i = 0; i < a->nboards; i++) {
        a->boards[i].budget = RUNS_PER_TICK;
        step_board(a, &a->boards[i]);
    }
    for (size_t i = 0; i < a->ntmpls; i++) {
        struct tmpl_state *t = &a->tmpls[i];
        t->bs.budget = RUNS_PER_TICK;
        if (t->bs.busy || t->fetching)
            continue;
        if (t->at < t->nqueue)
            step_tmpl(a, t);
        else
            fetch_index(a, t);
    }
}

/* ---- start and stop ---------------------------------------------------------- */

static int archive_path(const struct rc_conf *c, char *out, size_t cap)
{
    int n = c->archive_path[0] ? snprintf(out, cap, "%s", c->archive_path)
                               : snprintf(out, cap, "%s/archive.sqlite3", c->state_dir);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

static int collect_boards(struct gw_archive *a, const struct rc_conf *c)
{
    a->boards = calloc(c->nboards ? c->nboards : 1, sizeof *a->boards);
    a->tmpls = calloc(c->nboards ? c->nboards : 1, sizeof *a->tmpls);
    if (!a->boards || !a->tmpls)
        return -1;
    for (size_t i = 0; i < c->nboards; i++) {
        const struct rc_board *b = &c->boards[i];
        if (b->period.kind == RC_PERIOD_NONE)
            continue;
        if (!b->is_template) {
            a->boards[a->nboards++].decl = b;
            continue;
        }
        struct tmpl_state *t = &a->tmpls[a->ntmpls];
        t->a = a;
        t->decl = b;
        t->inst = *b;
        t->inst.is_template = 0;
        t->bs.decl = &t->inst;
        t->bs.skip_empty = 1;
        if (rc_instances_index_key(t->key, sizeof t->key, b) != 0 || !(t->queue = calloc(RUNS_PER_TICK, sizeof *t->queue)))
            return -1;
        a->ntmpls++;
    }
    return 0;
}

/* RANKCAST_TEST_ARCHIVE_LOCK_MS, honoured only with [server] test_clock =
 * on: tests shorten the archive lock's expiry to see it renewed. */
static int64_t lock_ms(const struct rc_conf *c)
{
    const char *v = c->test_clock ? getenv("RANKCAST_TEST_ARCHIVE_LOCK_MS") : NULL;
    char *end;
    long long ms = v ? strtoll(v, &end, 10) : 0;
    if (!v || *end || ms < 100 || ms > GW_ARCHIVE_LOCK_MS)
        return GW_ARCHIVE_LOCK_MS;
    gw_log_warn("archive: lock expiry %lld ms (RANKCAST_TEST_ARCHIVE_LOCK_MS, a test setting)", ms);
    return ms;
}

int gw_archive_start(struct gw_app *app)
{
    char path[RC_CONF_STR_MAX + 32];
    struct gw_archive *a = calloc(1, sizeof *a);
    if (!a || collect_boards(a, app->conf) != 0)
        goto fail;
    a->app = app;
    gw_release_init(&a->rel, archive_free, archive_busy);
    a->idle = maybe_close;
    a->ended = on_ended;
    a->lock_ms = lock_ms(app->conf);
    if (archive_path(app->conf, path, sizeof path) != 0) {
        gw_log_error("archive path is too long");
        goto fail;
    }
    a->setups = 1; /* the first setup, queued by gw_archive_db_open */
    if (!(a->db = gw_archive_db_open(app->loop, path, on_setup, a)))
        goto fail;
    gw_lock_token(a->token);
    gw_lock_scripts_init(&a->lock);
    uv_timer_init(app->loop, &a->timer);
    a->timer.data = a;
    uv_timer_start(&a->timer, on_tick, TICK_MS, TICK_MS);
    gw_release_hold(&a->rel);
    app->archive = a;
    app->store.adb = a->db;
    return 0;
fail:
    if (a) {
        for (size_t i = 0; i < a->ntmpls; i++)
            free(a->tmpls[i].queue);
        free(a->tmpls);
        free(a->boards);
    }
    free(a);
    return RC_E_INTERNAL;
}

void gw_archive_stop(struct gw_app *app)
{
    struct gw_archive *a = app->archive;
    if (!a)
        return;
    app->archive = NULL;
    app->store.adb = NULL; /* reads already queued still run */
    gw_release_stop(&a->rel); /* the timer holds it: freed after its close callback at the earliest */
    uv_timer_stop(&a->timer);
    gw_release_close(&a->rel, (uv_handle_t *)&a->timer);
}
