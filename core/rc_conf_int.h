/* rc_conf_int.h - internal to the config parser's files (rc_conf*.c): the
 * load's state, the key table's row type and the helpers the files share.
 * Callers include rc_conf.h only. Names rc_conf__* are internal. */
#ifndef RC_CONF_INT_H
#define RC_CONF_INT_H

#include <stddef.h>
#include <stdint.h>

#include "rc_conf.h"

#define CONF_LINE_MAX 1024 /* bytes per line, without the line ending */

#define MS_S INT64_C(1000)
#define MS_M (60 * MS_S)
#define MS_H (60 * MS_M)
#define MS_D (24 * MS_H)
#define MS_W (7 * MS_D)

#define KIB INT64_C(1024)
#define MIB (1024 * KIB)

#define MAX_BUCKETS 1000 /* hot board: window / bucket_span */

enum section {
    SEC_NONE = 0, /* before the first header: keys are refused */
    SEC_SERVER,
    SEC_REDIS,
    SEC_LIMITS,
    SEC_AUTH,
    SEC_WEBHOOK,
    SEC_BOARD,
    SEC_KEY,
    SEC_COUNT
};

/* One id per key, so a section can remember which keys it has seen (a bit
 * each) and on which line (for "repeated key" and cross-key messages). */
enum key_id {
    K_LISTEN, K_STATE_DIR, K_WEB_ROOT, K_TICK, K_ARCHIVE_PATH, K_TEST_CLOCK,
    K_ADDRESS, K_KEYSPACE_EVENTS, K_RECONNECT_MAX, K_ACK_REPLICAS, K_ACK_TIMEOUT,
    K_REDIS_USERNAME, K_REDIS_PASSWORD, K_REDIS_PASSWORD_ENV, K_REDIS_PASSWORD_FILE,
    K_MAX_FRAME, K_MAX_SUBS, K_MAX_CONNS, K_QUEUE_BYTES, K_MAX_CONNS_PER_IP, K_IDLE_TIMEOUT,
    K_ALLOWED_ORIGINS, K_TLS_CERT, K_TLS_KEY, K_COMPRESSION, K_WORKERS,
    K_CONN_WRITE_RATE, K_CONN_WRITE_BURST, K_KEY_WRITE_RATE, K_KEY_WRITE_BURST,
    K_HEADER_TIMEOUT, K_BODY_TIMEOUT, K_MAX_PENDING, K_CONN_READ_RATE, K_CONN_READ_BURST,
    K_IP_READ_RATE, K_IP_READ_BURST, K_MAX_BOARDS, K_IP_BOARD_SHARE,
    K_IDEM_MAX_PER_KEY, K_MESSAGE_TIMEOUT, K_READ_ROWS_IN_FLIGHT, K_CONN_READ_ROWS, K_IP_READ_ROWS,
    K_IP_HANDSHAKE_RATE, K_IP_HANDSHAKE_BURST, K_HISTORY_UNDO_MAX,
    K_HISTORY_CHECKPOINT_EVERY,
    K_READS, K_JWT_SECRET, K_JWT_PUBLIC_KEY, K_JWT_SKEW,
    K_SECRET, K_SECRET_ENV, K_SCOPES, K_BOARDS,
    K_ORDER, K_OPS, K_SUBMIT_MODE, K_POINTS_MIN, K_POINTS_MAX, K_FIELDS,
    K_TIEBREAK, K_TB_RESOLUTION, K_TB_HORIZON, K_TB_BASE, K_TB_BITS,
    K_PERIOD, K_UTC_OFFSET, K_PERIOD_BASE, K_PERIOD_LENGTH, K_KEEP,
    K_DECAY, K_BUCKET_SPAN, K_WINDOW, K_WEIGHTING, K_HALF_LIFE, K_REBUILD_EVERY,
    K_RESULT_TTL, K_SCALE_FACTOR, K_SCALE_EVERY,
    K_IDEMPOTENCY, K_LOG_CAP,
    K_WRITE_MODE, K_QUEUE_MAX, K_CLAIM_AFTER, K_QUEUE_LAG_MAX, K_SHARDS,
    K_URL, K_TOP, K_TIMEOUT, K_RETRIES, K_BACKOFF_BASE, K_BACKOFF_CAP, /* [webhook] (and K_SECRET, K_SECRET_ENV) */
    K_LOCK_TTL, /* [webhook] */
    K_VIEWERS_EVERY, /* [server] */
    K_METRICS_PUBLIC,
    K_TEAMS,
    K_HISTORY, K_HISTORY_MAX,
    K_LIST_BUILDS_PER_TURN, /* [server] */
    K_COUNT
};

_Static_assert(K_COUNT <= 128, "seen mask is two uint64_t");

