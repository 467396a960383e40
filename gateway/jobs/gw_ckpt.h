/* gw_ckpt.h - the history checkpoint job (docs/history.md, "Checkpoints"):
 * for every declared board with history = full (its shards and team board
 * too), a copy of the set at a recent seq every history_checkpoint_every
 * changes, built beside the writes by lua/ckpt.lua in short slices, so a
 * read at a moment undoes from the nearest checkpoint after it instead of
 * the present. One builder per board-period across the gateways: the build
 * state in Redis names its owner (a lease, renewed by each slice). */
#ifndef GW_CKPT_H
#define GW_CKPT_H

struct gw_app;

/* Starts the job when a board keeps its history and checkpoints are on.
 * Call after gw_redis_start. Returns 0 (app->ckpt stays NULL when there is
 * nothing to do) or -1. */
int gw_ckpt_start(struct gw_app *app);

/* The board (a board's name, a shard's "B#i", or a team board's source)
 * has changed: its checkpoint step runs at the next tick. Called for each
 * change event heard and each write this process made. Safe with
 * app->ckpt NULL. */
void gw_ckpt_heard(struct gw_app *app, const char *board);

/* A message heard on a channel or pattern of Redis (main.c's message hook,
 * beside the fan-out's): a change event or a keyspace event on a board's
 * keys is gw_ckpt_heard of its board; a keyspace event on a membership
 * (rc:{B|}:tm) is not a change. */
void gw_ckpt_heard_message(struct gw_app *app, const char *pattern, const char *channel);

/* Stops the job: its timer closed; freed once every command it sent has
 * been answered (a build left half done expires with its lease). Safe with
 * app->ckpt NULL. */
void gw_ckpt_stop(struct gw_app *app);

#endif
