/* gw_conn.h - one WebSocket connection: message reassembly, the bounded send
 * queue and its subscriptions.
 *
 * The struct is separate from libwebsockets' per-session data and refcounted,
 * because Redis replies may arrive after the socket closed: each pending
 * operation holds a reference, and a closed connection (sock == NULL) simply
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
 *
 * Writing (docs/gateway.md, "The send path"). A message is written at once
 * when nothing must go before it and the transport holds no partial write
 * (lws keeps the rest of a short write and says so: no poll per message);
 * else it waits in the queue, in order, for the writeable callback. With a
 * flush list (ctx->flush) view traffic always waits in the queue and is
 * written by gw_conn_flush_run, a slice of connections per loop turn, so
 * that acks are written between slices. gw_conn_reply_first puts an
 * operation's answer ahead of the queued view traffic (not of other
 * replies).
 *
 * Gathering. When more than one message waits in a connection's queue, the
 * frames at its head (headers built here, payloads copied into the loop's
 * one gather buffer, up to the transport's gather_max bytes) go out in one
 * write (GW_TX_FRAMES): several deliveries for one system call. The
 * transport sends the bytes in order and keeps what the socket did not take
 * (a partial write), finishing it before anything else is written, so a
 * frame is never split from its rest by another or reordered. A message too
 * big for the buffer goes alone, from its own buffer; a connection with
 * permessage-deflate writes one frame per write, as before.
 *
 * Layers. The queue knows neither libwebsockets nor the fan-out: the socket
 * side is a transport table (serve/gw_ws.c plugs in lws; tests plug in a
 * fake), and what the fan-out must hear (lagged, drained) goes up through a
 * hook table. Both are in a gw_conn_ctx set once at start and shared by
 * every connection.
 *
 * Compression. A connection that negotiated permessage-deflate (deflate = 1)
 * sends each queued message through gw_msg_compressed at write time: the
 * message is compressed once, by the first such connection that writes it,
 * and the same compressed bytes go to every other one (a delta is one gw_msg
 * per view per tick, so one compression per view per tick). Messages under
 * GW_DEFLATE_MIN bytes, and those compression would not shorten, go out in
 * DEFLATE stored blocks (RSV1 set, 6 bytes more, no compression work; see
 * net/gw_msg.h for why not plain). Queue limits count the uncompressed
 * length.
 */
#ifndef GW_CONN_H
#define GW_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "net/gw_caller.h"
#include "net/gw_msg.h"
#include "rc_auth.h"

struct gw_conn;
struct gw_sub;
struct gw_metrics;

/* Close codes the queue itself uses (RFC 6455). */
#define GW_CLOSE_GOING_AWAY 1001
#define GW_CLOSE_POLICY_VIOLATION 1008
#define GW_CLOSE_TOO_LARGE 1009
#define GW_CLOSE_UNEXPECTED 1011

/* Messages shorter than this are never compressed, only wrapped in stored
 * blocks (docs/gateway.md, "Compression": the measured sizes). */
#define GW_DEFLATE_MIN 128

/* Flags of a write. */
#define GW_TX_OWN_FRAME 1u  /* the connection negotiated permessage-deflate:
                               frame it here, so the library's own compressor
                               never touches it */
#define GW_TX_COMPRESSED 2u /* the payload is a permessage-deflate message (compressed
                               or stored blocks): RSV1 set (with OWN_FRAME) */
#define GW_TX_FRAMES 4u     /* buf holds several complete frames the queue built,
                               headers included (a gather): write the bytes as they are */

struct rc_deflater;

/* The socket side, borrowed from the transport for as long as sock lives. */
struct gw_conn_transport {
    /* Writes one text frame of len bytes at buf (GW_MSG_PRE bytes of
     * writable headroom before buf), flags GW_TX_*. Returns < 0 when the
     * socket failed. */
    int (*write)(void *sock, unsigned char *buf, size_t len, unsigned flags);
    /* Sends the close frame with code and arms the close timeout. Returns
     * < 0 when the socket failed. */
    int (*close)(void *sock, int code);
    /* 1 while the transport holds the rest of a partial write (it finishes
     * it first, then asks for a writeable callback): nothing more may be
     * written until then. A flag, no system call: the write itself says
     * when the socket is full (docs/gateway.md, "The send path"). */
    int (*buffered)(void *sock);
    /* Asks for gw_conn_on_writeable once the socket takes data. */
    void (*want_writeable)(void *sock);
    /* The most bytes one write puts on the socket in one system call (the
     * rest of a longer one is kept by the transport and sent later): how
     * much a gather of several frames may hold. 0: one frame per write. */
    size_t gather_max;
};

/* Upward calls, to the fan-out (set at start). */
struct gw_conn_hooks {
    void *data;
    /* c's view traffic was dropped: its subscriptions wait for a snapshot. */
    void (*lagged)(void *data, struct gw_conn *c);
    /* c's queue drained while it owes snapshots: queue the next one and
     * return 1, or 0 when none is owed any more. */
    int (*drained)(void *data, struct gw_conn *c);
};

/* The flush list (acks first): view traffic is only queued when the fan-out
 * sends it, and written later from this list a slice at a time, so that the
 * loop reads its sockets (Redis replies, requests) between slices and a
 * write's ack never waits behind a whole tick of fan-out. Connections on it
 * hold a reference. */
struct gw_conn_flush {
    struct gw_conn *head, *tail;
    /* Called when the list stops being empty: the loop must not block in
     * poll until gw_conn_flush_run has emptied it. */
    void (*kick)(void *data);
    void *data;
};

