/* gw_instances.c - records a template's boards in the template's index as
 * they are written (see gw_instances.h). The index key is in the template's
 * own slot (rc:{match:*}:periods), so on a Redis Cluster it goes to another
 * node than the write: it is a separate command, never part of the write
 * script. It is sent after the write, on the same loop turn, so the two
 * leave together; a gateway that dies in between loses at most that entry,
 * which its next write of the same board sends again.
 *
 * The module's state (app->instances) remembers the entries Redis acknowledged, so a busy board
 * costs one ZADD per period (per bucket on hot boards), not one per write. */
#include "ops/gw_instances.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <uv.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "redis/gw_redis.h"
#include "rc_instances.h"
#include "rc_keys.h"

/* What this process knows of the index (allocated at the first write of a
 * template's board). */
struct gw_instances {
    struct rc_inst_seen seen;
    int warned; /* a failure was logged since the last success */
};

struct note {
    struct gw_app *app;
    int64_t score;
    char member[RC_INST_ENTRY_MAX];
};

static void on_noted(redisReply *reply, void *privdata)
{
    struct note *n = privdata;
    if (reply && reply->type == REDIS_REPLY_INTEGER) {
        rc_instances_seen_add(&n->app->instances->seen, n->member, n->score);
        n->app->instances->warned = 0; /* a failure is logged once until a success */
    } else if (reply && !n->app->instances->warned) {
        n->app->instances->warned = 1;
        gw_log_warn("template index: recording %s failed: %.150s; sent again with its next write", n->member,
                    reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
    }
    free(n);
}

static int seed_once(struct gw_app *app)
{
    if (app->instances)
        return 0;
    struct gw_instances *in = calloc(1, sizeof *in);
    if (!in)
        return -1;
    struct rc_hash_key key;
    if (uv_random(NULL, NULL, &key, sizeof key, 0, NULL) != 0) {
        key.k0 = uv_hrtime();
        key.k1 = (uint64_t)uv_os_getpid() * 0x9e3779b97f4a7c15ULL;
    }
    rc_instances_seen_init(&in->seen, key);
    app->instances = in;
    return 0;
}

void gw_instances_free(struct gw_instances *in)
{
    free(in);
}

void gw_instances_note(struct gw_app *app, const struct rc_board *decl, const char *name, const struct rc_period *p)
{
    char key[RC_KEY_MAX], score[24];
    if (!rc_instances_indexed(decl) || !app->redis)
        return;
    if (seed_once(app) != 0)
        return; /* out of memory: the next write tries again */
    struct note *n = malloc(sizeof *n);
    if (!n)
        return;
    n->app = app;
    if (rc_instances_index_key(key, sizeof key, decl) != 0 ||
        rc_instances_entry(decl, name, p, gw_now_ms(app), n->member, sizeof n->member, &n->score) != 0 ||
        rc_instances_seen_has(&app->instances->seen, n->member, n->score)) {
        free(n);
        return;
    }
    snprintf(score, sizeof score, "%lld", (long long)n->score);
    const char *argv[] = {"ZADD", key, "GT", score, n->member};
    if (gw_redis_command(app->redis, key, strlen(key), 5, argv, NULL, on_noted, n) != 0)
        free(n);
}
