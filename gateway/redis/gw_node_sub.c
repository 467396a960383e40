/* gw_node_sub.c - the subscribe connection: PSUBSCRIBE of every registered
 * pattern on every connect (each confirmation is a setup step of the
 * attempt, gw_node_link.c), SSUBSCRIBE/SUNSUBSCRIBE of shard channels on
 * request, and every message to the hooks. A subscribed connection cannot run
 * other commands, hence a second connection.
 *
 * The connection runs in the adapter's raw mode (gw_redis_uv.h): hiredis 0.14
 * does not know sharded pub/sub, so every reply is read and placed here:
 *   ["psubscribe", pattern, n]          a setup step
 *   ["pmessage", pattern, channel, msg] on_message
 *   ["ssubscribe", channel, n]          on_shard(channel, 1)
 *   ["sunsubscribe", channel, n]        on_shard(channel, 0)
 *   ["smessage", channel, msg]          on_message(NULL pattern)
 *   +OK / -WRONGPASS ...                AUTH, the first answer when a password is set
 *   +PONG                               the setup PING (no pattern yet)
 *   ["pong", ""]                        the keyspace probe's PING (gw_node_probe.c)
 *   -ERR ...                            a refused command: the session ends
 */
#include "redis/gw_node_sub.h"

#include <string.h>
#include <strings.h>

#include "rc_err.h"
#include "redis/gw_node_int.h"
#include "redis/gw_node_probe.h"
#include "redis/gw_redis_uv.h"

static int is_word(const redisReply *e)
{
    return e->type == REDIS_REPLY_STRING || e->type == REDIS_REPLY_INTEGER;
}

static void on_push(struct gw_node *r, const redisReply *rep)
{
    if (rep->elements == 2 && rep->element[0]->type == REDIS_REPLY_STRING &&
        strcasecmp(rep->element[0]->str, "pong") == 0) {
        gw_node_probe_pong(r); /* a PING while subscribed */
        return;
    }
    if (rep->elements < 3)
        return;
    for (size_t i = 0; i < rep->elements; i++)
        if (!is_word(rep->element[i]))
            return;
    const char *kind = rep->element[0]->str;
    const redisReply *a = rep->element[1], *b = rep->element[2];
    if (!kind)
        return;
    if (strcasecmp(kind, "psubscribe") == 0) {
        gw_node_link_step_done(r);
    } else if (r->state != GW_ST_UP) {
        return; /* nothing else is expected before the setup is done */
    } else if (strcasecmp(kind, "pmessage") == 0 && rep->elements == 4) {
        if (b->str && gw_node_probe_heard(r, b->str))
            return;
        if (r->hooks.on_message)
            r->hooks.on_message(r->hooks.data, a->str, b->str, rep->element[3]->str, rep->element[3]->len);
    } else if (strcasecmp(kind, "smessage") == 0 && rep->elements == 3) {
        if (r->hooks.on_message)
            r->hooks.on_message(r->hooks.data, NULL, a->str, b->str, b->len);
    } else if (strcasecmp(kind, "ssubscribe") == 0 || strcasecmp(kind, "sunsubscribe") == 0) {
        if (r->hooks.on_shard && a->str)
            r->hooks.on_shard(r->hooks.data, a->str, kind[1] == 's' || kind[1] == 'S');
    }
}

static void on_raw(redisAsyncContext *ac, redisReply *rep, void *data)
{
    struct gw_node *r = data;
    if (!gw_node_link_is_live(r, &r->sub, ac, rep))
        return;
    if (r->sub.auth_out) { /* the first answer is AUTH's */
        r->sub.auth_out = 0;
        if (rep->type == REDIS_REPLY_ERROR)
            gw_node_link_auth_refused(r, &r->sub, rep->str);
        else
            gw_node_link_step_done(r);
        return;
    }
    if (rep->type == REDIS_REPLY_ARRAY) {
        on_push(r, rep);
    } else if (rep->type == REDIS_REPLY_STATUS) {
        gw_node_link_step_done(r); /* the setup PING */
    } else if (rep->type == REDIS_REPLY_ERROR) {
        gw_node_link_fail(r, "subscribe connection: %s", rep->str);
    }
}

static int send_words(struct gw_node *r, const char *cmd, const char *arg)
{
    const char *argv[] = {cmd, arg};
    return gw_redis_uv_send(r->sub.ac, arg ? 2 : 1, argv, NULL) == 0 ? 0 : RC_E_UNAVAILABLE;
}

int gw_node_sub_send(struct gw_node *r, const char *pattern)
{
    if (send_words(r, "PSUBSCRIBE", pattern) != 0)
        return RC_E_UNAVAILABLE;
    if (r->state == GW_ST_CONNECTING)
        r->setup_pending++;
    return 0;
}

int gw_node_sub_ssubscribe(struct gw_node *r, const char *channel)
{
    if (r->state != GW_ST_UP || !gw_node_link_connected(&r->sub))
        return RC_E_UNAVAILABLE;
    return send_words(r, "SSUBSCRIBE", channel);
}

int gw_node_sub_sunsubscribe(struct gw_node *r, const char *channel)
{
    if (r->state != GW_ST_UP || !gw_node_link_connected(&r->sub))
        return RC_E_UNAVAILABLE;
    return send_words(r, "SUNSUBSCRIBE", channel);
}

/* Raw mode first (nothing was sent yet, so nothing was read); with no
 * pattern a PING stands in, so the subscribe connection also answers once
 * before we call it ready. */
void gw_node_sub_setup(struct gw_node *r)
{
    if (gw_redis_uv_set_raw(r->sub.ac, on_raw, r) != 0 || gw_node_link_send_auth(r, &r->sub, 1) != 0)
        return;
    if (r->npatterns == 0) {
        if (send_words(r, "PING", NULL) != 0)
            return;
        r->setup_pending++;
    }
    for (size_t i = 0; i < r->npatterns; i++)
        if (gw_node_sub_send(r, r->patterns[i]) != 0)
            return;
    r->sub.setup_sent = 1;
}
