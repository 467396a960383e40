/* gw_read_at.h - a board at past moments (docs/history.md): one read.lua
 * "moment" call (core/rc_moment_args.h), the standings rebuilt from it by
 * core/rc_moment.h, joined with profiles like any window. */
#ifndef GW_READ_AT_H
#define GW_READ_AT_H

#include <stddef.h>
#include <stdint.h>

#include "rc_moment_args.h"
#include "rc_proto.h"
#include "store/gw_read.h"

struct gw_store;

struct gw_read_at_result {
    enum rc_moment_status status;     /* BEYOND, GONE: nothing below but oldest and head */
    int64_t oldest;                   /* the oldest seq that can still be shown */
    int has_oldest_time;              /* GONE: 1 oldest_time is the earliest time a read by time can show
                                       * (a sharded board: the latest of its refusing shards'), 0 or -1
                                       * (a shard could not tell) none */
    int64_t oldest_time;
    struct rc_read_head head;         /* the board now (the live set): epoch, freeze */
    int64_t at_seq;                   /* RANGE, AROUND: the seq shown */
    int has_at_time;
    int64_t at_time;
    struct gw_window *w;              /* RANGE, AROUND: the window at at_seq; the callee's (free or keep) */
    struct rc_history_point *points;  /* POINTS: one per target, borrowed for the callback */
    size_t npoints;
    int deep;                         /* GONE because a base was more than history_undo_max away (not the log):
                                       * a shorter span may be served (gw_read_at_span) */
};

/* code 0: res filled (see above); else an RC_E_* and res NULL. */
typedef void gw_read_at_cb(int code, struct gw_read_at_result *res, void *privdata);

/* Reads board `board` (declared by b, not sharded) in `period` at req's
 * targets. Returns 0 when sent (cb runs once, later), or RC_E_BAD_REQUEST,
 * RC_E_UNAVAILABLE, RC_E_INTERNAL (cb not called). Borrows req for the
 * call. */
int gw_read_at(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
               const struct rc_moment_req *req, gw_read_at_cb *cb, void *privdata);

/* A sharded board (b->shards > 1) by time (store/gw_read_at_shard.c):
 * RANGE ending within RC_SHARD_READ_MAX, each shard as of the time,
 * merged (gw_read_at sends AROUND and POINTS to gw_read_at_member and LIST
 * to gw_read_at_list). at_seq is the sum of the shards' seqs shown, at_time the latest
 * of their changes' times, oldest the sum of their oldest seqs. Returns as
 * gw_read_at (RC_E_BAD_REQUEST for anything else). */
int gw_read_at_shard(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                     const struct rc_moment_req *req, gw_read_at_cb *cb, void *privdata);

/* Folds one shard's refusal r (GONE, DEEP; others ignored) into res's
 * oldest_time: a time every shard refusing so far holds. */
void gw_read_at_shard_oldest(struct gw_read_at_result *res, const struct rc_moment_reply *r);

/* A member list of a sharded board by time (store/gw_read_at_list.c):
 * each listed member's composite and rank in its shard, then every shard's
 * counts ahead of the other shards' members. Returns as gw_read_at. */
int gw_read_at_list(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                    const struct rc_moment_req *req, gw_read_at_cb *cb, void *privdata);

/* A sharded board's POINTS over any span (store/gw_read_at_span.c): in
 * chunks of gw_read_at_member, newest first, halved while refused past
 * history_undo_max. Targets ascending. Returns as gw_read_at. */
int gw_read_at_span(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                    const struct rc_moment_req *req, gw_read_at_cb *cb, void *privdata);

/* A sharded board by time about one member (store/gw_read_at_member.c):
 * AROUND (the window around the member over every shard) or POINTS (its
 * score and rank at each time). The member's shard first, then every
 * other shard counts and reads near the member's composite there. Returns
 * as gw_read_at. */
int gw_read_at_member(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                      const struct rc_moment_req *req, gw_read_at_cb *cb, void *privdata);

#endif
