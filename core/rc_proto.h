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
#include "rc_row.h"

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
    RC_OP_REVEAL,   /* board, steps (N or "all", default 1), optional period */
    /* team boards (PROTOCOL v1.2; write scope, docs/teams.md) */
    RC_OP_TEAM,     /* board, member, team (an id, or null: leave) */
    /* standings at a moment (PROTOCOL v1.2; docs/history.md) */
    RC_OP_GET,      /* board, view (a window), optional period, optional at */
    RC_OP_HISTORY   /* board, member, optional period, from, to, step */
};

/* "at" of get (PROTOCOL v1.2): the moment a read shows. */
enum rc_at_kind {
    RC_AT_NONE = 0, /* the present */
    RC_AT_SEQ,      /* {"seq": S}: right after change S */
    RC_AT_TIME      /* {"time": MS}: right after the last change at or before MS */
};
#define RC_HISTORY_MAX_POINTS 1000

#define RC_STEPS_ALL (-1) /* reveal "steps": "all" */

enum rc_view_kind {
    RC_VIEW_TOP = 0,  /* {"top": N} */
    RC_VIEW_PAGE,     /* {"offset": O, "limit": L} */
    RC_VIEW_AROUND,   /* {"around": M, "radius": R} */
    RC_VIEW_FEED,     /* {"feed": true} */
    RC_VIEW_MEMBERS,  /* {"members": [M1, ...]} (v1.2 member lists, core/rc_members.h) */
    RC_VIEW_TEAM      /* {"team": T_ID} (v1.2 roster: the member list of a team's members) */
};

struct rc_view {
    enum rc_view_kind kind;
    uint32_t offset;                    /* PAGE: ranks offset+1.. ; TOP: 0 */
    uint32_t limit;                     /* TOP: N; PAGE: L */
    char around[RC_MEMBER_MAX + 1];     /* AROUND: the member; TEAM: the team id */
    uint32_t radius;                    /* AROUND: R */
    int places;                         /* v1.1 "places": "shared" (window views): rows carry place/tied */
    uint32_t max_rate;                  /* subscribe "max_rate" (v1.1): messages a second, 0 = every tick */
    int live;                           /* subscribe "live": true (v1.1, admin): the live board through a freeze */
    /* MEMBERS: nmembers distinct names, each NUL-terminated, back to back
     * in the order asked (core/rc_members.h), members_len bytes in all.
     * Owned by the rc_request that decoded it (rc_proto_decode_free) or by the
     * fan-out's view that copied it; every other holder borrows it. */
    char *members;
    uint32_t nmembers;
    uint32_t members_len;
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
    char *token;                        /* auth: owned (rc_proto_decode_free), or NULL */
    int has_since_epoch;                /* subscribe: since.epoch given (v1.1) */
    char since_epoch[RC_EPOCH_MAX + 1];
    int has_since_cursor;               /* subscribe: since.cursor given (a sharded feed, docs/sharded.md) */
    char since_cursor[RC_SHARD_CURSOR_MAX];
    int64_t steps;                      /* reveal: 1.., or RC_STEPS_ALL */
    char team[RC_MEMBER_MAX + 1];       /* team: the team id, "" = null (leave) */
    enum rc_at_kind at_kind;            /* get: the moment (RC_AT_NONE: the present) */
    int64_t at;                         /* get: the seq or the time (ms) */
    int64_t from_ms, to_ms, step_ms;    /* history: the points from, from + step, .. <= to */
    int has_replay;                     /* subscribe "replay" (PROTOCOL v1.2; docs/history.md) */
    enum rc_at_kind replay_kind;        /* replay.from: RC_AT_SEQ or RC_AT_TIME */
    int64_t replay_from;
    double replay_speed;                /* 0.25..64 */
};

/* Decodes one client message text[0..len). On success fills *out and returns
 * 0. On failure returns the error code, fills err, and still sets out->id_json
 * when the message carried a usable "id" so the error reply can echo it. The
 * caller always calls rc_proto_decode_free(out). */
int rc_proto_decode(const char *text, size_t len, struct rc_request *out, struct rc_error *err);

/* Decodes a REST write body (POST /api/v1/boards/{board}/scores): the same
 * fields as the WebSocket write ops with "op" one of incr|set|best|submit. */
