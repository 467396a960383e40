/* gw_conn.c - one connection's bounded send queue (see gw_conn.h). No lws,
 * no fan-out here: the socket is behind ctx->tx, the fan-out behind
 * ctx->hooks. */
#include "net/gw_conn.h"

#include <stdlib.h>
#include <string.h>

#include "base/gw_metrics.h"
#include "store/gw_read_gate.h"
#include "rc_err.h"
#include "rc_wsframe.h"

#define WRITES_PER_CALLBACK 32 /* writes (of one frame or a gather), then yield to other connections */
/* Replies are never dropped; a client may queue up to this many times
 * queue_bytes of them before it counts as abusive. They are small (acks,
 * errors, pongs; the big ones are owed replies, bounded by queue_bytes), so
 * only a client that sends requests and never reads the answers gets near. */
#define REPLY_QUEUE_FACTOR 4

int gw_conn_gather_init(struct gw_conn_ctx *ctx)
{
    size_t max = ctx->tx->gather_max;
    ctx->gather = max ? malloc(GW_MSG_PRE + max) : NULL;
    return max && !ctx->gather ? RC_E_INTERNAL : 0;
}

void gw_conn_gather_free(struct gw_conn_ctx *ctx)
{
    free(ctx->gather);
    ctx->gather = NULL;
}

struct gw_conn *gw_conn_new(const struct gw_conn_ctx *ctx, void *sock)
{
    static uint64_t next_id;
    struct gw_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->refs = 1;
    c->ctx = ctx;
    c->sock = sock;
    c->id = ++next_id;
    return c;
}

void gw_conn_ref(struct gw_conn *c)
{
    c->refs++;
}

static void drop_queue(struct gw_conn *c, int only_droppable)
{
    size_t kept = 0;
    for (size_t i = 0; i < c->q_count; i++) {
        struct gw_qent e = c->q[(c->q_head + i) % c->q_cap];
        if (only_droppable && e.cls != GW_Q_VIEW) {
            c->q[(c->q_head + kept) % c->q_cap] = e;
            kept++;
            continue;
        }
        gw_msg_unref(e.msg);
    }
    c->q_count = kept;
    c->q_view_bytes = 0;
    if (!only_droppable) {
        c->q_reply_bytes = 0;
        c->q_owed_bytes = 0;
    }
}

static size_t *class_bytes(struct gw_conn *c, enum gw_qclass cls)
{
    return cls == GW_Q_VIEW ? &c->q_view_bytes : cls == GW_Q_OWED ? &c->q_owed_bytes : &c->q_reply_bytes;
}

static void count_sent(struct gw_conn *c, size_t len)
{
    if (c->ctx->metrics)
        c->ctx->metrics->bytes_sent += len;
}

/* Writes m as one frame: when c negotiated permessage-deflate, m's shared
 * permessage-deflate form (made by the first connection that needs it:
 * compressed, or stored blocks when that does not pay), else plain. Returns
 * the transport's result. */
static int write_msg(struct gw_conn *c, struct gw_msg *m)
{
    if (c->ctx->metrics)
        c->ctx->metrics->frame_writes++;
    if (!c->deflate) {
        count_sent(c, m->len);
        return c->ctx->tx->write(c->sock, gw_msg_payload(m), m->len, 0);
    }
    int fresh = !m->z_tried && m->len >= GW_DEFLATE_MIN;
    struct gw_msg *z = gw_msg_compressed(m, c->ctx->deflater, GW_DEFLATE_MIN);
    if (c->ctx->metrics) {
        c->ctx->metrics->deflate_sends++;
        c->ctx->metrics->deflate_runs += fresh && c->ctx->deflater;
    }
    if (!z) { /* out of memory: plain is allowed too (RSV1 clear) */
        count_sent(c, m->len);
        return c->ctx->tx->write(c->sock, gw_msg_payload(m), m->len, GW_TX_OWN_FRAME);
    }
    if (c->ctx->metrics && !z->z_stored) {
        c->ctx->metrics->deflate_compressed++;
        c->ctx->metrics->deflate_saved += m->len - z->len;
    }
    count_sent(c, z->len);
    return c->ctx->tx->write(c->sock, gw_msg_payload(z), z->len, GW_TX_OWN_FRAME | GW_TX_COMPRESSED);
}

