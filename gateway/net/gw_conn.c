/* gw_conn.c - WebSocket connection state and its bounded send queue. */
#include <uv.h>
#include <libwebsockets.h>

#include "net/gw_conn.h"

#include <stdlib.h>
#include <string.h>

#include "gw_app.h"
#include "fanout/gw_fanout.h"

#define WRITES_PER_CALLBACK 32 /* then yield to other connections */
/* Replies are never dropped; a client may queue up to this many times
 * queue_bytes of them before it counts as abusive. They are small (acks,
 * errors, pongs; the big ones are owed replies, bounded by queue_bytes), so
 * only a client that sends requests and never reads the answers gets near. */
#define REPLY_QUEUE_FACTOR 4

struct gw_conn *gw_conn_new(struct gw_app *app, struct lws *wsi)
{
    static uint64_t next_id;
    struct gw_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->refs = 1;
    c->app = app;
    c->wsi = wsi;
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

void gw_conn_unref(struct gw_conn *c)
{
    if (!c || --c->refs)
        return;
    drop_queue(c, 0);
    free(c->q);
    free(c->rx);
    free(c);
}

static int grow(struct gw_conn *c)
{
    size_t cap = c->q_cap ? c->q_cap * 2 : 16;
    struct gw_qent *q = malloc(cap * sizeof *q);
    if (!q)
        return -1;
    for (size_t i = 0; i < c->q_count; i++)
        q[i] = c->q[(c->q_head + i) % c->q_cap];
    free(c->q);
    c->q = q;
    c->q_cap = cap;
    c->q_head = 0;
    return 0;
}

/* Writes m now when nothing is queued ahead and the socket takes data, else
 * queues it (a new reference) behind the rest. */
static void enqueue(struct gw_conn *c, struct gw_msg *m, enum gw_qclass cls)
{
    /* Nothing queued ahead and the socket takes data: write now. Asking for
     * a writeable callback instead costs libuv four epoll_ctl calls and a
     * loop turn per message (measured: a quarter of the gateway's CPU at
     * fan-out). A partial write is kept by lws, which then reports the pipe
     * choked, so later messages queue behind it in order. */
    if (c->q_count == 0 && !lws_send_pipe_choked(c->wsi)) {
        int w = lws_write(c->wsi, gw_msg_payload(m), m->len, LWS_WRITE_TEXT);
        if (w < 0) {
            gw_conn_close(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION);
            return;
        }
        c->app->metrics.bytes_sent += m->len;
        if (c->resync)
            lws_callback_on_writable(c->wsi); /* snapshots owed once drained */
        return;
    }
    if (c->q_count == c->q_cap && grow(c) != 0) {
        gw_conn_close(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION);
        return;
    }
    gw_msg_ref(m);
    c->q[(c->q_head + c->q_count) % c->q_cap] = (struct gw_qent){m, cls};
    c->q_count++;
    *class_bytes(c, cls) += m->len;
    lws_callback_on_writable(c->wsi);
}

/* The queue overflowed: from now on each subscription is owed a snapshot,
 * sent one at a time as the queue drains (gw_fanout_resync_conn). */
static void start_resync(struct gw_conn *c)
{
    if (!c->resync)
        c->app->metrics.queue_drops++;
    c->resync = 1;
    lws_callback_on_writable(c->wsi);
}

void gw_conn_send(struct gw_conn *c, struct gw_msg *m, int droppable)
{
    size_t limit = c->app->conf->queue_bytes;
    if (!m || !c->wsi || c->close_code)
        return; /* closing: nothing more goes out */
    if (droppable) {
        if (c->q_view_bytes + m->len > limit) {
            /* Laggard: forget its backlog; each subscription gets a fresh
             * snapshot as the queue drains (gw_fanout_resync_conn). */
            drop_queue(c, 1);
            c->app->metrics.queue_drops++;
            c->resync = 1;
            gw_fanout_conn_lagged(c->app->fanout, c);
            lws_callback_on_writable(c->wsi);
            return;
        }
    } else if (c->q_count && c->q_reply_bytes + m->len > REPLY_QUEUE_FACTOR * limit) {
        /* A client that floods requests without reading the answers is
         * closed instead. */
        gw_conn_close(c, LWS_CLOSE_STATUS_POLICY_VIOLATION);
        return;
    }
    enqueue(c, m, droppable ? GW_Q_VIEW : GW_Q_REPLY);
}

int gw_conn_send_owed(struct gw_conn *c, struct gw_msg *m)
{
    if (!m || !c->wsi || c->close_code)
        return 0; /* closing: nothing more goes out, nothing is owed */
    /* An empty queue always takes one, however big: a snapshot larger than
     * queue_bytes must still reach a reader that keeps up. */
    if (c->q_count && c->q_view_bytes + c->q_owed_bytes + m->len > c->app->conf->queue_bytes) {
        start_resync(c);
        return -1;
    }
    enqueue(c, m, GW_Q_OWED);
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

void gw_conn_close(struct gw_conn *c, int code)
{
    if (!c->wsi || c->close_code)
        return;
    c->close_code = code;
    lws_callback_on_writable(c->wsi);
}

/* The close frame, written by us. The documented way (lws_close_reason, then
 * return -1) loses the frame with Debian's libwebsockets 4.1: it is built
 * with _DEBUG, and under libuv its service loop closes the connection a
 * second time at once ("close_and_handled uv repeat test"), which drops the
 * polite close and the peer sees 1006. So we send the frame (opcode 4 is
 * lws' internal LWS_WRITE_CLOSE) and let the peer's answering close, or the
 * timeout, end the connection. */
static int send_close(struct gw_conn *c)
{
    unsigned char buf[LWS_PRE + 2];
    buf[LWS_PRE] = (unsigned char)(c->close_code >> 8);
    buf[LWS_PRE + 1] = (unsigned char)(c->close_code & 0xff);
    c->close_sent = 1;
    if (lws_write(c->wsi, buf + LWS_PRE, 2, (enum lws_write_protocol)4) < 0)
        return -1;
    lws_set_timeout(c->wsi, PENDING_TIMEOUT_CLOSE_ACK, 3);
    return 0;
}

int gw_conn_on_writeable(struct gw_conn *c)
{
    if (c->close_sent)
        return 0; /* nothing may follow a close frame */
    for (int n = 0; n < WRITES_PER_CALLBACK && c->q_count; n++) {
        if (n && lws_send_pipe_choked(c->wsi))
            break;
        struct gw_qent e = c->q[c->q_head];
        int w = lws_write(c->wsi, gw_msg_payload(e.msg), e.msg->len, LWS_WRITE_TEXT);
        c->q_head = (c->q_head + 1) % c->q_cap;
        c->q_count--;
        *class_bytes(c, e.cls) -= e.msg->len;
        c->app->metrics.bytes_sent += e.msg->len;
        gw_msg_unref(e.msg);
        if (w < 0)
            return -1;
    }
    if (c->q_count == 0 && c->resync && !c->close_code)
        c->resync = gw_fanout_resync_conn(c->app->fanout, c);
    if (c->q_count) {
        lws_callback_on_writable(c->wsi);
        return 0;
    }
    if (c->close_code && !c->close_sent)
        return send_close(c);
    return 0;
}

void gw_conn_on_closed(struct gw_conn *c)
{
    drop_queue(c, 0);
    c->wsi = NULL;
}
