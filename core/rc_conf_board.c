/* rc_conf_board.c - one job: board rules: a [board] section's defaults,
 * the checks across its keys when it ends (rc_layout_finish proves the
 * layout fits 53 bits), and finding the declaration that covers a name. */
#include "rc_conf_int.h"

#include <inttypes.h>
#include <string.h>

#include "rc_err.h"
#include "rc_names.h"
#include "rc_period.h"

/* ---------------------------------------------------------------------------
 * Boards
 * ------------------------------------------------------------------------ */

/* Defaults that do not depend on other keys; the rest are settled in
 * finish_board once the whole section has been read. */
static void board_defaults(struct rc_board *b)
{
    memset(b, 0, sizeof *b);
    b->submit_mode = RC_SUBMIT_REPLACE;
    b->layout.order = RC_ORDER_DESC;
    b->layout.tiebreak = RC_TB_EARLIEST;
    b->layout.tb_resolution_ms = 1;
    b->layout.tb_arrival_bits = RC_TB_ARRIVAL_BITS_DEFAULT;
    b->period.kind = RC_PERIOD_NONE;
    b->keep = 2;
    b->decay.kind = RC_DECAY_NONE;
    b->decay.bucket_ms = MS_H;
    b->decay.window_ms = 24 * MS_H;
    b->decay.weighting = RC_WEIGHT_LINEAR;
    b->decay.half_life_ms = 6 * MS_H;
    b->decay.rebuild_ms = 5 * MS_S;
    b->decay.result_ttl_ms = 30 * MS_S;
    b->shards = 1;
    b->decay.scale_every_ms = MS_H;
    b->idempotency_ms = 600 * MS_S;
    b->log_cap = 1000;
    b->history_max = 1000000;
    b->queue.mode = RC_WRITE_DIRECT;
    b->queue.max = 100000;
    b->queue.claim_after_ms = 5 * MS_S;
    b->queue.lag_max_ms = 30 * MS_S;
}

/* First key of ids[0..n) given in this section, or -1: for "X applies only
 * to ..." checks over a group of keys. */
static int first_seen(const struct parser *p, const enum key_id *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (SEEN(p, ids[i]))
            return (int)ids[i];
    return -1;
}

/* Single- vs multi-field: operators, submit_mode, points range, order. */
static int finish_ops(struct parser *p, struct rc_board *b, int line)
{
    if (b->layout.nfields) {
        if (SEEN(p, K_POINTS_MIN) || SEEN(p, K_POINTS_MAX))
            return rc_conf__fail(p, line, "%s cannot be combined with fields: multi-field boards take their "
                                 "range from the fields' bits",
                        SEEN(p, K_POINTS_MIN) ? "points_min" : "points_max");
        if (b->layout.order == RC_ORDER_ASC)
            return rc_conf__fail(p, line, "order = asc cannot be combined with fields: multi-field boards rank "
                                 "by each field's direction (leave order out)");
        if (b->decay.kind != RC_DECAY_NONE)
            return rc_conf__fail(p, line, "decay cannot be combined with fields: weighted sums do not decode "
                                 "back into fields");
        if (!SEEN(p, K_OPS))
            b->ops = RC_OPF_SUBMIT;
        else if (b->ops != RC_OPF_SUBMIT)
            return rc_conf__fail(p, line, "ops must be submit on a multi-field board (fields is set): "
                                 "incr, set and best need a single-field board");
    } else {
        if (!SEEN(p, K_OPS))
            b->ops = RC_OPF_INCR | RC_OPF_SET | RC_OPF_BEST;
        else if (b->ops & RC_OPF_SUBMIT)
            return rc_conf__fail(p, line, "ops = submit needs fields: only multi-field boards take submit");
        if (SEEN(p, K_SUBMIT_MODE))
            return rc_conf__fail(p, line, "submit_mode applies only to multi-field boards: set fields, or "
                                 "remove submit_mode");
    }
    return 0;
}

/* Period keys: custom needs base and length; calendar periods take an offset;
 * all-time boards take none of them. */
