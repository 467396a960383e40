/* gw_redis.c - the front's public API (gw_redis.h) and the hooks every node
 * reports to: deciding single or cluster mode from the first seed that
 * answers, nodes up and down, messages, shard subscriptions. The map of the
 * files is in gw_redis_int.h. */
#include "redis/gw_redis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gw_log.h"
#include "base/gw_redis_pass.h"
#include "rc_err.h"
#include "rc_hostport.h"
#include "redis/gw_redis_int.h"

static int64_t or_default(int64_t v, int64_t dflt)
{
    return v > 0 ? v : dflt;
}

/* ---- what the nodes report ----------------------------------------------- */

/* A seed that is a plain server in a list of several cannot be part of a
 * cluster: said once, loudly, and left out. */
static void refuse_plain(struct gw_rnode *n)
{
    struct gw_redis *r = n->r;
    char name[RC_HOSTPORT_NAME_MAX];
    rc_hostport_format(name, sizeof name, n->host, n->port);
    snprintf(r->warning, sizeof r->warning,
             "seed %s is not a cluster node (cluster_enabled:0) but %zu seeds were given: left out", name, r->nseeds);
    gw_log_error("redis: %s", r->warning);
    gw_redis_nodes_retire(n);
    gw_redis_nodes_check_covered(r);
}

static void decide_mode(struct gw_rnode *n, int cluster_enabled)
{
    struct gw_redis *r = n->r;
    if (cluster_enabled == 1) {
        r->mode = GW_MODE_CLUSTER;
        gw_log_info("redis: %s:%d is a cluster node: cluster mode, reading the slot map", n->host, n->port);
        gw_redis_nodes_refresh_soon(r, 0);
        return;
    }
    if (r->nseeds > 1) {
        refuse_plain(n);
        return;
    }
    r->mode = GW_MODE_SINGLE;
    for (unsigned s = 0; s < RC_SLOTS; s++)
        r->slots[s] = n;
    n->nslots = RC_SLOTS;
    gw_redis_nodes_check_covered(r);
}

static void node_up(void *data)
{
    struct gw_rnode *n = data;
    struct gw_redis *r = n->r;
    int ce = gw_node_cluster_enabled(n->node);
    n->up = 1;
    if (r->mode == GW_MODE_PROBING) {
        decide_mode(n, ce);
        return;
    }
    if (r->mode == GW_MODE_CLUSTER && ce != 1) {
        refuse_plain(n);
        return;
    }
    if (r->mode == GW_MODE_CLUSTER) {
        if (!r->map_known)
            gw_redis_nodes_refresh_soon(r, 0);
        gw_redis_chan_place_all(r);
        gw_redis_route_retry_parked(r);
    }
    gw_redis_nodes_check_covered(r);
}

static void node_down(void *data, const char *reason)
{
    struct gw_rnode *n = data;
    struct gw_redis *r = n->r;
    (void)reason;
    n->up = 0;
    gw_redis_chan_node_down(r, n);
    gw_redis_nodes_check_covered(r);
    gw_redis_nodes_refresh_soon(r, 0);
}

static void node_message(void *data, const char *pattern, const char *channel, const char *payload, size_t len)
{
    struct gw_rnode *n = data;
    struct gw_redis *r = n->r;
    if (!r->hooks.on_message)
        return;
    if (pattern) {
        /* on a cluster the scripts SPUBLISH: an outsider's PUBLISH on a board
         * channel reaches every node and means nothing to us */
        if (r->mode == GW_MODE_CLUSTER && r->channel_pattern && strcmp(pattern, r->channel_pattern) == 0)
            return;
        r->hooks.on_message(r->hooks.data, pattern, channel, payload, len);
    } else if (r->mode == GW_MODE_CLUSTER && gw_redis_chan_accepts(r, n, channel)) {
        r->hooks.on_message(r->hooks.data, NULL, channel, payload, len);
    }
}

static void node_shard(void *data, const char *channel, int subscribed)
{
    struct gw_rnode *n = data;
    gw_redis_chan_on_shard(n->r, n, channel, subscribed);
}

static void after_map(struct gw_redis *r)
{
    gw_redis_chan_place_all(r);
    gw_redis_route_retry_parked(r);
}

static void before_retire(struct gw_redis *r, struct gw_rnode *n)
{
    n->up = 0;
    gw_redis_chan_node_down(r, n);
    gw_redis_route_forget_node(r, n);
}

/* ---- start and stop ------------------------------------------------------ */

static void on_timer_closed(uv_handle_t *h)
{
    struct gw_redis *r = h->data;
    if (--r->open_handles > 0)
        return;
    for (size_t i = 0; i < r->npatterns; i++)
        free(r->patterns[i]);
    free(r->patterns);
    free(r->channel_pattern);
    free(r->scripts);
    free(r->seeds);
    free(r->username);
    gw_redis_pass_zero(r->password);
    free(r->password);
    free(r);
}

