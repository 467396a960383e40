/* gw_node_setup.c - what the command connection sends on every connect:
 * keyspace notifications on (CONFIG GET, then CONFIG SET of the union of the
 * server's flags and ours, so other users of the same Redis keep theirs),
 * INFO cluster (is this a cluster node?), SCRIPT LOAD of every registered
 * script, and a final PING; and the write connection's (AUTH, PING). Each command
 * counts as one setup step of the attempt (gw_node_link.c). */
#include "redis/gw_node_setup.h"

#include <stdio.h>
#include <string.h>

#include "base/gw_log.h"
#include "rc_err.h"
#include "redis/gw_node_int.h"
#include "redis/gw_node_probe.h"

/* What rankcast needs: K keyspace channel, g generic (del, rename, expire),
 * z sorted sets, x expired, e evicted. */
#define KEYSPACE_FLAGS "Kghzxe" /* h: team membership hashes (docs/teams.md) */
/* The classes Redis' "A" alias stands for (so "AK" already covers us). */
#define KEYSPACE_ALL_CLASSES "g$lshzxetd"

static void keyspace_refused(struct gw_node *r, const char *what, const char *why)
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
    struct gw_node *r = privdata;
    redisReply *rep = reply;
    if (!gw_node_link_is_live(r, &r->cmd, ac, rep))
        return;
    if (rep->type == REDIS_REPLY_ERROR)
        keyspace_refused(r, "SET", rep->str);
    else
        r->keyspace_ok = 1;
    gw_node_link_step_done(r);
}

/* CONFIG SET only when something is missing. The step stays pending until
 * CONFIG SET answers (or the deadline drops the attempt). */
static void on_keyspace_get(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct gw_node *r = privdata;
    redisReply *rep = reply;
    char flags[64];
    if (!gw_node_link_is_live(r, &r->cmd, ac, rep))
        return;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[1]->type != REDIS_REPLY_STRING || rep->element[1]->len > 32) {
        /* no CONFIG for us (an ACL user, a renamed command): find out by trying */
        gw_log_info("keyspace notifications: CONFIG GET refused (%s): trying a probe key once up",
                    rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
        gw_node_probe_want(r);
        gw_node_link_step_done(r);
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
        gw_node_link_step_done(r);
        return;
    }
    redisAsyncCommand(ac, on_keyspace_set, r, "CONFIG SET notify-keyspace-events %s", flags);
}

/* A SCRIPT LOAD sent during setup counts; one sent while up (a script
 * registered late) only logs an error. */
static void on_script_loaded(redisReply *reply, void *privdata)
{
    struct gw_node *r = privdata;
    if (!reply || (r->state != GW_ST_CONNECTING && r->state != GW_ST_UP))
        return;
    if (reply->type == REDIS_REPLY_ERROR) {
        if (r->state == GW_ST_UP)
            gw_log_error("redis: SCRIPT LOAD refused: %s", reply->str);
        else
            gw_node_link_fail(r, "SCRIPT LOAD refused: %s", reply->str);
        return;
    }
    gw_node_link_step_done(r);
}

int gw_node_setup_load_script(struct gw_node *r, struct gw_script *s)
{
    if (gw_script_load(s, r->cmd.ac, on_script_loaded, r) != 0)
        return RC_E_UNAVAILABLE;
    if (r->state == GW_ST_CONNECTING)
        r->setup_pending++;
    return 0;
}

/* INFO cluster: "cluster_enabled:1" on a cluster node. A server that
 * refuses INFO (renamed command) is taken as a plain one. */
static void on_info_cluster(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct gw_node *r = privdata;
    redisReply *rep = reply;
    if (!gw_node_link_is_live(r, &r->cmd, ac, rep))
        return;
    /* said before SCRIPT LOAD's answer, which may be a protocol error: Redis
     * refuses large arguments from a client that has not logged in */
    if (rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "NOAUTH", 6) == 0) {
        gw_node_link_fail(r, "NOAUTH: this Redis needs a password and none was given");
        return;
    }
    r->cluster_enabled = rep->type == REDIS_REPLY_STRING && rep->str && strstr(rep->str, "cluster_enabled:1") ? 1 : 0;
    gw_node_link_step_done(r);
}

/* Queues the whole setup (AUTH first, gw_node_link.c); the final PING makes sure at least one reply
 * comes back, so "up" is decided from a reply callback. A command that
 * cannot be queued leaves setup_sent 0: the deadline drops the attempt. */
void gw_node_setup_cmd(struct gw_node *r)
{
    redisAsyncContext *ac = r->cmd.ac;
    r->probe = 0;
    if (gw_node_link_send_auth(r, &r->cmd, 0) != 0)
        return;
    if (!r->opts.keyspace_events)
        gw_node_probe_want(r); /* the operator's setting: check it without CONFIG */
    if (r->opts.keyspace_events) {
        if (redisAsyncCommand(ac, on_keyspace_get, r, "CONFIG GET notify-keyspace-events") != REDIS_OK)
            return;
        r->setup_pending++;
    }
    if (redisAsyncCommand(ac, on_info_cluster, r, "INFO cluster") != REDIS_OK)
        return;
    r->setup_pending++;
    for (size_t i = 0; i < r->nscripts; i++)
        if (gw_node_setup_load_script(r, r->scripts[i]) != 0)
            return;
    if (redisAsyncCommand(ac, gw_node_link_on_setup_pong, r, "PING") != REDIS_OK)
        return;
    r->setup_pending++;
    r->cmd.setup_sent = 1;
}

/* The write connection: AUTH first like the others (gw_node_link.c), then
 * a PING whose answer proves the login and makes "up" come from a reply. */
void gw_node_setup_wr(struct gw_node *r)
{
    if (gw_node_link_send_auth(r, &r->wr, 0) != 0)
        return;
    if (redisAsyncCommand(r->wr.ac, gw_node_link_on_setup_pong, r, "PING") != REDIS_OK)
        return;
    r->setup_pending++;
    r->wr.setup_sent = 1;
}
