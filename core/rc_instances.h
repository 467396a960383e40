/* rc_instances.h - the index of a template's boards (docs/periods.md,
 * "Boards of a template"). Pure: no I/O, no clock; the hash seed and the
 * time are parameters.
 *
 * A template ("match:*") declares boards that are born at their first write
 * (match:1842). The background jobs (archive, decay) must find them on every
 * gateway and after restarts, also on a Redis Cluster where each board lives
 * in its own slot. So the gateway that writes a template's board records it
 * in one sorted set per template, a key in the template's own slot:
 *
 *   rc:{match:*}:periods  periodic templates: member "BOARD|PERIOD", score
 *                         the period's end (ms): the archive job reads the
 *                         ended ones oldest first and removes each once it
 *                         is archived (or its keys are gone)
 *   rc:{hot:*}:boards     decaying templates: member "BOARD", score the end
 *                         of the newest bucket written (buckets) or 0
 *                         (scale): the decay job walks them
 *
 * The entry is sent (ZADD GT) with the write, from the gateway, not inside
 * the board's write script (another slot). A process remembers the entries it
 * has had acknowledged (rc_inst_seen) and sends each only once; a failed one
 * goes again with the next write of that board. */
#ifndef RC_INSTANCES_H
#define RC_INSTANCES_H

#include <stddef.h>
#include <stdint.h>

#include "rc_hmap.h"
#include "rc_layout.h"
#include "rc_names.h"
#include "rc_period.h"

#define RC_INST_ENTRY_MAX (RC_BOARD_MAX + 1 + RC_PERIOD_ID_MAX) /* "BOARD|PERIOD" with the NUL */

/* 1 when template tmpl has an index: it is a template with a period or with
 * decay (the jobs' work); 0 otherwise (an all-time template needs none). */
int rc_instances_indexed(const struct rc_board *tmpl);

/* The index key of template tmpl into out[cap]. Returns 0, or
 * RC_E_INTERNAL when tmpl has no index or the key does not fit. */
int rc_instances_index_key(char *out, size_t cap, const struct rc_board *tmpl);

/* What a write at now_ms to board `name` (an instance of tmpl), in period p
 * (NULL or ignored on decaying templates), records: the member and its
 * score. Returns 0, or RC_E_INTERNAL (no index, or it does not fit). */
int rc_instances_entry(const struct rc_board *tmpl, const char *name, const struct rc_period *p, int64_t now_ms,
                  char *member, size_t cap, int64_t *score);

/* Reads a member of a periodic template's index back: the board name (into
 * name[RC_BOARD_MAX + 1]) and its period. Returns 0, or RC_E_BAD_REQUEST
 * when the member is not "BOARD|PERIOD" with BOARD an instance of tmpl and
 * PERIOD a canonical id of tmpl's kind (an entry nobody should have written:
 * the job drops it). */
int rc_instances_entry_parse(const struct rc_board *tmpl, const char *member, size_t len, char *name,
                        struct rc_period *p);

/* 1 when name (len bytes) is a board of template tmpl: a valid board name
 * that starts with the template's prefix and is longer. */
int rc_instances_of(const struct rc_board *tmpl, const char *name, size_t len);

/* ---- entries this process has recorded ---------------------------------------- */

#define RC_INST_SEEN_SLOTS 2048 /* a power of two */

/* A bounded set of (member, score) pairs, by keyed 64-bit hash: open
 * addressing; when it is three quarters full it is emptied (an entry sent
 * again costs one idempotent ZADD). */
struct rc_inst_seen {
    struct rc_hash_key key;
    unsigned count;
    uint64_t slot[RC_INST_SEEN_SLOTS]; /* 0: empty */
};

void rc_instances_seen_init(struct rc_inst_seen *s, struct rc_hash_key key);

/* 1 when (member, score) was added (and not forgotten since), else 0. */
int rc_instances_seen_has(const struct rc_inst_seen *s, const char *member, int64_t score);

/* Adds (member, score); may forget every earlier pair first (see above). */
void rc_instances_seen_add(struct rc_inst_seen *s, const char *member, int64_t score);

#endif
