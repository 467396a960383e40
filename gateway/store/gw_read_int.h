/* gw_read_int.h - internal to store/'s board reads, in a one-way order:
 * gw_read.c (a board's read) and gw_read_shard.c (a sharded board's merged
 * read) send through gw_read_call.c and fall back to the archive through
 * gw_read_past.c; gw_read_shard.c merges with gw_read_merge.c. Nothing outside store/ includes it. */
#ifndef GW_READ_INT_H
#define GW_READ_INT_H

#include <stddef.h>
#include <stdint.h>

#include "store/gw_read.h"
#include "redis/gw_redis.h"
#include "rc_moment_args.h"

/* ---- gw_read_call.c: one read.lua call ---- */

/* Builds req for board `board` (a shard's name "B#i" reads that shard) and
 * sends it through s's script and Redis. Returns as gw_read_call_send, or
 * RC_E_BAD_REQUEST for a req read.lua cannot take. */
int gw_read_call(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                 const struct rc_read_req *req, gw_script_reply_cb *cb, void *privdata);

/* gw_read_call_reply for a near reply: fills *nr too. */
int gw_read_call_reply_near(const redisReply *r, struct rc_read_head *head, struct rc_read_near *nr,
                       struct rc_read_row **rows, size_t *n);

/* ---- gw_read_past.c: a past period answered from the archive ---- */

/* 1 when window w, just read from Redis for board b in `period`, is a past
 * period whose keys are gone (seq and total 0, not the current period). */
int gw_read_past_and_gone(const struct gw_store *s, const struct rc_board *b, const char *period,
                          const struct gw_window *w);

/* Hands the read (board, period, spec: copied as needed) to the archive.
 * Returns 0 when it took it: cb then runs once, later, with the archive's
 * window, or with `empty` (taken: the window Redis gave) when the archive
 * does not hold the period. -1: not taken (empty still the caller's). */
int gw_read_past_try_archive(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                        const struct gw_read_spec *spec, struct gw_window *empty, gw_read_cb *cb, void *privdata);

/* ---- gw_read_shard.c: a sharded board's read (gw_read's contract) ---- */

int gw_read_shard_read(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                    const struct gw_read_spec *spec, gw_read_cb *cb, void *privdata);

/* ---- gw_read_at_shard.c: one shard's moment read ---- */

/* read.lua "moment" (req, its undo cap the store's) on shard i of board in
 * period: 0 when sent (cb runs once), else RC_E_* (cb not called). */
int gw_read_at_shard_send(const struct gw_store *s, const struct rc_board *b, const char *board,
                          const char *period, unsigned i, const struct rc_moment_req *req, gw_redis_reply_cb *cb,
                          void *privdata);
/* One shard's moment reply (NULL: Redis did not answer) parsed as `view`
 * into *r (rc_moment_args_reply_free it, whatever is returned), and its
 * head folded into res: oldest and seq added when `sum` (a sharded seq is
 * the sum of the shards'), the oldest time, and a refusal (past
 * history_undo_max on this shard: *deep set, taken as gone). Returns 0, or
 * RC_E_UNAVAILABLE / RC_E_INTERNAL (nothing folded). The rows are the
 * caller's to take when r->status and res->status are both RC_MOMENT_OK. */
struct gw_read_at_result;
int gw_read_at_shard_take(const redisReply *reply, enum rc_moment_view view, int sum, struct gw_read_at_result *res,
                          int *deep, struct rc_moment_reply *r);
/* ---- gw_read_at_shard_chain.c: a shard's moment past the cap from both bases ---- */

/* gw_redis_eval of a shard's moment call (words, lens: its n words; req its
 * request, copied as needed; shard its name "B#i"), except that a reply
 * "deep" naming a checkpoint is read by store/gw_read_at_chain.c first, and
 * cb gets the moment as the one call would have answered it (NULL when the
 * chain failed: as if Redis had not answered). Returns as gw_redis_eval. */
int gw_read_at_shard_chain_eval(const struct gw_store *s, enum rc_order order, const char *shard,
                                const char *period, const struct rc_moment_req *req, unsigned nwords,
                                const char **words, const size_t *lens, gw_redis_reply_cb *cb, void *privdata);

/* ---- gw_read_mshard.c: a sharded board's member list (gw_read's contract) ---- */

int gw_read_mshard_read(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                        const struct gw_read_spec *spec, gw_read_cb *cb, void *privdata);

/* ---- gw_read_merge.c: the merged window from the shards' parts ---- */

/* What one shard answered in a read's last round, copied out of the reply. */
struct gw_shard_part {
    struct rc_read_head head;
    int64_t count;      /* counts: the count; near: the members ahead of the bound */
    size_t na;          /* near: rows[0..na) are ahead of the bound, the rest behind */
    double *c;          /* rows, in the shard's order (owned) */
    char **member;      /* (owned) */
    size_t n;
};

/* Replaces p's rows with copies of rows[0..n). Returns 0 or RC_E_INTERNAL. */
int gw_read_merge_part_set_rows(struct gw_shard_part *p, const struct rc_read_row *rows, size_t n);
void gw_read_merge_part_clear(struct gw_shard_part *p);

/* w's head from parts[0..nshards): seq and total summed, the epoch digest
 * (core/rc_shard.h, rc_shard_epoch), first_rank 0, freeze zero. */
void gw_read_merge_head(struct gw_window *w, const struct gw_shard_part *parts, unsigned nshards);

/* RANGE: every part holds its shard's first first+count+1 rows. Fills w's
 * head, first_rank first + 1, and rows first..first+count-1 of the merged
 * order; with places, their place and tied (every row before them was
 * read, and the one after). Returns 0 or RC_E_INTERNAL. */
int gw_read_merge_range(const struct rc_board *b, const struct gw_shard_part *parts, unsigned nshards,
                         int64_t first, int64_t count, int places, struct gw_window *w);

/* RANK: parts[home] holds the member's row (none: absent), the others one
 * count each (the rows ahead of it on that shard). */
int gw_read_merge_rank(const struct rc_board *b, const struct gw_shard_part *parts, unsigned nshards,
                        unsigned home, struct gw_window *w);

/* AROUND: parts[home] holds the home shard's rows around the member, the
 * member at rows[at] and `before` rows of the shard ahead of rows[0]; every
 * other part a near reply. Fills w with the radius nearest rows ahead of
 * the member over all shards, the member, the radius rows behind it, and
 * *next_tied (whether the row after the last one ties it: places). */
int gw_read_merge_around(const struct rc_board *b, const struct gw_shard_part *parts, unsigned nshards,
                          unsigned home, size_t at, int64_t before, int64_t radius, struct gw_window *w,
                          int *next_tied);

/* The counts bound that counts, on any shard, the members with strictly
 * better points than composite c (read.lua's `above`): *bound and
 * *inclusive for gw_read_call_counts. */
void gw_read_merge_above_bound(const struct rc_board *b, double c, double *bound, int *inclusive);

#endif