static void count_drop(struct gw_conn *c)
{
    if (c->ctx->metrics)
        c->ctx->metrics->queue_drops++;
}

static void want_writeable(struct gw_conn *c)
{
    c->ctx->tx->want_writeable(c->sock);
}

void gw_conn_unref(struct gw_conn *c)
{
    if (!c || --c->refs)
        return;
    drop_queue(c, 0);
    gw_caller_release(&c->who);
    gw_read_gate_owner_unref(c->read_rows);
    free(c->q);
    free(c->rx);
    free(c);
}

static int grow(struct gw_conn *c)
{
    size_t cap = c->q_cap ? c->q_cap * 2 : 16;
    struct gw_qent *q = malloc(cap * sizeof *q);
    if (!q)
        return RC_E_INTERNAL;
    for (size_t i = 0; i < c->q_count; i++)
        q[i] = c->q[(c->q_head + i) % c->q_cap];
    free(c->q);
    c->q = q;
    c->q_cap = cap;
    c->q_head = 0;
    return 0;
}

/* Puts c on the flush list (a reference) unless it is on it. */
static void flush_add(struct gw_conn *c)
{
    struct gw_conn_flush *fl = c->ctx->flush;
    if (c->flushing)
        return;
    gw_conn_ref(c);
    c->flushing = 1;
    c->flush_next = NULL;
    if (fl->tail)
        fl->tail->flush_next = c;
    else
        fl->head = c;
    fl->tail = c;
    if (fl->head == c && fl->kick)
        fl->kick(fl->data);
}

/* Where a reply that goes first enters the queue: behind the last entry
 * that is not view traffic (replies never overtake replies or owed
 * snapshots), ahead of the view traffic queued after it. */
static size_t first_slot(const struct gw_conn *c)
{
    size_t i = c->q_count;
    while (i > 0 && c->q[(c->q_head + i - 1) % c->q_cap].cls == GW_Q_VIEW)
        i--;
    return i;
}

/* Writes m now when nothing must go before it and the transport holds no
 * partial write, else queues it (a new reference) at slot `at` (q_count:
 * behind the rest). View traffic, when there is a flush list, is always
 * queued, and written by gw_conn_flush_run. */
static void enqueue(struct gw_conn *c, struct gw_msg *m, enum gw_qclass cls, size_t at)
{
    int deferred = cls == GW_Q_VIEW && c->ctx->flush;
    /* Write now: asking for a writeable callback instead costs libuv four
     * epoll_ctl calls and a loop turn per message (measured: a quarter of
     * the gateway's CPU at fan-out). Whether the socket is full is learnt
     * from the write itself: lws sends what the socket takes and keeps the
     * rest (lws_issue_raw), and then reports it buffered, so later messages
     * queue behind it in order. No poll() per message. */
    if (!deferred && at == 0 && !c->ctx->tx->buffered(c->sock)) {
        if (write_msg(c, m) < 0) {
            gw_conn_close(c, GW_CLOSE_UNEXPECTED);
            return;
        }
        if (c->resync)
            want_writeable(c); /* snapshots owed once drained */
        return;
    }
    if (c->q_count == c->q_cap && grow(c) != 0) {
        gw_conn_close(c, GW_CLOSE_UNEXPECTED);
        return;
    }
    gw_msg_ref(m);
    for (size_t i = c->q_count; i > at; i--)
        c->q[(c->q_head + i) % c->q_cap] = c->q[(c->q_head + i - 1) % c->q_cap];
    c->q[(c->q_head + at) % c->q_cap] = (struct gw_qent){m, cls};
    c->q_count++;
    *class_bytes(c, cls) += m->len;
    if (deferred)
        flush_add(c);
    else
        want_writeable(c);
}

/* The queue overflowed: from now on each subscription is owed a snapshot,
 * sent one at a time as the queue drains (the drained hook). */
static void start_resync(struct gw_conn *c)
{
    if (!c->resync)
        count_drop(c);
    c->resync = 1;
    want_writeable(c);
}

