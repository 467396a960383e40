/* rc_ksteam.h - whether a board's team membership hash was changed outside
 * rankcast: its keyspace notifications counted against the writes the team
 * messages explain (docs/teams.md, "Changes made outside"). Pure: the
 * fan-out tells it what it heard, what a message explains and the time of
 * each tick (monotonic µs).
 *
 * On a cluster the notifications (PSUBSCRIBE) and the team messages
 * (SSUBSCRIBE) come over two connections, so a message may come well after
 * the notifications of its own op, and in a stream of team ops the
 * notifications may stay ahead of the messages at every tick. "Unexplained
 * at every tick for `wait_us`" then took a busy board's own ops for an edit
 * made outside (a 3+3 cluster test under load read the membership again).
 * The rule: at a tick that finds notifications unexplained, mark how many
 * were heard by then; `wait_us` later, they are made outside only if the
 * messages heard meanwhile do not explain that many (a lagging message
 * comes within the wait; an edit made outside is never explained). A mark
 * the messages reached is set again at the next tick that finds some
 * unexplained. A "del" of the hash is never an op's (the hash keeps its
 * version field): outside, after the same wait.
 */
#ifndef RC_KSTEAM_H
#define RC_KSTEAM_H

#include <stdint.h>

struct rc_ksteam {
    int64_t heard;     /* notifications heard (not "del", not "expire") */
    int64_t explained; /* writes the team messages heard explain */
    int dels;          /* "del"s heard */
    int64_t mark;      /* heard at the mark (valid while since != 0) */
    int64_t since;     /* when the mark was set (µs; 0: none) */
};

enum rc_ksteam_verdict {
    RC_KSTEAM_NONE = 0, /* everything heard is explained: nothing to do */
    RC_KSTEAM_WAIT,     /* some unexplained: ask again at a later tick */
    RC_KSTEAM_OUTSIDE   /* changed outside rankcast: read the membership */
};

/* A notification on the hash: `del` 1 for a "del". */
void rc_ksteam_heard(struct rc_ksteam *k, int del);
/* A team message that explains `writes` notifications. */
void rc_ksteam_explained(struct rc_ksteam *k, int64_t writes);
/* Anything to judge at the tick (something heard or explained). */
int rc_ksteam_pending(const struct rc_ksteam *k);
/* Everything so far is in a read of the membership: start over. */
void rc_ksteam_clear(struct rc_ksteam *k);
/* The tick's verdict at now_us; RC_KSTEAM_OUTSIDE clears (the caller reads). */
enum rc_ksteam_verdict rc_ksteam_tick(struct rc_ksteam *k, int64_t now_us, int64_t wait_us);

#endif
