/* rc_conf_table.c - one job: the table of every key: its section, its
 * handler, where its value goes and its range (as in Redis's config.c). */
#include "rc_conf_int.h"
#include "rc_shard.h"

#include <string.h>

#include "rc_workers.h"

/* ---------------------------------------------------------------------------
 * The key table
 * ------------------------------------------------------------------------ */

#define CONF(member) offsetof(struct rc_conf, member)
#define BOARD(member) offsetof(struct rc_board, member)
#define KEY(member) offsetof(struct rc_key, member)

static const struct key_spec keys[] = {
    {SEC_SERVER, K_LISTEN, "listen", rc_conf__set_listen, CONF(listen), 0, 0},
    {SEC_SERVER, K_STATE_DIR, "state_dir", rc_conf__set_string, CONF(state_dir), 0, 0},
    {SEC_SERVER, K_WEB_ROOT, "web_root", rc_conf__set_string, CONF(web_root), 0, 0},
    {SEC_SERVER, K_TICK, "tick", rc_conf__set_duration, CONF(tick_ms), 1, 10 * MS_S},
    {SEC_SERVER, K_VIEWERS_EVERY, "viewers_every", rc_conf__set_duration, CONF(viewers_every_ms), 200, MS_M},
    {SEC_SERVER, K_ARCHIVE_PATH, "archive_path", rc_conf__set_string, CONF(archive_path), 0, 0},
    {SEC_SERVER, K_TEST_CLOCK, "test_clock", rc_conf__set_onoff, CONF(test_clock), 0, 0},
    {SEC_SERVER, K_ALLOWED_ORIGINS, "allowed_origins", rc_conf__set_string, CONF(allowed_origins), 0, 0},
    {SEC_SERVER, K_TLS_CERT, "tls_cert", rc_conf__set_string, CONF(tls_cert), 0, 0},
    {SEC_SERVER, K_TLS_KEY, "tls_key", rc_conf__set_string, CONF(tls_key), 0, 0},
    {SEC_SERVER, K_COMPRESSION, "compression", rc_conf__set_onoff, CONF(compression), 0, 0},
    {SEC_SERVER, K_METRICS_PUBLIC, "metrics_public", rc_conf__set_onoff, CONF(metrics_public), 0, 0},
    {SEC_SERVER, K_WORKERS, "workers", rc_conf__set_unsigned, CONF(workers), RC_WORKERS_MIN, RC_WORKERS_MAX},
    {SEC_SERVER, K_LIST_BUILDS_PER_TURN, "list_builds_per_turn", rc_conf__set_unsigned, CONF(list_builds_per_turn),
     1, 1000000},

    {SEC_REDIS, K_ADDRESS, "address", rc_conf__set_redis_address, CONF(redis), 0, 0},
    {SEC_REDIS, K_KEYSPACE_EVENTS, "keyspace_events", rc_conf__set_onoff, CONF(keyspace_events), 0, 0},
    {SEC_REDIS, K_RECONNECT_MAX, "reconnect_max", rc_conf__set_duration, CONF(reconnect_max_ms), 10, 10 * MS_M},
    {SEC_REDIS, K_ACK_REPLICAS, "ack_replicas", rc_conf__set_unsigned, CONF(ack_replicas), 0, 16},
    {SEC_REDIS, K_ACK_TIMEOUT, "ack_timeout", rc_conf__set_duration, CONF(ack_timeout_ms), 1, 60 * MS_S},
    {SEC_REDIS, K_REDIS_USERNAME, "username", rc_conf__set_redis_username, CONF(redis_username), 0, 0},
    {SEC_REDIS, K_REDIS_PASSWORD, "password", rc_conf__set_redis_password, 0, 0, 0},
    {SEC_REDIS, K_REDIS_PASSWORD_ENV, "password_env", rc_conf__set_redis_password_env, CONF(redis_password_env), 0,
     0},
    {SEC_REDIS, K_REDIS_PASSWORD_FILE, "password_file", rc_conf__set_string, CONF(redis_password_file), 0, 0},

    {SEC_LIMITS, K_MAX_FRAME, "max_frame", rc_conf__set_bytes, CONF(max_frame), 256, MIB},
    {SEC_LIMITS, K_MAX_SUBS, "max_subs_per_conn", rc_conf__set_unsigned, CONF(max_subs_per_conn), 1, 10000},
    {SEC_LIMITS, K_MAX_CONNS, "max_conns", rc_conf__set_unsigned_or_auto, CONF(max_conns), 1, 1000000},
    {SEC_LIMITS, K_QUEUE_BYTES, "queue_bytes", rc_conf__set_bytes, CONF(queue_bytes), 4 * KIB, 64 * MIB},
    {SEC_LIMITS, K_MAX_CONNS_PER_IP, "max_conns_per_ip", rc_conf__set_unsigned, CONF(max_conns_per_ip), 1, 1000000},
    {SEC_LIMITS, K_IDLE_TIMEOUT, "idle_timeout", rc_conf__set_duration, CONF(idle_timeout_ms), 2 * MS_S, MS_D},
    {SEC_LIMITS, K_CONN_WRITE_RATE, "conn_write_rate", rc_conf__set_unsigned, CONF(conn_write_rate), 1, 1000000},
    {SEC_LIMITS, K_CONN_WRITE_BURST, "conn_write_burst", rc_conf__set_unsigned, CONF(conn_write_burst), 1,
     10000000},
    {SEC_LIMITS, K_KEY_WRITE_RATE, "key_write_rate", rc_conf__set_unsigned, CONF(key_write_rate), 1, 1000000},
    {SEC_LIMITS, K_KEY_WRITE_BURST, "key_write_burst", rc_conf__set_unsigned, CONF(key_write_burst), 1,
     10000000},
    {SEC_LIMITS, K_HEADER_TIMEOUT, "header_timeout", rc_conf__set_duration, CONF(header_timeout_ms), MS_S, 10 * MS_M},
    {SEC_LIMITS, K_BODY_TIMEOUT, "body_timeout", rc_conf__set_duration, CONF(body_timeout_ms), MS_S, 10 * MS_M},
    {SEC_LIMITS, K_MAX_PENDING, "max_pending", rc_conf__set_unsigned, CONF(max_pending), 1, 100000},
    {SEC_LIMITS, K_READ_ROWS_IN_FLIGHT, "read_rows_in_flight", rc_conf__set_unsigned, CONF(read_rows_in_flight),
     1000, 10000000},
    {SEC_LIMITS, K_CONN_READ_ROWS, "conn_read_rows", rc_conf__set_unsigned, CONF(conn_read_rows), 1000, 10000000},
    {SEC_LIMITS, K_IP_READ_ROWS, "ip_read_rows", rc_conf__set_unsigned, CONF(ip_read_rows), 1000, 100000000},
    {SEC_LIMITS, K_CONN_READ_RATE, "conn_read_rate", rc_conf__set_unsigned, CONF(conn_read_rate), 1, 1000000},
    {SEC_LIMITS, K_CONN_READ_BURST, "conn_read_burst", rc_conf__set_unsigned, CONF(conn_read_burst), 1, 10000000},
    {SEC_LIMITS, K_IP_READ_RATE, "ip_read_rate", rc_conf__set_unsigned, CONF(ip_read_rate), 1, 1000000},
    {SEC_LIMITS, K_IP_READ_BURST, "ip_read_burst", rc_conf__set_unsigned, CONF(ip_read_burst), 1, 10000000},
    {SEC_LIMITS, K_MAX_BOARDS, "max_boards", rc_conf__set_unsigned, CONF(max_boards), 1, 1000000},
    {SEC_LIMITS, K_IDEM_MAX_PER_KEY, "idempotency_max_per_key", rc_conf__set_unsigned_or_auto,
     CONF(idem_max_per_key), 1, 4000000000LL},
    {SEC_LIMITS, K_IP_BOARD_SHARE, "ip_board_share", rc_conf__set_unsigned, CONF(ip_board_share), 1, 100},
    {SEC_LIMITS, K_MESSAGE_TIMEOUT, "message_timeout", rc_conf__set_duration, CONF(message_timeout_ms), MS_S,
     10 * MS_M},
    {SEC_LIMITS, K_IP_HANDSHAKE_RATE, "ip_handshake_rate", rc_conf__set_unsigned, CONF(ip_handshake_rate), 1,
     1000000},
    {SEC_LIMITS, K_IP_HANDSHAKE_BURST, "ip_handshake_burst", rc_conf__set_unsigned, CONF(ip_handshake_burst), 1,
     10000000},
    {SEC_LIMITS, K_HISTORY_UNDO_MAX, "history_undo_max", rc_conf__set_unsigned, CONF(history_undo_max), 10,
     100000000},
    {SEC_LIMITS, K_HISTORY_CHECKPOINT_EVERY, "history_checkpoint_every", rc_conf__set_checkpoint_every,
     CONF(history_checkpoint_every), 10, 100000000},

    {SEC_AUTH, K_READS, "reads", rc_conf__set_reads, CONF(auth.reads_need_key), 0, 0},
    {SEC_AUTH, K_JWT_SECRET, "jwt_secret", rc_conf__set_jwt_secret, 0, 0, 0},
    {SEC_AUTH, K_JWT_PUBLIC_KEY, "jwt_public_key", rc_conf__set_string, CONF(jwt_public_key), 0, 0},
    {SEC_AUTH, K_JWT_SKEW, "jwt_skew", rc_conf__set_duration, CONF(jwt_skew_ms), 1, 10 * MS_M},

    {SEC_WEBHOOK, K_URL, "url", rc_conf__set_webhook_url, CONF(webhook.url), 0, 0},
    {SEC_WEBHOOK, K_SECRET, "secret", rc_conf__set_webhook_secret, CONF(webhook.secret), 0, 0},
    {SEC_WEBHOOK, K_SECRET_ENV, "secret_env", rc_conf__set_webhook_secret_env, CONF(webhook.secret_env), 0, 0},
    {SEC_WEBHOOK, K_TOP, "top", rc_conf__set_unsigned, CONF(webhook.top), 1, 1000},
    {SEC_WEBHOOK, K_TIMEOUT, "timeout", rc_conf__set_duration, CONF(webhook.timeout_ms), 100, 60 * MS_S},
    {SEC_WEBHOOK, K_RETRIES, "retries", rc_conf__set_unsigned, CONF(webhook.retries), 0, 20},
    {SEC_WEBHOOK, K_BACKOFF_BASE, "backoff_base", rc_conf__set_duration, CONF(webhook.backoff_base_ms), 10,
     MS_H},
    {SEC_WEBHOOK, K_BACKOFF_CAP, "backoff_cap", rc_conf__set_duration, CONF(webhook.backoff_cap_ms), 10, MS_H},
    /* at least 3 s: renewed every third of it by a 100 ms timer, a second is left for a slow Redis */
    {SEC_WEBHOOK, K_LOCK_TTL, "lock_ttl", rc_conf__set_duration, CONF(webhook.lock_ttl_ms), 3 * MS_S, MS_H},

    /* secret, secret_env and boards fill several fields of the rc_key. */
    {SEC_KEY, K_SECRET, "secret", rc_conf__set_secret, 0, 0, 0},
    {SEC_KEY, K_SECRET_ENV, "secret_env", rc_conf__set_secret_env, 0, 0, 0},
    {SEC_KEY, K_SCOPES, "scopes", rc_conf__set_scopes, KEY(scopes), 0, 0},
    {SEC_KEY, K_BOARDS, "boards", rc_conf__set_boards, 0, 0, 0},

    {SEC_BOARD, K_ORDER, "order", rc_conf__set_order, BOARD(layout.order), 0, 0},
    {SEC_BOARD, K_OPS, "ops", rc_conf__set_ops, BOARD(ops), 0, 0},
    {SEC_BOARD, K_SUBMIT_MODE, "submit_mode", rc_conf__set_submit_mode, BOARD(submit_mode), 0, 0},
    {SEC_BOARD, K_POINTS_MIN, "points_min", rc_conf__set_int64, BOARD(layout.points_min), 0, 0},
    {SEC_BOARD, K_POINTS_MAX, "points_max", rc_conf__set_int64, BOARD(layout.points_max), 0, 0},
    {SEC_BOARD, K_FIELDS, "fields", rc_conf__set_fields, BOARD(layout), 0, 0},
    {SEC_BOARD, K_TIEBREAK, "tiebreak", rc_conf__set_tiebreak, BOARD(layout.tiebreak), 0, 0},
    {SEC_BOARD, K_TB_RESOLUTION, "tiebreak_resolution", rc_conf__set_duration, BOARD(layout.tb_resolution_ms),
     1, 365 * MS_D},
    {SEC_BOARD, K_TB_HORIZON, "tiebreak_horizon", rc_conf__set_duration, BOARD(layout.tb_horizon_ms), 1,
     36500 * MS_D},
    {SEC_BOARD, K_TB_BASE, "tiebreak_base", rc_conf__set_timestamp, BOARD(layout.tb_base_ms), 0, 0},
    {SEC_BOARD, K_TB_BITS, "tiebreak_bits", rc_conf__set_unsigned, BOARD(layout.tb_arrival_bits), 1, 52},
    {SEC_BOARD, K_PERIOD, "period", rc_conf__set_period, BOARD(period.kind), 0, 0},
    {SEC_BOARD, K_UTC_OFFSET, "utc_offset", rc_conf__set_utc_offset, BOARD(period.utc_offset_s), 0, 0},
    {SEC_BOARD, K_PERIOD_BASE, "period_base", rc_conf__set_timestamp, BOARD(period.base_ms), 0, 0},
    {SEC_BOARD, K_PERIOD_LENGTH, "period_length", rc_conf__set_duration, BOARD(period.length_ms), MS_S,
     3660 * MS_D},
    {SEC_BOARD, K_KEEP, "keep", rc_conf__set_unsigned, BOARD(keep), 1, 1000},
    {SEC_BOARD, K_DECAY, "decay", rc_conf__set_decay, BOARD(decay.kind), 0, 0},
    {SEC_BOARD, K_BUCKET_SPAN, "bucket_span", rc_conf__set_duration, BOARD(decay.bucket_ms), MS_S, 7 * MS_D},
    {SEC_BOARD, K_WINDOW, "window", rc_conf__set_duration, BOARD(decay.window_ms), MS_S, 365 * MS_D},
    {SEC_BOARD, K_WEIGHTING, "weighting", rc_conf__set_weighting, BOARD(decay.weighting), 0, 0},
    {SEC_BOARD, K_HALF_LIFE, "half_life", rc_conf__set_duration, BOARD(decay.half_life_ms), MS_S, 365 * MS_D},
    {SEC_BOARD, K_REBUILD_EVERY, "rebuild_every", rc_conf__set_duration, BOARD(decay.rebuild_ms), 100, MS_H},
    {SEC_BOARD, K_RESULT_TTL, "result_ttl", rc_conf__set_duration, BOARD(decay.result_ttl_ms), MS_S, MS_D},
    {SEC_BOARD, K_SCALE_FACTOR, "scale_factor", rc_conf__set_scale_factor, BOARD(decay.scale_factor), 0, 0},
    {SEC_BOARD, K_SCALE_EVERY, "scale_every", rc_conf__set_duration, BOARD(decay.scale_every_ms), MS_S,
     365 * MS_D},
    {SEC_BOARD, K_IDEMPOTENCY, "idempotency_window", rc_conf__set_whole_seconds, BOARD(idempotency_ms), MS_S,
     30 * MS_D},
    {SEC_BOARD, K_LOG_CAP, "log_cap", rc_conf__set_unsigned, BOARD(log_cap), 1, 100000},
    {SEC_BOARD, K_WRITE_MODE, "write_mode", rc_conf__set_write_mode, BOARD(queue.mode), 0, 0},
    {SEC_BOARD, K_QUEUE_MAX, "queue_max", rc_conf__set_unsigned, BOARD(queue.max), 1, 10000000},
    {SEC_BOARD, K_CLAIM_AFTER, "claim_after", rc_conf__set_duration, BOARD(queue.claim_after_ms), 100, 10 * MS_M},
    {SEC_BOARD, K_QUEUE_LAG_MAX, "queue_lag_max", rc_conf__set_duration, BOARD(queue.lag_max_ms), 100, MS_D},
    {SEC_BOARD, K_SHARDS, "shards", rc_conf__set_unsigned, BOARD(shards), RC_SHARDS_MIN, RC_SHARDS_MAX},
    {SEC_BOARD, K_TEAMS, "teams", rc_conf__set_teams, BOARD(teams), 0, 0},
    {SEC_BOARD, K_HISTORY, "history", rc_conf__set_history, BOARD(history_full), 0, 0},
    {SEC_BOARD, K_HISTORY_MAX, "history_max", rc_conf__set_unsigned, BOARD(history_max), 1, 100000000},
};

const struct key_spec *rc_conf__find_key(enum section sec, const char *name)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i].sec == sec && strcmp(keys[i].name, name) == 0)
            return &keys[i];
    return NULL;
}

const char *rc_conf__key_name(enum key_id id)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i].id == id)
            return keys[i].name;
    return "?";
}
