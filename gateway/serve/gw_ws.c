/* gw_ws.c - WebSocket sessions (PROTOCOL.md, "Client to server").
 *
 * Each text message is reassembled from its fragments (lws may hand a message
 * over in pieces under load), capped at max_frame (over it: close 1009),
 * decoded by core/rc_proto and dispatched. Every request gets exactly one
 * reply; errors never close the connection, except abuse: a message over the
 * limit (1009) or a stream of binary frames (1008).
 *
 * permessage-deflate (docs/gateway.md, "Compression"): lws negotiates it
 * (gw_server.c lists the extension when [server] compression = on) and
 * inflates what clients send compressed; the limit above applies to the
 * inflated message. What we send is framed here, not by lws, on such a
 * connection: the connection queue hands over payloads compressed once per
 * message (net/gw_msg.h) and says whether RSV1 goes with them.
 *
 * lws 4.1 stalls in the middle of inflating a message past about 3 KiB:
 * serve/gw_ws_drain.c pushes it on while a compressed message is incomplete.
 *
 * A compressed message over max_frame: the close (1009) is queued, and the
 * rest of the message is still inflated and thrown away, up to
 * DISCARD_MAX bytes, so that lws gets to read the peer's answering close
 * (it reads nothing new while it drains). Past that (a "zip bomb": a small
 * frame inflating to gigabytes) reading stops (lws_rx_flow_control) and the
 * close timeout ends the connection: the CPU one bomb costs is bounded.
 */
#include "serve/gw_ws.h"

#include <uv.h>
#include <libwebsockets.h>

#include "serve/gw_ws_drain.h"
#include "serve/gw_ws_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gw_admin.h"
#include "ops/gw_freeze.h"
#include "ops/gw_get.h"
#include "gw_app.h"
#include "net/gw_conn.h"
#include "fanout/gw_fanout.h"
#include "base/gw_log.h"
#include "ops/gw_ops.h"
#include "serve/gw_peers.h"
#include "serve/gw_urlarg.h"
#include "serve/gw_wsguard.h"
#include "rc_auth.h"
#include "serve/gw_ws_filter.h"
#include "serve/gw_ws_frames.h"
#include "rc_deflate.h"
#include "rc_registry.h"
#include "rc_wsframe.h"

/* net/ stays free of lws: gw_msg reserves a fixed headroom, checked here
 * against the header of the libwebsockets this is built with. */
_Static_assert(GW_MSG_PRE >= LWS_PRE, "GW_MSG_PRE must cover libwebsockets' LWS_PRE");

#define BINARY_FRAMES_TOLERATED 8
#define DEFLATE_LEVEL 6 /* zlib's default; one compression per view per tick (docs/gateway.md) */
#define PMD_NAME "permessage-deflate"
#define DISCARD_MAX (1u << 20) /* inflated bytes thrown away after a compressed message over max_frame */
#define RX_KEEP 4096 /* a reassembly buffer bigger than this is freed after its message */

/* ---- the lws transport of the connection queue (net/gw_conn.h) ------------- */

/* What lws 4.1 puts on the socket in one send() (lws_issue_raw: the
 * protocol's tx_packet_size, else its rx_buffer_size, else the context's
 * pt_serv_buf_size, 4096 by default, plus LWS_PRE + 4); it copies the rest
 * of a longer write aside and sends it at POLLOUT, a malloc and a loop turn
 * more. Our protocols set none of those sizes, so a gather of frames is
 * kept within this (net/gw_conn.h, "Gathering"). */
#define LWS_SEND_MAX 4096

/* A connection with permessage-deflate gets its frames built here (header
 * in the headroom, RSV1 when compressed) and written raw: given a text
 * write, lws' extension would compress it again, per connection. Several
 * frames gathered by the queue (GW_TX_FRAMES, connections without
 * permessage-deflate only) are written raw as they are: LWS_WRITE_RAW goes
 * straight to lws_issue_raw, which sends the bytes in order and keeps the
 * rest of a short write (buflist_out) until it has sent it, before any
 * later write and before the next writeable callback, so frames stay whole
 * and in order on the wire. */
