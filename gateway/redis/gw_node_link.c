/* gw_node_link.c - the connection manager's state machine: attempts, backoff,
 * the PING watchdog, failure and "up" (API in gw_node.h, files in gw_node_int.h).
 *
 * States of the manager:
 *
 *   WAITING ---retry timer---> CONNECTING ---all setup replies---> UP
 *      ^                            |                               |
 *      +------------- fail() -------+-------------------------------+
 *
 *   any state ---gw_node_stop()---> STOPPED (freed after the last close)
 *
 * CONNECTING first resolves the host name (uv_getaddrinfo, gw_redis_resolve.c:
 * never a blocking lookup inside hiredis, and a new lookup on every attempt so
 * a moved host is followed), then opens a new command, a new subscribe and a
 * new write context to the numeric address. Each one sends
 * its setup as soon as hiredis reports it connected, AUTH first when a
 * password is set (all three): the command connection
 * CONFIG GET/SET notify-keyspace-events (optional), SCRIPT LOAD for every
 * script and a PING; the subscribe connection one PSUBSCRIBE per pattern (or a
 * PING when there is none); the write connection a PING (the script cache is
 * the server's: the command connection's SCRIPT LOAD serves it too). Every
 * setup command counts in setup_pending and the manager is UP when the three
 * connections are connected, all their setup was queued and setup_pending is
 * back to 0. So on_up is only ever called from a
 * reply callback, never from a connect callback (see "Rules" below).
 *
 * fail() is the one way out of CONNECTING and UP: a connect error, a lost
 * connection, a failed lookup, a setup error reply, or the deadline timer
 * (lookup and setup not done, or a PING unanswered, within ping_timeout_ms;
 * the watchdog PING goes on the write connection, which carries no bulk
 * reads, so a backlog of reads cannot fail it). It drops all connections, calls
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
 *   the three timers are closed (and, after stop, a running lookup is back).
 */
#include "redis/gw_node_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gw_log.h"
#include "base/gw_redis_pass.h"
#include "rc_err.h"
#include "redis/gw_redis_resolve.h"
#include "redis/gw_redis_uv.h"

#define LOG_EVERY_NTH_FAILURE 10

/* ---- small helpers ---------------------------------------------------- */

struct gw_node_conn *gw_node_link_conn_of(struct gw_node *r, const redisAsyncContext *ac)
{
    if (ac && r->cmd.ac == ac)
        return &r->cmd;
    if (ac && r->sub.ac == ac)
        return &r->sub;
    if (ac && r->wr.ac == ac)
        return &r->wr;
    return NULL;
}

const char *gw_node_link_conn_name(const struct gw_node *r, const struct gw_node_conn *c)
{
    return c == &r->cmd ? "command" : c == &r->sub ? "subscribe" : "write";
}

int gw_node_link_connected(const struct gw_node_conn *c)
{
    return c->ac && !c->dropping && (c->ac->c.flags & REDIS_CONNECTED);
}

int gw_node_link_is_live(const struct gw_node *r, const struct gw_node_conn *c, const redisAsyncContext *ac,
                          const redisReply *reply)
{
    return reply && (r->state == GW_ST_CONNECTING || r->state == GW_ST_UP) && c->ac == ac && !c->dropping;
}

static uint64_t rng_next(struct gw_node *r)
{
    /* xorshift64: jitter only, no need for anything better */
    r->rng ^= r->rng << 13;
    r->rng ^= r->rng >> 7;
    r->rng ^= r->rng << 17;
    return r->rng;
}

/* Full jitter: uniform in [0, min(max, min * 2^tries)]. */
static uint64_t next_delay(struct gw_node *r)
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
static void drop_conn(struct gw_node_conn *c)
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

/* Frees r once nothing can call us anymore (base/gw_release): stopped,
 * timers closed, lookup back, both contexts gone. */
static struct gw_node *node_of(const struct gw_release *rel)
{
    return (struct gw_node *)((char *)rel - offsetof(struct gw_node, rel));
}

static int node_busy(const struct gw_release *rel)
{
    const struct gw_node *r = node_of(rel);
    return r->cmd.ac || r->sub.ac || r->wr.ac;
}

static void node_free(struct gw_release *rel)
{
    struct gw_node *r = node_of(rel);
    for (size_t i = 0; i < r->npatterns; i++)
        free(r->patterns[i]);
    free(r->patterns);
    free(r->scripts);
    free(r->host);
    free(r->username);
    gw_redis_pass_zero(r->password);
    free(r->password);
    free(r);
}

/* ---- failure, backoff, up --------------------------------------------- */

static void on_retry(uv_timer_t *t);

/* Log the first failure of an outage, then every LOG_EVERY_NTH_FAILURE-th,
 * naming the node (a cluster has several). */
