/* gw_decay.c - the background jobs of decaying boards (see gw_decay.h,
 * DESIGN.md "Hot (decaying) boards", docs/gateway.md "Hot boards").
 *
 * One job per declared exact-name board with decay, and one per template
 * with decay ("hot:*"), whose boards are born at their first write: every
 * write of such a board records it in the template's index (rc:{hot:*}:boards,
 * core/rc_instances.h, fed by ops/gw_instances.c), which the template's job
 * reads (see "Templates" below).
 *
 * decay = buckets: a repeating timer every rebuild_every.
 *   not the owner:  EXISTS on the read board and the window's buckets; when
 *                   there is anything to rebuild, SET rc:{B|}:lock TOKEN NX
 *                   PX 3*rebuild_every; on OK we own it and rebuild at once.
 *                   (A board nobody writes to costs nothing: no lock, no
 *                   writes, nothing to release at shutdown.)
 *   the owner:      lock_renew.lua (compare-and-PEXPIRE) and rebuild.lua,
 *                   pipelined; a renew answering 0 (or a rebuild answering
 *                   -1) means the lock expired and may be someone else's
 *   stop:           the owner sends lock_release.lua (compare-and-DEL), so
 *                   another gateway takes over at its next tick instead of
 *                   after the lock expires
 * rebuild.lua checks the token itself, so a gateway whose lock expired while
 * its renew was in flight never rebuilds alongside the new owner.
 *
 * decay = scale: a timer every second; scale.lua runs only when the schedule
 * (core/rc_decay.c, from the script's last answer) says a period is due. The
 * script re-checks against rc:{B|}:scaled_at atomically, so several gateways
 * scale exactly once per period without a lock.
 *
 * Templates: a timer every rebuild_every (buckets) or every second (scale)
 * reads up to TMPL_BATCH boards from the template's index (ZRANGEBYSCORE;
 * buckets: only boards written within the window, by the score, the end of
 * their newest bucket), then handles them one after the other:
 *   buckets: lock_renew.lua; answered 0, SET NX PX (the lock of that board,
 *            rc:{B|}:lock, the same as a declared board's); held: rebuild.lua
 *   scale:   scale.lua (it checks the schedule itself)
 * A template with more boards than TMPL_BATCH goes on from where it stopped at
 * the next tick, so each board is visited every ceil(N / TMPL_BATCH) ticks.
 * After each full pass, boards whose newest bucket left the window are
 * removed from the index (their read board expires by its result_ttl). At
 * stop, the locks of the boards of the last batch are released
 * (compare-and-DEL: only ours go), so with up to TMPL_BATCH boards another
 * gateway takes over at its next tick; the others expire (3 x rebuild_every).
 *
 * Nothing blocks the loop: every command is async on the command connection.
 * A tick that finds Redis down (gw_redis_is_up 0) or its job's previous
 * commands unanswered does nothing. Time is the app clock (gw_now_ms), which
 * tests shift through POST /api/v1/debug/clock.
 *
 * Files: gw_decay.c start and stop; gw_decay_job.c the jobs (a declared
 * board's, a template's); their state in gw_decay_int.h; the timer, the
 * commands in flight and warn-once in jobs/gw_job.
 *
 * Ownership: struct gw_decay owns its jobs, their timers and scratch buffers,
 * and the four scripts. gw_redis borrows the scripts (gw_redis_add_script) and
 * touches them only while (re)connecting, never after gw_redis_stop, which
 * main calls right after gw_decay_stop. The struct is freed once every timer
 * is closed and every command it sent has been answered (gw_redis_stop
 * answers the pending ones with NULL), whichever comes last.
 */
#include "jobs/gw_decay.h"
#include "jobs/gw_decay_int.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>
#include <hiredis/hiredis.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "redis/gw_lock.h"
#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "rc_decay.h"
#include "rc_keys.h"
#include "rc_lua.h"

/* ---- start and stop ------------------------------------------------------------------- */

/* "host:pid:16 hex digits": unique per process, and tells an operator (or a
 * test) which gateway holds a lock. */
