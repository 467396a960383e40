/* gw_fanout.h - subscriptions, views and the coalescing tick (DESIGN.md,
 * Fan-out).
 *
 * Viewers asking for the same window of the same board share one view: the
 * view id is the subscription id every one of them is given ("sub"), so a
 * delta is encoded once and the same refcounted buffer goes to all of them.
 * A change to a board (the write script's event, or a keyspace notification
 * for changes made outside it) marks the board's views dirty; each tick every
 * dirty view is re-read from Redis in one consistent step (lua/read.lua),
 * diffed against what its viewers hold, and the delta (or, for around views,
 * a snapshot) is queued. Feed views forward each change event as it arrives,
 * in seq order, and replay the change log on resume.
 */
#ifndef GW_FANOUT_H
#define GW_FANOUT_H

#include <uv.h>

#include <stddef.h>
#include <stdint.h>

#include "net/gw_conn.h"
#include "rc_layout.h"
#include "rc_period.h"
#include "rc_proto.h"

struct gw_app;
struct gw_conn;
struct gw_fanout;

struct gw_fanout *gw_fanout_new(struct gw_app *app);
void gw_fanout_free(struct gw_fanout *f);
/* Opens (closes) the fan-out's own loop handle: the idle handle that answers
 * subscribes past a loop turn's share (fanout/gw_first.c). Stop before the
 * loop's last run; until start, and after stop, every subscribe is answered
 * at once. */
void gw_first_loop_start(struct gw_fanout *f, uv_loop_t *loop);
void gw_first_loop_stop(struct gw_fanout *f);
/* The same for the idle handle that builds the member lists past a loop
 * turn's share ([server] list_builds_per_turn, fanout/gw_members.c); until
 * start, and after stop, every list is built at once. */
void gw_members_loop_start(struct gw_fanout *f, uv_loop_t *loop);
void gw_members_loop_stop(struct gw_fanout *f);

/* Handles a decoded subscribe for connection c on board decl (board name
 * r->board) in period p: answers with the snapshot (or an error) itself.
 * A subscribe that would open a board is held to the address's share and
 * to max_boards, or evicts a board watched from one address only
 * (fanout/gw_hold.c); refused, it is answered rate_limited. The snapshot is an owed reply (gw_conn_send_owed):
 * a connection whose queue is full gets it, id echoed, once it drains. */
void gw_fanout_subscribe(struct gw_fanout *f, struct gw_conn *c, const struct rc_request *r,
                         const struct rc_board *decl, const struct rc_period *p);

/* Drops subscription `sub` of c. Returns 0, or -1 when c holds no such sub. */
int gw_fanout_unsubscribe(struct gw_fanout *f, struct gw_conn *c, const char *sub);

/* Stops each subscription of c whose board keep(data, board) refuses (keep
 * NULL: every one), answering each with an error {"code": code, "message",
 * "sub"} so the client knows that view is over (a token that expired or no
 * longer covers the board). */
void gw_fanout_revoke(struct gw_fanout *f, struct gw_conn *c, int (*keep)(void *data, const char *board, int live),
                      void *data, int code, const char *message);

/* c closed: drops all its subscriptions. */
void gw_fanout_conn_closed(struct gw_fanout *f, struct gw_conn *c);

/* c's queue overflowed (its view traffic was dropped): every subscription of
 * c now waits for a fresh snapshot; deltas for it are held back until then. */
void gw_fanout_conn_lagged(struct gw_fanout *f, struct gw_conn *c);

/* c's queue has drained: queues the next owed snapshot (one at a time, so a
 * laggard holds at most one; a subscribe's first snapshot that the queue
 * refused carries the subscribe's id) and returns 1, or 0 when none is owed
 * any more. Feed subscriptions owed a snapshot or a replay are started from
 * the change log. */
int gw_fanout_resync_conn(struct gw_fanout *f, struct gw_conn *c);

/* The hooks a connection calls upward (lagged, drained), for gw_conn_ctx. */
struct gw_conn_hooks gw_fanout_conn_hooks(struct gw_fanout *f);

/* A pub/sub message (change channel or keyspace notification). */
void gw_fanout_on_message(struct gw_fanout *f, const char *pattern, const char *channel, const char *payload,
                          size_t len);

/* The coalescing tick: re-reads dirty views. */
void gw_fanout_tick(struct gw_fanout *f);

/* The leading edge (core/rc_edge.h): looks now at the boards whose change
 * found them quiet, instead of at the next tick. Called once per loop turn,
 * after its I/O (every change event read in that turn is applied first). */
void gw_fanout_tick_edge(struct gw_fanout *f);

/* A member's profile changed: every window is compared again on the next
 * tick, and rows whose profile differs are resent. */
void gw_fanout_profile_changed(struct gw_fanout *f);

/* Redis came back: events may have been missed, so every view is re-read and
 * re-sent as a snapshot, and feed viewers are replayed from the log. */
void gw_fanout_redis_up(struct gw_fanout *f);

/* Cluster: the board channel's subscription (re)started on its node; the
 * board's views re-read what they may have missed (as after an outage). */
void gw_fanout_channel_ready(struct gw_fanout *f, const char *channel);

/* Viewer counts (docs/protocol-additions.md, "Viewer counts"): the open
 * subscriptions to `board` (any view, any period) on every gateway sharing
 * the Redis, read now (and our own count written on the way). cb gets 0 and
 * the count, or an RC_E_* and 0; it runs once, after the call returned, for
 * a call that returned 0. Returns 0 or an RC_E_* (cb not called). */
typedef void gw_fanout_viewers_cb(int code, int64_t viewers, void *privdata);
int gw_viewers_count(struct gw_fanout *f, const char *board, gw_fanout_viewers_cb *cb, void *privdata);

/* Stopping: our counts are taken out of Redis (best effort, written out
 * now), and no more refreshes go out. */
void gw_viewers_stop(struct gw_fanout *f);

/* The pub/sub patterns the fan-out needs. */
#define GW_FANOUT_CHANNEL_PATTERN "rc:{*}:ch"
#define GW_FANOUT_KEYSPACE_PATTERN "__keyspace@*__:rc:{*}:z"
#define GW_FANOUT_KEYSPACE_TM_PATTERN "__keyspace@*__:rc:{*}:tm" /* team membership (docs/teams.md) */

#endif