static int lws_tx_write(void *sock, unsigned char *buf, size_t len, unsigned flags)
{
    if (flags & GW_TX_FRAMES)
        return lws_write(sock, buf, len, LWS_WRITE_RAW) < 0 ? RC_E_INTERNAL : 0;
    if (!(flags & GW_TX_OWN_FRAME))
        return lws_write(sock, buf, len, LWS_WRITE_TEXT) < 0 ? RC_E_INTERNAL : 0;
    unsigned char h[RC_WSFRAME_HEADER_MAX];
    size_t hl = rc_wsframe_text_header(h, len, (flags & GW_TX_COMPRESSED) != 0);
    memcpy(buf - hl, h, hl);
    return lws_write(sock, buf - hl, len + hl, LWS_WRITE_RAW) < 0 ? RC_E_INTERNAL : 0;
}

/* The close frame, written by us. The documented way (lws_close_reason, then
 * return -1) loses the frame with Debian's libwebsockets 4.1: it is built
 * with _DEBUG, and under libuv its service loop closes the connection a
 * second time at once ("close_and_handled uv repeat test"), which drops the
 * polite close and the peer sees 1006. So we send the frame (opcode 4 is
 * lws' internal LWS_WRITE_CLOSE) and let the peer's answering close, or the
 * timeout, end the connection. */
static int lws_tx_close(void *sock, int code)
{
    unsigned char buf[LWS_PRE + 2];
    buf[LWS_PRE] = (unsigned char)(code >> 8);
    buf[LWS_PRE + 1] = (unsigned char)(code & 0xff);
    if (lws_write(sock, buf + LWS_PRE, 2, (enum lws_write_protocol)4) < 0)
        return RC_E_INTERNAL;
    lws_set_timeout(sock, PENDING_TIMEOUT_CLOSE_ACK, 3);
    return 0;
}

/* No lws_send_pipe_choked: it polls the socket (a system call per message).
 * lws_partial_buffered only reads the flag a short write left (lws 4.1
 * lws_issue_raw keeps the rest in wsi->buflist_out and asks for POLLOUT). */
static int lws_tx_buffered(void *sock)
{
    return lws_partial_buffered(sock);
}

static void lws_tx_want_writeable(void *sock)
{
    lws_callback_on_writable(sock);
}

static const struct gw_conn_transport lws_transport = {
    lws_tx_write,
    lws_tx_close,
    lws_tx_buffered,
    lws_tx_want_writeable,
    LWS_SEND_MAX,
};

_Static_assert(GW_MSG_PRE >= RC_WSFRAME_HEADER_MAX, "room for our own frame header");
_Static_assert(GW_CLOSE_GOING_AWAY == LWS_CLOSE_STATUS_GOINGAWAY, "close codes");
_Static_assert(GW_CLOSE_POLICY_VIOLATION == LWS_CLOSE_STATUS_POLICY_VIOLATION, "close codes");
_Static_assert(GW_CLOSE_TOO_LARGE == LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "close codes");
_Static_assert(GW_CLOSE_UNEXPECTED == LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "close codes");

void gw_ws_setup(struct gw_app *app)
{
    app->conn_ctx = (struct gw_conn_ctx){
        .tx = &lws_transport,
        .hooks = gw_fanout_conn_hooks(app->fanout),
        .metrics = &app->metrics,
        .flush = &app->flush,
        .queue_bytes = app->conf->queue_bytes,
        /* NULL (out of memory): everything goes in stored blocks, uncompressed */
        .deflater = app->conf->compression ? rc_deflate_new(DEFLATE_LEVEL) : NULL,
    };
    if (app->conf->compression && !app->conn_ctx.deflater)
        gw_log_warn("compression: no memory for the compressor; permessage-deflate clients get uncompressed messages");
    if (gw_conn_gather_init(&app->conn_ctx) != 0)
        gw_log_warn("send path: no memory for the gather buffer; frames go one per write");
    gw_ws_frames_setup();
}

void gw_ws_free(struct gw_app *app)
{
    gw_conn_gather_free(&app->conn_ctx);
    rc_deflate_free(app->conn_ctx.deflater);
    app->conn_ctx.deflater = NULL;
}

/* gw_op_done for WebSocket: the JSON is the reply. */
static void on_op_done(void *privdata, int code, char *json)
{
    struct gw_conn *c = privdata;
    (void)code;
    c->pending--;
    gw_conn_reply_first(c, json); /* an ack goes ahead of queued view traffic */
    gw_conn_unref(c);
}