/* What every connection shares; set at start, outlives the connections. */
struct gw_conn_ctx {
    const struct gw_conn_transport *tx;
    struct gw_conn_hooks hooks;
    struct gw_metrics *metrics;    /* bytes_sent, queue_drops (NULL: not counted) */
    size_t queue_bytes;            /* droppable bytes a reader may fall behind (conf) */
    struct rc_deflater *deflater;  /* compresses for connections with deflate set (NULL: none) */
    struct gw_conn_flush *flush;   /* NULL: view traffic is written at once, in the fan-out's call */
    unsigned char *gather;         /* GW_MSG_PRE + tx->gather_max bytes, where several waiting
                                      frames are put together for one write (gw_conn_gather_init;
                                      NULL: one frame per write). One per loop: a write copies
                                      nothing it does not send or keep (the transport keeps the
                                      rest of a partial write), so every connection reuses it */
};

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
    const struct gw_conn_ctx *ctx; /* borrowed */
    void *sock;                    /* the transport's socket; NULL once closed */
    struct gw_conn *next, *prev;   /* the server's list of open connections */
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
    int failed;                    /* a write failed: the next writeable callback closes it */
    int flushing;                  /* on ctx->flush's list (holds a reference) */
    struct gw_conn *flush_next;
    unsigned binary_frames;        /* binary frames received (abuse counter) */
    int deflate;                   /* permessage-deflate negotiated: send compressed */
    int rx_compressed;             /* the message being reassembled came compressed */
    size_t rx_discarded;           /* closing: inflated bytes thrown away since */
    int rx_stopped;                /* closing: reading stopped (a compressed message far over the limit) */
    /* who: the key presented at the handshake, and this connection's writes */
    struct gw_caller who;
    int token_expired;             /* its token expired and its views were stopped */
    struct rc_bucket bucket;
    struct rc_bucket read_bucket;  /* reads on this connection (conn_read_rate) */
    struct rc_bucket *ip_read_bucket; /* its address's (ip_read_rate), set by the transport; borrowed
                                       * while the socket lives, NULL once closed or when none */
    /* frames outside requests (serve/gw_ws_frames.c) */
    struct rc_bucket refused;      /* frames over the read budgets tolerated before close 1008 */
    uint32_t rx_msgs;              /* messages begun as lws handed them over (without the frame guard) */
    int rx_open;                   /* the last of them is unfinished */
    uint32_t msg_id;               /* the unfinished message the sweep saw last... */
    uint64_t msg_seen;             /* ...and when it first did (uv_now ms; 0: none) */
    unsigned pending;              /* requests waiting for an answer (max_pending) */
    struct gw_read_owner *read_rows; /* rows of its reads in flight (conn_read_rows; store/gw_read_gate.h),
                                        made on first use; NULL until then */
    /* subscriptions (owned by the fan-out; listed here) */
    struct gw_sub *subs;
    unsigned nsubs;
    unsigned next_sub;
};

/* Allocates ctx->gather for ctx->tx->gather_max (nothing when that is 0).
 * Returns 0, or RC_E_INTERNAL when out of memory (then frames go one per
 * write). gw_conn_gather_free frees it, once no connection writes. */
int gw_conn_gather_init(struct gw_conn_ctx *ctx);
void gw_conn_gather_free(struct gw_conn_ctx *ctx);

/* A new connection on sock (refs = 1), or NULL on OOM. ctx is borrowed and
 * must outlive the connection. */
struct gw_conn *gw_conn_new(const struct gw_conn_ctx *ctx, void *sock);
void gw_conn_ref(struct gw_conn *c);
void gw_conn_unref(struct gw_conn *c);

/* Queues m (takes a new reference; the caller keeps its own) and asks for a
 * writeable callback. Droppable view traffic may be refused (laggard). */
void gw_conn_send(struct gw_conn *c, struct gw_msg *m, int droppable);

/* Queues an owed reply m (takes a new reference) when the queue is empty or
 * stays within queue_bytes with it, and returns 0 (also when the connection
 * is closing: nothing more goes out). Else queues nothing, marks c to resync
 * and returns RC_E_RATE_LIMITED: the caller keeps it owed and sends it again
 * from the drained hook once the queue drains. */
int gw_conn_send_owed(struct gw_conn *c, struct gw_msg *m);

/* Queues a reply encoded by an rc_encode_* function (takes ownership of json;
 * NULL is ignored). */
void gw_conn_reply(struct gw_conn *c, char *json);

/* gw_conn_reply for the answer of an operation (a write's ack, a read, a
 * pong): it goes ahead of the view traffic queued at the tail (none of
 * which has started), never ahead of other replies or owed snapshots. Only
 * for replies that say nothing about a view's state. */
void gw_conn_reply_first(struct gw_conn *c, char *json);

/* Writes the queues of the connections on fl's list, at most max_conns of
 * them (each as a writeable callback would), and returns 1 while some are
 * left on it, else 0. */
int gw_conn_flush_run(struct gw_conn_flush *fl, size_t max_conns);

/* Drops every connection from fl's list (shutdown). */
void gw_conn_flush_clear(struct gw_conn_flush *fl);

/* Asks for the connection to close with code once what is queued is sent. */
void gw_conn_close(struct gw_conn *c, int code);

/* Writes what the socket takes now. Returns -1 when the connection must be
 * closed (the transport then closes it), else 0. Called from the writeable
 * callback. */
int gw_conn_on_writeable(struct gw_conn *c);

/* The connection closed: drops the queue and detaches from the socket. */
void gw_conn_on_closed(struct gw_conn *c);

#endif
