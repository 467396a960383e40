/* gw_read_ahead.c - the other shards' part of a sharded board member's
 * rank, for a write's ack (docs/sharded.md, "Writes"): the write script
 * answers the member's rank in its own shard, atomically with the write;
 * every other shard adds the members it holds ahead of it (core/rc_shard.h:
 * a composite better than, or for a lower shard as good as, the member's)
 * and its seq. Two plain commands per shard (ZCOUNT, GET), pipelined on the
 * shard's node: no script, so an ack costs Redis little more than the
 * write itself. */
#include "store/gw_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "store/gw_store.h"
#include "redis/gw_redis.h"
#include "rc_err.h"
#include "rc_keys.h"
#include "rc_shard.h"

struct ahead {
    gw_read_ahead_cb *cb;
    void *privdata;
    unsigned waiting;
    int code;
    int64_t ahead, seqs;
};

struct ahead_one {
    struct ahead *a;
    int is_seq;
};

static void done_one(struct ahead *a)
{
    if (--a->waiting)
        return;
    a->cb(a->code, a->code ? 0 : a->ahead, a->code ? 0 : a->seqs, a->privdata);
    free(a);
}

static void on_reply(redisReply *r, void *privdata)
{
    struct ahead_one *o = privdata;
    struct ahead *a = o->a;
    if (!r) {
        if (!a->code)
            a->code = RC_E_UNAVAILABLE;
    } else if (o->is_seq && r->type == REDIS_REPLY_NIL) {
        /* a shard never written: seq 0 */
    } else if (o->is_seq && r->type == REDIS_REPLY_STRING) {
        char *end;
        long long v = strtoll(r->str, &end, 10);
        if (*end || v < 0) {
            if (!a->code)
                a->code = RC_E_INTERNAL;
        } else {
            a->seqs += v;
        }
    } else if (!o->is_seq && r->type == REDIS_REPLY_INTEGER) {
        a->ahead += r->integer;
    } else if (!a->code) {
        a->code = RC_E_INTERNAL;
    }
    free(o);
    done_one(a);
}

static int send_one(const struct gw_store *s, struct ahead *a, const char *key, int is_seq, int argc,
                    const char *const *argv)
{
    struct ahead_one *o = malloc(sizeof *o);
    if (!o)
        return RC_E_INTERNAL;
    o->a = a;
    o->is_seq = is_seq;
    if (gw_redis_command(s->redis, key, strlen(key), argc, argv, NULL, on_reply, o) != 0) {
        free(o);
        return RC_E_UNAVAILABLE;
    }
    a->waiting++;
    return 0;
}

int gw_read_ahead(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                  unsigned of, int has_c, double c, gw_read_ahead_cb *cb, void *privdata)
{
    if (!s->redis)
        return RC_E_UNAVAILABLE;
    struct ahead *a = calloc(1, sizeof *a);
    if (!a)
        return RC_E_INTERNAL;
    a->cb = cb;
    a->privdata = privdata;
    a->waiting = 1; /* held while the commands go out */
    int desc = b->layout.order == RC_ORDER_DESC;
    char num[40], bound[42];
    snprintf(num, sizeof num, "%.17g", c);
    for (unsigned j = 0; j < b->shards && !a->code; j++) {
        if (j == of)
            continue;
        char name[RC_SHARD_NAME_MAX + 1], z[RC_KEY_MAX], seq[RC_KEY_MAX];
        if (rc_shard_name(name, sizeof name, board, j) != 0 || rc_keys_board(z, sizeof z, name, period, "z", NULL) ||
            rc_keys_board(seq, sizeof seq, name, period, "seq", NULL)) {
            a->code = RC_E_INTERNAL;
            break;
        }
        int rc = 0;
        if (has_c) {
            /* ahead: better, or as good on a lower shard (rc_shard_count_inclusive) */
            snprintf(bound, sizeof bound, "%s%s", rc_shard_count_inclusive(j, of) ? "" : "(", num);
            const char *zc[] = {"ZCOUNT", z, desc ? bound : "-inf", desc ? "+inf" : bound};
            rc = send_one(s, a, z, 0, 4, zc);
        }
        const char *get[] = {"GET", seq};
        if (!rc)
            rc = send_one(s, a, seq, 1, 2, get);
        if (rc)
            a->code = rc;
    }
    if (a->code && a->waiting == 1) {
        int code = a->code;
        free(a);
        return code; /* nothing went out: cb not called */
    }
    done_one(a);
    return 0;
}
