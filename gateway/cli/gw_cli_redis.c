/* gw_cli_redis.c - the command-line tools' blocking Redis client, one server
 * or a cluster (gw_cli_redis.h). */
#include "cli/gw_cli_redis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/gw_redis_pass.h"
#include "rc_hostport.h"
#include "rc_slot.h"
#include "redis/gw_slotmap.h"

#define MAX_TRIES 50      /* redirects and retries of one command */
#define RETRY_WAIT_MS 100 /* before a command refused with TRYAGAIN, CLUSTERDOWN, LOADING */

struct node {
    char host[RC_SEED_HOST_MAX];
    int port;
    redisContext *c;      /* NULL until connected, and after a failure */
    struct node *next;
};

struct gw_cli_redis {
    int cluster;
    int timeout_ms;
    char *username, *password; /* owned copies for AUTH (NULL: none) */
    struct node *nodes;
    struct node *single;             /* one server: every command goes there */
    struct node *slots[RC_SLOTS];    /* cluster: the primary of each slot */
};

static void set_err(char *err, size_t cap, const char *fmt, const char *a, int port, const char *b)
{
    char where[RC_HOSTPORT_NAME_MAX];
    rc_hostport_format(where, sizeof where, a, port);
    snprintf(err, cap, fmt, where, b);
}

static struct node *node_get(struct gw_cli_redis *r, const char *host, int port)
{
    for (struct node *n = r->nodes; n; n = n->next)
        if (n->port == port && strcmp(n->host, host) == 0)
            return n;
    struct node *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    snprintf(n->host, sizeof n->host, "%s", host);
    n->port = port;
    n->next = r->nodes;
    r->nodes = n;
    return n;
}

static void node_drop(struct node *n)
{
    if (n->c)
        redisFree(n->c);
    n->c = NULL;
}

/* AUTH [username] password, the first command on n's new connection.
 * Returns 0 or -1 (err filled with Redis' reason, which names no password). */
static int node_auth(struct gw_cli_redis *r, struct node *n, char *err, size_t cap)
{
    const char *argv[3] = {"AUTH"};
    int argc = 1;
    if (r->username)
        argv[argc++] = r->username;
    argv[argc++] = r->password;
    redisReply *rep = redisCommandArgv(n->c, argc, argv, NULL);
    char why[160];
    snprintf(why, sizeof why, "%s", !rep ? n->c->errstr : rep->type == REDIS_REPLY_ERROR ? rep->str : "");
    int ok = rep && rep->type != REDIS_REPLY_ERROR;
    if (rep)
        freeReplyObject(rep);
    if (ok)
        return 0;
    if (strstr(why, r->password))
        snprintf(why, sizeof why, "%s", "refused");
    set_err(err, cap, "Redis at %s: AUTH refused: %s", n->host, n->port, why);
    node_drop(n);
    return -1;
}

