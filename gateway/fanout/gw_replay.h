/* gw_replay.h - replays (PROTOCOL v1.2; docs/history.md, "Replay"): a
 * subscription that plays a board from a past moment, then goes live
 * (gw_replay.c). Internal to fanout/ (gw_fanout_int.h includes it). */
#ifndef GW_REPLAY_H
#define GW_REPLAY_H

struct gw_fanout;
struct gw_sub;
struct rc_board;
struct rc_request;

struct gw_replay;
/* Why board decl cannot replay r (a static string), or NULL. */
const char *gw_replay_refusal(const struct rc_board *decl, const struct rc_request *r);
/* Starts s's replay of r (period: the resolved id): its first read is
 * sent. Returns 0, or an RC_E_* (nothing started). */
int gw_replay_start(struct gw_fanout *f, struct gw_sub *s, const struct rc_board *decl, const struct rc_request *r,
                    const char *period);
/* s is going: its replay stops (freed now, or when its read is back). */
void gw_replay_detach(struct gw_sub *s);
/* Moves every replay on by one read (the fan-out's tick). */
void gw_replay_tick(struct gw_fanout *f);
/* The fan-out is going: every replay stops. */
void gw_replay_free_all(struct gw_fanout *f);

#endif