int rc_proto_decode_write_body(const char *board, const char *text, size_t len,
                                 struct rc_request *out, struct rc_error *err);

/* Decodes a REST team body (PUT /api/v1/boards/{board}/members/{member}/team):
 * {"team": ID|null} into an RC_OP_TEAM request. Returns 0 or the error code
 * with err filled. */
int rc_proto_decode_team_body(const char *board, const char *member, const char *text, size_t len,
                                struct rc_request *out, struct rc_error *err);

/* Decodes a REST admin body for op RC_OP_REVERSE, RC_OP_RESET, RC_OP_FREEZE
 * or RC_OP_REVEAL on board (POST /api/v1/boards/{board}/reverse|reset|
 * freeze|reveal): {"req","period"} ({"steps","period"} for reveal); len 0
 * means {}. Fills out (board, op, req, period) and returns 0, or the error code
 * with err filled. Nothing to free (out->id_json stays NULL). */
int rc_proto_decode_admin_body(enum rc_op op, const char *board, const char *text, size_t len,
                                 struct rc_request *out, struct rc_error *err);

void rc_proto_decode_free(struct rc_request *r);

/* "incr" -> RC_OP_INCR etc; RC_E_BAD_REQUEST when unknown (or NULL). */
int rc_proto_op_parse(const char *name);
const char *rc_proto_op_name(enum rc_op op);

/* ---- server -> client ------------------------------------------------- */

#define RC_NUMBER_TEXT_MAX 32 /* "-1.2345678901234567e-308" and then some */

/* Writes finite d as JSON number text into buf[size]: an exact integer when d
 * is a safe integer, else the shortest %.15g..%.17g form that reads back as
 * exactly d (so a client that matches replies by a fractional id gets the
 * very same number back). */
void rc_proto_encode_number_text(double d, char *buf, size_t size);

/* Writes v in decimal (what "%" PRId64 prints) into buf, which must hold
 * RC_NUMBER_TEXT_MAX bytes, NUL-terminated; returns its length. Without
 * printf: every rank, seq and total of every delta goes through it (issue
 * 26, snprintf was about a tenth of the gateway's CPU at 2,000 lists). */
size_t rc_proto_encode_int_text(int64_t v, char *buf);

struct rc_kv {
    const char *key;   /* borrowed */
    const char *value; /* borrowed */
};

/* The rows a snapshot or delta prints, read in place from a window's rows
 * (core/rc_row.h: the one row type reads, the mirror and the delta rule
 * share), so nothing is copied into an encoder's own row type. Everything
 * borrowed. Each row prints {"rank"[,"prev_rank"],"member","score"
 * [,"place"[,"tied"]][,"fields"], profile...}. */
struct rc_rows_out {
    const struct rc_row *rows;
    size_t n;                       /* rows printed */
    const size_t *pick;             /* the k-th printed row is rows[pick[k]] (ascending); NULL: rows[k] */
    int64_t first_rank;             /* rank of rows[0] */
    const struct rc_layout *layout; /* names a multi-field row's values; NULL prints no "fields" */
    const int64_t *prev_rank;       /* delta (v1.1): the k-th printed row's, 0 printed null; NULL: left out */
};

/* Fields of PROTOCOL v1.1 and docs/protocol-additions.md that several
 * messages may carry; zeroed, each is left out. Which message takes which
 * is said at its encoder. */
struct rc_msg_more {
    const char *epoch;    /* "epoch": the board's history (must pass rc_epoch_valid, "" allowed on a snapshot) */
    int frozen;           /* "frozen": freeze_seq while frozen ... */
    int64_t freeze_seq;
    int live;             /* ... and for a live view "shown" */
    int64_t shown;
    int has_viewers;      /* "viewers" (docs/protocol-additions.md, "Viewer counts"; never negative) */
    int64_t viewers;
    const char *cursor;   /* "cursor": a sharded feed's position (core/rc_shard.h: digits, a-f, ':' '.') */
};

/* Every encoder returns a malloc'd NUL-terminated JSON text the caller frees,
 * or NULL on allocation failure or a field that breaks its rule above (a
 * negative viewers count, an epoch or cursor that would need escaping).
 * id_json is the echoed id (raw JSON) or NULL (left out). A score that is an
 * integer within +-(2^53-1) is printed as an integer. */

