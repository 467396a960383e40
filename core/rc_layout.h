/* rc_layout.h - a board's declaration: sort order, score layout, tie-break,
 * multi-field layout, period and decay settings.
 *
 * The score layout maps a board's real points (or multi-field values) plus a
 * tie-break time slot onto one Redis score, a double, exactly:
 *
 *   single-field:  composite = points * 2^tb_bits + tb
 *   multi-field:   composite = ((f1' * 2^b2 + f2') * 2^b3 + f3') ... * 2^tb_bits + tb
 *
 * where tb is the tie-break slot (0 when tiebreak is none; with tiebreak =
 * arrival the member's arrival index at its points, counted by lua/write.lua) and fi' is field i,
 * flipped to (2^bi - 1 - fi) when that field ranks ascending. Every composite
 * must be a safe integer, |x| <= 2^53 - 1, so decoding is exact and JavaScript
 * clients read it without loss. rc_layout_finish checks that.
 */
#ifndef RC_LAYOUT_H
#define RC_LAYOUT_H

#include <stdint.h>

#include "rc_err.h"
#include "rc_names.h"
#include "rc_period.h"

#define RC_SAFE_INT_MAX 9007199254740991LL /* 2^53 - 1 */
#define RC_MAX_FIELDS 8
#define RC_COMPOSITE_BITS 53

enum rc_order {
    RC_ORDER_DESC = 0, /* higher points rank first (most points wins) */
    RC_ORDER_ASC       /* lower points rank first (fastest lap wins) */
};

enum rc_tiebreak {
    RC_TB_EARLIEST = 0, /* first to reach a score ranks higher */
    RC_TB_LATEST,       /* last to reach a score ranks higher */
    RC_TB_NONE,         /* equal scores order by member name (Redis' rule) */
    RC_TB_ARRIVAL       /* exact arrival order at one points value: the write script
                           counts arrivals per value (docs/score-layout.md) */
};

/* tiebreak = arrival: default tie bits, 2^20 = 1,048,576 arrivals per points value
 * (indices 0..2^20 - 1); points keep |p| <= 2^33 - 1 */
#define RC_TB_ARRIVAL_BITS_DEFAULT 20

enum rc_decay {
    RC_DECAY_NONE = 0,
    RC_DECAY_BUCKETS, /* hot board: time buckets unioned with weights */
    RC_DECAY_SCALE    /* multiply every score by a factor on a schedule */
};

enum rc_weighting {
    RC_WEIGHT_LINEAR = 0,
    RC_WEIGHT_HALFLIFE
};

/* Flags for struct rc_board.ops: which write operators a board accepts. */
#define RC_OPF_INCR (1u << 0)   /* add a delta */
#define RC_OPF_SET (1u << 1)    /* replace the points */
#define RC_OPF_BEST (1u << 2)   /* keep the better of old and new */
#define RC_OPF_SUBMIT (1u << 3) /* multi-field submission */

enum rc_submit_mode {
    RC_SUBMIT_REPLACE = 0, /* merged fields replace the entry */
    RC_SUBMIT_BEST         /* kept only when the merged entry ranks better */
};

struct rc_field_spec {
    char name[RC_FIELD_NAME_MAX + 1];
    unsigned bits;  /* 1..52 */
    int ascending;  /* 1: lower values rank first */
};

struct rc_layout {
    enum rc_order order;
    enum rc_tiebreak tiebreak;
    int64_t tb_resolution_ms; /* > 0 when tiebreak != none */
    int64_t tb_horizon_ms;    /* span the tie-break slots must cover */
    int64_t tb_base_ms;       /* all-time boards: start of slot 0 (periodic: period start) */
    unsigned tb_arrival_bits; /* tiebreak = arrival: the tie bits (tiebreak_bits, 1..52) */
    unsigned tb_bits;         /* computed by rc_layout_finish */
    int64_t points_min;       /* single-field boards */
    int64_t points_max;
    unsigned nfields;         /* 0: single-field board */
    struct rc_field_spec fields[RC_MAX_FIELDS];
    unsigned field_bits;      /* computed: sum of fields[i].bits */
};

struct rc_decay_spec {
    enum rc_decay kind;
    int64_t bucket_ms;        /* BUCKETS: bucket span */
    int64_t window_ms;        /* BUCKETS: how far back buckets count */
    enum rc_weighting weighting;
    int64_t half_life_ms;     /* HALFLIFE weighting */
    int64_t rebuild_ms;       /* BUCKETS: rebuild interval */
    int64_t result_ttl_ms;    /* BUCKETS: TTL of the rebuilt read key */
    double scale_factor;      /* SCALE: 0 < f < 1 */
    int64_t scale_every_ms;   /* SCALE: schedule */
};

enum rc_write_mode {
    RC_WRITE_DIRECT = 0, /* the write script runs before the ack */
    RC_WRITE_QUEUED      /* the ack means queued (rc:{B|}:in); a consumer applies it (docs/queued.md) */
};

/* write_mode = queued (docs/queued.md). */
struct rc_queue_spec {
    enum rc_write_mode mode;
    unsigned max;             /* queue_max: unapplied entries the stream may hold */
    int64_t claim_after_ms;   /* claim_after: idle time before another consumer takes an entry */
    int64_t lag_max_ms;       /* queue_lag_max: /healthz is unhealthy past this age of the oldest entry */
};

struct rc_board {
    char name[RC_BOARD_MAX + 2]; /* exact name, or a template ending in '*' */
    int is_template;
    unsigned ops;                /* RC_OPF_* */
    enum rc_submit_mode submit_mode;
    struct rc_layout layout;
    struct rc_period_spec period;
    unsigned keep;               /* finished periods kept in Redis */
    struct rc_decay_spec decay;
    int64_t idempotency_ms;      /* req window */
    unsigned log_cap;            /* capped change log length */
    struct rc_queue_spec queue;  /* write_mode and its bounds */
    unsigned shards;             /* 1: one sorted set; 2..64: split by member (core/rc_shard.h) */
    int config_line;             /* where it was declared, for messages */
    char teams[RC_BOARD_MAX + 2];   /* teams = T: the team board this board feeds ("" = none; docs/teams.md) */
    char team_of[RC_BOARD_MAX + 2]; /* on a team board T: its source board (T has no [board] of its own) */
    int history_full;            /* history = full: the log keeps the period (docs/history.md) */
    unsigned history_max;        /* history = full on an all-time board: changes the log keeps */
};

/* Fills layout defaults that depend on the rest of the declaration and checks
 * that the layout fits 53 bits. Computes tb_bits and field_bits; when
 * points_min/points_max were not given (has_min/has_max 0) picks the widest
 * symmetric range that fits. On failure returns RC_E_BAD_REQUEST with a message
 * that says how many bits each part needs. */
int rc_layout_finish(struct rc_layout *l, int has_min, int has_max, struct rc_error *err);

/* Bits needed to hold values 0..n-1 (n >= 1). */
unsigned rc_layout_bits_for(uint64_t n);

#endif
