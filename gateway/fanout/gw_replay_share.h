/* gw_replay_share.h - the reads of replays, shared (docs/history.md,
 * "Replays of one board share their reads"): several replays of one view
 * of one board whose paces stand close together make one moment read, and
 * feed replays at the same point of the log make one log read
 * (gw_replay_share.c). Internal to fanout/ (gw_replay.c). */
#ifndef GW_REPLAY_SHARE_H
#define GW_REPLAY_SHARE_H

#include <stddef.h>
#include <stdint.h>

#include "store/gw_read_at.h"

struct gw_fanout;
struct rc_board;
struct rc_event;
struct gw_replay_read;

/* A moment read's answer: as gw_read_at_cb (res->w is the callee's), plus
 * the target of the read that answered (a shared one's may differ from the
 * one asked, by up to tol_ms) and how long it took in Redis (µs), the pace
 * of reads. */
typedef void gw_replay_share_moment_cb(int code, struct gw_read_at_result *res, int64_t target, int64_t dur_us,
                                       void *privdata);

/* A log read's answer: seq and epoch the board's present then, events[0..n) the
 * changes after the seq asked (borrowed for the call), dur_us as above. */
typedef void gw_replay_share_log_cb(int code, int64_t seq, const char *epoch, const struct rc_event *events, size_t n,
                                    int64_t dur_us, void *privdata);

/* Reads board `board` in `period` at req's one target for a replay, or joins
 * a read of the same view and audience already made for another: by seq the
 * same seq; by time one within tol_ms of board time of it (the replays'
 * paces stand that close). Borrows req and its texts for the call. Returns 0
 * when cb will run (later: never from inside this call), or an RC_E_* as
 * gw_read_at. */
int gw_replay_share_moment(struct gw_fanout *f, const struct rc_board *decl, const char *board, const char *period,
                           const struct rc_moment_req *req, int64_t tol_ms, gw_replay_share_moment_cb *cb,
                           void *privdata);

/* Reads at most max changes of the log after seq `after` for a feed's
 * replay, or takes them from the same read made for another (a full page is
 * kept a while: a slower replay comes by later). Returns as above. */
int gw_replay_share_log(struct gw_fanout *f, const struct rc_board *decl, const char *board, const char *period,
                        int live, int64_t after, int64_t max, gw_replay_share_log_cb *cb, void *privdata);

/* Answers the waiters that joined a finished read, and drops the reads
 * nobody used for a while (the fan-out's tick, before the replays move). */
void gw_replay_share_tick(struct gw_fanout *f);

/* The fan-out is going: every waiter is answered RC_E_UNAVAILABLE now (each
 * callback runs exactly once), kept reads are dropped, reads in flight are
 * freed by their answers. */
void gw_replay_share_free_all(struct gw_fanout *f);

#endif
