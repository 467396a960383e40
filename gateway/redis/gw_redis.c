/* gw_redis.c - the gateway's two Redis connections, kept alive (see gw_redis.h).
 *
 * States of the manager:
 *
 *   WAITING ---retry timer---> CONNECTING ---all setup replies---> UP
 *      ^                            |                               |
 *      +------------- fail() -------+-------------------------------+
 *
 *   any state ---gw_redis_stop()---> STOPPED (freed after the last close)
 *
 * CONNECTING opens a new command and a new subscribe context. Each one sends
 * its setup as soon as hiredis reports it connected: the command connection
 * CONFIG GET/SET notify-keyspace-events (optional), SCRIPT LOAD for every
 * script and a PING; the subscribe connection one PSUBSCRIBE per pattern (or a
 * PING when there is none). Every setup command counts in setup_pending and
 * the manager is UP when both connections are connected, all their setup was
 * queued and setup_pending is back to 0. So on_up is only ever called from a
 * reply callback, never from a connect callback (see "Rules" below).
 *
 * fail() is the one way out of CONNECTING and UP: a connect error, a lost
 * connection, a setup error reply, or the deadline timer (setup not done, or a
 * PING unanswered, within ping_timeout_ms). It drops both connections, calls
 * on_down if the manager was UP, and arms the retry timer with capped
 * exponential backoff and full jitter.
 *
 * Rules that keep us clear of hiredis 0.14 (async.c) pitfalls:
 * - hiredis frees a context after its connect callback reports an error and
 *   after its disconnect callback; we clear our pointer in both and never
 *   touch the context again.
 * - The disconnect callback only fires for contexts that were connected. A
 *   context we drop before it connected reports nothing: we clear our pointer
 *   ourselves right away.
 * - redisAsyncFree() on a connected context runs its pending callbacks (NULL
 *   replies) and then its disconnect callback synchronously, unless we are
 *   inside one of that context's reply callbacks, in which case hiredis does
 *   it when the callback returns. conn.dropping marks that window; the
 *   disconnect callback ends it.
 * - Never free a context from inside its own connect callback: hiredis keeps
 *   using it after the callback returns. Connect callbacks therefore only
 *   queue commands; a command that cannot be queued leaves the setup
 *   incomplete and the deadline timer drops the attempt.
 * - redisAsyncDisconnect() waits for pending replies, which never come from a
 *   SIGSTOPped server: we always use redisAsyncFree().
 * - Reply callbacks are ours until the context is gone (NULL replies at
 *   teardown), so the struct is freed only once both contexts are gone and
 *   the three timers are closed.
 */
#include "redis/gw_redis.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <hiredis/hiredis.h>

#include "base/gw_log.h"
#include "redis/gw_redis_uv.h"

/* What rankcast needs: K keyspace channel, g generic (del, rename, expire),
 * z sorted sets, x expired, e evicted. */
#define KEYSPACE_FLAGS "Kgzxe"
/* The classes Redis' "A" alias stands for (so "AK" already covers us). */
#define KEYSPACE_ALL_CLASSES "g$lshzxetd"
#define LOG_EVERY_NTH_FAILURE 10

enum state { ST_WAITING, ST_CONNECTING, ST_UP, ST_STOPPED };

struct conn {
    redisAsyncContext *ac; /* NULL when none; memory owned by hiredis */
    int dropping;          /* redisAsyncFree called, disconnect callback pending */
    int setup_sent;        /* every setup command of this attempt was queued */
};

struct gw_redis {
    uv_loop_t *loop; /* borrowed */
    struct gw_redis_opts opts;
    char *host; /* owned copy of opts.host */
    struct gw_redis_hooks hooks;
    enum state state;
    struct conn cmd, sub;
    uv_timer_t retry;    /* next attempt (backoff) */
    uv_timer_t ping;     /* PING every ping_every_ms while UP */
    uv_timer_t deadline; /* setup or PING answer overdue: drop */
    int open_handles;
    int setup_pending; /* setup replies still expected (CONNECTING only) */
    int ping_out;      /* a watchdog PING is unanswered */
    int keyspace_ok;
    int ever_up;
    unsigned tries;                /* failures since the last UP: backoff exponent */
    unsigned long outage_failures; /* failures since the last UP: log throttle */
    uint64_t rng;
    struct gw_redis_stats stats;
    struct gw_script **scripts; /* borrowed elements */
    size_t nscripts;
    char **patterns; /* owned copies */
    size_t npatterns;
};

