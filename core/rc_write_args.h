/* rc_write_args.h - turns a decoded write request into the KEYS and ARGV of
 * lua/write.lua (header comment there), and the script's reply back into a
 * result. Pure: the caller sends the command and hands over the reply values.
 *
 * Everything that can be checked without the board's current state is checked
 * here, before Redis is asked: the op is allowed on the board, fields exist,
 * set/best values and field values fit the layout, the tie-break slot is inside
 * its horizon. What depends on the old score (incr's result) the script checks.
 *
 * Hot boards (decay = buckets) take only incr: the write goes to the bucket of
 * now_ms (core/rc_decay.h), passed as a 7th key, with the bucket's lifetime in
 * the last ARGV. Scaled boards (decay = scale) are written like any other.
 */
#ifndef RC_WRITE_ARGS_H
#define RC_WRITE_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "rc_epoch.h"
#include "rc_keys.h"
#include "rc_layout.h"
#include "rc_period.h"
#include "rc_proto.h"

#define RC_WRITE_NKEYS 17 /* z seq log req f ch, the bucket (hot boards), the blocklist, the epoch,
                             the arrival counters (tiebreak = arrival); a board with teams adds
                             the membership hash, its team board's z seq log ch epoch and the
                             membership's log */
#define RC_WRITE_NKEYS_PLAIN 10
#define RC_WRITE_ARGV_MAX (20 + 4 * RC_MAX_FIELDS)
#define RC_WRITE_ARG_LEN 40 /* any one number or word of ARGV */

struct rc_write_args {
    unsigned nkeys;                          /* RC_WRITE_NKEYS_PLAIN, or RC_WRITE_NKEYS with teams */
    unsigned nargv;
    /* Periodic boards: the board's blocklist for every period, rc:{B|}:blocked
     * (another slot than the write's keys), which seeds the period's own
     * blocklist KEYS[8] the first time the period is written (the script
     * answers "unseeded" until then; see lua/write.lua). "" otherwise. */
    char seed_from[RC_KEY_MAX];
    char keys[RC_WRITE_NKEYS][RC_KEY_MAX];
    const char *argv[RC_WRITE_ARGV_MAX];     /* point into the buffers below or the request */
    /* The epoch id the script gives the board if this write starts its
     * history (lua/write.lua, "Epochs"); the builder leaves it "" and the
     * caller fills it with a random id (rc_epoch_hex) before sending. */
    char epoch[RC_EPOCH_MAX + 1];
    unsigned no_new_record_at;               /* argv index of the "no new record" flag */
    char num[RC_WRITE_ARGV_MAX][RC_WRITE_ARG_LEN];
};

/* Builds the script call for request r (op incr/set/best/submit) on board b
 * in period p (p->id "" for all-time boards) at now_ms; sharded: 1 when
 * Redis is a cluster (the script publishes with SPUBLISH), 0 on one server
 * (PUBLISH). Borrows b, r and p: out->argv points into r, which must outlive
 * out. Returns 0, or RC_E_BAD_REQUEST / RC_E_OUT_OF_RANGE with err filled. */
int rc_write_args_build(const struct rc_board *b, const struct rc_request *r, const struct rc_period *p,
                        int64_t now_ms, int sharded, struct rc_write_args *out, struct rc_error *err);

/* As rc_write_args_build, with the keys of the board stored as `store`
 * (borrowed): a sharded board's write goes to its member's shard "B#i"
 * (core/rc_shard.h) while checks and messages still name r->board.
 * rc_write_args_build is this with store = r->board. */
int rc_write_args_build_as(const struct rc_board *b, const struct rc_request *r, const struct rc_period *p,
                           int64_t now_ms, int sharded, const char *store, struct rc_write_args *out,
                           struct rc_error *err);

/* Turns a built call into one that makes no new idempotency record: the
 * writer is at its cap ([limits] idempotency_max_per_key, core/rc_idem.h),
 * yet a retry of a req it made before must still be answered duplicate
 * (only Redis knows whether the req has its record). The script answers a
 * req without a record "no_record" (res->no_record) and writes nothing
 * (lua/write.lua, "Idempotency records"). */
void rc_write_args_no_new_record(struct rc_write_args *a);

/* The script's answer, decoded. */
struct rc_write_result {
    int status;          /* 0, RC_E_OUT_OF_RANGE, RC_E_BAD_REQUEST or RC_E_FORBIDDEN (blocked) */
    int duplicate;       /* the req was seen: nothing changed */
    int changed;         /* the board changed (seq grew) */
    char member[RC_MEMBER_MAX + 1];
    int has_score;       /* 0 when the member is not on the board */
    double composite;    /* stored score */
    double score;        /* real points (multi-field: the first field) */
    int64_t fields[RC_MAX_FIELDS];
    unsigned nfields;
    int64_t rank;        /* 0 when absent */
    int64_t old_rank;
    int64_t seq;
    int replicas;        /* replicas that confirmed the write (ack_replicas), -1 when not asked */
    int rank_unknown;    /* sharded boards: the write applied but its global rank could not be
                            read after it (rank and seq are then not the board's; the ack says so) */
    int unseeded;        /* the period's blocklist is not seeded yet: nothing was written (status
                            RC_E_UNAVAILABLE); send again with the seed (lua/write.lua) */
    int team_unseeded;   /* the period's team membership is not seeded yet: nothing was written
                            (status RC_E_UNAVAILABLE; rc_team_args.h, "a period's membership") */
    int no_record;       /* a call without new records (rc_write_args_no_new_record) for a req
                            that has none: nothing was written (status RC_E_RATE_LIMITED) */
    char message[RC_ERROR_MSG_MAX];
    /* boards with teams (docs/teams.md): the member's team after the write */
    int teams_board;     /* the board has teams: the ack carries the three team fields */
    int has_team;        /* ... and the member is on a team */
    char team[RC_MEMBER_MAX + 1];
    int has_team_score;  /* the team is on the team board */
    double team_score;
    int64_t team_rank;
    /* op team: the reply "teamed" */
    int teamed;
    int64_t team_seq;    /* the team board's seq after the change */
};

/* One element of the script's reply array: a string or an integer. */
struct rc_reply_item {
    int is_int;
    long long integer;
    const char *str;     /* borrowed; NUL-terminated */
};

/* Decodes the reply array items[0..n) for board b. Returns 0 (then look at
 * res->status) or RC_E_INTERNAL when the reply is not of the script's shape. */
int rc_write_args_result_parse(const struct rc_board *b, const struct rc_reply_item *items, size_t n,
                          struct rc_write_result *res);

#endif
