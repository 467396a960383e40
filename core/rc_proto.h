/* rc_proto.h - PROTOCOL.md messages: decode client requests, encode server
 * messages. JSON through cJSON. Pure: no I/O.
 *
 * Decoding is strict about what PROTOCOL.md defines and silent about the rest:
 * unknown fields are ignored, but a defined field of the wrong type, a missing
 * required field, a number that is not finite, not an integer where one is
 * required or beyond +-(2^53 - 1), a name that breaks the name rules, an
 * unknown op or a message that is not a JSON object each yield RC_E_BAD_REQUEST
 * with a message naming the field. Before any field is read, the whole text
 * passes the strict JSON gate of rc_json_gate.h (leading zeros, a byte order
 * mark, numbers a double cannot hold, raw control characters, \u0000 and
 * duplicate keys are all refused, in fields we would ignore too). A message
 * over RC_PROTO_MAX_TEXT bytes is RC_E_TOO_LARGE.
 */
#ifndef RC_PROTO_H
#define RC_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "rc_epoch.h"
#include "rc_shard.h"
#include "rc_err.h"
#include "rc_json_gate.h"
#include "rc_layout.h"
#include "rc_names.h"
#include "rc_period.h"

#define RC_PROTO_MAX_TEXT RC_JSON_MAX_TEXT /* hard cap; the gateway's max_frame is lower */
#define RC_VIEW_MAX_ROWS 1000        /* top N and page limit */
#define RC_VIEW_MAX_RADIUS 50        /* around radius */
#define RC_SUB_MAX 32                /* subscription id length */
#define RC_PERIOD_SEL_MAX 32         /* "current", "previous" or an id */

enum rc_op {
    RC_OP_SUBSCRIBE = 0,
    RC_OP_UNSUBSCRIBE,
    RC_OP_INCR,
    RC_OP_SET,
    RC_OP_BEST,
    RC_OP_SUBMIT,
    RC_OP_RANK,
    RC_OP_PING,
    /* admin scope (docs/protocol-additions.md, "Admin operations") */
    RC_OP_REMOVE,   /* board, member, optional block, period */
    RC_OP_UNBLOCK,  /* board, member */
    RC_OP_REVERSE,  /* board, req, optional period */
    RC_OP_RESET,    /* board, optional period */
    /* tokens (docs/protocol-additions.md, "Tokens") */
    RC_OP_AUTH,     /* token: replaces the connection's credentials */
    /* freeze and reveal (PROTOCOL v1.1; admin scope) */
    RC_OP_FREEZE,   /* board, optional period */
    RC_OP_REVEAL    /* board, steps (N or "all", default 1), optional period */
};

#define RC_STEPS_ALL (-1) /* reveal "steps": "all" */

enum rc_view_kind {
    RC_VIEW_TOP = 0,  /* {"top": N} */
    RC_VIEW_PAGE,     /* {"offset": O, "limit": L} */
    RC_VIEW_AROUND,   /* {"around": M, "radius": R} */
    RC_VIEW_FEED      /* {"feed": true} */
};

struct rc_view {
    enum rc_view_kind kind;
    uint32_t offset;                    /* PAGE: ranks offset+1.. ; TOP: 0 */
    uint32_t limit;                     /* TOP: N; PAGE: L */
    char around[RC_MEMBER_MAX + 1];     /* AROUND: the member */
    uint32_t radius;                    /* AROUND: R */
    int places;                         /* v1.1 "places": "shared" (window views): rows carry place/tied */
    uint32_t max_rate;                  /* subscribe "max_rate" (v1.1): messages a second, 0 = every tick */
    int live;                           /* subscribe "live": true (v1.1, admin): the live board through a freeze */
};

struct rc_field_value {
    char name[RC_FIELD_NAME_MAX + 1];
    int64_t value;
};

struct rc_request {
    enum rc_op op;
    char *id_json;                      /* owned: the "id" as JSON text, or NULL */
    char board[RC_BOARD_MAX + 1];
    char member[RC_MEMBER_MAX + 1];
    char req[RC_REQ_MAX + 1];           /* "" when absent */
    char period[RC_PERIOD_SEL_MAX + 1]; /* "" when absent (means current) */
    char sub[RC_SUB_MAX + 1];           /* unsubscribe */
    int64_t value;                      /* incr: delta; set/best: value */
    unsigned nfields;                   /* submit */
    struct rc_field_value fields[RC_MAX_FIELDS];
    struct rc_view view;                /* subscribe */
    int block;                          /* remove: also block the member from writing */
    int has_since;                      /* subscribe: since.seq given */
    int64_t since_seq;
    char *token;                        /* auth: owned (rc_request_free), or NULL */
    int has_since_epoch;                /* subscribe: since.epoch given (v1.1) */
    char since_epoch[RC_EPOCH_MAX + 1];
    int has_since_cursor;               /* subscribe: since.cursor given (a sharded feed, docs/sharded.md) */
    char since_cursor[RC_SHARD_CURSOR_MAX];
    int64_t steps;                      /* reveal: 1.., or RC_STEPS_ALL */
};