static void fail(struct gw_redis *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- small helpers ---------------------------------------------------- */

static struct conn *conn_of(struct gw_redis *r, const redisAsyncContext *ac)
{
    if (ac && r->cmd.ac == ac)
        return &r->cmd;
    if (ac && r->sub.ac == ac)
        return &r->sub;
    return NULL;
}

static int conn_connected(const struct conn *c)
{
    return c->ac && !c->dropping && (c->ac->c.flags & REDIS_CONNECTED);
}

/* A reply that belongs to the live attempt: not a NULL from a teardown, not
 * from a context we are dropping, not after stop. */
static int is_live(struct gw_redis *r, struct conn *c, const redisAsyncContext *ac, const redisReply *reply)
{
    return reply && (r->state == ST_CONNECTING || r->state == ST_UP) && c->ac == ac && !c->dropping;
}

static uint64_t rng_next(struct gw_redis *r)
{
    /* xorshift64: jitter only, no need for anything better */
    r->rng ^= r->rng << 13;
    r->rng ^= r->rng >> 7;
    r->rng ^= r->rng << 17;
    return r->rng;
}

/* Full jitter: uniform in [0, min(max, min * 2^tries)]. */
static uint64_t next_delay(struct gw_redis *r)
{
    int64_t ceiling = r->opts.backoff_min_ms;
    for (unsigned i = 0; i < r->tries && ceiling < r->opts.backoff_max_ms; i++)
        ceiling *= 2;
    if (ceiling > r->opts.backoff_max_ms)
        ceiling = r->opts.backoff_max_ms;
    r->tries++;
    return rng_next(r) % ((uint64_t)ceiling + 1);
}

/* ---- dropping and freeing --------------------------------------------- */

/* Asks hiredis to free c's context. A connected context reports through
 * on_disconnect (now, or when hiredis leaves its reply callback), which
 * clears c->ac; one that never connected reports nothing, so forget it here. */
static void drop_conn(struct conn *c)
{
    redisAsyncContext *ac = c->ac;
    if (!ac || c->dropping)
        return;
    if (!(ac->c.flags & REDIS_CONNECTED)) {
        c->ac = NULL;
        redisAsyncFree(ac);
        return;
    }
    c->dropping = 1;
    redisAsyncFree(ac);
}

/* Frees r once nothing can call us anymore: stopped, timers closed, both
 * contexts gone. */
static void maybe_free(struct gw_redis *r)
{
    if (r->state != ST_STOPPED || r->open_handles > 0 || r->cmd.ac || r->sub.ac)
        return;
    for (size_t i = 0; i < r->npatterns; i++)
        free(r->patterns[i]);
    free(r->patterns);
    free(r->scripts);
    free(r->host);
    free(r);
}

static void on_timer_closed(uv_handle_t *h)
{
    struct gw_redis *r = h->data;
    r->open_handles--;
    maybe_free(r);
}

/* ---- failure, backoff, up --------------------------------------------- */

static void on_retry(uv_timer_t *t);

/* Log the first failure of an outage, then every LOG_EVERY_NTH_FAILURE-th. */
static void log_failure(const struct gw_redis *r, const char *reason)
{
    if (r->outage_failures == 1)
        gw_log_warn("redis down: %s", reason);
    else if (r->outage_failures % LOG_EVERY_NTH_FAILURE == 0)
        gw_log_warn("redis still down after %lu attempts: %s", r->outage_failures, reason);
}

/* The attempt (CONNECTING) or the session (UP) is over: drop both
 * connections, tell the gateway if it was up, schedule the next attempt.
 * Dropping runs pending command callbacks with NULL replies, which may call
 * gw_redis_stop(): re-check the state after every call-out. r stays valid
 * (its timers close asynchronously). */
static void fail(struct gw_redis *r, const char *fmt, ...)
{
    char reason[256];
    va_list ap;
    if (r->state != ST_CONNECTING && r->state != ST_UP)
        return;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);

    int was_up = r->state == ST_UP;
    r->state = ST_WAITING;
    r->stats.failures++;
    r->outage_failures++;
    uv_timer_stop(&r->ping);
    uv_timer_stop(&r->deadline);
    log_failure(r, reason);
    drop_conn(&r->cmd);
    drop_conn(&r->sub);
    if (r->state != ST_WAITING)
        return;
    if (was_up && r->hooks.on_down)
        r->hooks.on_down(r->hooks.data, reason);
    if (r->state != ST_WAITING)
        return;
    uv_timer_start(&r->retry, on_retry, next_delay(r), 0);
}