static void log_failure(const struct gw_node *r, const char *reason)
{
    if (r->outage_failures == 1)
        gw_log_warn("redis down: %s (node %s:%d)", reason, r->host, r->opts.port);
    else if (r->outage_failures % LOG_EVERY_NTH_FAILURE == 0)
        gw_log_warn("redis still down after %lu attempts: %s (node %s:%d)", r->outage_failures, reason, r->host,
                    r->opts.port);
}

/* The attempt (CONNECTING) or the session (UP) is over: drop both
 * connections, tell the gateway if it was up, schedule the next attempt.
 * Dropping runs pending command callbacks with NULL replies, which may call
 * gw_node_stop(): re-check the state after every call-out. r stays valid
 * (its timers close asynchronously). A lookup still running is left to
 * finish: the next attempt takes its answer. */
void gw_node_link_fail(struct gw_node *r, const char *fmt, ...)
{
    char reason[256];
    va_list ap;
    if (r->state != GW_ST_CONNECTING && r->state != GW_ST_UP)
        return;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);

    int was_up = r->state == GW_ST_UP;
    r->state = GW_ST_WAITING;
    r->stats.failures++;
    r->outage_failures++;
    uv_timer_stop(&r->ping);
    uv_timer_stop(&r->deadline);
    log_failure(r, reason);
    snprintf(r->last_error, sizeof r->last_error, "%s", reason);
    drop_conn(&r->cmd);
    drop_conn(&r->sub);
    drop_conn(&r->wr);
    if (r->state != GW_ST_WAITING)
        return;
    if (was_up && r->hooks.on_down)
        r->hooks.on_down(r->hooks.data, reason);
    if (r->state != GW_ST_WAITING)
        return;
    uv_timer_start(&r->retry, on_retry, next_delay(r), 0);
}

static void on_ping_tick(uv_timer_t *t);

/* Called from reply callbacks only (see the banner): on_up may stop us. */
static void maybe_up(struct gw_node *r)
{
    if (r->state != GW_ST_CONNECTING || r->setup_pending > 0 || !r->cmd.setup_sent || !r->sub.setup_sent ||
        !r->wr.setup_sent || !gw_node_link_connected(&r->cmd) || !gw_node_link_connected(&r->sub) ||
        !gw_node_link_connected(&r->wr))
        return;
    r->state = GW_ST_UP;
    uv_timer_stop(&r->deadline);
    if (r->ever_up)
        r->stats.reconnects++;
    r->ever_up = 1;
    r->tries = 0;
    r->outage_failures = 0;
    r->ping_out = 0;
    uv_timer_start(&r->ping, on_ping_tick, (uint64_t)r->opts.ping_every_ms, (uint64_t)r->opts.ping_every_ms);
    gw_log_info("redis up %s:%d (%s)", r->host, r->opts.port, r->addr);
    if (r->after_up)
        r->after_up(r);
    if (r->hooks.on_up)
        r->hooks.on_up(r->hooks.data);
}

void gw_node_link_step_done(struct gw_node *r)
{
    if (r->state != GW_ST_CONNECTING)
        return; /* a late PSUBSCRIBE or SCRIPT LOAD sent while up */
    r->setup_pending--;
    maybe_up(r);
}

/* ---- AUTH ----------------------------------------------------------------- */

static void on_auth(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct gw_node *r = privdata;
    redisReply *rep = reply;
    struct gw_node_conn *c = gw_node_link_conn_of(r, ac); /* the command or the write connection */
    if (!c || !gw_node_link_is_live(r, c, ac, rep))
        return;
    c->auth_out = 0;
    if (rep->type == REDIS_REPLY_ERROR)
        gw_node_link_auth_refused(r, c, rep->str);
    else
        gw_node_link_step_done(r);
}

/* AUTH [username] password: the first command of every new connection, so
 * that nothing (SCRIPT LOAD, PSUBSCRIBE, CONFIG) runs before it. Redis
 * answers in order: the setup commands queued behind it see the login. */
int gw_node_link_send_auth(struct gw_node *r, struct gw_node_conn *c, int raw)
{
    if (!r->password)
        return 0;
    const char *argv[3] = {"AUTH"};
    int argc = 1;
    if (r->username)
        argv[argc++] = r->username;
    argv[argc++] = r->password;
    int rc = raw ? gw_redis_uv_send(c->ac, argc, argv, NULL)
                 : (redisAsyncCommandArgv(c->ac, on_auth, r, argc, argv, NULL) == REDIS_OK ? 0 : RC_E_UNAVAILABLE);
    if (rc != 0)
        return RC_E_UNAVAILABLE;
    c->auth_out = 1;
    r->setup_pending++;
    return 0;
}

