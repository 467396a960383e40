/* rc_queue.h - queued writes (write_mode = queued, docs/queued.md): the call
 * of lua/enqueue.lua built from a write request, the stream entry it adds
 * read back into a request for lua/write.lua, and the script's answer. Pure:
 * the caller sends the commands and hands over the reply values.
 *
 * Keys, all in the board's hash tag (one slot on a cluster):
 *   rc:{B|}:in         the stream of unapplied writes (an entry leaves it
 *                      once applied: XACK and XDEL, lua/queue_ack.lua)
 *   rc:{B|}:req:REQ    a client's req: its one idempotency record, made at
 *                      enqueue ("#ENTRY-ID\nMEMBER") and turned into the
 *                      applied write's by lua/write.lua (its header comment)
 *   rc:{B|}:qlock      the consumer lock (one applying gateway at a time)
 * The consumer group on the stream is RC_QUEUE_GROUP.
 *
 * An entry holds the request, not the script call: op, m (member), v
 * (incr/set/best value), at (gateway time at enqueue, ms: the tie-break
 * time), req (the client's, when given) and f:NAME per submitted field. The
 * consumer rebuilds the call from the board's configuration of the moment.
 */
#ifndef RC_QUEUE_H
#define RC_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "rc_keys.h"
#include "rc_layout.h"
#include "rc_proto.h"
#include "rc_write_args.h"

#define RC_QUEUE_GROUP "rankcast"
#define RC_QUEUE_ID_MAX 48          /* "MS-SEQ" stream ids: 20 + 1 + 20 digits and a NUL */
#define RC_QUEUE_NKEYS 3
#define RC_QUEUE_ARGV_MAX (6 + 2 * (5 + RC_MAX_FIELDS))

struct rc_queue_enqueue {
    unsigned nkeys;                 /* RC_QUEUE_NKEYS: stream, req record, blocklist */
    unsigned nargv;
    char keys[RC_QUEUE_NKEYS][RC_KEY_MAX];
    const char *argv[RC_QUEUE_ARGV_MAX]; /* point into num/names below or the request */
    char num[4][RC_WRITE_ARG_LEN];  /* queue_max, window, v, at */
    char fname[RC_MAX_FIELDS][RC_FIELD_NAME_MAX + 3]; /* "f:NAME" */
    char fval[RC_MAX_FIELDS][RC_WRITE_ARG_LEN];
};

/* The key `suffix` ("in" or "qlock") of board b into out[cap]. Returns 0 or
 * RC_E_INTERNAL (does not fit). */
int rc_queue_key(char *out, size_t cap, const char *board, const char *suffix);

/* Builds the lua/enqueue.lua call for request r (incr/set/best/submit) on
 * queued board b at now_ms. Validates what rc_write_args_build validates
 * (the op is allowed, fields exist, values fit the layout) by building that
 * call too, so a queued write is refused at once for what a direct one
 * would be. Borrows b and r (out points into r). Returns 0, or
 * RC_E_BAD_REQUEST / RC_E_OUT_OF_RANGE with err filled. */
int rc_queue_enqueue_build(const struct rc_board *b, const struct rc_request *r, int64_t now_ms,
                           struct rc_queue_enqueue *out, struct rc_error *err);

/* Turns a built enqueue into one that makes no new idempotency record
 * (the writer is at its cap, as rc_write_args_no_new_record): a req with a
 * record is answered duplicate, anything else RC_QUEUE_NO_RECORD with
 * nothing queued (lua/enqueue.lua). */
void rc_queue_enqueue_no_new_record(struct rc_queue_enqueue *a);

/* lua/enqueue.lua's answer. */
enum rc_queue_status {
    RC_QUEUE_OK = 0,        /* queued as entry `entry` */
    RC_QUEUE_DUPLICATE,     /* the req was queued before, as `entry` for `member` */
    RC_QUEUE_FULL,          /* queue_max unapplied entries: nothing queued */
    RC_QUEUE_FORBIDDEN,     /* the member is blocked on the board: nothing queued */
    RC_QUEUE_NO_RECORD      /* no new record allowed and the req has none: nothing queued */
};

struct rc_queue_result {
    enum rc_queue_status status;
    char entry[RC_QUEUE_ID_MAX];
    char member[RC_MEMBER_MAX + 1];
    int64_t length;         /* ok/full: unapplied entries now */
};

/* Decodes the reply array items[0..n). Returns 0 or RC_E_INTERNAL (not the
 * script's shape). */
int rc_queue_result_parse(const struct rc_reply_item *items, size_t n, struct rc_queue_result *res);

/* Reads one stream entry back into a write request for board b: id the
 * entry's id, f/v its field names and values (nf pairs, borrowed,
 * NUL-terminated). out->req is the client's req, or "q ID" when the client
 * gave none ("q " and the id: a space, which no client req holds), so every entry is applied at most once however often it is
 * delivered. *at_ms is the enqueue time. Returns 0, or RC_E_BAD_REQUEST
 * when the entry is not one rc_queue_enqueue_build makes (the consumer
 * drops it and says so). */
int rc_queue_entry_parse(const struct rc_board *b, const char *id, const char *const *f, const char *const *v,
                         size_t nf, struct rc_request *out, int64_t *at_ms);

/* The milliseconds part of stream id "MS-SEQ". Returns 0 or RC_E_BAD_REQUEST. */
int rc_queue_id_ms(const char *id, int64_t *ms);

#endif
