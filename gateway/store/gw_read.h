/* gw_read.h - consistent board reads (lua/read.lua) joined with profiles.
 *
 * A read returns a window: the board's seq and total at the moment of the
 * read and a run of rows with decoded scores, each with its member's profile
 * (cached, see gw_profile.h). Windows feed snapshots, deltas, the REST GETs
 * and the rank op.
 */
#ifndef GW_READ_H
#define GW_READ_H

#include <stddef.h>
#include <stdint.h>

#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "store/gw_profile.h"
#include "rc_event.h"
#include "rc_layout.h"
#include "rc_mirror.h"
#include "rc_proto.h"
#include "rc_read_args.h"
#include "rc_row.h"
#include "rc_shard.h"

struct gw_store;

struct gw_window {
    int64_t seq;
    int64_t total;
    int64_t first_rank;            /* rank of rows[0]; 0 when an around/rank member is absent */
    char epoch[RC_EPOCH_MAX + 1];  /* the board's epoch at the read, "" while it has no history */
    struct rc_freeze freeze;       /* the board's freeze at the read (core/rc_freeze.h); seq is
                                      freeze.shown when an audience read found it frozen */
    struct rc_row *rows;           /* core/rc_row.h */
    size_t n;
    /* a sharded board (docs/sharded.md): each shard's seq at the read (seq
     * is their sum), owned; nshards 0 and NULL for a board that is not
     * sharded (or out of memory: prev_rank then falls back to a snapshot) */
    unsigned nshards;
    int64_t *shard_seq;
    /* a sharded board's member list (store/gw_read_mshard.c): each shard's
     * seq when its listed members' rows were read (-1: none listed there),
     * nshards of them, owned; NULL for every other read */
    int64_t *listed_seq;
    /* every row's member in one block the window owns (gw_window_set_mirror_rows),
     * or NULL: each row owns its own */
    char *members;
    int64_t found;                 /* a roster read (gw_read_spec.best): its members on the board,
                                      more than n when the rows are cut at best; else 0 */
    /* A member list's window built from its last read (fanout/gw_members.c):
     * its rows borrow their members and profiles from base, which it holds
     * (gw_window_hold), and row_id[i] is the row of base that rows[i] is
     * (in the rows' allocation), so two windows of one base match rows by
     * it (core/rc_delta.h, rc_delta_make_members_by_id); NULL otherwise. */
    struct gw_window *base;
    const size_t *row_id;
    unsigned holds;                /* windows borrowing from this one: gw_window_free lets go of one */
};

/* Frees w, or lets go of one hold of it (gw_window_hold). */
void gw_window_free(struct gw_window *w);

/* One more hold of w (a window whose rows borrow from it): w outlives it,
 * freed by the last gw_window_free. Returns w. */
struct gw_window *gw_window_hold(struct gw_window *w);

/* A window of n rows (uninitialised, w->n 0) with head, epoch and freeze of
 * base, whose rows will borrow from base (held) and each say which row of
 * base it is in row_ids[0..n) (*row_ids; stored as w->row_id). NULL when out
 * of memory. */
struct gw_window *gw_window_borrowing(struct gw_window *base, size_t n, size_t **row_ids);

/* Keeps w's first n rows (the others' members and profiles let go). */
void gw_window_truncate(struct gw_window *w, size_t n);

/* Deep copy (rows, members, profile references). Returns 0 or -1 (OOM). */
int gw_window_copy(struct gw_window *dst, const struct gw_window *src);

/* All of w's rows for the encoders (core/rc_proto.h), read in place: the
 * multi-field values named by board b's layout. Borrows w and b. */
struct rc_rows_out gw_window_rows_out(const struct gw_window *w, const struct rc_board *b);

/* w->rows[0..n) (allocated, w->n 0) from mirror rows[0..n): members copied
 * into one block the window owns (a window is cut from the mirror for every
 * view on every tick: one allocation, not one per row), scores decoded for
 * board b. Returns 0, or RC_E_INTERNAL (out of memory: w->n stays 0). */
int gw_window_set_mirror_rows(const struct rc_board *b, struct gw_window *w, const struct rc_mirror_row *rows,
                              size_t n);

