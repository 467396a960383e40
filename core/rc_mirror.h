/* rc_mirror.h - the gateway's copy of a board's top rows (DESIGN.md, Fan-out).
 *
 * Each gateway keeps, per board (and period), the top rows of the sorted set,
 * ordered exactly as Redis orders them: on desc boards by composite score
 * descending and equal scores by member name descending (ZRANGE ... REV); on
 * asc boards by score ascending, then member ascending. It is fed by the
 * write script's change events (in seq order) and reloaded from Redis when it
 * cannot stay exact. Windows (top N, pages) are then cut from it without
 * asking Redis.
 *
 * Invariant while `exact`: rows[0..len) are exactly ranks 1..len of the board
 * at version `seq`, and `total` is the board's member count. Members outside
 * the mirror can only enter it through an event, which names them, so
 * applying events keeps the invariant; a member leaving the mirror's tail
 * (moving down past the last row) just shortens it. When the mirror holds
 * fewer rows than the views need while the board has more members, it asks
 * for a reload (`rc_mirror_needs_reload`).
 *
 * A sharded board (`shards = S`, core/rc_shard.h) has one mirror too, of
 * the merged order: equal composites rank by the member's shard
 * (rc_shard_of), then by member as Redis orders them inside a shard
 * (rc_shard_before). Each shard numbers its own changes, so the version is a
 * vector: shard_seq[i] is shard i's seq the rows reflect (malloc'd at the
 * first load of a sharded mirror only; an unsharded one carries no vector),
 * and `seq` is their sum. An event of shard i is applied when its seq is
 * shard_seq[i] + 1, old when <= shard_seq[i], a gap when further on. The
 * reasoning of rc_mirror.c holds unchanged: it needs one total order over
 * the board's members, and a member's shard is a function of the member.
 *
 * Pure: no I/O. Member strings are copied in and owned by the mirror.
 */
#ifndef RC_MIRROR_H
#define RC_MIRROR_H

#include <stddef.h>
#include <stdint.h>

#include "rc_layout.h"

struct rc_mirror_row {
    char *member;   /* owned */
    double c;       /* composite score as stored in Redis */
};

struct rc_mirror {
    enum rc_order order;
    unsigned shards;    /* > 1: a sharded board's mirror (merged order, shard_seq) */
    struct rc_mirror_row *rows;
    size_t len;
    size_t cap;     /* allocated rows */
    size_t want;    /* rows the current views need (largest window end) */
    size_t keep;    /* rows kept at most: want + margin (margin absorbs members moving down) */
    int64_t seq;    /* version of the board the rows reflect */
    int64_t total;  /* board member count at seq */
    int exact;      /* 0 until the first load, and after a gap */
    int64_t *shard_seq; /* sharded: each shard's seq (shards of them), owned; NULL until loaded */
    /* What changed since rc_mirror_untouch (rc_mirror_touched): rows at
     * positions [touch_lo, touch_end) moved, entered or left (touch_end 0:
     * none), and whether total changed. A window outside that span shows
     * the same rows; only total can tell it apart. */
    size_t touch_lo, touch_end;
    int touch_total;
};

/* Results of rc_mirror_touched. */
enum rc_mirror_touch {
    RC_MIRROR_UNTOUCHED = 0, /* no row and not total changed */
    RC_MIRROR_TOUCHED_SPAN,  /* rows [*lo, *end) changed (positions, 0-based), total did not */
    RC_MIRROR_TOUCHED_ALL    /* total changed, or a load: every window */
};

/* Results of rc_mirror_apply. */
enum rc_mirror_apply_result {
    RC_MIRROR_APPLIED = 0, /* the event changed the mirror (or the board outside it) */
    RC_MIRROR_OLD,         /* seq <= mirror seq: already reflected, ignored */
    RC_MIRROR_GAP          /* seq > mirror seq + 1 or not loaded: mirror is no longer exact */
};

void rc_mirror_init(struct rc_mirror *m, enum rc_order order);
/* A sharded board's mirror (shards <= 1: as rc_mirror_init). Allocates
 * nothing; the vector comes with the first rc_mirror_load_sharded. */
