/* rc_shard.h - sharded boards (`shards = S`, docs/sharded.md): which shard
 * holds a member, the shard's name, the order rows of several shards merge
 * in, and the resume cursor of a sharded feed. Pure: no Redis, no clock.
 *
 * Shard i of board B is stored as if it were a board named "B#i": its keys
 * carry the hash tag {B#i|P} (core/rc_keys.h), so on a Redis Cluster the S
 * shards spread over the primaries. '#' is not a board-name character, so a
 * shard's name never collides with a declared board.
 *
 * The merged order (one total order over every shard's rows):
 *   1. the composite, as the board sorts (desc: higher first);
 *   2. equal composites: the lower shard index first;
 *   3. inside one shard, Redis's own order of equal scores (ZRANGE REV for
 *      desc boards: the greater member first; asc: the smaller first).
 * So a member of shard i with composite c has exactly
 *   rank_in_shard_i + sum_{j < i} #{c_j better than or equal to c}
 *                   + sum_{j > i} #{c_j strictly better than c}
 * members ahead of it: one ZCOUNT per other shard, no scan.
 */
#ifndef RC_SHARD_H
#define RC_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "rc_epoch.h"
#include "rc_names.h"

#define RC_SHARDS_MIN 2
#define RC_SHARDS_MAX 64
#define RC_SHARD_NAME_MAX (RC_BOARD_MAX + 4) /* "B#63" */
/* A page of a sharded board must end within this rank: each shard reads
 * its first (offset + limit + 1) rows for the merge (docs/sharded.md). */
#define RC_SHARD_READ_MAX 10000
#define RC_SHARD_EPOCH_HEX 8 /* characters of a shard's epoch kept in a cursor */
/* a cursor: per shard "EEEEEEEE:SEQ" (epoch prefix, possibly empty; seq up to
 * 20 digits) joined by '.', and a NUL */
#define RC_SHARD_CURSOR_MAX (RC_SHARDS_MAX * (RC_SHARD_EPOCH_HEX + 1 + 20 + 1) + 1)

/* The shard (0..shards-1) that holds member: FNV-1a (32 bits) of the
 * member's bytes, modulo shards. Stable: a board's members never move as
 * long as its `shards` is unchanged. shards <= 1: 0. */
unsigned rc_shard_of(const char *member, unsigned shards);

/* "B#i" into out[cap]. Returns 0, or -1 when it does not fit. */
int rc_shard_name(char *out, size_t cap, const char *board, unsigned i);

/* A stored board name "B#i" -> B (into board[RC_BOARD_MAX + 1]) and i.
 * Returns 1 for a shard's name, 0 for a plain name (board = name), -1 for a
 * malformed one ("B#", "B#x", "B#007", an index past RC_SHARDS_MAX - 1, a
 * name too long). */
int rc_shard_split(const char *name, char *board, unsigned *index);

/* 1 when row a (composite ca of shard sa, member ma) comes before row b in
 * the merged order of a desc (desc = 1) or asc board; 0 otherwise (a row is
 * not before itself). */
int rc_shard_before(int desc, double ca, unsigned sa, const char *ma, double cb, unsigned sb, const char *mb);

/* For a row of shard `of` with composite c, whether the rows of shard j
 * that are ahead of it are those with a composite better than OR EQUAL to
 * c (1: j < of) or strictly better (0: j > of). j == of: -1 (the shard's
 * own rank says it). */
int rc_shard_count_inclusive(unsigned j, unsigned of);

/* One shard's run of rows, already in the shard's order (the caller's
 * arrays, borrowed). */
struct rc_shard_run {
    const double *c;
    const char *const *member;
    size_t n;
};

/* K-way merge: writes into out[0..cap) pairs (shard, index in its run) of
 * the merged order, skipping the first `skip` merged rows. Returns how many
 * it wrote (at most cap). */
struct rc_shard_pick {
    unsigned shard;
    size_t index;
};
size_t rc_shard_merge(int desc, const struct rc_shard_run *runs, unsigned nruns, size_t skip,
                      struct rc_shard_pick *out, size_t cap);