/* {"op":"snapshot","id"?,"sub"?,"board","period"?,"seq","total","epoch"?,
 * "reset"?,"rows",("viewers","frozen","shown","cursor" from more)}. sub NULL:
 * a REST read, no subscription. more.epoch is printed in its place after
 * total, "" included (the board has no history yet). */
struct rc_snapshot_msg {
    const char *id_json;
    const char *sub;
    const char *board;
    const char *period;   /* NULL: left out */
    int64_t seq;
    int64_t total;
    int reset;            /* "reset": true */
    struct rc_rows_out rows;
    struct rc_msg_more more;
    /* a member list's (v1.2): "absent" after "rows", the listed names not
     * on the board in the order asked (printed whenever has_absent) */
    int has_absent;
    const char *const *absent;
    size_t nabsent;
    int has_at;           /* a get at a moment (docs/history.md): "at_seq", "at_time" (null when has_at_time 0) */
    int64_t at_seq;
    int has_at_time;
    int64_t at_time;
    int replay;           /* "replay": true (a replay's snapshots, docs/history.md) */
};
char *rc_proto_rows_snapshot(const struct rc_snapshot_msg *m);

/* {"op":"delta","sub","seq","total","rows","removed",("frozen","shown",
 * "epoch","viewers" from more)}. removed names removed_from[removed[k]]
 * (the rows of the window the viewers held). An "epoch" tells viewers the
 * board's history began with this change (it had none). */
struct rc_delta_msg {
    const char *sub;
    int64_t seq;
    int64_t total;
    struct rc_rows_out rows;
    const struct rc_row *removed_from;
    const size_t *removed;
    size_t nremoved;
    struct rc_msg_more more;
};
char *rc_proto_rows_delta(const struct rc_delta_msg *m);

/* {"op":"event","sub","seq","member","score","delta","rank","prev_rank",
 * "at","fields"?,("epoch","cursor" from more)}: rank 0 and prev_rank 0 print
 * null (the member left; was not on the board). */
struct rc_event_msg {
    const char *sub;
    int64_t seq;
    const char *member;
    double score;
    double delta;
    int64_t rank;
    int64_t prev_rank;
    int64_t at_ms;
    const struct rc_field_value *fields;
    unsigned nfields;
    struct rc_msg_more more;
};
char *rc_proto_encode_event(const struct rc_event_msg *m);

/* The ack of a write: {"op":"ack","id"?,"board","member","score","rank",
 * "seq",...,"duplicate","fields"?,"replicas"?}.
 * - unranked: a sharded board's write whose global rank could not be read
 *   after it (docs/sharded.md, "Writes"): "rank": null, "seq": null,
 *   "rank_unknown": true.
 * - queued (a write_mode = queued board, PROTOCOL.md v1.1): score, rank and
 *   seq null, "queued": true, "entry" the stream id it was queued as (a
 *   duplicate: the first one's).
 * - replicas >= 0: how many replicas confirmed it (ack_replicas); < 0 leaves
 *   it out. */
struct rc_ack_msg {
    const char *id_json;
    const char *board;
    const char *member;
    double score;
    int64_t rank;
    int64_t seq;
    int duplicate;
    const struct rc_field_value *fields;
    unsigned nfields;
    int replicas;
    int unranked;
    const char *queued_entry; /* non-NULL: the queued ack */
    /* a board with teams (docs/teams.md): "team", "team_score", "team_rank"
     * (null when the member has no team, or its team is not on T) */
    int teams_board;
    const char *team;         /* NULL or "": no team */
    int has_team_score;
    double team_score;
    int64_t team_rank;        /* 0: none */
};
char *rc_proto_encode_ack(const struct rc_ack_msg *m);

/* {"op":"teamed","id"?,"board","member","team":ID|null,"seq","team_seq"}
 * (docs/teams.md): the answer to op team. */
struct rc_teamed_msg {
    const char *id_json;
    const char *board;
    const char *member;
    const char *team;         /* "" = null */
    int64_t seq;              /* the source board's seq */
    int64_t team_seq;         /* the team board's seq after the change */
};
char *rc_proto_encode_teamed(const struct rc_teamed_msg *m);

/* {"op":"rank","id"?,"member","score","rank","total",("frozen" from more)}:
 * rank 0 means absent ("rank": null and "score": null). A frozen board's
 * audience is told its rank is the frozen one. */
