/* rc_admin_args.h - turns an admin request (remove, unblock, reverse, reset)
 * into the KEYS and ARGV of lua/admin.lua (header comment there), and the
 * script's reply back into a result. Pure: ops/gw_admin.c sends the command
 * and hands over the reply values, as with core/rc_write_args.h. */
#ifndef RC_ADMIN_ARGS_H
#define RC_ADMIN_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "rc_conf.h"
#include "rc_epoch.h"
#include "rc_keys.h"
#include "rc_period.h"
#include "rc_proto.h"
#include "rc_write_args.h" /* struct rc_reply_item */

#define RC_ADMIN_NKEYS 11 /* ... the epoch, the arrival counters, the freeze state and copy */
#define RC_ADMIN_NARGV 13

struct rc_admin_args {
    const char *words[RC_ADMIN_NKEYS + RC_ADMIN_NARGV]; /* KEYS then ARGV; point below or into r */
    size_t lens[RC_ADMIN_NKEYS + RC_ADMIN_NARGV];
    char keys[RC_ADMIN_NKEYS][RC_KEY_MAX];
    char num[7][32];
    /* The epoch id a reset gives the board (lua/admin.lua, ARGV[13]): ""
     * from the builder; the caller fills it with a random id (rc_epoch_hex)
     * and sets lens[RC_ADMIN_NKEYS + 12] before sending. */
    char epoch[RC_EPOCH_MAX + 1];
};

/* The action word of op in ARGV[1] and the audit log. */
const char *rc_admin_args_action(enum rc_op op);

/* Builds the script call for r (op remove/unblock/reverse/reset) on board b
 * in period p at now_ms, with the reversal's tie-break slot and the period's
 * remaining lifetime ttl_ms; sharded: 1 on a cluster (SPUBLISH), 0 on one
 * server (PUBLISH). Borrows b, r and p: out->words point into r, which must
 * outlive out. Returns 0 or RC_E_INTERNAL (a key too long). */
int rc_admin_args_build(const struct rc_board *b, const struct rc_request *r, const struct rc_period *p,
                        int64_t now_ms, uint64_t slot, int64_t ttl_ms, int sharded, struct rc_admin_args *out,
                        struct rc_error *err);

/* As rc_admin_args_build, on the keys of the board stored as `store`
 * (borrowed): a sharded board's shard "B#i" (core/rc_shard.h).
 * rc_admin_args_build is this with store = r->board. */
int rc_admin_args_build_as(const struct rc_board *b, const struct rc_request *r, const struct rc_period *p,
                           int64_t now_ms, uint64_t slot, int64_t ttl_ms, int sharded, const char *store,
                           struct rc_admin_args *out, struct rc_error *err);

/* The script's answer, decoded. Strings are borrowed from the reply. */
struct rc_admin_result {
    int status;          /* 0 (ok or duplicate), RC_E_OUT_OF_RANGE or RC_E_BAD_REQUEST */
    int duplicate;       /* "duplicate": a reversal already done, not audited again */
    int unknown_req;     /* reverse: no write with that req here (status RC_E_BAD_REQUEST); on a
                            sharded board the req may be on another shard */
    int64_t seq;
    const char *member;  /* "" when none */
    double score;        /* reverse: the score after it */
    int64_t rank;        /* reverse: the rank after it, 0 when absent */
    const char *detail;  /* the script's message when status != 0, else "" */
};

/* Decodes the reply items[0..n). Returns 0 (then look at res->status) or
 * RC_E_INTERNAL when the reply is not of the script's shape. */
int rc_admin_args_result_parse(const struct rc_reply_item *items, size_t n, struct rc_admin_result *res);

#endif
