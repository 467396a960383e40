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
 * file starts and stops the job and looks at the boards every TICK_MS.
 *
 * Not archived (yet): boards declared by a template ("match:*" with a
 * period), whose instances cannot be listed without scanning Redis; and
 * periods older than the one that ended last (every gateway down for a whole
 * period): only the most recent finished period is looked at.
 *
 * Lifetime: gw_archive_stop closes the timer and takes no new work. Runs in
 * flight end at their next step (their Redis callbacks still come back, with
 * NULL replies once gw_redis_stop runs), then the archive is freed and the
 * database closed after its queued jobs (gw_adb_close).
 */
#include "jobs/gw_archive.h"
#include "jobs/gw_archive_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "store/gw_archive_db.h"
#include "redis/gw_redis.h"
#include "rc_err.h"
#include "rc_period.h"

#define TICK_MS 1000         /* how often the boards are looked at */
#define GRACE_MS 2000        /* a period is archived this long after it ended */
#define SETUP_RETRY_TICKS 30 /* a failed setup is tried again after this many ticks */

/* Frees the archive once it is stopping and nothing holds it any more: the
 * timer closed, no run in flight, no setup queued; the database closes after
 * whatever reads are still queued. */
static void maybe_close(struct gw_archive *a)
{
    if (!a->stopping || !a->timer_closed || a->runs || a->setups)
        return;
    gw_adb_close(a->db);
    free(a->boards);
    free(a);
}

/* The database's setup reports here (first at start, then after retries). */
static void on_setup(int rc, const char *err, void *data)
{
    struct gw_archive *a = data;
    a->setups--;
    if (rc)
        gw_log_error("archive %s: %s; nothing is archived until it works (next try in %d s)", gw_adb_path(a->db),
                     err, SETUP_RETRY_TICKS * TICK_MS / 1000);
    else if (err[0])
        gw_log_warn("archive %s: %s; gateways sharing the file may wait on each other", gw_adb_path(a->db), err);
    else
        gw_log_info("archive: %s, %zu periodic boards", gw_adb_path(a->db), a->nboards);
    maybe_close(a);
}

/* A setup that failed (a file another gateway held locked longer than the
 * busy timeout, a full disk) is tried again now and then. */
static void setup_again(struct gw_archive *a)
{
    a->setup_wait = 0;
    if (gw_adb_setup(a->db) == 0)
        a->setups++;
}

/* Each tick: start a run for every board whose last finished period (over
 * for at least GRACE_MS) is not known to be archived. Cheap when it is. */
static void on_tick(uv_timer_t *t)
{
    struct gw_archive *a = t->data;
    int state = gw_adb_state(a->db);
    if (state < 0 && !a->setups && ++a->setup_wait >= SETUP_RETRY_TICKS)
        setup_again(a);
    if (state <= 0 || a->stopping || !a->app->redis || !gw_redis_is_up(a->app->redis))
        return;
    int64_t now = gw_now_ms(a->app);
    for (size_t i = 0; i < a->nboards; i++) {
        struct board_state *bs = &a->boards[i];
        struct rc_period cur, prev;
        if (bs->busy || rc_period_at(&bs->decl->period, now - GRACE_MS, &cur) != 0 ||
            rc_period_prev(&bs->decl->period, &cur, &prev) != 0 || strcmp(bs->done, prev.id) == 0)
            continue;
        gw_archive_run_begin(a, bs, &prev);
    }
}

/* ---- start and stop ---------------------------------------------------------- */

static int archive_path(const struct rc_conf *c, char *out, size_t cap)
{
    int n = c->archive_path[0] ? snprintf(out, cap, "%s", c->archive_path)
                               : snprintf(out, cap, "%s/archive.sqlite3", c->state_dir);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* A random token naming this instance in the locks it takes. */
static void make_token(char *out)
{
    unsigned char raw[16];
    if (uv_random(NULL, NULL, raw, sizeof raw, 0, NULL) != 0) {
        uint64_t x = uv_hrtime() ^ ((uint64_t)uv_os_getpid() << 32);
        memcpy(raw, &x, sizeof x);
        memcpy(raw + 8, &x, sizeof x);
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

static int collect_boards(struct gw_archive *a, const struct rc_conf *c)
{
    a->boards = calloc(c->nboards ? c->nboards : 1, sizeof *a->boards);
    if (!a->boards)
        return -1;
    for (size_t i = 0; i < c->nboards; i++) {
        const struct rc_board *b = &c->boards[i];
        if (b->period.kind != RC_PERIOD_NONE && !b->is_template) /* templates: see the banner */
            a->boards[a->nboards++].decl = b;
    }
    return 0;
}

int gw_archive_start(struct gw_app *app)
{
    char path[RC_CONF_STR_MAX + 32];
    struct gw_archive *a = calloc(1, sizeof *a);
    if (!a || collect_boards(a, app->conf) != 0)
        goto fail;
    a->app = app;
    a->idle = maybe_close;
    if (archive_path(app->conf, path, sizeof path) != 0) {
        gw_log_error("archive path is too long");
        goto fail;
    }
    a->setups = 1; /* the first setup, queued by gw_adb_open */
    if (!(a->db = gw_adb_open(app->loop, path, on_setup, a)))
        goto fail;
    make_token(a->token);
    gw_lock_scripts_init(&a->lock);
    uv_timer_init(app->loop, &a->timer);
    a->timer.data = a;
    uv_timer_start(&a->timer, on_tick, TICK_MS, TICK_MS);
    app->archive = a;
    app->store.adb = a->db;
    return 0;
fail:
    if (a)
        free(a->boards);
    free(a);
    return RC_E_INTERNAL;
}

static void on_timer_closed(uv_handle_t *h)
{
    struct gw_archive *a = h->data;
    a->timer_closed = 1;
    maybe_close(a);
}

void gw_archive_stop(struct gw_app *app)
{
    struct gw_archive *a = app->archive;
    if (!a)
        return;
    app->archive = NULL;
    app->store.adb = NULL; /* reads already queued still run */
    a->stopping = 1;
    uv_timer_stop(&a->timer);
    uv_close((uv_handle_t *)&a->timer, on_timer_closed);
}
