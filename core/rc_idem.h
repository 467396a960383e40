/* rc_idem.h - how many idempotency records one writer holds, so that a write
 * key cannot fill Redis with them ([limits] idempotency_max_per_key,
 * docs/security.md "Idempotency records").
 *
 * A record (lua/write.lua, "Idempotency records") lives idempotency_window
 * after the write that made it. A writer's count is the records it made in
 * the last window, kept in RC_IDEM_SLOTS slots of window / (RC_IDEM_SLOTS -
 * 1) each: the slots cover at least the last window (never fewer than the
 * writer's live records) and at most one slot more, so a writer at
 * key_write_rate R with burst B counts at most R x window x RC_IDEM_SLOTS /
 * (RC_IDEM_SLOTS - 1) + B: the automatic cap (rc_idem_auto_cap) is that, and
 * an honest writer never meets it. The window is the longest
 * idempotency_window of the configuration (rc_idem_window_ms): a record of a
 * board with a shorter one is counted a little longer than it lives.
 *
 * Pure: time is passed in; the caller keeps one rc_idem_count per writer.
 */
#ifndef RC_IDEM_H
#define RC_IDEM_H

#include <stdint.h>

#include "rc_conf.h"

#define RC_IDEM_SLOTS 9

struct rc_idem_count {
    int64_t slot;                    /* index of the newest slot (now_ms / slot length) */
    uint32_t n[RC_IDEM_SLOTS];       /* records made in slot i (ring, by index modulo) */
};

/* The counting window: the longest idempotency_window of c's boards (and
 * templates), ms; 1000 when c has none. */
int64_t rc_idem_window_ms(const struct rc_conf *c);

/* The cap in force for c: [limits] idempotency_max_per_key, or when that is
 * auto (0) the most a writer within key_write_rate and key_write_burst can
 * count (see above), which rc_idem_floor also answers. */
uint64_t rc_idem_cap(const struct rc_conf *c);
uint64_t rc_idem_floor(const struct rc_conf *c);

/* Records counted for ct at now_ms (window_ms as rc_idem_window_ms). */
uint64_t rc_idem_live(struct rc_idem_count *ct, int64_t window_ms, int64_t now_ms);

/* Counts one record made at now_ms unless ct already holds cap. Returns 1
 * (counted: *slot says where, for rc_idem_give_back) or 0 (at its cap,
 * nothing counted). */
int rc_idem_take(struct rc_idem_count *ct, uint64_t cap, int64_t window_ms, int64_t now_ms, int64_t *slot);

/* Takes back one record counted by rc_idem_take in `slot` (the write made
 * none: refused, duplicate); nothing when that slot has left the window. */
void rc_idem_give_back(struct rc_idem_count *ct, int64_t slot);

#endif