/* Decodes one client message text[0..len). On success fills *out and returns
 * 0. On failure returns the error code, fills err, and still sets out->id_json
 * when the message carried a usable "id" so the error reply can echo it. The
 * caller always calls rc_request_free(out). */
int rc_request_decode(const char *text, size_t len, struct rc_request *out, struct rc_error *err);

/* Decodes a REST write body (POST /api/v1/boards/{board}/scores): the same
 * fields as the WebSocket write ops with "op" one of incr|set|best|submit. */
int rc_request_decode_write_body(const char *board, const char *text, size_t len,
                                 struct rc_request *out, struct rc_error *err);

/* Decodes a REST admin body for op RC_OP_REVERSE, RC_OP_RESET, RC_OP_FREEZE
 * or RC_OP_REVEAL on board (POST /api/v1/boards/{board}/reverse|reset|
 * freeze|reveal): {"req","period"} ({"steps","period"} for reveal); len 0
 * means {}. Fills out (board, op, req, period) and returns 0, or the error code
 * with err filled. Nothing to free (out->id_json stays NULL). */
int rc_request_decode_admin_body(enum rc_op op, const char *board, const char *text, size_t len,
                                 struct rc_request *out, struct rc_error *err);

void rc_request_free(struct rc_request *r);

/* "incr" -> RC_OP_INCR etc; RC_E_BAD_REQUEST when unknown (or NULL). */
int rc_op_parse(const char *name);
const char *rc_op_name(enum rc_op op);

/* ---- server -> client ------------------------------------------------- */

#define RC_NUMBER_TEXT_MAX 32 /* "-1.2345678901234567e-308" and then some */

/* Writes finite d as JSON number text into buf[size]: an exact integer when d
 * is a safe integer, else the shortest %.15g..%.17g form that reads back as
 * exactly d (so a client that matches replies by a fractional id gets the
 * very same number back). */
void rc_number_text(double d, char *buf, size_t size);

struct rc_kv {
    const char *key;   /* borrowed */
    const char *value; /* borrowed */
};

/* One row of a snapshot or delta. All pointers borrowed. */
struct rc_out_row {
    int64_t rank;                         /* 1-based */
    const char *member;
    double score;                         /* real points (see rc_layout.h) */
    const struct rc_field_value *fields;  /* multi-field boards, else NULL */
    unsigned nfields;
    const struct rc_kv *profile;          /* profile hash ("name", ...), may be NULL */
    unsigned nprofile;
    int64_t place;                        /* shared places: competition rank; 0 leaves place/tied out */
    int tied;                             /* with place: shares it ("tied": true) */
};

/* Every encoder returns a malloc'd NUL-terminated JSON text the caller frees,
 * or NULL on allocation failure. id_json is the echoed id (raw JSON) or NULL.
 * A score that is an integer within +-(2^53-1) is printed as an integer.
 * rc_encode_snapshot leaves "sub" out when sub is NULL (REST reads). */
char *rc_encode_snapshot(const char *id_json, const char *sub, const char *board, const char *period,
                         int64_t seq, int64_t total, const struct rc_out_row *rows, size_t nrows,
                         int reset);
/* The snapshot with "epoch" (the board's epoch, "" while it has no history;
 * NULL leaves the field out, as rc_encode_snapshot). */
char *rc_encode_snapshot_epoch(const char *id_json, const char *sub, const char *board, const char *period,
                               int64_t seq, int64_t total, const struct rc_out_row *rows, size_t nrows,
                               int reset, const char *epoch);
/* Takes json (a delta or event text, freed here) and returns it with
 * "epoch" added: the one message that tells a viewer its board's history
 * began (the board had none, and this change started one). NULL on
 * allocation failure or when json is NULL or not an object. */
char *rc_encode_add_epoch(char *json, const char *epoch);
/* The same for "cursor" (a sharded board's feed position, core/rc_shard.h:
 * digits, lower-case hex, ':' and '.' only; anything else: NULL). */
char *rc_encode_add_cursor(char *json, const char *cursor);
char *rc_encode_delta(const char *sub, int64_t seq, int64_t total, const struct rc_out_row *rows,
                      size_t nrows, const char *const *removed, size_t nremoved);
/* The delta with "prev_rank" on every row (PROTOCOL v1.1): prev_ranks[i]
 * for rows[i], 0 printed as null (the member was not on the board).
 * prev_ranks NULL: no "prev_rank" (as rc_encode_delta). */