void gw_conn_send(struct gw_conn *c, struct gw_msg *m, int droppable)
{
    size_t limit = c->ctx->queue_bytes;
    if (!m || !c->sock || c->close_code)
        return; /* closing: nothing more goes out */
    if (droppable) {
        if (c->q_view_bytes + m->len > limit) {
            /* Laggard: forget its backlog; each subscription gets a fresh
             * snapshot as the queue drains (the drained hook). */
            drop_queue(c, 1);
            count_drop(c);
            c->resync = 1;
            if (c->ctx->hooks.lagged)
                c->ctx->hooks.lagged(c->ctx->hooks.data, c);
            want_writeable(c);
            return;
        }
    } else if (c->q_count && c->q_reply_bytes + m->len > REPLY_QUEUE_FACTOR * limit) {
        /* A client that floods requests without reading the answers is
         * closed instead. */
        gw_conn_close(c, GW_CLOSE_POLICY_VIOLATION);
        return;
    }
    enqueue(c, m, droppable ? GW_Q_VIEW : GW_Q_REPLY, c->q_count);
}

int gw_conn_send_owed(struct gw_conn *c, struct gw_msg *m)
{
    if (!m || !c->sock || c->close_code)
        return 0; /* closing: nothing more goes out, nothing is owed */
    /* An empty queue always takes one, however big: a snapshot larger than
     * queue_bytes must still reach a reader that keeps up. */
    if (c->q_count && c->q_view_bytes + c->q_owed_bytes + m->len > c->ctx->queue_bytes) {
        start_resync(c);
        return RC_E_RATE_LIMITED;
    }
    enqueue(c, m, GW_Q_OWED, c->q_count);
    return 0;
}

void gw_conn_reply(struct gw_conn *c, char *json)
{
    struct gw_msg *m = gw_msg_take(json);
    if (m) {
        gw_conn_send(c, m, 0);
        gw_msg_unref(m);
    }
}

void gw_conn_reply_first(struct gw_conn *c, char *json)
{
    struct gw_msg *m = gw_msg_take(json);
    if (!m)
        return;
    if (!c->sock || c->close_code) {
        gw_msg_unref(m);
        return;
    }
    if (c->q_count && c->q_reply_bytes + m->len > REPLY_QUEUE_FACTOR * c->ctx->queue_bytes)
        gw_conn_close(c, GW_CLOSE_POLICY_VIOLATION); /* as gw_conn_send */
    else
        enqueue(c, m, GW_Q_REPLY, first_slot(c));
    gw_msg_unref(m);
}

void gw_conn_close(struct gw_conn *c, int code)
{
    if (!c->sock || c->close_code)
        return;
    c->close_code = code;
    want_writeable(c);
}

/* The queue entry k places from the head (k < q_count). */
static struct gw_qent *qent(struct gw_conn *c, size_t k)
{
    return &c->q[(c->q_head + k) % c->q_cap];
}

static size_t framed_len(size_t len)
{
    return (len < 126 ? 2 : len < 65536 ? 4 : 10) + len;
}

/* How many messages at the head of c's queue go out together in one write:
 * as many as fit in the transport's gather_max, framed; 0 when fewer than
 * two do (then the head goes alone, from its own buffer) or c compresses. */
static size_t gather_count(const struct gw_conn *c)
{
    const struct gw_conn_ctx *x = c->ctx;
    size_t n = 0, k = 0;
    if (c->deflate || !x->gather || c->q_count < 2)
        return 0;
    for (; k < c->q_count; k++) {
        size_t fl = framed_len(c->q[(c->q_head + k) % c->q_cap].msg->len);
        if (fl > x->tx->gather_max - n)
            break;
        n += fl;
    }
    return k >= 2 ? k : 0;
}

/* Builds the k head messages' frames one after the other in the loop's
 * gather buffer (after its GW_MSG_PRE headroom) and returns their length;
 * *payload gets the messages' own bytes (what bytes_sent counts). */
static size_t gather(struct gw_conn *c, size_t k, size_t *payload)
{
    unsigned char *out = c->ctx->gather + GW_MSG_PRE;
    size_t n = 0;
    *payload = 0;
    for (size_t i = 0; i < k; i++) {
        struct gw_msg *m = qent(c, i)->msg;
        n += rc_wsframe_text_header(out + n, m->len, 0);
        memcpy(out + n, gw_msg_payload(m), m->len);
        n += m->len;
        *payload += m->len;
    }
    return n;
}

