/* gw_redis_sub.c - the subscribe connection: PSUBSCRIBE of every registered
 * pattern on every connect (each confirmation is a setup step of the
 * attempt, gw_redis_link.c), then pmessages handed to the on_message hook. A
 * subscribed hiredis connection cannot run other commands, hence a second
 * connection. */
#include "redis/gw_redis_sub.h"

#include <string.h>
#include <strings.h>

#include "rc_err.h"
#include "redis/gw_redis_int.h"

/* Every reply on the subscribe connection: psubscribe confirmations, then
 * pmessages. NULL at teardown (once per pattern). Messages reach the hook
 * only while up (none arrive before the setup is done anyway). */
static void on_sub_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct gw_redis *r = privdata;
    redisReply *rep = reply;
    if (!gw_redis_link_is_live(r, &r->sub, ac, rep) || rep->type != REDIS_REPLY_ARRAY || rep->elements < 3)
        return;
    for (size_t i = 0; i < rep->elements; i++)
        if (rep->element[i]->type != REDIS_REPLY_STRING && rep->element[i]->type != REDIS_REPLY_INTEGER)
            return;
    const char *kind = rep->element[0]->str;
    if (kind && strcasecmp(kind, "psubscribe") == 0) {
        gw_redis_link_step_done(r);
    } else if (kind && strcasecmp(kind, "pmessage") == 0 && rep->elements == 4 && r->state == GW_ST_UP &&
               r->hooks.on_message) {
        r->hooks.on_message(r->hooks.data, rep->element[1]->str, rep->element[2]->str, rep->element[3]->str,
                            rep->element[3]->len);
    }
}

int gw_redis_sub_send(struct gw_redis *r, const char *pattern)
{
    const char *argv[] = {"PSUBSCRIBE", pattern};
    size_t lens[] = {10, strlen(pattern)};
    if (redisAsyncCommandArgv(r->sub.ac, on_sub_reply, r, 2, argv, lens) != REDIS_OK)
        return RC_E_UNAVAILABLE;
    if (r->state == GW_ST_CONNECTING)
        r->setup_pending++;
    return 0;
}

/* With no pattern yet a PING stands in, so the subscribe connection also
 * answers once before we call it ready. */
void gw_redis_sub_setup(struct gw_redis *r)
{
    if (r->npatterns == 0) {
        if (redisAsyncCommand(r->sub.ac, gw_redis_link_on_setup_pong, r, "PING") != REDIS_OK)
            return;
        r->setup_pending++;
    }
    for (size_t i = 0; i < r->npatterns; i++)
        if (gw_redis_sub_send(r, r->patterns[i]) != 0)
            return;
    r->sub.setup_sent = 1;
}
