/* gw_decay.h - the background jobs of decaying boards (DESIGN.md, Hot
 * boards): the bucket rebuild (decay = buckets) and the scale schedule
 * (decay = scale). A rebuild has one runner per board across all gateways,
 * by a Redis lock with expiry that only its owner renews or releases; the
 * scale schedule lives in Redis and moves atomically, once per period. */
#ifndef GW_DECAY_H
#define GW_DECAY_H

struct gw_app;

/* Starts the jobs for every declared board with decay: one per exact name,
 * one per template (its boards from the template's index, which writes
 * feed). Call after gw_redis_start (it registers the decay scripts there).
 * Returns 0 (app->decay stays NULL when no board decays) or -1. */
int gw_decay_start(struct gw_app *app);

/* Stops the jobs: timers closed, and each lock this gateway owns released
 * (sent and flushed, so call it before gw_redis_stop). Memory is freed once
 * the timers are closed and every command sent was answered: the loop must
 * run on until then. Safe with app->decay NULL. */
void gw_decay_stop(struct gw_app *app);

#endif
