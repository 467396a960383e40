/* rc_conf.h - the config file: its format, its keys, and the parsed result.
 *
 * Format (documented key by key in conf/rankcast.conf): INI-style.
 *   # comment, ; comment, blank lines ignored
 *   [server] [redis] [limits]       one each, optional
 *   [board NAME]                    one per board; NAME exact or a template "match:*"
 *   key = value                     one per line; a trailing "# comment" is allowed
 * Values: integers, durations ("50ms", "5s", "10m", "24h", "7d", "1w"),
 * timestamps ("2026-01-01T00:00:00Z" or with "+08:00"), UTC offsets ("+08:00"),
 * words from a fixed set, comma-separated lists.
 *
 * The parser is pure: it takes the file's text, never opens it. Any unknown
 * section, unknown key, repeated key, bad value or a layout that does not fit
 * 53 bits fails the whole load with "FILE:LINE: reason".
 */
#ifndef RC_CONF_H
#define RC_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "rc_auth.h"
#include "rc_jwt.h"
#include "rc_layout.h"

#define RC_CONF_MAX_BOARDS 256
#define RC_CONF_STR_MAX 256
#define RC_REDIS_USER_MAX 128 /* [redis] username, bytes */

/* [webhook]: a POST to url when a period's standings are archived
 * (docs/webhooks.md). url "" (no section) = no webhooks. */
struct rc_webhook_conf {
    char url[RC_CONF_STR_MAX];         /* http:// or https:// */
    char secret[RC_SECRET_MAX + 1];    /* HMAC-SHA256 key; from secret_env at start when that is given */
    char secret_env[RC_ENV_NAME_MAX + 1];
    unsigned top;                      /* rows sent, 1..1000, default 10 */
    int64_t timeout_ms;                /* one attempt, in total, default 10 s */
    unsigned retries;                  /* attempts after the first, default 5 */
    int64_t backoff_base_ms;           /* wait before the first retry, doubled each retry, default 1 s */
    int64_t backoff_cap_ms;            /* ... up to this, default 60 s */
    int64_t lock_ttl_ms;               /* expiry of the delivery lock (renewed every third of it), default 30 s */
};

struct rc_conf {
    /* [server] */
    char listen[RC_CONF_STR_MAX];      /* "HOST:PORT", default 127.0.0.1:8080 */
    char state_dir[RC_CONF_STR_MAX];   /* default "state" */
    char web_root[RC_CONF_STR_MAX];    /* default "web" */
    int64_t tick_ms;                   /* coalescing tick, default 50 */
    int64_t viewers_every_ms;          /* viewer counts through Redis this often, default 2000 */
    char archive_path[RC_CONF_STR_MAX]; /* SQLite archive of finished periods; "" = STATE_DIR/archive.sqlite3 */
    int test_clock;                    /* 1: POST /api/v1/debug/clock may shift the gateway's clock (tests only) */
    char allowed_origins[RC_CONF_STR_MAX]; /* comma list of WebSocket Origins; "" = any */
    char tls_cert[RC_CONF_STR_MAX];    /* PEM certificate: serve https/wss; "" = plain */
    char tls_key[RC_CONF_STR_MAX];     /* PEM private key, with tls_cert */
    int compression;                   /* 1 (default): permessage-deflate with clients that offer it */
    unsigned workers;                  /* worker processes on the port, 1..64 (rc_workers.h), default 1 */
    int metrics_public;                /* 1: /metrics and the detailed /healthz without the admin scope (default 0) */
    unsigned list_builds_per_turn;     /* member lists' windows one loop turn builds, default 256 */
    /* [redis] */
    char redis[RC_CONF_STR_MAX];       /* "HOST:PORT", redis://HOST:PORT or a comma-separated list of cluster seeds; default 127.0.0.1:6390 */
    int keyspace_events;               /* 1: turn notifications on at start (default 1) */
    int64_t reconnect_max_ms;          /* backoff cap, default 2000 */
    unsigned ack_replicas;             /* an ack waits for this many replicas (WAIT), default 0 */
    int64_t ack_timeout_ms;            /* ... for at most this long, default 1000 */
    char redis_username[RC_REDIS_USER_MAX + 1];   /* ACL user for AUTH; "" = the default user */
    char redis_password_env[RC_ENV_NAME_MAX + 1]; /* variable holding the password; "" = none */
    char redis_password_file[RC_CONF_STR_MAX];    /* file holding the password; "" = none */
    /* [limits] */
    size_t max_frame;                  /* bytes, default 65536 */
    unsigned max_subs_per_conn;        /* default 64 */
    unsigned max_conns;                /* connections of any kind; 0 = auto (fd limit minus a reserve) */
    unsigned max_conns_per_ip;         /* connections of any kind from one source address, default 1000 */
    int64_t idle_timeout_ms;           /* ping after half of it silent, close after all of it, default 60 s */
    size_t queue_bytes;                /* per-connection queue, default 262144 */
    unsigned conn_write_rate;          /* writes/s per WebSocket connection, default 1000 */
    unsigned conn_write_burst;         /* default 2000 */
    unsigned key_write_rate;           /* writes/s per API key (all its connections), default 20000 */
    unsigned key_write_burst;          /* default 40000 */
    unsigned idem_max_per_key;         /* idempotency_max_per_key: records per writer (core/rc_idem.h); 0 = auto */
    int64_t header_timeout_ms;         /* to send a request's headers (or a handshake), default 10 s */
    int64_t body_timeout_ms;           /* to send a request body, in total, default 10 s */
    unsigned max_pending;              /* requests per connection waiting for an answer, default 64 */
    unsigned read_rows_in_flight;      /* rows of board reads in flight to Redis, default 20000 */
    unsigned conn_read_rows;           /* rows of reads in flight for one connection's subscribes, default 100000 */
    unsigned ip_read_rows;             /* the same for one source address, default 400000 */
    unsigned conn_read_rate;           /* reads/s per connection (WebSocket), default 200 */
    unsigned conn_read_burst;          /* default 400 */
    unsigned ip_read_rate;             /* reads/s per source address (WebSocket and REST), default 1000 */
    unsigned ip_read_burst;            /* default 2000 */
    unsigned max_boards;               /* boards with live state (viewers) per process, default 10000 */
    unsigned ip_board_share;           /* % of max_boards one source address may hold alone, default 10 */
    int64_t message_timeout_ms;        /* a WebSocket message sent in fragments must end within this, default 10 s */
    unsigned ip_handshake_rate;        /* new connections/s accepted per source address, default 1000 */
    unsigned ip_handshake_burst;       /* default 2000 */
    unsigned history_undo_max;         /* changes one moment read may undo in Redis, default 10000 */
    unsigned history_checkpoint_every; /* changes between history checkpoints: 0 auto, RC_CONF_CKPT_OFF none */
    /* [auth] and [key NAME] */
    struct rc_auth auth;
    /* [webhook] */
    struct rc_webhook_conf webhook;
    char jwt_secret[RC_JWT_SECRET_MAX + 1]; /* HS256 token secret; "" = none (RANKCAST_JWT_SECRET overrides) */
    size_t jwt_secret_len;
    char jwt_public_key[RC_CONF_STR_MAX];   /* PEM file: RS256 (RSA key) or ES256 (P-256 key) tokens; "" = none */
    int64_t jwt_skew_ms;               /* clock difference allowed on exp and nbf, default 30 s */
    /* [board ...] */
    size_t nboards;
    struct rc_board boards[RC_CONF_MAX_BOARDS];
};