/* Fills w's seq, total, first_rank, epoch and freeze from a read's head. */
void gw_window_set_head(struct gw_window *w, const struct rc_read_head *head);

/* w->rows[0..n) (w has none yet) from rows[0..n): members copied, scores
 * decoded for board b. Returns 0, or RC_E_INTERNAL (out of memory: w->n
 * says how many were made, gw_window_free frees them). */
int gw_window_set_rows(const struct rc_board *b, struct gw_window *w, const struct rc_read_row *rows, size_t n);
/* gw_window_set_rows, then row i takes rank ranks[i] and the rows are put in
 * rank order (a member list: its members come in the order asked, each
 * with its own rank). Returns as gw_window_set_rows. */
int gw_window_set_ranked_rows(const struct rc_board *b, struct gw_window *w, const struct rc_read_row *rows,
                              const int64_t *ranks, size_t n);
/* w's rows in rank order. */
void gw_window_sort_by_rank(struct gw_window *w);

/* Fills the rows' place and tied (core/rc_places.h, rc_places_fill) with
 * the two facts from outside the window: the members with a strictly
 * better tie key than the first row's (above), and whether the member after
 * the last row ties it. Returns 0 or RC_E_INTERNAL (out of memory). */
int gw_window_fill_places(const struct rc_board *b, struct gw_window *w, int64_t above, int next_tied);

/* code 0: *w is owned by the callee (free it with gw_window_free, or move
 * it). Otherwise an RC_E_* (RC_E_UNAVAILABLE when Redis is down or the
 * connection dropped) and w is NULL. */
typedef void gw_read_cb(int code, struct gw_window *w, void *privdata);

struct gw_read_spec {
    enum { GW_READ_RANGE, GW_READ_AROUND, GW_READ_RANK, GW_READ_MEMBERS } kind;
    int64_t first;                 /* RANGE: 0-based index of the first row */
    int64_t count;                 /* RANGE: rows wanted (0 from index 0: the whole board,
                                      except on a sharded board: none) */
    const char *member;            /* AROUND/RANK (borrowed for the call) */
    int64_t radius;                /* AROUND */
    int places;                    /* RANGE, AROUND, MEMBERS: fill rows' place and tied (core/rc_places.h) */
    const char *members;           /* MEMBERS: a packed list (core/rc_members.h; copied for the call):
                                      rows are the listed members on the board, each with its own
                                      rank (rc_row.rank), first_rank 0 */
    uint32_t nmembers, members_len;
    int64_t best;                  /* MEMBERS: > 0, a roster (any count of members, docs/teams.md):
                                      only the best `best` of them by rank; w->found says how many
                                      are on the board */
    int live;                      /* the live board through a freeze (else what the audience sees) */
};

/* Reads board `board` (declared by b) in period `period` ("" for all-time)
 * with what s holds (borrowed until cb: it lives as long as the process).
 * Returns 0 when sent (cb runs exactly once, later), or RC_E_UNAVAILABLE,
 * RC_E_BAD_REQUEST (a spec read.lua cannot take) or RC_E_INTERNAL (cb not
 * called).
 *
 * A sharded board (b->shards > 1, docs/sharded.md) is read the same way and
 * answers one merged window of the same shape (store/gw_read_shard.c): seq
 * and total the sums of the shards', epoch their digest, freeze zero. It
 * refuses with RC_E_BAD_REQUEST (cb not called) a page that ends past rank
 * RC_SHARD_READ_MAX (first + count > RC_SHARD_READ_MAX): gw_read_shard_refusal
 * says why in words. Count 0 reads no rows there, from any index (an
 * unsharded board's "whole board" from index 0 has no sharded form): the
 * head alone, as stats want it. Any shard failing fails the read with its
 * code. */
int gw_read(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
            const struct gw_read_spec *spec, gw_read_cb *cb, void *privdata);