static int finish_period(struct parser *p, struct rc_board *b, int line)
{
    const char *kind = rc_period_kind_name(b->period.kind);
    if (b->period.kind == RC_PERIOD_CUSTOM) {
        if (!SEEN(p, K_PERIOD_BASE) || !SEEN(p, K_PERIOD_LENGTH))
            return rc_conf__fail(p, line, "period = custom needs period_base and period_length");
        if (SEEN(p, K_UTC_OFFSET))
            return rc_conf__fail(p, line, "utc_offset does not apply to period = custom: period_base sets "
                                 "the boundaries");
    } else {
        static const enum key_id custom_only[] = {K_PERIOD_BASE, K_PERIOD_LENGTH};
        int k = first_seen(p, custom_only, 2);
        if (k >= 0)
            return rc_conf__fail(p, line, "%s applies only to period = custom (period is %s)",
                                 rc_conf__key_name((enum key_id)k), kind);
    }
    if (b->period.kind == RC_PERIOD_NONE) {
        if (SEEN(p, K_UTC_OFFSET))
            return rc_conf__fail(p, line, "utc_offset applies only to periodic boards: set period, or remove "
                                 "utc_offset");
        if (SEEN(p, K_KEEP))
            return rc_conf__fail(p, line, "keep applies only to periodic boards: set period, or remove keep");
    }
    return 0;
}

/* Decay keys: the keys of one mode are refused under the other. */
static int finish_decay(struct parser *p, struct rc_board *b, int line)
{
    static const enum key_id bucket_keys[] = {K_BUCKET_SPAN, K_WINDOW, K_WEIGHTING,
                                              K_HALF_LIFE, K_REBUILD_EVERY, K_RESULT_TTL};
    static const enum key_id scale_keys[] = {K_SCALE_FACTOR, K_SCALE_EVERY};
    struct rc_decay_spec *d = &b->decay;
    char a[32], z[32];
    int k;

    if (d->kind != RC_DECAY_NONE && b->period.kind != RC_PERIOD_NONE)
        return rc_conf__fail(p, line, "decay cannot be combined with period: a board either decays or "
                             "starts over each period");
    if (d->kind != RC_DECAY_BUCKETS && (k = first_seen(p, bucket_keys, 6)) >= 0)
        return rc_conf__fail(p, line, "%s applies only to decay = buckets", rc_conf__key_name((enum key_id)k));
    if (d->kind != RC_DECAY_SCALE && (k = first_seen(p, scale_keys, 2)) >= 0)
        return rc_conf__fail(p, line, "%s applies only to decay = scale", rc_conf__key_name((enum key_id)k));

    if (d->kind == RC_DECAY_BUCKETS) {
        if (SEEN(p, K_HALF_LIFE) && d->weighting != RC_WEIGHT_HALFLIFE)
            return rc_conf__fail(p, line, "half_life applies only to weighting = halflife");
        if (d->window_ms < d->bucket_ms || d->window_ms % d->bucket_ms != 0)
            return rc_conf__fail(p, line, "window (%s) must be a whole multiple of bucket_span (%s)",
                                 rc_conf__fmt_dur(d->window_ms, a, sizeof a),
                                 rc_conf__fmt_dur(d->bucket_ms, z, sizeof z));
        if (d->window_ms / d->bucket_ms > MAX_BUCKETS)
            return rc_conf__fail(p, line, "window / bucket_span is %" PRId64 " buckets, at most %d",
                                 d->window_ms / d->bucket_ms, MAX_BUCKETS);
        if (d->result_ttl_ms <= d->rebuild_ms)
            return rc_conf__fail(p, line, "result_ttl (%s) must exceed rebuild_every (%s), or the board "
                                 "vanishes between rebuilds",
                                 rc_conf__fmt_dur(d->result_ttl_ms, a, sizeof a),
                                 rc_conf__fmt_dur(d->rebuild_ms, z, sizeof z));
    }
    if (d->kind == RC_DECAY_SCALE && !SEEN(p, K_SCALE_FACTOR))
        return rc_conf__fail(p, line, "decay = scale needs scale_factor (a decimal, 0 < f < 1)");
    return 0;
}

/* Tie-break: forced off on decaying boards; horizon from the period on
 * periodic boards; explicit horizon and base on all-time boards. */