static void on_ping_tick(uv_timer_t *t);

/* Called from reply callbacks only (see the banner): on_up may stop us. */
static void maybe_up(struct gw_redis *r)
{
    if (r->state != ST_CONNECTING || r->setup_pending > 0 || !r->cmd.setup_sent || !r->sub.setup_sent ||
        !conn_connected(&r->cmd) || !conn_connected(&r->sub))
        return;
    r->state = ST_UP;
    uv_timer_stop(&r->deadline);
    if (r->ever_up)
        r->stats.reconnects++;
    r->ever_up = 1;
    r->tries = 0;
    r->outage_failures = 0;
    r->ping_out = 0;
    uv_timer_start(&r->ping, on_ping_tick, (uint64_t)r->opts.ping_every_ms, (uint64_t)r->opts.ping_every_ms);
    gw_log_info("redis up %s:%d", r->host, r->opts.port);
    if (r->hooks.on_up)
        r->hooks.on_up(r->hooks.data);
}

static void step_done(struct gw_redis *r)
{
    if (r->state != ST_CONNECTING)
        return; /* a late PSUBSCRIBE or SCRIPT LOAD sent while up */
    r->setup_pending--;
    maybe_up(r);
}

/* ---- watchdog ------------------------------------------------------------ */

static void on_pong(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct gw_redis *r = privdata;
    if (!is_live(r, &r->cmd, ac, reply))
        return;
    /* any answer, even an error, proves the server is alive */
    r->ping_out = 0;
    uv_timer_stop(&r->deadline);
}

/* The attempt did not finish its setup in time, or the watchdog PING went
 * unanswered: either way the server is of no use to us now. */
static void on_deadline(uv_timer_t *t)
{
    struct gw_redis *r = t->data;
    if (r->state == ST_CONNECTING)
        fail(r, "no answer within %lld ms while connecting", (long long)r->opts.ping_timeout_ms);
    else if (r->state == ST_UP)
        fail(r, "PING unanswered after %lld ms", (long long)r->opts.ping_timeout_ms);
}

/* One PING in flight at most; its deadline is the deadline timer. */
static void on_ping_tick(uv_timer_t *t)
{
    struct gw_redis *r = t->data;
    if (r->state != ST_UP || r->ping_out)
        return;
    if (redisAsyncCommand(r->cmd.ac, on_pong, r, "PING") != REDIS_OK)
        return;
    r->ping_out = 1;
    uv_timer_start(&r->deadline, on_deadline, (uint64_t)r->opts.ping_timeout_ms, 0);
}

/* ---- setup of the command connection ----------------------------------- */

static void keyspace_refused(struct gw_redis *r, const char *what, const char *why)
{
    r->keyspace_ok = 0;
    gw_log_warn("keyspace notifications: CONFIG %s refused (%s) — set notify-keyspace-events yourself", what,
                why);
}

/* Is flag already enabled by the server's current setting? */
static int has_flag(const char *current, char flag)
{
    return strchr(current, flag) || (strchr(current, 'A') && strchr(KEYSPACE_ALL_CLASSES, flag));
}

static void on_keyspace_set(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct gw_redis *r = privdata;
    redisReply *rep = reply;
    if (!is_live(r, &r->cmd, ac, rep))
        return;
    if (rep->type == REDIS_REPLY_ERROR)
        keyspace_refused(r, "SET", rep->str);
    else
        r->keyspace_ok = 1;
    step_done(r);
}

/* Union of the server's flags and ours, so other users of the same Redis
 * keep theirs; CONFIG SET only when something is missing. The step stays
 * pending until CONFIG SET answers (or the deadline drops the attempt). */