char *rc_encode_delta_prev(const char *sub, int64_t seq, int64_t total, const struct rc_out_row *rows,
                           const int64_t *prev_ranks, size_t nrows, const char *const *removed, size_t nremoved);
/* prev_rank 0 means the member was not on the board (printed as null). */
char *rc_encode_event(const char *sub, int64_t seq, const char *member, double score, double delta,
                      int64_t rank, int64_t prev_rank, int64_t at_ms,
                      const struct rc_field_value *fields, unsigned nfields);
/* The ack of a write to a write_mode = queued board (PROTOCOL.md v1.1):
 * score, rank and seq null, "queued":true, "entry" the stream id it was
 * queued as (for a duplicate, the first one's), "replicas" as
 * rc_encode_ack_replicas (left out when replicas < 0). */
char *rc_encode_ack_queued(const char *id_json, const char *board, const char *member, const char *entry,
                           int duplicate, int replicas);

char *rc_encode_ack(const char *id_json, const char *board, const char *member, double score,
                    int64_t rank, int64_t seq, int duplicate, const struct rc_field_value *fields,
                    unsigned nfields);

/* The ack with "replicas": how many replicas confirmed the write when the
 * gateway was told to wait for some (ack_replicas); replicas < 0: the field
 * is left out (as rc_encode_ack). */
char *rc_encode_ack_replicas(const char *id_json, const char *board, const char *member, double score,
                             int64_t rank, int64_t seq, int duplicate, const struct rc_field_value *fields,
                             unsigned nfields, int replicas);
/* The ack of a write to a sharded board that applied but whose global rank
 * could not be read after it (docs/sharded.md, "Writes"): the script's
 * score, "rank": null, "seq": null and "rank_unknown": true; replicas as
 * rc_encode_ack_replicas. */
char *rc_encode_ack_unranked(const char *id_json, const char *board, const char *member, double score,
                             int duplicate, const struct rc_field_value *fields, unsigned nfields, int replicas);
/* rank 0 means absent: "rank": null and "score": null. */
char *rc_encode_rank(const char *id_json, const char *member, double score, int64_t rank,
                     int64_t total);
char *rc_encode_error(const char *id_json, int code, const char *message);
/* Admin replies: {"op": op, "id", "board", "member" (if any), "score" and
 * "rank" (if has_score; rank 0 = null), "seq", "req" (if req), "blocked" (if
 * blocked >= 0)}. Events with rank 0 print "rank": null (a member removed by
 * an admin). */
char *rc_encode_admin(const char *id_json, const char *op, const char *board, const char *member, int64_t seq,
                      int has_score, double score, int64_t rank, const char *req, int blocked);
char *rc_encode_pong(const char *id_json);

/* Freeze and reveal (PROTOCOL v1.1). rc_encode_add_freeze takes json (a
 * snapshot or delta, freed here) and, when frozen, returns it with
 * "frozen": freeze_seq, and for a live view "shown" too; not frozen: json
 * as it is. NULL on allocation failure. */
char *rc_encode_add_freeze(char *json, int frozen, int64_t freeze_seq, int64_t shown, int live);
/* {"op":"frozen","id","board","period"?,"seq":S,"frozen":S} */
char *rc_encode_frozen(const char *id_json, const char *board, const char *period, int64_t freeze_seq);
/* {"op":"revealed","id","board","period"?,"seq":R,"pending":P,"frozen":S (while
 * frozen),"skipped":K (when K > 0)} */
char *rc_encode_revealed(const char *id_json, const char *board, const char *period, int64_t shown, int64_t pending,
                         int frozen, int64_t freeze_seq, int64_t skipped);
/* GET .../freeze: {"board","period"?,"frozen":S|null,"shown":R|null,"seq","pending"} */
char *rc_encode_freeze_state(const char *board, const char *period, int frozen, int64_t freeze_seq, int64_t shown,
                             int64_t seq);
/* An error about one subscription, not a request: {"op":"error","code",
 * "message","sub"}; the subscription has stopped (e.g. its token expired). */
char *rc_encode_view_error(const char *sub, int code, const char *message);
/* The answer to auth: {"op":"authed","id","exp"} with exp in seconds. */
char *rc_encode_authed(const char *id_json, int64_t exp_s);
char *rc_encode_unsubscribed(const char *id_json, const char *sub);

/* Viewer counts (docs/protocol-additions.md, "Viewer counts"). Takes json (a
 * snapshot or delta text from these encoders, freed here) and returns it with
 * "viewers": viewers added; NULL on allocation failure, when json is NULL or
 * not an object, or viewers < 0. */
char *rc_encode_add_viewers(char *json, int64_t viewers);
/* GET /api/v1/boards/{b}/stats: {"board","period" (when period is not
 * NULL),"viewers","total","seq"}. */
char *rc_encode_stats(const char *board, const char *period, int64_t viewers, int64_t total, int64_t seq);

#endif