/* The other shards' part of a rank (store/gw_read_ahead.c): for a member of
 * shard `of` of sharded board b (named `board`, not "B#i") whose composite
 * is c, the members every other shard holds ahead of it, and the sum of
 * those shards' seqs (has_c 0: the seqs alone). cb runs once, later: 0 and
 * the sums, or an RC_E_* and zeros. Returns 0, or an RC_E_* when nothing was
 * sent (cb not called). */
typedef void gw_read_ahead_cb(int code, int64_t ahead, int64_t seqs, void *privdata);
int gw_read_ahead(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                  unsigned of, int has_c, double c, gw_read_ahead_cb *cb, void *privdata);

/* Why gw_read refuses spec on board b before sending anything, for the
 * client's error message (a static string), or NULL when it does not
 * (b not sharded, or the spec within the limits above). */
const char *gw_read_shard_refusal(const struct rc_board *b, const struct gw_read_spec *spec);

/* One shard's counts (lua/read.lua kind `counts`): for each i < n the
 * members of shard board `shard_board` ("B#i", core/rc_shard.h) ranked
 * strictly better than composite bounds[i] (or as good, inclusive[i] 1;
 * inclusive NULL: all strict). n 0..RC_READ_COUNTS_MAX; 0 reads just the
 * head. cb gets the shard's head and counts[0..n) (borrowed for the
 * callback), or an RC_E_* with head and counts NULL. */
typedef void gw_read_counts_cb(int code, const struct rc_read_head *head, const int64_t *counts, size_t n,
                               void *privdata);

/* Returns 0 when sent (cb runs exactly once, later), or RC_E_UNAVAILABLE,
 * RC_E_BAD_REQUEST (n too large, an infinite bound) or RC_E_INTERNAL (cb not
 * called). Borrows bounds and inclusive for the call only. */
int gw_read_call_counts(const struct gw_store *s, const struct rc_board *b, const char *shard_board, const char *period,
                   const double *bounds, const int *inclusive, size_t n, gw_read_counts_cb *cb, void *privdata);

typedef void gw_read_log_cb(int code, int64_t seq, int64_t total, const char *epoch, const struct rc_freeze *fr,
                            struct rc_event *events, size_t n, void *privdata);

/* Reads the board's change log, seq, epoch and freeze in one step. events,
 * epoch and fr (owned by the callee for the callback only; epoch "" and fr
 * zeroed on errors) oldest first. live 0: what the audience sees (a frozen
 * board: the changes up to the shown seq, and seq = shown). Returns 0 or
 * RC_E_UNAVAILABLE. */
int gw_read_log(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period, int live,
                gw_read_log_cb *cb, void *privdata);

/* As gw_read_log, but at most max (> 0) changes after seq `after` (a
 * feed's replay, fanout/gw_replay.c); max 0: the whole log. */
int gw_read_log_after(const struct gw_store *s, const struct rc_board *b, const char *board, const char *period,
                      int live, int64_t after, int64_t max, gw_read_log_cb *cb, void *privdata);

/* Sends the read.lua call a (core/rc_read_args) through script, routed by
 * the board's keys (redis NULL: down). Returns 0 (cb runs once, later),
 * RC_E_UNAVAILABLE or RC_E_INTERNAL. */
int gw_read_call_send(struct gw_script *script, struct gw_redis *redis, const struct rc_read_args *a,
                 gw_script_reply_cb *cb, void *privdata);

/* Parses a range/around/rank reply of read.lua (core/rc_read_args) into its
 * head and *rows[0..*n) (malloc'ed, free it; members borrowed from r).
 * Returns 0, RC_E_UNAVAILABLE for no reply (connection lost) or
 * RC_E_INTERNAL for a reply of another shape (*rows NULL). */
int gw_read_call_reply(const redisReply *r, struct rc_read_head *head, struct rc_read_row **rows, size_t *n);

/* gw_read_call_reply for a reply read with places (core/rc_read_args): fills *pl
 * too. */
int gw_read_call_reply_places(const redisReply *r, struct rc_read_head *head, struct rc_read_places *pl,
                         struct rc_read_row **rows, size_t *n);

/* Decodes a composite into real points and fields for board b. */
void gw_window_decode_score(const struct rc_board *b, double c, double *score, int64_t *fields, unsigned *nfields);

#endif