/* Connects n when it is not, and logs in. Returns 0 or -1 (err filled). */
static int node_conn(struct gw_cli_redis *r, struct node *n, char *err, size_t cap)
{
    if (n->c && !n->c->err)
        return 0;
    node_drop(n);
    struct timeval tv = {r->timeout_ms / 1000, (r->timeout_ms % 1000) * 1000};
    n->c = redisConnectWithTimeout(n->host, n->port, tv);
    if (!n->c || n->c->err) {
        set_err(err, cap, "Redis at %s: %s", n->host, n->port, n->c ? n->c->errstr : "out of memory");
        node_drop(n);
        return -1;
    }
    redisSetTimeout(n->c, tv);
    return r->password ? node_auth(r, n, err, cap) : 0;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- the slot map --------------------------------------------------------------- */

/* Applies a CLUSTER SLOTS answer from node `asked` (an empty host or "?"
 * means that node). Returns 0 or -1 (not a slot map: nothing changed). */
static int apply_map(struct gw_cli_redis *r, const redisReply *rep, const struct node *asked)
{
    if (gw_slotmap_check(rep) != 0)
        return -1;
    memset(r->slots, 0, sizeof r->slots);
    for (size_t i = 0; i < rep->elements; i++) {
        struct gw_slotmap_range g;
        gw_slotmap_range(rep, i, asked->host, &g);
        struct node *n = node_get(r, g.host, g.port);
        if (!n)
            return -1;
        for (unsigned s = g.start; s <= g.end; s++)
            r->slots[s] = n;
    }
    return 0;
}

/* Reads the slot map from the first node that answers. */
static int refresh_map(struct gw_cli_redis *r, char *err, size_t cap)
{
    for (struct node *n = r->nodes; n; n = n->next) {
        if (node_conn(r, n, err, cap) != 0)
            continue;
        redisReply *rep = redisCommand(n->c, "CLUSTER SLOTS");
        int ok = rep && apply_map(r, rep, n) == 0;
        if (rep)
            freeReplyObject(rep);
        else
            node_drop(n);
        if (ok)
            return 0;
    }
    snprintf(err, cap, "no cluster node answered CLUSTER SLOTS");
    return -1;
}

struct gw_cli_redis *gw_cli_redis_open(const char *seeds, const char *username, const char *password,
                                       int timeout_ms, char *err, size_t cap)
{
    struct rc_seed list[RC_SEEDS_MAX];
    size_t nseeds;
    err[0] = '\0';
    if (rc_hostport_split_seeds(seeds, list, RC_SEEDS_MAX, &nseeds) != 0) {
        snprintf(err, cap, "--redis '%s' is not HOST:PORT[,HOST:PORT...]", seeds);
        return NULL;
    }
    struct gw_cli_redis *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    r->timeout_ms = timeout_ms;
    if ((username && *username && !(r->username = strdup(username))) ||
        (password && *password && !(r->password = strdup(password)))) {
        snprintf(err, cap, "out of memory");
        gw_cli_redis_close(r);
        return NULL;
    }
    for (size_t i = 0; i < nseeds; i++) {
        struct node *n = node_get(r, list[i].host, list[i].port);
        if (!n || node_conn(r, n, err, cap) != 0)
            continue;
        redisReply *rep = redisCommand(n->c, "CLUSTER SLOTS");
        if (!rep) {
            set_err(err, cap, "Redis at %s: %s", n->host, n->port, n->c->errstr);
            node_drop(n);
            continue;
        }
        int done = 0;
        if (rep->type == REDIS_REPLY_ERROR && strstr(rep->str, "cluster support disabled")) {
            r->single = n; /* one server */
            done = 1;
        } else if (rep->type == REDIS_REPLY_ERROR) {
            set_err(err, cap, "Redis at %s: %s", n->host, n->port, rep->str);
        } else if (apply_map(r, rep, n) == 0) {
            r->cluster = 1;
            done = 1;
        } else {
            set_err(err, cap, "Redis at %s: %s", n->host, n->port, "CLUSTER SLOTS answered no slot map");
        }
        freeReplyObject(rep);
        if (done) {
            err[0] = '\0';
            return r;
        }
    }
    gw_cli_redis_close(r);
    return NULL;
}

void gw_cli_redis_close(struct gw_cli_redis *r)
{
    if (!r)
        return;
    for (struct node *n = r->nodes, *next; n; n = next) {
        next = n->next;
        node_drop(n);
        free(n);
    }
    free(r->username);
    gw_redis_pass_zero(r->password);
    free(r->password);
    free(r);
}

int gw_cli_redis_is_cluster(const struct gw_cli_redis *r)
{
    return r->cluster;
}

/* ---- commands --------------------------------------------------------------------- */

static struct node *route(struct gw_cli_redis *r, const struct gw_cli_cmd *cmd, char *err, size_t cap)
{
    if (!r->cluster)
        return r->single;
    unsigned slot = rc_slot_of_key(cmd->argv[cmd->key_at], cmd->lens[cmd->key_at]);
    if (!r->slots[slot] && refresh_map(r, err, cap) != 0)
        return NULL;
    if (!r->slots[slot])
        snprintf(err, cap, "slot %u has no primary in the cluster's map", slot);
    return r->slots[slot];
}

static int append(struct node *n, const struct gw_cli_cmd *cmd)
{
    return redisAppendCommandArgv(n->c, cmd->argc, cmd->argv, cmd->lens) == REDIS_OK ? 0 : -1;
}

static int get_reply(struct node *n, redisReply **out, char *err, size_t cap)
{
    void *rep = NULL;
    if (redisGetReply(n->c, &rep) != REDIS_OK || !rep) {
        set_err(err, cap, "Redis at %s: connection lost (%s): a command sent may or may not have run", n->host,
                n->port, n->c->errstr[0] ? n->c->errstr : "no answer");
        node_drop(n);
        return -1;
    }
    *out = rep;
    return 0;
}

/* 1 when the answer asks the client to do something else first. */
static int needs_care(const redisReply *rep, const struct gw_cli_cmd *cmd)
{
    if (rep->type != REDIS_REPLY_ERROR)
        return 0;
    enum rc_redis_err k = rc_slot_classify_error(rep->str, rep->len);
    return k == RC_REDIS_ERR_MOVED || k == RC_REDIS_ERR_ASK || k == RC_REDIS_ERR_TRYAGAIN ||
           k == RC_REDIS_ERR_CLUSTERDOWN || k == RC_REDIS_ERR_LOADING || k == RC_REDIS_ERR_MASTERDOWN ||
           (k == RC_REDIS_ERR_NOSCRIPT && cmd->script);
}

/* Sends cmd alone, following what the answers ask, until a final answer.
 * prev: the answer that sent us here (consumed). */
static redisReply *run_alone(struct gw_cli_redis *r, struct gw_cli_cmd *cmd, struct node *at, redisReply *prev,
                             char *err, size_t cap)
{
    for (int tries = 0; tries < MAX_TRIES; tries++) {
        int asking = 0;
        if (prev) {
            struct rc_redirect red;
            enum rc_redis_err k = rc_slot_classify_error(prev->str, prev->len);
            if ((k == RC_REDIS_ERR_MOVED || k == RC_REDIS_ERR_ASK) &&
                rc_slot_parse_redirect(prev->str, prev->len, &red) == 0) {
                struct node *to = node_get(r, red.host[0] ? red.host : at->host, red.port);
                if (!to) {
                    freeReplyObject(prev);
                    snprintf(err, cap, "out of memory");
                    return NULL;
                }
                if (k == RC_REDIS_ERR_MOVED) {
                    r->slots[red.slot] = to;
                    char ignored[GW_CLI_ERR_MAX] = "";
                    refresh_map(r, ignored, sizeof ignored); /* the rest of the map may have changed too */
                }
                at = to;
                asking = k == RC_REDIS_ERR_ASK;
            } else if (k == RC_REDIS_ERR_NOSCRIPT && cmd->script) {
                redisReply *ld = redisCommand(at->c, "SCRIPT LOAD %s", cmd->script);
                if (!ld) {
                    freeReplyObject(prev);
                    set_err(err, cap, "Redis at %s: connection lost (%s)", at->host, at->port, at->c->errstr);
                    node_drop(at);
                    return NULL;
                }
                freeReplyObject(ld);
            } else {
                sleep_ms(RETRY_WAIT_MS); /* TRYAGAIN, CLUSTERDOWN, LOADING, MASTERDOWN */
                if (k == RC_REDIS_ERR_CLUSTERDOWN || k == RC_REDIS_ERR_MASTERDOWN) {
                    char ignored[GW_CLI_ERR_MAX] = "";
                    refresh_map(r, ignored, sizeof ignored);
                    struct node *n = route(r, cmd, err, cap);
                    at = n ? n : at;
                }
            }
            freeReplyObject(prev);
            prev = NULL;
        }
        if (node_conn(r, at, err, cap) != 0)
            return NULL;
        redisReply *rep = NULL;
        if (asking) {
            if (redisAppendCommand(at->c, "ASKING") != REDIS_OK || get_reply(at, &rep, err, cap) != 0)
                return NULL;
            freeReplyObject(rep);
        }
        if (append(at, cmd) != 0 || get_reply(at, &rep, err, cap) != 0)
            return NULL;
        if (!needs_care(rep, cmd))
            return rep;
        prev = rep;
    }
    char last[120];
    snprintf(last, sizeof last, "%.100s", prev ? prev->str : "");
    freeReplyObject(prev);
    set_err(err, cap, "Redis at %s: still answering '%s' after many tries", at->host, at->port, last);
    return NULL;
}

int gw_cli_redis_batch(struct gw_cli_redis *r, struct gw_cli_cmd *cmds, size_t n, redisReply **replies, char *err,
                       size_t cap)
{
    struct node **to = malloc((n ? n : 1) * sizeof *to);
    if (!to) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    memset(replies, 0, n * sizeof *replies);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (!(to[i] = route(r, &cmds[i], err, cap)))
            rc = -1;
    /* pipelined: every command of a node written, then its answers read */
    for (struct node *nd = r->nodes; nd && !rc; nd = nd->next) {
        size_t sent = 0;
        for (size_t i = 0; i < n; i++) {
            if (to[i] != nd)
                continue;
            if (!sent && node_conn(r, nd, err, cap) != 0) {
                rc = -1;
                break;
            }
            if (append(nd, &cmds[i]) != 0) {
                snprintf(err, cap, "out of memory");
                rc = -1;
                break;
            }
            sent++;
        }
        for (size_t i = 0; i < n && sent && !rc; i++) {
            if (to[i] != nd)
                continue;
            if (get_reply(nd, &replies[i], err, cap) != 0)
                rc = -1;
            sent--;
        }
    }
    /* what was redirected, refused for now or lacked its script, in order */
    for (size_t i = 0; i < n && !rc; i++) {
        if (!needs_care(replies[i], &cmds[i]))
            continue;
        redisReply *prev = replies[i];
        replies[i] = NULL;
        if (!(replies[i] = run_alone(r, &cmds[i], to[i], prev, err, cap)))
            rc = -1;
    }
    free(to);
    return rc;
}

redisReply *gw_cli_redis_command(struct gw_cli_redis *r, struct gw_cli_cmd *cmd, char *err, size_t cap)
{
    redisReply *rep = NULL;
    if (gw_cli_redis_batch(r, cmd, 1, &rep, err, cap) != 0) {
        if (rep)
            freeReplyObject(rep);
        return NULL;
    }
    return rep;
}