static int finish_tiebreak(struct parser *p, struct rc_board *b, int line)
{
    static const enum key_id tb_keys[] = {K_TB_RESOLUTION, K_TB_HORIZON, K_TB_BASE};
    struct rc_layout *l = &b->layout;
    int k;

    if (b->decay.kind != RC_DECAY_NONE) {
        if (SEEN(p, K_TIEBREAK) && l->tiebreak == RC_TB_ARRIVAL)
            return rc_conf__fail(p, line, "tiebreak = arrival cannot be combined with decay: a decaying "
                                 "board's weighted scores are rebuilt, so no arrival order survives them "
                                 "(tiebreak must be none)");
        if (SEEN(p, K_TIEBREAK) && l->tiebreak != RC_TB_NONE)
            return rc_conf__fail(p, line, "decaying boards hold weighted scores: tiebreak must be none");
        l->tiebreak = RC_TB_NONE;
    }
    if (SEEN(p, K_TB_BITS) && l->tiebreak != RC_TB_ARRIVAL)
        return rc_conf__fail(p, line, "tiebreak_bits applies only to tiebreak = arrival (time tie-breaks "
                             "take their bits from tiebreak_resolution and the horizon)");
    if (l->tiebreak == RC_TB_ARRIVAL) {
        /* arrivals are counted per points value by the write script, not timed */
        if ((k = first_seen(p, tb_keys, 3)) >= 0)
            return rc_conf__fail(p, line, "%s does not apply with tiebreak = arrival (arrivals are counted, "
                                 "not timed: tiebreak_bits sets how many per points value)",
                                 rc_conf__key_name((enum key_id)k));
        if (b->layout.nfields)
            return rc_conf__fail(p, line, "tiebreak = arrival applies only to single-field boards: the "
                                 "arrival counters are kept per points value");
        l->tb_horizon_ms = 0;
        l->tb_base_ms = 0;
        return 0;
    }
    if (l->tiebreak == RC_TB_NONE) {
        if ((k = first_seen(p, tb_keys, 3)) >= 0)
            return rc_conf__fail(p, line, "%s does not apply with tiebreak = none", rc_conf__key_name((enum key_id)k));
        l->tb_horizon_ms = 0;
        l->tb_base_ms = 0;
        return 0;
    }
    if (b->period.kind != RC_PERIOD_NONE) {
        if (SEEN(p, K_TB_HORIZON))
            return rc_conf__fail(p, line, "tiebreak_horizon cannot be set with period = %s: the period's "
                                 "length decides it", rc_period_kind_name(b->period.kind));
        if (SEEN(p, K_TB_BASE))
            return rc_conf__fail(p, line, "tiebreak_base cannot be set with period = %s: slot 0 is the "
                                 "period's start", rc_period_kind_name(b->period.kind));
        l->tb_horizon_ms = rc_period_max_length_ms(&b->period);
        l->tb_base_ms = 0;
        return 0;
    }
    if (!SEEN(p, K_TB_HORIZON) || !SEEN(p, K_TB_BASE))
        return rc_conf__fail(p, line, "tiebreak = %s on an all-time board needs tiebreak_horizon and "
                             "tiebreak_base (or set a period, or tiebreak = none)",
                    l->tiebreak == RC_TB_LATEST ? "latest" : "earliest");
    return 0;
}

/* write_mode = queued: its bounds need it; it applies only where a write can
 * wait without changing its meaning. Errors carry the line of the key. */
static int finish_queue(struct parser *p, struct rc_board *b)
{
    static const enum key_id queue_keys[] = {K_QUEUE_MAX, K_CLAIM_AFTER, K_QUEUE_LAG_MAX};
    int k, line = p->key_line[K_WRITE_MODE];
    if (b->queue.mode != RC_WRITE_QUEUED) {
        if ((k = first_seen(p, queue_keys, 3)) >= 0)
            return rc_conf__fail(p, p->key_line[k], "%s applies only to write_mode = queued",
                                 rc_conf__key_name((enum key_id)k));
        return 0;
    }
    if (b->is_template)
        return rc_conf__fail(p, line, "write_mode = queued applies only to a board with an exact name, not to "
                             "template %s: the consumers find queued boards in the configuration, and a "
                             "template's boards are not listed there", b->name);
    if (b->period.kind != RC_PERIOD_NONE)
        return rc_conf__fail(p, line, "write_mode = queued cannot be combined with period: a write queued "
                             "before a period ends could be applied after it, to the wrong period");
    if (b->decay.kind != RC_DECAY_NONE)
        return rc_conf__fail(p, line, "write_mode = queued cannot be combined with decay: a decaying board "
                             "weighs a write by when it is applied (its bucket, or the scalings before "
                             "it), so a queued write would count for less or more than it should");
    return 0;
}

/* shards = S (docs/sharded.md): what a split board cannot be. Errors carry
 * the line of the key. */
static int finish_shards(struct parser *p, struct rc_board *b)
{
    int line = p->key_line[K_SHARDS];
    if (b->shards <= 1)
        return 0;
    if (b->decay.kind != RC_DECAY_NONE)
        return rc_conf__fail(p, line, "shards cannot be combined with decay: a decaying board is rebuilt from "
                             "its buckets into one sorted set");
    if (b->layout.tiebreak == RC_TB_ARRIVAL)
        return rc_conf__fail(p, line, "shards cannot be combined with tiebreak = arrival: arrivals are counted "
                             "per shard, and counts of different shards do not compare (use earliest)");
    if (b->queue.mode == RC_WRITE_QUEUED)
        return rc_conf__fail(p, line, "shards cannot be combined with write_mode = queued (not supported yet: "
                             "a queued board has one stream and one consumer)");
    /* periods and templates split like any board: each board-period's
     * shards are "B#i" in that period (docs/sharded.md, "Periods") */
    return 0;
}

