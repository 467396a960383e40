/* gw_feed_fault.c - test-only faults that make a feed lose an event on
 * purpose, so that the gap fill (gw_feed.c) is tested by design, not luck.
 * Read from the environment only when [server] test_clock = on (a setting
 * for tests, never on in production: without it the variables are never
 * read), and logged as a warning when in force:
 *
 *   RANKCAST_TEST_DROP_EVENTS=board:N[,board:N...]
 *       the Nth change event (1-based, counted per board name on this
 *       process, any period) received over pub/sub is thrown away before
 *       the fan-out sees it: as if lost between Redis and the gateway.
 *   RANKCAST_TEST_FEED_LOG_DELAY_MS=MS
 *       each feed catch-up's log read is answered MS later than it came
 *       back (the read itself ran in Redis on time): events published
 *       meanwhile come first, as with a slow reply.
 *   RANKCAST_TEST_FAIL_FEED_LOG=N
 *       the Nth feed catch-up log read of this process (1-based, a
 *       subscribe's first read included) is answered "Redis unreachable"
 *       instead of its reply: as when the slot's primary is paused or
 *       failing over while the read is out, and the board's channel lives
 *       on another node, so no resubscribe follows.
 */
#include "fanout/gw_feed_fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gw_log.h"
#include "gw_app.h"
#include "rc_names.h"

#define DROP_MAX 16

struct drop {
    char name[RC_BOARD_MAX + 1];
    long nth;
    long heard;
};

static int loaded;
static struct drop drops[DROP_MAX];
static size_t ndrops;
static int64_t delay_ms;
static long fail_nth, log_reads;

static void load(const struct gw_app *app)
{
    if (loaded)
        return;
    loaded = 1;
    if (!app->conf->test_clock)
        return;
    const char *d = getenv("RANKCAST_TEST_FEED_LOG_DELAY_MS");
    if (d && atoll(d) > 0) {
        delay_ms = atoll(d);
        gw_log_warn("feeds: catch-up replies delayed %lld ms (RANKCAST_TEST_FEED_LOG_DELAY_MS, a test setting)",
                    (long long)delay_ms);
    }
    const char *fl = getenv("RANKCAST_TEST_FAIL_FEED_LOG");
    if (fl && atol(fl) > 0) {
        fail_nth = atol(fl);
        gw_log_warn("feeds: catch-up log read %ld will fail (RANKCAST_TEST_FAIL_FEED_LOG, a test setting)", fail_nth);
    }
    const char *spec = getenv("RANKCAST_TEST_DROP_EVENTS");
    for (const char *p = spec; p && *p && ndrops < DROP_MAX;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *colon = memchr(p, ':', len);
        /* board names may hold ':' (match:1001): N follows the last one */
        for (const char *q = colon; q && q < p + len; q = memchr(q + 1, ':', (size_t)(p + len - q - 1)))
            colon = q;
        if (colon && (size_t)(colon - p) <= RC_BOARD_MAX && atol(colon + 1) > 0) {
            struct drop *x = &drops[ndrops++];
            memcpy(x->name, p, (size_t)(colon - p));
            x->name[colon - p] = '\0';
            x->nth = atol(colon + 1);
            gw_log_warn("feeds: change event %ld of %s will be dropped (RANKCAST_TEST_DROP_EVENTS, a test setting)",
                        x->nth, x->name);
        }
        p = comma ? comma + 1 : NULL;
    }
}

int gw_feed_fault_drop(const struct gw_app *app, const char *board)
{
    load(app);
    int drop = 0;
    for (size_t i = 0; i < ndrops; i++) {
        if (strcmp(drops[i].name, board) != 0)
            continue;
        if (++drops[i].heard == drops[i].nth) {
            gw_log_warn("feeds: dropped change event %ld of %s (test setting)", drops[i].nth, board);
            drop = 1;
        }
    }
    return drop;
}

int64_t gw_feed_fault_delay_ms(const struct gw_app *app)
{
    load(app);
    return delay_ms;
}

int gw_feed_fault_fail_log(const struct gw_app *app)
{
    load(app);
    if (!fail_nth || ++log_reads != fail_nth)
        return 0;
    gw_log_warn("feeds: failed catch-up log read %ld (test setting)", fail_nth);
    return 1;
}
