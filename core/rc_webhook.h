/* rc_webhook.h - the pure part of the period-close webhook (docs/webhooks.md):
 * the body, its signature, the delivery id and the retry schedule. No I/O;
 * the gateway's jobs/gw_webhook.c sends what these build.
 *
 * Body: {"board":B,"period":P,"total":N,"rows":[...]}, the rows in the shape
 * of a snapshot's (rank, member, score, fields, profile fields).
 * Signature: X-Rankcast-Signature: sha256=HEX, HEX the lower-case HMAC-SHA256
 * (OpenSSL) of the exact body bytes with the configured secret.
 * Delivery id: X-Rankcast-Delivery, the same for every attempt from every
 * gateway for one board-period, so receivers can drop repeats. */
#ifndef RC_WEBHOOK_H
#define RC_WEBHOOK_H

#include <stddef.h>
#include <stdint.h>

#include "rc_proto.h"

#define RC_WEBHOOK_SIG_MAX (7 + 64 + 1)  /* "sha256=" + 64 hex + NUL */
#define RC_WEBHOOK_ID_MAX (32 + 1)       /* 32 hex + NUL */
#define RC_WEBHOOK_TOP_MAX 1000

/* The body for board/period with total members and rows (borrowed).
 * Returns a malloc'd NUL-terminated JSON text (caller frees) or NULL when
 * out of memory. */
char *rc_webhook_body(const char *board, const char *period, int64_t total, const struct rc_rows_out *rows);

/* "sha256=" + hex HMAC-SHA256(secret, body[0..len)) into out. Returns 0 or
 * RC_E_INTERNAL (the MAC could not be computed; out is ""). */
int rc_webhook_sign(const char *secret, size_t secret_len, const char *body, size_t len,
                    char out[RC_WEBHOOK_SIG_MAX]);

/* The delivery id of board/period: 32 hex digits of SHA-256("B|P"). */
void rc_webhook_delivery_id(const char *board, const char *period, char out[RC_WEBHOOK_ID_MAX]);

/* The wait before retry `retry` (1 = the first retry, after the first failed
 * attempt): base_ms doubled each retry, capped at cap_ms. */
int64_t rc_webhook_backoff_ms(int64_t base_ms, int64_t cap_ms, unsigned retry);

/* 1 when an HTTP status counts as delivered (2xx), else 0. */
int rc_webhook_delivered(long status);

/* 1 when url is an http:// or https:// URL with a host (what the config
 * accepts; libcurl parses it again when sending), else 0. */
int rc_webhook_url_valid(const char *url);

#endif