struct gw_redis *gw_redis_start(uv_loop_t *loop, const struct gw_redis_opts *opts,
                                const struct gw_redis_hooks *hooks)
{
    struct rc_seed seeds[RC_SEEDS_MAX];
    size_t nseeds = 0;
    if (!loop || !opts || rc_hostport_split_seeds(opts->seeds, seeds, RC_SEEDS_MAX, &nseeds) != 0) {
        gw_log_error("redis address '%s' is not HOST:PORT, redis://HOST:PORT or a comma-separated list of them "
                     "(at most %d)",
                     opts && opts->seeds ? opts->seeds : "", RC_SEEDS_MAX);
        return NULL;
    }
    struct gw_redis *r = calloc(1, sizeof *r);
    if (!r || !(r->seeds = calloc(nseeds, sizeof *r->seeds))) {
        free(r);
        return NULL;
    }
    for (size_t i = 0; i < nseeds; i++) {
        snprintf(r->seeds[i].host, sizeof r->seeds[i].host, "%s", seeds[i].host);
        r->seeds[i].port = seeds[i].port;
    }
    r->nseeds = nseeds;
    r->loop = loop;
    if (hooks)
        r->hooks = *hooks;
    r->node_opts.backoff_min_ms = or_default(opts->backoff_min_ms, 50);
    r->node_opts.backoff_max_ms = or_default(opts->backoff_max_ms, 5000);
    r->node_opts.ping_every_ms = or_default(opts->ping_every_ms, 1000);
    r->node_opts.ping_timeout_ms = or_default(opts->ping_timeout_ms, 3000);
    r->node_opts.keyspace_events = opts->keyspace_events;
    if ((opts->username && *opts->username && !(r->username = strdup(opts->username))) ||
        (opts->password && *opts->password && !(r->password = strdup(opts->password)))) {
        free(r->username);
        free(r->seeds);
        free(r);
        return NULL;
    }
    r->node_opts.username = r->username;
    r->node_opts.password = r->password;
    r->node_hooks = (struct gw_node_hooks){NULL, node_up, node_down, node_message, node_shard};
    r->after_map = after_map;
    r->before_retire = before_retire;
    r->mode = GW_MODE_PROBING;
    gw_redis_chan_init(r);
    uv_timer_init(loop, &r->refresh_timer);
    uv_timer_init(loop, &r->park_timer);
    r->refresh_timer.data = r->park_timer.data = r;
    r->open_handles = 2;
    for (size_t i = 0; i < nseeds; i++)
        if (!gw_redis_nodes_add(r, r->seeds[i].host, r->seeds[i].port, 1))
            gw_log_error("redis: out of memory starting seed %s:%d", r->seeds[i].host, r->seeds[i].port);
    return r;
}

void gw_redis_stop(struct gw_redis *r)
{
    if (!r || r->stopped)
        return;
    r->stopped = 1;
    gw_redis_route_fail_parked(r);
    gw_redis_nodes_stop_all(r);
    gw_redis_chan_free_all(r);
    uv_close((uv_handle_t *)&r->refresh_timer, on_timer_closed);
    uv_close((uv_handle_t *)&r->park_timer, on_timer_closed);
}

/* ---- registering --------------------------------------------------------- */

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
    for (struct gw_rnode *n = r->nodes; n; n = n->next)
        gw_node_add_script(n->node, s);
}

int gw_redis_psubscribe(struct gw_redis *r, const char *pattern)
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
    if (!(r->patterns[r->npatterns] = strdup(pattern)))
        return RC_E_INTERNAL;
    r->npatterns++;
    for (struct gw_rnode *n = r->nodes; n; n = n->next)
        gw_node_psubscribe(n->node, pattern);
    return 0;
}

/* Subscribed on every node like any pattern (a node does not know yet what
 * the others are); its messages count only in single mode (node_message). */
int gw_redis_channel_pattern(struct gw_redis *r, const char *pattern)
{
    if (!pattern || !*pattern)
        return RC_E_BAD_REQUEST;
    free(r->channel_pattern);
    if (!(r->channel_pattern = strdup(pattern)))
        return RC_E_INTERNAL;
    return gw_redis_psubscribe(r, pattern);
}

int gw_redis_channel_add(struct gw_redis *r, const char *channel)
{
    return r->stopped ? 0 : gw_redis_chan_add(r, channel);
}

void gw_redis_channel_remove(struct gw_redis *r, const char *channel)
{
    if (!r->stopped)
        gw_redis_chan_remove(r, channel);
}

/* ---- commands -------------------------------------------------------------- */

