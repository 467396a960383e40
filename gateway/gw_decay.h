/* gw_decay.h - the background jobs of decaying boards (DESIGN.md, Hot
 * boards): the bucket rebuild (decay = buckets) and the scale schedule
 * (decay = scale). One runner per board across all gateways, by a Redis
 * lock with expiry that only its owner renews or releases. */
#ifndef GW_DECAY_H
#define GW_DECAY_H

struct gw_app;

/* Starts the jobs for every declared board with decay. Returns 0 or -1. */
int gw_decay_start(struct gw_app *app);

/* Stops the jobs (timers closed; the loop must run on until they are). */
void gw_decay_stop(struct gw_app *app);

#endif