/* auth counts as a read: it costs a signature check, so it is paced like one. */
static int is_read(enum rc_op op)
{
    return op == RC_OP_SUBSCRIBE || op == RC_OP_UNSUBSCRIBE || op == RC_OP_RANK || op == RC_OP_PING ||
           op == RC_OP_AUTH || op == RC_OP_GET || op == RC_OP_HISTORY;
}

static int answers_later(enum rc_op op)
{
    return op != RC_OP_SUBSCRIBE && op != RC_OP_UNSUBSCRIBE && op != RC_OP_PING && op != RC_OP_AUTH;
}

static int limited(struct gw_app *app, struct gw_conn *c, const struct rc_request *r, const char *msg)
{
    app->metrics.reads_limited++;
    gw_conn_reply(c, gw_ops_error(app, r->id_json, RC_E_RATE_LIMITED, msg));
    return RC_E_RATE_LIMITED;
}

/* The budgets a request must fit before it costs anything (docs/security.md):
 * requests answered from Redis need a free max_pending slot, and reads take
 * tokens from the connection's and the address's read buckets, one plus one
 * per RC_READ_ROWS_PER_TOKEN rows a subscribe's snapshot reads. Returns 0,
 * or answers rate_limited itself and returns RC_E_RATE_LIMITED. */
static int admit(struct gw_app *app, struct gw_conn *c, const struct rc_request *r)
{
    const struct rc_conf *conf = app->conf;
    int64_t now = (int64_t)uv_now(app->loop);
    char msg[128];
    if (answers_later(r->op) && c->pending >= conf->max_pending) {
        snprintf(msg, sizeof msg, "too many requests waiting for an answer on this connection (max_pending %u)",
                 conf->max_pending);
        return limited(app, c, r, msg);
    }
    if (!is_read(r->op))
        return 0;
    /* a read costs what it reads: 1 + rows / RC_READ_ROWS_PER_TOKEN */
    double cost = rc_auth_read_tokens(r->op == RC_OP_SUBSCRIBE ? rc_registry_view_rows(&r->view) : 1);
    if (!rc_auth_bucket_take_n(&c->read_bucket, conf->conn_read_rate, conf->conn_read_burst, cost, now)) {
        snprintf(msg, sizeof msg, "too many reads on this connection (conn_read_rate %u/s)", conf->conn_read_rate);
        return limited(app, c, r, msg);
    }
    struct rc_bucket *ipb = gw_peers_read_bucket(c->sock);
    if (ipb && !rc_auth_bucket_take_n(ipb, conf->ip_read_rate, conf->ip_read_burst, cost, now)) {
        snprintf(msg, sizeof msg, "too many reads from this address (ip_read_rate %u/s)", conf->ip_read_rate);
        return limited(app, c, r, msg);
    }
    return 0;
}

static void do_subscribe(struct gw_app *app, struct gw_conn *c, const struct rc_request *r)
{
    const struct rc_board *decl;
    struct rc_period p;
    struct rc_error err = {0, ""};
    /* a live view (through a freeze) is the caster's: admin scope */
    if (gw_ops_authorize(app, &c->who, r->view.live ? RC_SCOPE_ADMIN : RC_SCOPE_READ, r->board, &err) != 0 ||
        gw_ops_resolve(app, r, &decl, &p, &err) != 0) {
        gw_conn_reply(c, gw_ops_error(app, r->id_json, err.code, err.msg));
        return;
    }
    gw_ws_rows_subscribe(app, c, r, decl, &p);
}

/* ---- tokens on a connection (docs/protocol-additions.md, "Tokens") ---------- */

struct still_covers {
    struct gw_app *app;
    struct gw_conn *c;
};

/* gw_fanout_revoke's keep: may c's (new) credentials still read board (an
 * admin's live view: still admin it)? */
static int still_covers(void *data, const char *board, int live)
{
    struct still_covers *k = data;
    struct rc_error err = {0, ""};
    return gw_ops_authorize(k->app, &k->c->who, live ? RC_SCOPE_ADMIN : RC_SCOPE_READ, board, &err) == 0;
}

/* {"op":"auth","token":JWT}: the token replaces the connection's
 * credentials in place. A token that does not verify changes nothing (the
 * old credentials stay, until they expire). A good one takes over at once:
 * subscriptions it no longer lets this connection read stop, each with a
 * forbidden error naming its sub; the rest go on untouched. auth takes
 * tokens only: API keys come with the handshake. */