/* A streaming K-way merge over pages of shards (the export, the archive):
 * each shard offers its next row (the head of its current page), the merge
 * names the shard whose row comes next in the merged order. The caller takes
 * that row, then offers the shard's next one, or clears the shard when its
 * page is used up: it reads the shard's next page first when rows may follow
 * (a cleared shard is never picked, so the merge would go on without it), or
 * leaves it cleared when the shard is exhausted. Rows are borrowed until
 * the shard's next offer or clear. */
struct rc_shard_stream {
    int desc;                          /* the board's order: 1 desc, 0 asc */
    unsigned n;                        /* shards */
    double c[RC_SHARDS_MAX];           /* each shard's row at hand ... */
    const char *member[RC_SHARDS_MAX]; /* ... and its member; NULL: none */
};

/* n shards (at most RC_SHARDS_MAX), none with a row at hand. */
void rc_shard_stream_init(struct rc_shard_stream *s, int desc, unsigned n);
/* Shard j's next row: composite c, member (borrowed). */
void rc_shard_stream_offer(struct rc_shard_stream *s, unsigned j, double c, const char *member);
/* Shard j has no row at hand (its page used up, or it is exhausted). */
void rc_shard_stream_clear(struct rc_shard_stream *s, unsigned j);
/* The shard whose row at hand comes first in the merged order, or -1 when
 * no shard has one. */
int rc_shard_stream_next(const struct rc_shard_stream *s);

/* A sharded feed's resume point (docs/sharded.md, "Feeds"): per shard the
 * last change seen (its seq) and the history it belongs to (the first
 * RC_SHARD_EPOCH_HEX characters of the shard's epoch, "" while it has none). */
struct rc_shard_cursor {
    unsigned n;
    int64_t seq[RC_SHARDS_MAX];
    char epoch[RC_SHARDS_MAX][RC_SHARD_EPOCH_HEX + 1];
};

/* The sum of the cursor's seqs: the `seq` a sharded board shows (every
 * change of any shard adds one). */
int64_t rc_shard_cursor_sum(const struct rc_shard_cursor *c);

/* Sets shard i's position (epoch: the shard's whole epoch id or "";
 * only its prefix is kept). */
void rc_shard_cursor_set(struct rc_shard_cursor *c, unsigned i, int64_t seq, const char *epoch);

/* Text form "E0:S0.E1:S1...." into out[cap]. Returns 0, or -1 when it does
 * not fit. */
int rc_shard_cursor_format(const struct rc_shard_cursor *c, char *out, size_t cap);

/* Parses the text form for a board of `shards` shards. Returns 0, or -1 when
 * it is not one (wrong shard count, a seq that is not a non-negative
 * integer, an epoch prefix that is not lower-case hex of the right length). */
int rc_shard_cursor_parse(const char *text, unsigned shards, struct rc_shard_cursor *c);

/* What a feed at cursor c does with a change of shard `shard` numbered seq
 * (the shard's), `epoch` the epoch the change names ("" unless it began a
 * history), `reset` 1 for a reset. */
enum rc_shard_step {
    RC_SHARD_SKIP,   /* given already */
    RC_SHARD_NEXT,   /* the next of its shard: deliver, then c->seq[shard] = seq */
    RC_SHARD_BEGAN,  /* the first change of a shard that had no history: deliver, and its epoch is the shard's */
    RC_SHARD_RESYNC, /* a gap, or a new history on that shard: catch up from the logs */
};
enum rc_shard_step rc_shard_step(const struct rc_shard_cursor *c, unsigned shard, int64_t seq, const char *epoch,
                                 int reset);

/* Whether the shards' change logs carry a feed from cursor c to `now` (each
 * shard's seq and epoch at the read): per shard, the same history and a log
 * that starts at or before c's next change (first_seq[i]: the seq of the
 * log's oldest change, 0 when the log is empty), or a shard that had no
 * history at c whose whole history is still in its log. */
int rc_shard_replayable(const struct rc_shard_cursor *c, const struct rc_shard_cursor *now, const int64_t *first_seq);

/* The epoch of a sharded board as a whole, from its shards' epoch ids
 * (epochs[i], "" where a shard has none): "" while no shard has one, else a
 * 16-hex-digit digest of all of them (FNV-1a 64 over "i=EPOCH;" for every
 * shard), so it changes whenever any shard's history starts over. out holds
 * RC_EPOCH_MAX + 1. */
void rc_shard_epoch(const char *const *epochs, unsigned shards, char *out);

#endif