void gw_node_link_auth_refused(struct gw_node *r, const struct gw_node_conn *c, const char *why)
{
    char text[160];
    snprintf(text, sizeof text, "%s", why ? why : "");
    /* Redis does not echo the password today; make sure no future text does */
    char *p = r->password ? strstr(text, r->password) : NULL;
    if (p)
        snprintf(p, sizeof text - (size_t)(p - text), "%s", "(password)");
    gw_node_link_fail(r, "AUTH%s%s refused on the %s connection: %s", r->username ? " as user " : "",
                      r->username ? r->username : "", gw_node_link_conn_name(r, c), text);
}

void gw_node_link_on_setup_pong(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct gw_node *r = privdata;
    struct gw_node_conn *c = gw_node_link_conn_of(r, ac);
    if (!c || !gw_node_link_is_live(r, c, ac, reply))
        return;
    gw_node_link_step_done(r);
}

/* ---- watchdog ------------------------------------------------------------ */

/* The PING goes on the write connection, which carries no bulk reads: its
 * answer measures the server and the link, not the length of a queue of page
 * reads on the command connection (issue 23: a read backlog used to fail it,
 * and dropping the link then lost the writes queued behind). */
static void on_pong(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct gw_node *r = privdata;
    if (!gw_node_link_is_live(r, &r->wr, ac, reply))
        return;
    /* any answer, even an error, proves the server is alive */
    r->ping_out = 0;
    uv_timer_stop(&r->deadline);
}

/* The attempt did not finish its lookup and setup in time, or the watchdog
 * PING went unanswered: either way the server is of no use to us now. */
static void on_deadline(uv_timer_t *t)
{
    struct gw_node *r = t->data;
    /* A loop kept busy by other work (thousands of snapshots) runs this timer
     * before it reads the sockets: the PONG may be waiting there unread. Read
     * it now (a non-blocking read; nothing there is fine) so that only a
     * server that did not answer is judged dead, not our own lag. */
    if (r->state == GW_ST_UP && r->ping_out && gw_node_link_connected(&r->wr))
        gw_redis_uv_read_now(r->wr.ac);
    if (r->state == GW_ST_UP && !r->ping_out)
        return; /* answered (on_pong stopped us) */
    if (r->state == GW_ST_CONNECTING)
        gw_node_link_fail(r, "no answer within %lld ms while connecting%s", (long long)r->opts.ping_timeout_ms,
                           r->resolver.busy ? " (resolving the host name)" : "");
    else if (r->state == GW_ST_UP)
        gw_node_link_fail(r, "PING unanswered after %lld ms", (long long)r->opts.ping_timeout_ms);
}

/* One PING in flight at most; its deadline is the deadline timer. A WAIT
 * in flight on the write connection (one at most: gw_redis_wait.c) holds
 * the PING's answer back until it answers, at the latest at its timeout:
 * the deadline counts from then, so a WAIT is not taken for a dead server
 * (one that is dead is found out that much later). */
static void on_ping_tick(uv_timer_t *t)
{
    struct gw_node *r = t->data;
    if (r->state != GW_ST_UP || r->ping_out)
        return;
    if (redisAsyncCommand(r->wr.ac, on_pong, r, "PING") != REDIS_OK)
        return;
    r->ping_out = 1;
    uint64_t held = rc_ackbatch_delay(&r->wr_acks, uv_now(r->loop));
    uv_timer_start(&r->deadline, on_deadline, (uint64_t)r->opts.ping_timeout_ms + held, 0);
    /* out now, not when a busy loop next polls for writable: the timeout
     * then counts the server's time, not ours */
    redisAsyncHandleWrite(r->wr.ac);
}

/* ---- connecting -------------------------------------------------------- */

/* hiredis frees ac after an error here; on success we only queue commands
 * (never free ac from its own connect callback). */
static void on_connect(const redisAsyncContext *ac, int status)
{
    struct gw_node *r = ac->data;
    struct gw_node_conn *c = gw_node_link_conn_of(r, ac);
    if (!c)
        return;
    if (status != REDIS_OK) {
        c->ac = NULL;
        gw_node_link_fail(r, "connect to %s:%d (%s) failed: %s", r->host, r->opts.port, r->addr, ac->c.errstr);
        return;
    }
    if (c == &r->cmd)
        r->setup_cmd(r);
    else if (c == &r->sub)
        r->setup_sub(r);
    else
        r->setup_wr(r);
}

/* hiredis frees ac after this returns. A drop we asked for ends here; any
 * other disconnect is a failure. */
static void on_disconnect(const redisAsyncContext *ac, int status)
{
    struct gw_node *r = ac->data;
    struct gw_node_conn *c = gw_node_link_conn_of(r, ac);
    if (!c)
        return;
    int dropped = c->dropping;
    c->ac = NULL;
    c->dropping = 0;
    if (!dropped)
        gw_node_link_fail(r, "%s connection lost: %s", gw_node_link_conn_name(r, c),
                           status == REDIS_OK ? "closed" : ac->c.errstr);
    gw_release_check(&r->rel);
}