/* history = full (docs/history.md): a decaying board is rebuilt by a job
 * and logs no changes, so it has no history to keep. */
static int finish_history(struct parser *p, struct rc_board *b)
{
    if (SEEN(p, K_HISTORY_MAX) && !b->history_full)
        return rc_conf__fail(p, p->key_line[K_HISTORY_MAX], "history_max applies only to history = full");
    if (b->history_full && b->decay.kind != RC_DECAY_NONE)
        return rc_conf__fail(p, p->key_line[K_HISTORY], "history = full cannot be combined with decay: a "
                             "decaying board logs no changes (its rebuilds replace the set)");
    return 0;
}

/* Called when a [board] section ends: settles what depends on several keys
 * and proves the layout fits. Errors carry the board's header line. */
int rc_conf__finish_board(struct parser *p)
{
    struct rc_board *b = p->board;
    struct rc_error lerr;
    int line = b->config_line, rc;

    if ((rc = finish_ops(p, b, line)) != 0 || (rc = finish_period(p, b, line)) != 0 ||
        (rc = finish_decay(p, b, line)) != 0 || (rc = finish_tiebreak(p, b, line)) != 0 ||
        (rc = finish_queue(p, b)) != 0 || (rc = finish_shards(p, b)) != 0 ||
        (rc = finish_history(p, b)) != 0)
        return rc;
    lerr.msg[0] = '\0';
    if (rc_layout_finish(&b->layout, SEEN(p, K_POINTS_MIN), SEEN(p, K_POINTS_MAX), &lerr) != 0)
        return rc_conf__fail(p, line, "[board %s] %s", b->name, lerr.msg);
    return rc_conf__finish_teams(p, b);
}
int rc_conf__open_board(struct parser *p, const char *name)
{
    struct rc_conf *c = p->c;
    size_t n = strlen(name);
    int tmpl = n > 0 && name[n - 1] == '*';
    if (tmpl ? !rc_names_board_template_valid(name, n) : !rc_names_board_name_valid(name, n))
        return rc_conf__fail(p, p->lineno,
                             "bad board name '%.70s': 1..%d of A-Z a-z 0-9 _ . : - (a template adds a final "
                    "'*', e.g. match:*)",
                    name, RC_BOARD_MAX);
    for (size_t i = 0; i < c->nboards; i++)
        if (strcmp(c->boards[i].name, name) == 0)
            return rc_conf__fail(p, p->lineno, c->boards[i].team_of[0]
                                 ? "board '%s' is the team board of line %d's teams: it has no [board] section"
                                 : "board '%s' declared twice (first at line %d)", name,
                                 c->boards[i].config_line);
    if (c->nboards == RC_CONF_MAX_BOARDS)
        return rc_conf__fail(p, p->lineno, "too many boards: at most %d", RC_CONF_MAX_BOARDS);
    struct rc_board *b = &c->boards[c->nboards++];
    board_defaults(b);
    memcpy(b->name, name, n + 1);
    b->is_template = tmpl;
    b->config_line = p->lineno;
    p->board = b;
    p->sec = SEC_BOARD;
    return 0;
}

/* Exact declaration first; else the template with the longest prefix that
 * starts name ("match:*" covers "match:1842"). Borrows name; the result
 * points into c. */
const struct rc_board *rc_conf_board_find(const struct rc_conf *c, const char *name)
{
    const struct rc_board *best = NULL;
    size_t best_len = 0;
    if (!c || !name)
        return NULL;
    for (size_t i = 0; i < c->nboards; i++) {
        const struct rc_board *b = &c->boards[i];
        if (!b->is_template && strcmp(b->name, name) == 0)
            return b;
    }
    /* A template covers only names longer than its prefix: "match:" is no
     * match of "match:*" (it would be a board with an empty match id), and
     * falls to a shorter template, if any, or to unknown_board. */
    size_t nlen = strlen(name);
    for (size_t i = 0; i < c->nboards; i++) {
        const struct rc_board *b = &c->boards[i];
        if (!b->is_template)
            continue;
        size_t plen = strlen(b->name) - 1;
        if (nlen > plen && strncmp(b->name, name, plen) == 0 && (!best || plen > best_len)) {
            best = b;
            best_len = plen;
        }
    }
    return best;
}

unsigned rc_conf_board_log_keep(const struct rc_board *b)
{
    if (!b->history_full)
        return b->log_cap;
    return b->period.kind == RC_PERIOD_NONE ? b->history_max : RC_LOG_KEEP_ALL;
}