int gw_redis_eval(struct gw_redis *r, struct gw_script *s, int nkeys, int argc, const char *const *argv,
                  const size_t *argvlen, gw_redis_reply_cb *cb, void *privdata)
{
    if (!r || nkeys < 1 || argc < nkeys)
        return RC_E_UNAVAILABLE;
    return gw_redis_route_send(r, s, 0, argv[0], argvlen[0], nkeys, argc, argv, argvlen, cb, privdata);
}

int gw_redis_eval_write(struct gw_redis *r, struct gw_script *s, int nkeys, int argc, const char *const *argv,
                        const size_t *argvlen, gw_redis_reply_cb *cb, void *privdata)
{
    if (!r || nkeys < 1 || argc < nkeys)
        return RC_E_UNAVAILABLE;
    return gw_redis_route_send(r, s, 1, argv[0], argvlen[0], nkeys, argc, argv, argvlen, cb, privdata);
}

int gw_redis_command(struct gw_redis *r, const char *key, size_t keylen, int argc, const char *const *argv,
                     const size_t *argvlen, gw_redis_reply_cb *cb, void *privdata)
{
    if (!r)
        return RC_E_UNAVAILABLE;
    return gw_redis_route_send(r, NULL, 0, key, keylen, 0, argc, argv, argvlen, cb, privdata);
}

void gw_redis_flush(struct gw_redis *r)
{
    for (struct gw_rnode *n = r ? r->nodes : NULL; n; n = n->next)
        gw_node_flush(n->node);
}

/* ---- state ----------------------------------------------------------------- */

int gw_redis_is_cluster(const struct gw_redis *r)
{
    return r->mode == GW_MODE_CLUSTER ? 1 : r->mode == GW_MODE_SINGLE ? 0 : -1;
}

int gw_redis_is_up(const struct gw_redis *r)
{
    return r && r->covered;
}

int gw_redis_keyspace_ok(const struct gw_redis *r)
{
    int ok = -1;
    for (const struct gw_rnode *n = r->nodes; n; n = n->next) {
        if (!n->up || n->nslots == 0)
            continue;
        int k = gw_node_keyspace_ok(n->node);
        if (k == 0)
            return 0;
        if (k == 1)
            ok = 1;
    }
    return ok;
}

void gw_redis_get_stats(const struct gw_redis *r, struct gw_redis_stats *out)
{
    *out = r->stats;
    out->reconnects = r->gone_reconnects;
    out->failures = r->gone_failures;
    out->resolutions = r->gone_resolutions;
    for (const struct gw_rnode *n = r->nodes; n; n = n->next) {
        struct gw_node_stats st;
        gw_node_get_stats(n->node, &st);
        out->reconnects += st.reconnects;
        out->failures += st.failures;
        out->resolutions += st.resolutions;
    }
}

int gw_redis_node_info(const struct gw_redis *r, size_t i, struct gw_redis_node_info *out)
{
    const struct gw_rnode *n = r->nodes;
    while (n && i-- > 0)
        n = n->next;
    if (!n)
        return -1;
    struct gw_node_stats st;
    gw_node_get_stats(n->node, &st);
    out->host = n->host;
    out->port = n->port;
    out->up = n->up;
    out->primary_slots = n->nslots;
    out->reconnects = st.reconnects;
    out->failures = st.failures;
    out->last_error = gw_node_last_error(n->node);
    return 0;
}

/* While probing, the seeds' own errors are the reason. */
const char *gw_redis_why_down(struct gw_redis *r)
{
    if (r->covered)
        return "";
    if (r->mode != GW_MODE_PROBING)
        return r->why;
    size_t len = (size_t)snprintf(r->why, sizeof r->why, "no seed answered yet");
    for (const struct gw_rnode *n = r->nodes; n && len < sizeof r->why; n = n->next) {
        const char *e = gw_node_last_error(n->node);
        char name[RC_HOSTPORT_NAME_MAX];
        rc_hostport_format(name, sizeof name, n->host, n->port);
        len += (size_t)snprintf(r->why + len, sizeof r->why - len, "%s %s (%s)", n == r->nodes ? ":" : ";", name,
                                e[0] ? e : "connecting");
    }
    return r->why;
}

const char *gw_redis_warning(const struct gw_redis *r)
{
    return r->warning;
}

int gw_redis_eval_wait(struct gw_redis *r, struct gw_script *s, int nkeys, int argc, const char *const *argv,
                       const size_t *argvlen, int nreplicas, int64_t timeout_ms, gw_redis_wait_cb *cb,
                       void *privdata)
{
    if (!r)
        return RC_E_UNAVAILABLE;
    return gw_redis_route_send_wait(r, s, nkeys, argc, argv, argvlen, nreplicas, timeout_ms, cb, privdata);
}