static void do_auth(struct gw_app *app, struct gw_conn *c, const struct rc_request *r)
{
    struct gw_caller next;
    memset(&next, 0, sizeof next);
    if (!gw_jwt_enabled(&app->jwt)) {
        gw_conn_reply(c, gw_ops_error(app, r->id_json, RC_E_UNAUTHORIZED,
                                     "tokens are not accepted here (no jwt_secret or jwt_public_key)"));
        return;
    }
    gw_ops_identify(app, r->token, strlen(r->token), 0, &next);
    if (!next.token) {
        gw_conn_reply(c, gw_ops_error(app, r->id_json, RC_E_UNAUTHORIZED,
                                     next.why[0] ? next.why : "the token does not verify"));
        return;
    }
    gw_caller_release(&c->who);
    next.conn_bucket = c->who.conn_bucket;
    c->who = next; /* takes the token */
    c->token_expired = 0;
    struct still_covers k = {app, c};
    gw_fanout_revoke(app->fanout, c, still_covers, &k, RC_E_FORBIDDEN,
                     "the new token does not cover this board: the view has stopped");
    gw_conn_reply(c, rc_proto_encode_authed(r->id_json, c->who.token->exp_ms / 1000));
}

/* Every second or so: connections whose token has expired lose their views,
 * each answered unauthorized with its sub; their later requests are refused
 * by gw_ops_authorize until an auth op brings a fresh token. */
void gw_ws_tick(struct gw_app *app)
{
    /* the next sweep (uv_now ms); one app per process (workers are processes) */
    static uint64_t token_sweep_at;
    uint64_t now = uv_now(app->loop);
    gw_ws_frames_tick(app);
    if (!gw_jwt_enabled(&app->jwt) || now < token_sweep_at)
        return;
    token_sweep_at = now + 1000;
    for (struct gw_conn *c = app->conns; c; c = c->next) {
        if (!c->who.token || c->token_expired || !gw_ops_caller_expired(app, &c->who))
            continue;
        c->token_expired = 1;
        gw_fanout_revoke(app->fanout, c, NULL, NULL, RC_E_UNAUTHORIZED,
                         "the token expired: the view has stopped (refresh with {\"op\":\"auth\",\"token\":JWT} "
                         "before exp to keep views)");
    }
}

static void dispatch(struct gw_app *app, struct gw_conn *c, const struct rc_request *r)
{
    if (admit(app, c, r) != 0)
        return;
    if (answers_later(r->op)) {
        c->pending++;
        gw_conn_ref(c);
    }
    switch (r->op) {
    case RC_OP_SUBSCRIBE:
        do_subscribe(app, c, r);
        break;
    case RC_OP_UNSUBSCRIBE:
        if (gw_fanout_unsubscribe(app->fanout, c, r->sub) == 0)
            gw_conn_reply(c, rc_proto_encode_unsubscribed(r->id_json, r->sub));
        else
            gw_conn_reply(c, gw_ops_error(app, r->id_json, RC_E_BAD_REQUEST, "no such subscription"));
        break;
    case RC_OP_INCR:
    case RC_OP_SET:
    case RC_OP_BEST:
    case RC_OP_SUBMIT:
    case RC_OP_TEAM: /* membership: a write of the source board (docs/teams.md) */
        gw_ops_write(app, &c->who, r, on_op_done, c);
        break;
    case RC_OP_RANK:
        gw_ops_rank(app, &c->who, r, on_op_done, c);
        break;
    case RC_OP_GET: /* one-shot reads (docs/history.md) */
        gw_get_read(app, &c->who, r, on_op_done, c);
        break;
    case RC_OP_HISTORY:
        gw_get_history(app, &c->who, r, on_op_done, c);
        break;
    case RC_OP_PING:
        gw_conn_reply_first(c, rc_proto_encode_pong(r->id_json));
        break;
    case RC_OP_AUTH:
        do_auth(app, c, r);
        break;
    case RC_OP_REMOVE:
    case RC_OP_UNBLOCK:
    case RC_OP_REVERSE:
    case RC_OP_RESET:
        gw_admin_op(app, &c->who, r, on_op_done, c);
        break;
    case RC_OP_FREEZE:
    case RC_OP_REVEAL:
        gw_freeze_op(app, &c->who, r, on_op_done, c);
        break;
    }
}