static void on_keyspace_get(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct gw_redis *r = privdata;
    redisReply *rep = reply;
    char flags[64];
    if (!is_live(r, &r->cmd, ac, rep))
        return;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[1]->type != REDIS_REPLY_STRING || rep->element[1]->len > 32) {
        keyspace_refused(r, "GET", rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
        step_done(r);
        return;
    }
    const char *current = rep->element[1]->str;
    size_t n = (size_t)snprintf(flags, sizeof flags, "%s", current);
    for (const char *f = KEYSPACE_FLAGS; *f; f++)
        if (!has_flag(current, *f))
            flags[n++] = *f;
    flags[n] = '\0';
    if (strcmp(flags, current) == 0) {
        r->keyspace_ok = 1;
        step_done(r);
        return;
    }
    redisAsyncCommand(ac, on_keyspace_set, r, "CONFIG SET notify-keyspace-events %s", flags);
}

/* A SCRIPT LOAD sent during setup counts; one sent while up (a script
 * registered late) only logs an error. */
static void on_script_loaded(redisReply *reply, void *privdata)
{
    struct gw_redis *r = privdata;
    if (!reply || (r->state != ST_CONNECTING && r->state != ST_UP))
        return;
    if (reply->type == REDIS_REPLY_ERROR) {
        if (r->state == ST_UP)
            gw_log_error("redis: SCRIPT LOAD refused: %s", reply->str);
        else
            fail(r, "SCRIPT LOAD refused: %s", reply->str);
        return;
    }
    step_done(r);
}

static void on_setup_pong(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct gw_redis *r = privdata;
    struct conn *c = conn_of(r, ac);
    if (!c || !is_live(r, c, ac, reply))
        return;
    step_done(r);
}

static int load_script(struct gw_redis *r, struct gw_script *s)
{
    if (gw_script_load(s, r->cmd.ac, on_script_loaded, r) != 0)
        return -1;
    if (r->state == ST_CONNECTING)
        r->setup_pending++;
    return 0;
}

/* Queues the whole setup; the final PING makes sure at least one reply
 * comes back, so maybe_up runs from a reply callback. */
static void setup_cmd(struct gw_redis *r)
{
    redisAsyncContext *ac = r->cmd.ac;
    if (r->opts.keyspace_events) {
        if (redisAsyncCommand(ac, on_keyspace_get, r, "CONFIG GET notify-keyspace-events") != REDIS_OK)
            return;
        r->setup_pending++;
    }
    for (size_t i = 0; i < r->nscripts; i++)
        if (load_script(r, r->scripts[i]) != 0)
            return;
    if (redisAsyncCommand(ac, on_setup_pong, r, "PING") != REDIS_OK)
        return;
    r->setup_pending++;
    r->cmd.setup_sent = 1;
}

/* ---- setup of the subscribe connection --------------------------------- */

/* Every reply on the subscribe connection: psubscribe confirmations, then
 * pmessages. NULL at teardown (once per pattern). */
static void on_sub_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct gw_redis *r = privdata;
    redisReply *rep = reply;
    if (!is_live(r, &r->sub, ac, rep) || rep->type != REDIS_REPLY_ARRAY || rep->elements < 3)
        return;
    for (size_t i = 0; i < rep->elements; i++)
        if (rep->element[i]->type != REDIS_REPLY_STRING && rep->element[i]->type != REDIS_REPLY_INTEGER)
            return;
    const char *kind = rep->element[0]->str;
    if (kind && strcasecmp(kind, "psubscribe") == 0) {
        step_done(r);
    } else if (kind && strcasecmp(kind, "pmessage") == 0 && rep->elements == 4 && r->state == ST_UP &&
               r->hooks.on_message) {
        r->hooks.on_message(r->hooks.data, rep->element[1]->str, rep->element[2]->str, rep->element[3]->str,
                            rep->element[3]->len);
    }
}

static int send_psubscribe(struct gw_redis *r, const char *pattern)
{
    const char *argv[] = {"PSUBSCRIBE", pattern};
    size_t lens[] = {10, strlen(pattern)};
    if (redisAsyncCommandArgv(r->sub.ac, on_sub_reply, r, 2, argv, lens) != REDIS_OK)
        return -1;
    if (r->state == ST_CONNECTING)
        r->setup_pending++;
    return 0;
}

/* With no pattern yet a PING stands in, so the subscribe connection also
 * answers once before we call it ready. */
