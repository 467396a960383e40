/* gw_node.c - the connection manager's public API (gw_node.h): creating
 * and wiring it, registering scripts and patterns, the getters, stop. The
 * state machine itself is gw_node_link.c; the map of the files is in
 * gw_node_int.h. */
#include "redis/gw_node.h"

#include <stdlib.h>
#include <string.h>

#include "base/gw_log.h"
#include "rc_err.h"
#include "redis/gw_node_int.h"
#include "redis/gw_node_probe.h"
#include "redis/gw_node_setup.h"
#include "redis/gw_node_sub.h"

static int64_t or_default(int64_t v, int64_t dflt)
{
    return v > 0 ? v : dflt;
}

/* The first attempt starts from the retry timer (0 ms), so no hook runs
 * before we return and patterns/scripts registered right after start are
 * part of the first setup. Non-positive timings take defaults. */
struct gw_node *gw_node_start(uv_loop_t *loop, const struct gw_node_opts *opts,
                                const struct gw_node_hooks *hooks)
{
    if (!loop || !opts || !opts->host || !*opts->host || opts->port <= 0 || opts->port > 65535)
        return NULL;
    struct gw_node *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->host = strdup(opts->host);
    if (!r->host) {
        free(r);
        return NULL;
    }
    r->loop = loop;
    rc_ackbatch_init(&r->wr_acks);
    r->opts = *opts;
    r->opts.host = r->host;
    r->opts.username = r->opts.password = NULL;
    if ((opts->username && *opts->username && !(r->username = strdup(opts->username))) ||
        (opts->password && *opts->password && !(r->password = strdup(opts->password)))) {
        free(r->username);
        free(r->host);
        free(r);
        return NULL;
    }
    r->opts.username = r->username;
    r->opts.password = r->password;
    r->opts.backoff_min_ms = or_default(opts->backoff_min_ms, 50);
    r->opts.backoff_max_ms = or_default(opts->backoff_max_ms, 5000);
    if (r->opts.backoff_max_ms < r->opts.backoff_min_ms)
        r->opts.backoff_max_ms = r->opts.backoff_min_ms;
    r->opts.ping_every_ms = or_default(opts->ping_every_ms, 1000);
    r->opts.ping_timeout_ms = or_default(opts->ping_timeout_ms, 3000);
    if (hooks)
        r->hooks = *hooks;
    r->setup_cmd = gw_node_setup_cmd;
    r->setup_sub = gw_node_sub_setup;
    r->setup_wr = gw_node_setup_wr;
    r->after_up = gw_node_probe_after_up;
    r->state = GW_ST_WAITING;
    r->keyspace_ok = -1;
    r->cluster_enabled = -1;
    r->rng = (uv_hrtime() ^ (uint64_t)(uintptr_t)r) | 1;
    gw_node_link_init(r);
    return r;
}

/* Borrows s. Loaded now as well when the command connection is open. */
void gw_node_add_script(struct gw_node *r, struct gw_script *s)
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
    if (r->cmd.setup_sent && gw_node_link_connected(&r->cmd) && gw_node_setup_load_script(r, s) != 0)
        gw_log_error("redis: could not queue SCRIPT LOAD");
}

/* Copies pattern. Sent now when the subscribe connection is open; a send
 * that fails there means the connection is going away and the next setup
 * sends it. Returns 0, RC_E_BAD_REQUEST (no pattern) or RC_E_INTERNAL (out
 * of memory). */
int gw_node_psubscribe(struct gw_node *r, const char *pattern)
{
    if (!pattern || !*pattern)
        return RC_E_BAD_REQUEST;
    for (size_t i = 0; i < r->npatterns; i++)
        if (strcmp(r->patterns[i], pattern) == 0)
            return 0;
    char **grown = realloc(r->patterns, (r->npatterns + 1) * sizeof *grown);
    if (!grown)
        return RC_E_INTERNAL;
    r->patterns = grown;
    char *copy = strdup(pattern);
    if (!copy)
        return RC_E_INTERNAL;
    r->patterns[r->npatterns++] = copy;
    if (r->sub.setup_sent && gw_node_link_connected(&r->sub))
        gw_node_sub_send(r, copy);
    return 0;
}

redisAsyncContext *gw_node_cmd(struct gw_node *r)
{
    return r->state == GW_ST_UP ? r->cmd.ac : NULL;
}

redisAsyncContext *gw_node_wr(struct gw_node *r)
{
    return r->state == GW_ST_UP ? r->wr.ac : NULL;
}

struct rc_ackbatch *gw_node_wr_acks(struct gw_node *r)
{
    return &r->wr_acks;
}

/* hiredis writes only when the loop reports the socket writable; this is the
 * same call our adapter makes then. A write error drops the connection the
 * usual way (on_disconnect, fail). */
void gw_node_flush(struct gw_node *r)
{
    if (r && r->state == GW_ST_UP && gw_node_link_connected(&r->cmd))
        redisAsyncHandleWrite(r->cmd.ac);
    if (r && r->state == GW_ST_UP && gw_node_link_connected(&r->wr))
        redisAsyncHandleWrite(r->wr.ac);
}

int gw_node_is_up(const struct gw_node *r)
{
    return r->state == GW_ST_UP;
}

int gw_node_keyspace_ok(const struct gw_node *r)
{
    return r->keyspace_ok;
}

void gw_node_get_stats(const struct gw_node *r, struct gw_node_stats *out)
{
    *out = r->stats;
    out->resolutions = r->resolver.started;
}

/* No hook runs after this. Dropping the contexts may run pending command
 * callbacks (NULL replies) right here; r itself is freed later, by whichever
 * of the timers' close callbacks, the contexts' disconnect callbacks and a
 * running lookup comes last. */
void gw_node_stop(struct gw_node *r)
{
    if (!r || r->state == GW_ST_STOPPED)
        return;
    gw_node_link_stop(r);
}

const char *gw_node_host(const struct gw_node *r)
{
    return r->host;
}

int gw_node_port(const struct gw_node *r)
{
    return r->opts.port;
}

int gw_node_cluster_enabled(const struct gw_node *r)
{
    return r->cluster_enabled;
}

const char *gw_node_last_error(const struct gw_node *r)
{
    return r->last_error;
}