static void on_message(struct gw_app *app, struct gw_conn *c, const char *text, size_t len)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    int code = rc_proto_decode(text, len, &r, &err);
    if (code)
        gw_conn_reply(c, gw_ops_error(app, r.id_json, code, err.msg));
    else
        dispatch(app, c, &r);
    rc_proto_decode_free(&r);
}

/* The key (or token) comes with the handshake: an Authorization header, or
 * ?token= (browsers cannot set headers on a WebSocket). Never logged. */
static void identify(struct gw_app *app, struct lws *wsi, struct gw_conn *c)
{
    char *buf = malloc(RC_JWT_MAX + 16);
    int n = buf ? gw_urlarg_header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, buf, RC_JWT_MAX + 16) : GW_URLARG_TOO_LONG;
    c->who.conn_bucket = &c->bucket;
    if (n == GW_URLARG_ABSENT)
        n = gw_urlarg(wsi, "token", buf, RC_JWT_MAX + 16);
    else if (n >= 0)
        n = n > 0 ? n : GW_URLARG_TOO_LONG; /* "Authorization:" with nothing: a bad credential */
    /* A credential too long to be any key is a bad one, never "no key". */
    if (n == GW_URLARG_TOO_LONG) {
        c->who.key = NULL;
        c->who.bad_token = 1;
    } else if (n >= 0) {
        int bearer = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_AUTHORIZATION) > 0;
        gw_ops_identify(app, buf, (size_t)n, bearer, &c->who);
    }
    if (buf) {
        memset(buf, 0, RC_JWT_MAX + 16);
        free(buf);
    }
}

static int on_established(struct lws *wsi, struct gw_conn **pconn, struct gw_app *app)
{
    /* Frames sent with the handshake that break RFC 6455: refused before
     * lws parses them (gw_wsguard.c); the close frame is best effort. */
    int early = gw_wsguard_early_error(lws_get_socket_fd(wsi));
    if (early) {
        gw_log_abuse("closing a WebSocket from %s (%d): frames sent with the handshake break RFC 6455",
                     gw_peers_ip(wsi), early);
        (void)lws_tx_close(wsi, early);
        return -1;
    }
    struct gw_conn *c = gw_conn_new(&app->conn_ctx, wsi);
    if (!c)
        return -1;
    c->ip_read_bucket = gw_peers_read_bucket(wsi); /* (for the layers below serve/: fanout's replays) */
    snprintf(c->peer, sizeof c->peer, "%s", gw_peers_ip(wsi));
    gw_peers_headers_done(wsi); /* a WebSocket now: the idle timeout takes over */
    identify(app, wsi, c);
    c->next = app->conns;
    if (app->conns)
        app->conns->prev = c;
    app->conns = c;
    app->metrics.connections++;
    app->metrics.connections_total++;
    *pconn = c;
    /* Did lws accept the client's permessage-deflate offer? Setting an
     * option answers (-1: not active). The option itself: lws 4.1 resets its
     * inflater after each message when server_no_context_takeover was
     * negotiated, which breaks a client that keeps its own compression
     * context (that is client_no_context_takeover's business, and lws
     * never asks for it). Our sending never uses lws' compressor. */
    c->deflate = app->conf->compression &&
                 lws_set_extension_option(wsi, PMD_NAME, "server_no_context_takeover", "0") == 0;
    if (c->deflate)
        app->metrics.deflate_conns++;
    /* RFC 6455 frame rules lws does not enforce, and the frame budgets;
     * plain TCP and TLS (gw_wsguard.c, gw_tlsread.c). Early frames over
     * the budget: the guard refuses the next read (its charge hook counted
     * and logged it). */
    (void)gw_wsguard_watch(lws_get_socket_fd(wsi), c->deflate, c);
    return 0;
}