/* Sets every default (no boards). */
void rc_conf_defaults(struct rc_conf *c);

/* Parses text[0..len) (the content of file `filename`, used only in messages)
 * into *c, which it first resets to defaults. On failure returns
 * RC_E_BAD_REQUEST and err->msg reads "FILE:LINE: reason". Borrows all input. */
int rc_conf_parse(const char *filename, const char *text, size_t len, struct rc_conf *c,
                  struct rc_error *err);

/* The declaration that covers board name `name`: an exact declaration first,
 * else the longest template whose prefix matches. NULL when none (the caller
 * answers unknown_board). Borrows name; the result points into c. */
const struct rc_board *rc_conf_board_find(const struct rc_conf *c, const char *name);

/* How many changes board b's change log keeps (the cap the scripts trim it
 * to): log_cap, or with history = full (docs/history.md) the whole period
 * on a periodic board (no cap: the log expires with the period's keys) and
 * history_max on an all-time board. */
#define RC_LOG_KEEP_ALL 4294967295u
unsigned rc_conf_board_log_keep(const struct rc_board *b);

/* history_checkpoint_every (docs/history.md, "Checkpoints"): the changes
 * between two checkpoints of a history = full board, as configured ("auto":
 * half of history_undo_max, so a moment lies at most about half the cap
 * before the next checkpoint). 0: "off", no checkpoints. */
#define RC_CONF_CKPT_OFF 4294967295u
unsigned rc_conf_checkpoint_every(const struct rc_conf *c);

/* The interval for a board of `members` members: as configured, or for
 * "auto" half the members (a copy then costs about two members a change),
 * within half to twice history_undo_max (a read redoes from the checkpoint
 * before a moment or undoes from the one after it, whichever is nearer: at
 * most half the interval, so within the cap). 0: "off". */
unsigned rc_conf_checkpoint_every_at(const struct rc_conf *c, int64_t members);

/* Value parsers, exposed for tests and the command line. Each returns 0 or
 * RC_E_BAD_REQUEST. */
int rc_conf_value_parse_duration_ms(const char *s, int64_t *out_ms);
int rc_conf_value_parse_timestamp_ms(const char *s, int64_t *out_ms);
int rc_conf_value_parse_utc_offset(const char *s, int32_t *out_s);
int rc_conf_value_parse_int64(const char *s, int64_t *out);

#endif
