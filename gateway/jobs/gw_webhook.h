/* gw_webhook.h - the webhook on period close ([webhook], docs/webhooks.md):
 * once a period's standings are archived, its top rows are POSTed, signed,
 * to the configured URL, once per period across every gateway sharing Redis
 * (at least once: receivers drop repeats by X-Rankcast-Delivery). */
#ifndef GW_WEBHOOK_H
#define GW_WEBHOOK_H

struct gw_app;
struct rc_board;
struct rc_period;

/* Starts the job when [webhook] has a url (else does nothing). Returns 0 or
 * an RC_E_* (logged: secret_env unset, libcurl failing to start). */
int gw_webhook_start(struct gw_app *app);

/* The archive job's one call: period p of board `board` (declared by decl:
 * the board itself, or the template it is an instance of) is archived (its
 * rc:{B|P}:archived marker is set, by this gateway or another). Queues the
 * delivery unless it is known sent. Borrows decl (config); copies board and
 * p. Never blocks; a no-op without [webhook] or while stopping. */
void gw_webhook_archived(struct gw_app *app, const struct rc_board *decl, const char *board,
                         const struct rc_period *p);

/* Stops: requests in flight are dropped, locks held are released so another
 * gateway (or the next start) sends them; freed once Redis calls in flight
 * come back (the loop must run on). Called when the stop begins, while Redis
 * is still up (main.c), so the releases go out during the shutdown grace. */
void gw_webhook_stop(struct gw_app *app);

#endif