/* Takes the head entry off the queue and lets go of its message. */
static void pop(struct gw_conn *c)
{
    struct gw_qent e = c->q[c->q_head];
    c->q_head = (c->q_head + 1) % c->q_cap;
    c->q_count--;
    *class_bytes(c, e.cls) -= e.msg->len;
    gw_msg_unref(e.msg);
}

/* Writes the k head messages gathered (k >= 2) in one write, and takes them
 * off the queue. Returns the transport's result. */
static int write_gathered(struct gw_conn *c, size_t k)
{
    size_t payload;
    size_t len = gather(c, k, &payload);
    int w = c->ctx->tx->write(c->sock, c->ctx->gather + GW_MSG_PRE, len, GW_TX_FRAMES);
    count_sent(c, payload);
    if (c->ctx->metrics) {
        c->ctx->metrics->frame_writes++;
        c->ctx->metrics->frames_gathered += k;
    }
    for (size_t i = 0; i < k; i++)
        pop(c);
    return w;
}

/* Writes queued messages until the queue is empty, WRITES_PER_CALLBACK
 * writes are out, or the transport holds a partial write. Several messages
 * waiting go out gathered, one write for as many as fit (gw_conn.h).
 * Returns -1 when a write failed. */
static int write_queue(struct gw_conn *c)
{
    for (int n = 0; n < WRITES_PER_CALLBACK && c->q_count; n++) {
        if (n && c->ctx->tx->buffered(c->sock))
            break; /* the socket is full: lws finishes it, then calls back */
        size_t k = gather_count(c);
        int w;
        if (k) {
            w = write_gathered(c, k);
        } else {
            w = write_msg(c, c->q[c->q_head].msg);
            pop(c);
        }
        if (w < 0)
            return -1;
    }
    return 0;
}

int gw_conn_on_writeable(struct gw_conn *c)
{
    if (c->failed)
        return -1;
    if (c->close_sent)
        return 0; /* nothing may follow a close frame */
    if (write_queue(c) < 0)
        return -1;
    if (c->q_count == 0 && c->resync && !c->close_code)
        c->resync = c->ctx->hooks.drained ? c->ctx->hooks.drained(c->ctx->hooks.data, c) : 0;
    if (c->q_count) {
        want_writeable(c);
        return 0;
    }
    if (c->close_code && !c->close_sent) {
        c->close_sent = 1;
        return c->ctx->tx->close(c->sock, c->close_code) < 0 ? -1 : 0;
    }
    return 0;
}

/* Takes the first connection off fl's list (its reference passes to the
 * caller), or NULL. */
static struct gw_conn *flush_pop(struct gw_conn_flush *fl)
{
    struct gw_conn *c = fl->head;
    if (!c)
        return NULL;
    fl->head = c->flush_next;
    if (!fl->head)
        fl->tail = NULL;
    c->flush_next = NULL;
    c->flushing = 0;
    return c;
}

int gw_conn_flush_run(struct gw_conn_flush *fl, size_t max_conns)
{
    for (size_t n = 0; n < max_conns && fl->head; n++) {
        struct gw_conn *c = flush_pop(fl);
        /* As a writeable callback would, but what only a callback may do
         * (the drained hook, the close frame, closing on a failed write) is
         * left to the one asked for here. */
        if (c->sock && !c->close_sent && !c->failed && c->q_count) {
            if (c->ctx->tx->buffered(c->sock)) {
                want_writeable(c); /* lws finishes the partial write first */
            } else if (write_queue(c) < 0) {
                c->failed = 1;
                want_writeable(c);
            } else if (c->q_count || c->resync || c->close_code) {
                want_writeable(c);
            }
        }
        gw_conn_unref(c);
    }
    return fl->head != NULL;
}

void gw_conn_flush_clear(struct gw_conn_flush *fl)
{
    struct gw_conn *c;
    while ((c = flush_pop(fl)))
        gw_conn_unref(c);
}

void gw_conn_on_closed(struct gw_conn *c)
{
    drop_queue(c, 0);
    c->sock = NULL;
    c->ip_read_bucket = NULL; /* (the address's bucket may go once its sockets have) */
}