/* A new context for c, to the numeric address just resolved (hiredis does
 * not block on a lookup for it). Returns 0, or RC_E_UNAVAILABLE with why
 * filled in. */
static int open_conn(struct gw_node *r, struct gw_node_conn *c, char *why, size_t whylen)
{
    redisAsyncContext *ac = redisAsyncConnect(r->addr, r->opts.port);
    if (!ac) {
        snprintf(why, whylen, "out of memory");
        return RC_E_UNAVAILABLE;
    }
    if (ac->err) {
        snprintf(why, whylen, "connect to %s:%d (%s) failed: %s", r->host, r->opts.port, r->addr, ac->errstr);
        redisAsyncFree(ac);
        return RC_E_UNAVAILABLE;
    }
    if (gw_redis_uv_attach(ac, r->loop) != 0) {
        snprintf(why, whylen, "cannot attach to the loop");
        redisAsyncFree(ac);
        return RC_E_UNAVAILABLE;
    }
    ac->data = r;
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    c->ac = ac;
    c->dropping = 0;
    c->setup_sent = 0;
    c->auth_out = 0;
    return 0;
}

/* The lookup is back. After stop it only lets r be freed; while WAITING (the
 * attempt it was for failed meanwhile) the answer is dropped and the next
 * attempt looks up again. */
static void on_resolved(struct gw_redis_resolver *res, int status, const char *addr)
{
    struct gw_node *r = res->data;
    char why[256];
    if (r->state == GW_ST_STOPPED) {
        gw_release_drop(&r->rel);
        return;
    }
    if (r->state != GW_ST_CONNECTING)
        return;
    if (status != 0) {
        gw_node_link_fail(r, "cannot resolve %s: %s", r->host, uv_strerror(status));
        return;
    }
    snprintf(r->addr, sizeof r->addr, "%s", addr);
    if (open_conn(r, &r->cmd, why, sizeof why) != 0 || open_conn(r, &r->sub, why, sizeof why) != 0 ||
        open_conn(r, &r->wr, why, sizeof why) != 0)
        gw_node_link_fail(r, "%s", why);
}

/* One attempt: look the host up, then both contexts at once; the deadline
 * timer bounds lookup, connect and setup together (a SIGSTOPped server
 * accepts TCP but never answers). A lookup left running by an attempt that
 * failed is waited for rather than doubled (libuv cannot abort one that
 * started); its answer opens this attempt's connections. */
static void start_attempt(struct gw_node *r)
{
    if (r->cmd.ac || r->sub.ac || r->wr.ac) {
        /* cannot happen (deferred frees finish before the loop runs a timer) */
        uv_timer_start(&r->retry, on_retry, (uint64_t)r->opts.backoff_min_ms, 0);
        return;
    }
    r->state = GW_ST_CONNECTING;
    r->setup_pending = 0;
    r->ping_out = 0;
    r->keyspace_ok = -1;
    uv_timer_start(&r->deadline, on_deadline, (uint64_t)r->opts.ping_timeout_ms, 0);
    if (r->resolver.busy)
        return;
    /* tries: after failures, the next of several addresses */
    if (gw_redis_resolve(&r->resolver, r->loop, r->host, r->tries, on_resolved) != 0)
        gw_node_link_fail(r, "cannot start resolving %s", r->host);
}

static void on_retry(uv_timer_t *t)
{
    struct gw_node *r = t->data;
    if (r->state == GW_ST_WAITING)
        start_attempt(r);
}

/* ---- start and stop -------------------------------------------------------- */

void gw_node_link_init(struct gw_node *r)
{
    uv_timer_t *timers[] = {&r->retry, &r->ping, &r->deadline};
    for (int i = 0; i < 3; i++) {
        uv_timer_init(r->loop, timers[i]);
        timers[i]->data = r;
    }
    gw_release_init(&r->rel, node_free, node_busy);
    for (int i = 0; i < 3; i++)
        gw_release_hold(&r->rel);
    r->resolver.data = r;
    uv_timer_start(&r->retry, on_retry, 0, 0);
}

void gw_node_link_stop(struct gw_node *r)
{
    r->state = GW_ST_STOPPED;
    gw_release_stop(&r->rel); /* the timers hold it: freed after their close callbacks at the earliest */
    drop_conn(&r->cmd);
    drop_conn(&r->sub);
    drop_conn(&r->wr);
    if (r->resolver.busy) {
        gw_release_hold(&r->rel); /* on_resolved gives it back */
        gw_redis_resolve_cancel(&r->resolver);
    }
    gw_release_close(&r->rel, (uv_handle_t *)&r->retry);
    gw_release_close(&r->rel, (uv_handle_t *)&r->ping);
    gw_release_close(&r->rel, (uv_handle_t *)&r->deadline);
}