static void make_token(char *out, size_t cap)
{
    char host[64];
    size_t hlen = sizeof host;
    unsigned char rnd[8] = {0};
    if (uv_os_gethostname(host, &hlen) != 0)
        snprintf(host, sizeof host, "host");
    if (uv_random(NULL, NULL, rnd, sizeof rnd, 0, NULL) != 0) {
        uint64_t x = uv_hrtime();
        memcpy(rnd, &x, sizeof rnd);
    }
    int n = snprintf(out, cap, "%s:%d:", host, (int)uv_os_getpid());
    for (size_t i = 0; i < sizeof rnd && n > 0 && (size_t)n + 2 < cap; i++)
        n += snprintf(out + n, cap - (size_t)n, "%02x", rnd[i]);
}

/* The last timer is closed and the last command answered (base/gw_release). */
static void decay_free(struct gw_release *rel)
{
    struct gw_decay *d = (struct gw_decay *)((char *)rel - offsetof(struct gw_decay, rel));
    for (size_t i = 0; i < d->njobs; i++)
        gw_decay_job_free(&d->jobs[i]);
    for (size_t i = 0; i < d->ntmpls; i++)
        gw_decay_job_free(&d->tmpls[i].job);
    free(d->jobs);
    free(d->tmpls);
    free(d);
}

/* Allocates everything before the first timer starts, so a failure leaves
 * nothing behind (app->decay stays NULL). */
int gw_decay_start(struct gw_app *app)
{
    const struct rc_conf *c = app->conf;
    size_t n = 0, nt = 0;
    for (size_t i = 0; i < c->nboards; i++) {
        const struct rc_board *b = &c->boards[i];
        if (b->decay.kind == RC_DECAY_NONE)
            continue;
        if (b->is_template)
            nt++;
        else
            n++;
    }
    if (n + nt == 0)
        return 0;
    struct gw_decay *d = calloc(1, sizeof *d);
    if (!d || !(d->jobs = calloc(n ? n : 1, sizeof *d->jobs)) || !(d->tmpls = calloc(nt ? nt : 1, sizeof *d->tmpls))) {
        if (d)
            free(d->jobs);
        free(d);
        gw_log_error("decay: out of memory");
        return -1;
    }
    d->app = app;
    gw_release_init(&d->rel, decay_free, NULL);
    make_token(d->token, sizeof d->token);
    for (size_t i = 0; i < c->nboards; i++) {
        const struct rc_board *b = &c->boards[i];
        if (b->decay.kind == RC_DECAY_NONE)
            continue;
        if (b->is_template ? gw_decay_job_init_tmpl(d, &d->tmpls[d->ntmpls++], b)
                           : gw_decay_job_init(d, &d->jobs[d->njobs++], b)) {
            gw_release_stop(&d->rel); /* nothing holds it yet: freed now */
            gw_log_error("decay: board %s: cannot set up its job", b->name);
            return -1;
        }
    }
    gw_script_init(&d->rebuild, rc_lua_rebuild);
    gw_script_init(&d->scale, rc_lua_scale);
    gw_lock_scripts_init(&d->lock);
    gw_redis_add_script(app->redis, &d->rebuild);
    gw_redis_add_script(app->redis, &d->scale);
    gw_redis_add_script(app->redis, &d->lock.renew);
    gw_redis_add_script(app->redis, &d->lock.release);
    for (size_t i = 0; i < d->njobs; i++)
        gw_decay_job_start(&d->jobs[i]);
    for (size_t i = 0; i < d->ntmpls; i++)
        gw_decay_job_start(&d->tmpls[i].job);
    app->decay = d;
    return 0;
}

/* Closes the timers; an owner gives its lock up (compare-and-DEL), written
 * out now because gw_redis_stop comes next and would drop it unsent. */
void gw_decay_stop(struct gw_app *app)
{
    struct gw_decay *d = app ? app->decay : NULL;
    if (!d)
        return;
    app->decay = NULL;
    gw_release_stop(&d->rel); /* the timers hold it: freed after their close callbacks at the earliest */
    struct gw_redis *redis = app->redis && gw_redis_is_up(app->redis) ? app->redis : NULL;
    size_t queued = 0;
    for (size_t i = 0; i < d->njobs; i++)
        queued += gw_decay_job_stop(&d->jobs[i], redis);
    for (size_t i = 0; i < d->ntmpls; i++)
        queued += gw_decay_job_stop(&d->tmpls[i].job, redis);
    if (queued)
        gw_redis_flush(app->redis);
}
