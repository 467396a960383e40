/* gw_conn.h - one WebSocket connection: message reassembly, the bounded send
 * queue and its subscriptions.
 *
 * The struct is separate from libwebsockets' per-session data and refcounted,
 * because Redis replies may arrive after the socket closed: each pending
 * operation holds a reference, and a closed connection (wsi == NULL) simply
 * drops what arrives for it.
 *
 * The queue has three classes of entries. Replies (ack, error, rank, pong)
 * are always kept, up to a hard cap that closes an abusive connection. View
 * traffic (deltas, events, pushed snapshots) is droppable: when it would take
 * the queue past queue_bytes the reader is a laggard: its queued view traffic
 * is dropped, and as the queue drains each subscription gets one fresh
 * snapshot (one at a time), before which its deltas are held back. Owed
 * replies (the snapshot answering a subscribe, a feed's replay) are big and
 * can be produced again: they are taken only while the queue is under
 * queue_bytes, else refused, and the fan-out sends them (its id echoed) once
 * the queue drains; once queued they are kept like replies.
 */
#ifndef GW_CONN_H
#define GW_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "net/gw_msg.h"
#include "ops/gw_ops.h"
#include "rc_auth.h"

struct lws;
struct gw_app;
struct gw_sub;

enum gw_qclass {
    GW_Q_REPLY = 0, /* kept; capped at a multiple of queue_bytes (then close 1008) */
    GW_Q_VIEW = 1,  /* droppable view traffic */
    GW_Q_OWED = 2,  /* an owed reply that was taken: kept */
};

struct gw_qent {
    struct gw_msg *msg;
    enum gw_qclass cls;
};

struct gw_conn {
    unsigned refs;
    struct gw_app *app;
    struct lws *wsi;               /* NULL once closed */
    struct gw_conn *next, *prev;   /* app->conns */
    uint64_t id;
    char peer[64];
    /* reassembly of a fragmented message */
    char *rx;
    size_t rx_len, rx_cap;
    /* send queue (ring) */
    struct gw_qent *q;
    size_t q_head, q_count, q_cap;
    size_t q_view_bytes;           /* droppable bytes queued */
    size_t q_reply_bytes;          /* reply bytes queued */
    size_t q_owed_bytes;           /* owed reply bytes queued */
    int resync;                    /* overflowed: snapshots owed as the queue drains */
    int close_code;                /* nonzero: close with this code once flushed */
    int close_sent;                /* the close frame is out: write nothing more */
    unsigned binary_frames;        /* binary frames received (abuse counter) */
    /* who: the key presented at the handshake, and this connection's writes */
    struct gw_caller who;
    struct rc_bucket bucket;
    struct rc_bucket read_bucket;  /* reads on this connection (conn_read_rate) */
    unsigned pending;              /* requests waiting for an answer (max_pending) */
    /* subscriptions */
    struct gw_sub *subs;
    unsigned nsubs;
    unsigned next_sub;
};

struct gw_conn *gw_conn_new(struct gw_app *app, struct lws *wsi);
void gw_conn_ref(struct gw_conn *c);
void gw_conn_unref(struct gw_conn *c);

/* Queues m (takes a new reference; the caller keeps its own) and asks lws for
 * a writeable callback. Droppable view traffic may be refused (laggard). */
void gw_conn_send(struct gw_conn *c, struct gw_msg *m, int droppable);

/* Queues an owed reply m (takes a new reference) when the queue is empty or
 * stays within queue_bytes with it, and returns 0 (also when the connection
 * is closing: nothing more goes out). Else queues nothing, marks c to resync
 * and returns -1: the caller keeps it owed and sends it again from
 * gw_fanout_resync_conn once the queue drains. */
int gw_conn_send_owed(struct gw_conn *c, struct gw_msg *m);

/* Queues a reply encoded by an rc_encode_* function (takes ownership of json;
 * NULL is ignored). */
void gw_conn_reply(struct gw_conn *c, char *json);

/* Asks for the connection to close with code once what is queued is sent. */
void gw_conn_close(struct gw_conn *c, int code);

/* Writes what lws lets us write now. Returns -1 when the connection must be
 * closed (lws then closes it), else 0. Called from the writeable callback. */
int gw_conn_on_writeable(struct gw_conn *c);

/* The connection closed: drops the queue and detaches from the wsi. */
void gw_conn_on_closed(struct gw_conn *c);

#endif