void rc_mirror_init_sharded(struct rc_mirror *m, enum rc_order order, unsigned shards);
/* Frees the rows (and the vector); the mirror is left as it was initialized
 * (same order and shards), empty and not exact. */
void rc_mirror_free(struct rc_mirror *m);

/* Sets how many rows views need (0..); keeps `want + margin` rows where
 * margin = max(16, want / 4). Returns 1 when the mirror now holds fewer rows
 * than needed (and the board has more): reload. */
int rc_mirror_set_want(struct rc_mirror *m, size_t want);

/* Replaces the contents with a consistent read from Redis: the board's top
 * rows[0..n) in rank order at version seq, with total members. Copies the
 * members. Makes the mirror exact. Returns 0 or RC_E_INTERNAL (allocation;
 * the mirror is then left empty and not exact). */
int rc_mirror_load(struct rc_mirror *m, int64_t seq, int64_t total, const struct rc_mirror_row *rows, size_t n);
/* (What a load touches, rc_mirror_touched: everything, unless the mirror
 * was exact at this same seq and total: then the rows from the first one
 * that differs from those it held to the end of both, and not total.) */

/* rc_mirror_load for a sharded mirror: shard_seq[0..shards) (borrowed,
 * copied) is each shard's seq at the read, the rows its merged top. The
 * rows are checked in the merged order. RC_E_INTERNAL also on a mirror that
 * is not sharded, or a NULL or negative vector. */
int rc_mirror_load_sharded(struct rc_mirror *m, const int64_t *shard_seq, int64_t total,
                           const struct rc_mirror_row *rows, size_t n);

/* Applies the change event of version seq: member now has composite new_c
 * (has_new = 0 when the member was removed), and was on the board before the
 * event iff was_present. Returns an enum rc_mirror_apply_result; on
 * RC_MIRROR_GAP the mirror marks itself not exact. *changed_rank, when not
 * NULL, receives the lowest 1-based rank whose row changed inside the mirror
 * (0 when the mirror rows did not change), so the caller can skip views that
 * end above it. RC_E_INTERNAL on allocation failure (mirror not exact). */
int rc_mirror_apply(struct rc_mirror *m, int64_t seq, const char *member, int has_new, double new_c,
                    int was_present, size_t *changed_rank);

/* rc_mirror_apply for a sharded mirror: the change event numbered seq of
 * shard `shard`. RC_MIRROR_OLD when seq <= shard_seq[shard], RC_MIRROR_GAP
 * when seq > shard_seq[shard] + 1 (or not loaded, or the member is not of
 * that shard: the mirror is then not exact). rc_mirror_apply on a sharded
 * mirror, or this on one that is not, is a caller bug: RC_E_INTERNAL. */
int rc_mirror_apply_shard(struct rc_mirror *m, unsigned shard, int64_t seq, const char *member, int has_new,
                          double new_c, int was_present, size_t *changed_rank);

/* 1 when the mirror cannot serve the rows views want (not exact, or fewer
 * than want rows while the board has more). */
int rc_mirror_needs_reload(const struct rc_mirror *m);

/* The window of ranks offset+1 .. offset+count: *rows points into the mirror
 * (borrowed until the next change), *n is how many exist (fewer at the end of
 * the board). Returns 0, or RC_E_UNAVAILABLE when the mirror does not cover
 * that window exactly (not exact, or the window reaches past the rows held
 * while the board has more members). */
int rc_mirror_window(const struct rc_mirror *m, size_t offset, size_t count, const struct rc_mirror_row **rows,
                     size_t *n);

/* What the events applied (and loads) since the last rc_mirror_untouch
 * changed: an enum rc_mirror_touch; with RC_MIRROR_TOUCHED_SPAN, *lo and
 * *end bound the positions whose row changed (end may be SIZE_MAX: every
 * row from lo on shifted). A view whose window [offset, offset + limit)
 * misses [*lo, *end) holds the same rows. */
int rc_mirror_touched(const struct rc_mirror *m, size_t *lo, size_t *end);

/* Forgets what was touched (after the caller refreshed its windows). */
void rc_mirror_untouch(struct rc_mirror *m);

/* 1-based rank of member within the mirror, or 0 when not held. */
size_t rc_mirror_rank_of(const struct rc_mirror *m, const char *member);

#endif