static int on_receive(struct gw_app *app, struct lws *wsi, struct gw_conn *c, const char *in, size_t len)
{
    size_t max = app->conf->max_frame;
    if (c->close_code) {
        /* closing: what the peer still sends is ignored (see the banner for
         * the rest of a compressed message) */
        if (c->rx_compressed && !c->rx_stopped) {
            c->rx_discarded += len;
            if (c->rx_discarded > DISCARD_MAX) {
                c->rx_stopped = 1;
                lws_rx_flow_control(wsi, 0);
            } else if (!lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0) {
                gw_ws_drain_push(app, wsi);
            } else if (lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0) {
                c->rx_compressed = 0; /* all of it is gone */
            }
        }
        return 0;
    }
    gw_ws_frames_received(c, lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0);
    if (lws_get_reserved_bits(wsi) & 0x40)
        c->rx_compressed = 1; /* RSV1: the first frame of a compressed message */
    if (lws_frame_is_binary(wsi)) {
        /* a compressed one is inflated to its end all the same */
        if (c->rx_compressed && !lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0)
            gw_ws_drain_push(app, wsi);
        else if (lws_is_final_fragment(wsi))
            c->rx_compressed = 0;
        /* One binary frame is a mistake; a stream of them is abuse. */
        if (lws_is_final_fragment(wsi) && ++c->binary_frames <= BINARY_FRAMES_TOLERATED)
            gw_conn_reply(c, gw_ops_error(app, NULL, RC_E_BAD_REQUEST, "binary frames are not accepted: send JSON "
                                                                         "text frames"));
        else if (c->binary_frames > BINARY_FRAMES_TOLERATED)
            gw_conn_close(c, LWS_CLOSE_STATUS_POLICY_VIOLATION);
        return 0;
    }
    if (c->rx_len + len > max) {
        app->metrics.ws_closes_too_large++;
        gw_conn_close(c, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE);
        c->rx_len = 0;
        if (c->rx_compressed && lws_remaining_packet_payload(wsi) == 0 && !lws_is_final_fragment(wsi))
            gw_ws_drain_push(app, wsi); /* the rest is thrown away, up to DISCARD_MAX (banner) */
        return 0;
    }
    if (c->rx_len + len > c->rx_cap) {
        size_t cap = c->rx_cap ? c->rx_cap : 1024;
        while (cap < c->rx_len + len)
            cap *= 2;
        char *rx = realloc(c->rx, cap);
        if (!rx)
            return -1;
        c->rx = rx;
        c->rx_cap = cap;
    }
    if (len) /* an empty frame has no buffer behind it */
        memcpy(c->rx + c->rx_len, in, len);
    c->rx_len += len;
    if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi) != 0) {
        /* All of this frame was read: the rest of the message may sit in
         * lws' inflater (see the banner). */
        if (c->rx_compressed && lws_remaining_packet_payload(wsi) == 0)
            gw_ws_drain_push(app, wsi);
        return 0;
    }
    size_t n = c->rx_len;
    c->rx_len = 0;
    c->rx_compressed = 0;
    if (!c->close_code)
        on_message(app, c, c->rx, n);
    if (c->rx_cap > RX_KEEP) {
        /* one big message does not keep its buffer for the connection's life */
        free(c->rx);
        c->rx = NULL;
        c->rx_cap = 0;
    }
    return 0;
}

static void on_closed(struct gw_conn *c, struct gw_app *app)
{
    if (c->sock) {
        gw_wsguard_unwatch(lws_get_socket_fd(c->sock));
        gw_ws_drain_forget(app, c->sock);
    }
    gw_fanout_conn_closed(app->fanout, c);
    if (c->prev)
        c->prev->next = c->next;
    else
        app->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    app->metrics.connections--;
    gw_conn_on_closed(c);
    gw_conn_unref(c);
}

int gw_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, struct gw_conn **pconn, void *in,
                   size_t len, struct gw_app *app)
{
    switch (reason) {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        return gw_ws_filter(wsi, app);
    case LWS_CALLBACK_ESTABLISHED:
        return on_established(wsi, pconn, app);
    case LWS_CALLBACK_RECEIVE:
        return *pconn ? on_receive(app, wsi, *pconn, in, len) : -1;
    case LWS_CALLBACK_SERVER_WRITEABLE:
        return *pconn ? gw_conn_on_writeable(*pconn) : 0;
    case LWS_CALLBACK_CLOSED:
        if (*pconn)
            on_closed(*pconn, app);
        *pconn = NULL;
        return 0;
    default:
        return 0;
    }
}

void gw_ws_close_all(struct gw_app *app)
{
    for (struct gw_conn *c = app->conns; c; c = c->next)
        gw_conn_close(c, LWS_CLOSE_STATUS_GOINGAWAY);
}