static void setup_sub(struct gw_redis *r)
{
    if (r->npatterns == 0) {
        if (redisAsyncCommand(r->sub.ac, on_setup_pong, r, "PING") != REDIS_OK)
            return;
        r->setup_pending++;
    }
    for (size_t i = 0; i < r->npatterns; i++)
        if (send_psubscribe(r, r->patterns[i]) != 0)
            return;
    r->sub.setup_sent = 1;
}

/* ---- connecting -------------------------------------------------------- */

/* hiredis frees ac after an error here; on success we only queue commands
 * (never free ac from its own connect callback). */
static void on_connect(const redisAsyncContext *ac, int status)
{
    struct gw_redis *r = ac->data;
    struct conn *c = conn_of(r, ac);
    if (!c)
        return;
    if (status != REDIS_OK) {
        c->ac = NULL;
        fail(r, "connect to %s:%d failed: %s", r->host, r->opts.port, ac->c.errstr);
        return;
    }
    if (c == &r->cmd)
        setup_cmd(r);
    else
        setup_sub(r);
}

/* hiredis frees ac after this returns. A drop we asked for ends here; any
 * other disconnect is a failure. */
static void on_disconnect(const redisAsyncContext *ac, int status)
{
    struct gw_redis *r = ac->data;
    struct conn *c = conn_of(r, ac);
    if (!c)
        return;
    int dropped = c->dropping;
    c->ac = NULL;
    c->dropping = 0;
    if (!dropped)
        fail(r, "%s connection lost: %s", c == &r->cmd ? "command" : "subscribe",
             status == REDIS_OK ? "closed" : ac->c.errstr);
    maybe_free(r);
}

/* A new context for c. Returns 0, or -1 with why filled in. */
static int open_conn(struct gw_redis *r, struct conn *c, char *why, size_t whylen)
{
    redisAsyncContext *ac = redisAsyncConnect(r->host, r->opts.port);
    if (!ac) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    if (ac->err) {
        snprintf(why, whylen, "connect to %s:%d failed: %s", r->host, r->opts.port, ac->errstr);
        redisAsyncFree(ac);
        return -1;
    }
    if (gw_redis_uv_attach(ac, r->loop) != 0) {
        snprintf(why, whylen, "cannot attach to the loop");
        redisAsyncFree(ac);
        return -1;
    }
    ac->data = r;
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    c->ac = ac;
    c->dropping = 0;
    c->setup_sent = 0;
    return 0;
}

/* One attempt: both contexts at once; the deadline timer bounds connect and
 * setup together (a SIGSTOPped server accepts TCP but never answers). */
static void start_attempt(struct gw_redis *r)
{
    char why[256];
    if (r->cmd.ac || r->sub.ac) {
        /* cannot happen (deferred frees finish before the loop runs a timer) */
        uv_timer_start(&r->retry, on_retry, (uint64_t)r->opts.backoff_min_ms, 0);
        return;
    }
    r->state = ST_CONNECTING;
    r->setup_pending = 0;
    r->ping_out = 0;
    r->keyspace_ok = -1;
    uv_timer_start(&r->deadline, on_deadline, (uint64_t)r->opts.ping_timeout_ms, 0);
    if (open_conn(r, &r->cmd, why, sizeof why) != 0 || open_conn(r, &r->sub, why, sizeof why) != 0)
        fail(r, "%s", why);
}

static void on_retry(uv_timer_t *t)
{
    struct gw_redis *r = t->data;
    if (r->state == ST_WAITING)
        start_attempt(r);
}

/* ---- public API ---------------------------------------------------------- */

static int64_t or_default(int64_t v, int64_t dflt)
{
    return v > 0 ? v : dflt;
}

/* The first attempt starts from the retry timer (0 ms), so no hook runs
 * before we return and patterns/scripts registered right after start are
 * part of the first setup. Non-positive timings take defaults. */