/* Everything one load needs; lives on rc_conf_parse's stack. */
struct parser {
    const char *file;         /* borrowed, for messages */
    struct rc_conf *c;
    struct rc_error *err;
    int lineno;               /* 1-based line being read */
    enum section sec;         /* open section */
    int sec_line[SEC_COUNT];  /* header line of [server], [redis], [limits], [auth]; 0 = not yet */
    struct rc_board *board;   /* open [board] section, else NULL */
    struct rc_key *key;       /* open [key] section, else NULL */
    uint64_t seen[2];         /* keys given in the open section, bit per key_id */
    int key_line[K_COUNT];    /* where each seen key was given */
};

struct key_spec;
typedef int key_setter(struct parser *p, const struct key_spec *k, void *obj, const char *v);

/* A row of the key table. obj + off is where the value goes; obj is the
 * rc_conf for [server]/[redis]/[limits]/[auth], the rc_board for [board] and
 * the rc_key for [key]. */
struct key_spec {
    enum section sec;
    enum key_id id;
    const char *name;
    key_setter *set;
    size_t off;
    int64_t min, max; /* numeric keys: inclusive range */
};

#define SEEN(p, id) (((p)->seen[(id) / 64] >> ((id) % 64)) & 1u)
#define MARK_SEEN(p, id) ((p)->seen[(id) / 64] |= (uint64_t)1 << ((id) % 64))

/* obj + k->off as a pointer to the key's field. */
#define FIELD(type, obj, k) ((type *)(void *)((char *)(obj) + (k)->off))

static inline int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static inline int is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

/* rc_conf_msg.c: messages. */
int rc_conf__fail(struct parser *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *rc_conf__fmt_dur(int64_t ms, char *buf, size_t cap);
const char *rc_conf__fmt_bytes(int64_t n, char *buf, size_t cap);
const char *rc_conf__sec_label(const struct parser *p, char *buf, size_t cap);

/* rc_conf_value.c: value parsers and text helpers (the public ones are in rc_conf.h). */
int rc_conf__parse_bytes(const char *s, int64_t *out);
int rc_conf__parse_decimal(const char *s, double *out);
int rc_conf__hostport_valid(const char *s);
int rc_conf__word_index(const char *v, const char *const *words, int n);
int rc_conf__env_name_valid(const char *v);
int rc_conf__token_valid(const char *v, size_t min, size_t max);
char *rc_conf__trim(char *s);
char *rc_conf__next_item(char **rest);

/* rc_conf_set.c and rc_conf_key.c: the key handlers the table points at. */
key_setter rc_conf__set_boards;
key_setter rc_conf__set_bytes;
key_setter rc_conf__set_decay;
key_setter rc_conf__set_duration;
key_setter rc_conf__set_fields;
key_setter rc_conf__set_int64;
key_setter rc_conf__set_jwt_secret;
key_setter rc_conf__set_listen;
key_setter rc_conf__set_onoff;
key_setter rc_conf__set_ops;
key_setter rc_conf__set_order;
key_setter rc_conf__set_period;
key_setter rc_conf__set_reads;
key_setter rc_conf__set_redis_address;
key_setter rc_conf__set_scale_factor;
key_setter rc_conf__set_scopes;
key_setter rc_conf__set_secret;
key_setter rc_conf__set_secret_env;
key_setter rc_conf__set_string;
key_setter rc_conf__set_submit_mode;
key_setter rc_conf__set_tiebreak;
key_setter rc_conf__set_timestamp;
key_setter rc_conf__set_unsigned;
key_setter rc_conf__set_unsigned_or_auto;
key_setter rc_conf__set_checkpoint_every; /* auto | off | N */
key_setter rc_conf__set_utc_offset;
key_setter rc_conf__set_weighting;
key_setter rc_conf__set_whole_seconds;
key_setter rc_conf__set_write_mode;

/* rc_conf_redis.c: the [redis] credentials (never the password itself). */
key_setter rc_conf__set_redis_username;
key_setter rc_conf__set_redis_password;
key_setter rc_conf__set_redis_password_env;

/* rc_conf_webhook.c: the [webhook] section. */
key_setter rc_conf__set_webhook_url;
key_setter rc_conf__set_webhook_secret;
key_setter rc_conf__set_webhook_secret_env;
int rc_conf__finish_webhook(struct parser *p);

/* rc_conf_teams.c: teams = T (docs/teams.md). */
key_setter rc_conf__set_teams;
key_setter rc_conf__set_history;
int rc_conf__finish_teams(struct parser *p, struct rc_board *b);
void rc_conf__register_teams(const struct rc_conf *c);

/* rc_conf_table.c: the key table. */
const struct key_spec *rc_conf__find_key(enum section sec, const char *name);
const char *rc_conf__key_name(enum key_id id);

/* rc_conf_board.c: board rules. */
int rc_conf__open_board(struct parser *p, const char *name);
int rc_conf__finish_board(struct parser *p);

/* rc_conf_key.c: API key rules. */
int rc_conf__open_key(struct parser *p, const char *name);
int rc_conf__finish_key(struct parser *p);

#endif