struct rc_rank_msg {
    const char *id_json;
    const char *member;
    double score;
    int64_t rank;
    int64_t total;
    struct rc_msg_more more;
};
char *rc_proto_encode_rank(const struct rc_rank_msg *m);
char *rc_proto_encode_error(const char *id_json, int code, const char *message);
/* Admin replies: {"op": op, "id", "board", "member" (if any), "score" and
 * "rank" (if has_score; rank 0 = null), "seq", "req" (if req), "blocked" (if
 * blocked >= 0)}. Events with rank 0 print "rank": null (a member removed by
 * an admin). */
char *rc_proto_encode_admin(const char *id_json, const char *op, const char *board, const char *member, int64_t seq,
                      int has_score, double score, int64_t rank, const char *req, int blocked);
char *rc_proto_encode_pong(const char *id_json);

/* Freeze and reveal (PROTOCOL v1.1). */
/* {"op":"frozen","id","board","period"?,"seq":S,"frozen":S} */
char *rc_proto_encode_frozen(const char *id_json, const char *board, const char *period, int64_t freeze_seq);
/* {"op":"revealed","id","board","period"?,"seq":R,"pending":P,"frozen":S (while
 * frozen),"skipped":K (when K > 0)} */
char *rc_proto_encode_revealed(const char *id_json, const char *board, const char *period, int64_t shown, int64_t pending,
                         int frozen, int64_t freeze_seq, int64_t skipped);
/* GET .../freeze: {"board","period"?,"frozen":S|null,"shown":R|null,"seq","pending"} */
char *rc_proto_encode_freeze_state(const char *board, const char *period, int frozen, int64_t freeze_seq, int64_t shown,
                             int64_t seq);
/* An error about one subscription, not a request: {"op":"error","code",
 * "message","sub"}; the subscription has stopped (e.g. its token expired). */
char *rc_proto_encode_view_error(const char *sub, int code, const char *message);
/* The answer to auth: {"op":"authed","id","exp"} with exp in seconds. */
char *rc_proto_encode_authed(const char *id_json, int64_t exp_s);
char *rc_proto_encode_unsubscribed(const char *id_json, const char *sub);

/* GET /api/v1/boards/{b}/stats: {"board","period" (when period is not
 * NULL),"viewers","total","seq"}. */
/* History (PROTOCOL v1.2, docs/history.md), core/rc_proto_at.c. */
struct rc_history_point {
    int64_t at;       /* the moment asked (ms) */
    int64_t seq;      /* the seq shown then */
    int present;      /* 0: the member was not on the board: score and rank null */
    double score;
    int64_t rank;
};
/* {"op":"history","id"?,"board","member","period"?,"points":[{"at","seq",
 * "score","rank"},...],"frozen"?} */
char *rc_proto_at_encode_history(const char *id_json, const char *board, const char *member, const char *period,
                                 const struct rc_history_point *pts, size_t n, int64_t frozen);
/* {"op":"live","sub","seq"}: a replay reached the present (docs/history.md). */
char *rc_proto_at_encode_live(const char *sub, int64_t seq);
/* {"op":"live","sub","seq","reset":true}: a replay ended because the board
 * went back below a moment it showed; seq is the board's present
 * (docs/history.md, "When the board goes back"). */
char *rc_proto_at_encode_live_reset(const char *sub, int64_t seq);
#define RC_REPLAY_SPEED_MIN 0.25
#define RC_REPLAY_SPEED_MAX 64.0
/* The rule of history's points, on both transports: step >= 1, from <= to,
 * at most RC_HISTORY_MAX_POINTS points. Returns 0 or RC_E_BAD_REQUEST. */
int rc_proto_at_check_history(const struct rc_request *r, struct rc_error *err);
/* {"op":"error","id"?,"code":"out_of_range","message","oldest_seq"}: a moment
 * the board's history no longer holds. */
char *rc_proto_at_encode_gone(const char *id_json, const char *message, int64_t oldest_seq);
/* As rc_proto_at_encode_gone, with "oldest_time" (the earliest time a read
 * by time can show) when has_time. */
char *rc_proto_at_encode_gone_time(const char *id_json, const char *message, int64_t oldest_seq, int has_time,
                                   int64_t oldest_time);

char *rc_proto_encode_stats(const char *board, const char *period, int64_t viewers, int64_t total, int64_t seq);

#endif