struct gw_redis *gw_redis_start(uv_loop_t *loop, const struct gw_redis_opts *opts,
                                const struct gw_redis_hooks *hooks)
{
    if (!loop || !opts || !opts->host || opts->port <= 0 || opts->port > 65535)
        return NULL;
    struct gw_redis *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->host = strdup(opts->host);
    if (!r->host) {
        free(r);
        return NULL;
    }
    r->loop = loop;
    r->opts = *opts;
    r->opts.host = r->host;
    r->opts.backoff_min_ms = or_default(opts->backoff_min_ms, 50);
    r->opts.backoff_max_ms = or_default(opts->backoff_max_ms, 5000);
    if (r->opts.backoff_max_ms < r->opts.backoff_min_ms)
        r->opts.backoff_max_ms = r->opts.backoff_min_ms;
    r->opts.ping_every_ms = or_default(opts->ping_every_ms, 1000);
    r->opts.ping_timeout_ms = or_default(opts->ping_timeout_ms, 3000);
    if (hooks)
        r->hooks = *hooks;
    r->state = ST_WAITING;
    r->keyspace_ok = -1;
    r->rng = (uv_hrtime() ^ (uint64_t)(uintptr_t)r) | 1;
    uv_timer_t *timers[] = {&r->retry, &r->ping, &r->deadline};
    for (int i = 0; i < 3; i++) {
        uv_timer_init(loop, timers[i]);
        timers[i]->data = r;
    }
    r->open_handles = 3;
    uv_timer_start(&r->retry, on_retry, 0, 0);
    return r;
}

/* Borrows s. Loaded now as well when the command connection is open. */
void gw_redis_add_script(struct gw_redis *r, struct gw_script *s)
{
    for (size_t i = 0; i < r->nscripts; i++)
        if (r->scripts[i] == s)
            return;
    struct gw_script **grown = realloc(r->scripts, (r->nscripts + 1) * sizeof *grown);
    if (!grown) {
        gw_log_error("redis: out of memory registering a script");
        return;
    }
    r->scripts = grown;
    r->scripts[r->nscripts++] = s;
    if (r->cmd.setup_sent && conn_connected(&r->cmd) && load_script(r, s) != 0)
        gw_log_error("redis: could not queue SCRIPT LOAD");
}

/* Copies pattern. Sent now when the subscribe connection is open; a send
 * that fails there means the connection is going away and the next setup
 * sends it. Returns 0, or -1 (bad pattern, out of memory). */
int gw_redis_psubscribe(struct gw_redis *r, const char *pattern)
{
    if (!pattern || !*pattern)
        return -1;
    for (size_t i = 0; i < r->npatterns; i++)
        if (strcmp(r->patterns[i], pattern) == 0)
            return 0;
    char **grown = realloc(r->patterns, (r->npatterns + 1) * sizeof *grown);
    if (!grown)
        return -1;
    r->patterns = grown;
    char *copy = strdup(pattern);
    if (!copy)
        return -1;
    r->patterns[r->npatterns++] = copy;
    if (r->sub.setup_sent && conn_connected(&r->sub))
        send_psubscribe(r, copy);
    return 0;
}

redisAsyncContext *gw_redis_cmd(struct gw_redis *r)
{
    return r->state == ST_UP ? r->cmd.ac : NULL;
}

/* hiredis writes only when the loop reports the socket writable; this is the
 * same call our adapter makes then. A write error drops the connection the
 * usual way (on_disconnect, fail). */
void gw_redis_flush(struct gw_redis *r)
{
    if (r && r->state == ST_UP && conn_connected(&r->cmd))
        redisAsyncHandleWrite(r->cmd.ac);
}

int gw_redis_is_up(const struct gw_redis *r)
{
    return r->state == ST_UP;
}

int gw_redis_keyspace_ok(const struct gw_redis *r)
{
    return r->keyspace_ok;
}

void gw_redis_get_stats(const struct gw_redis *r, struct gw_redis_stats *out)
{
    *out = r->stats;
}

/* No hook runs after this. Dropping the contexts may run pending command
 * callbacks (NULL replies) right here; r itself is freed later, by whichever
 * of the timers' close callbacks and the contexts' disconnect callbacks
 * comes last. */
void gw_redis_stop(struct gw_redis *r)
{
    if (!r || r->state == ST_STOPPED)
        return;
    r->state = ST_STOPPED;
    drop_conn(&r->cmd);
    drop_conn(&r->sub);
    uv_close((uv_handle_t *)&r->retry, on_timer_closed);
    uv_close((uv_handle_t *)&r->ping, on_timer_closed);
    uv_close((uv_handle_t *)&r->deadline, on_timer_closed);
}
