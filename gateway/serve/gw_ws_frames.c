/* gw_ws_frames.c - frames outside any request (gw_ws_frames.h).
 *
 * Why: a continuation frame, a ping or a pong is no request, so nothing in
 * gw_ws.c's admit() ever charged it, yet each costs lws a parse (and a ping
 * a pong written back). One connection sending an unfinished message and
 * then empty continuation frames (6 bytes each) held a core at 93-98 %, as
 * did ping and pong floods.
 *
 * Budget: each such frame takes a token from the connection's read bucket
 * (conn_read_rate) and its address's (ip_read_rate), as a read request
 * does. The count comes from the frame guard (serve/gw_wsguard.c), per read,
 * before lws parses a byte of it. A frame that finds a bucket empty is
 * refused: counted, and charged to a small bucket of refused frames
 * (REFUSED_BURST, refilled at REFUSED_RATE a second) so that an honest
 * client whose pong meets an address bucket emptied by its neighbours' reads
 * is not closed for it; when that one is empty too, the connection is
 * closed with 1008 before lws sees the read. Closing rather than throttling
 * reads: a throttled flood keeps its socket and buffers and is back at the
 * next refill; a closed one must reconnect (max_conns_per_ip) and starts
 * with the address's bucket as it left it. The refused frames tolerated do
 * reach lws: at most REFUSED_BURST plus one read's worth.
 *
 * Unfinished messages: every quarter of message_timeout (at most every
 * 0.5 s) the connections are looked at; one whose message (the same one,
 * by its number) has been unfinished since a look at least message_timeout
 * ago is closed with 1008: between message_timeout and message_timeout +
 * 2 looks after its first frame. The guard says exactly (any data frame
 * begun and not ended, fragments included); without it (TLS) what lws hands
 * over says it (gw_ws_frames_received), blind to a message whose frames
 * are all empty.
 *
 * Not covered with TLS (tls_cert): the guard cannot read ciphertext, so
 * continuation, ping and pong frames are not charged there
 * (docs/security.md says to put TLS in front of it instead).
 */
#include "serve/gw_ws_frames.h"

#include <uv.h>
#include <libwebsockets.h>


#include "base/gw_log.h"
#include "gw_app.h"
#include "net/gw_conn.h"
#include "serve/gw_peers.h"
#include "serve/gw_wsguard.h"
#include "rc_wsframe.h"

#define REFUSED_BURST 16.0 /* frames over budget a connection may send at once before close 1008 */
#define REFUSED_RATE 1.0   /* ... and per second after */
#define SWEEP_MAX_MS 500u  /* the longest time between two looks for unfinished messages */

static const char *const kind_names[RC_WSFRAME_KINDS] = {"continuation", "ping", "pong"};

/* Takes up to n tokens from c's read buckets, one frame at a time, and
 * returns how many it got: the rest are refused. */
static uint32_t take(struct gw_app *app, struct gw_conn *c, struct rc_bucket *ipb, uint32_t n, int64_t now)
{
    const struct rc_conf *conf = app->conf;
    uint32_t i = 0;
    for (; i < n; i++) {
        if (!rc_auth_bucket_take(&c->read_bucket, conf->conn_read_rate, conf->conn_read_burst, now))
            break;
        if (ipb && !rc_auth_bucket_take(ipb, conf->ip_read_rate, conf->ip_read_burst, now))
            break;
    }
    return i;
}

/* The charge hook (serve/gw_wsguard.h): called from recv(), inside lws'
 * read of c's socket. Returns 0, or 1008 to close c at once. */
static int charge(void *conn, const uint32_t n[RC_WSFRAME_KINDS])
{
    struct gw_conn *c = conn;
    if (!c || !c->sock)
        return 0;
    struct gw_app *app = lws_context_user(lws_get_context(c->sock));
    int64_t now = (int64_t)uv_now(app->loop);
    struct rc_bucket *ipb = gw_peers_read_bucket(c->sock);
    uint32_t refused = 0, most = 0;
    int worst = 0; /* the kind most refused, for the log */
    for (int k = 0; k < RC_WSFRAME_KINDS; k++) {
        uint32_t over = n[k] - take(app, c, ipb, n[k], now);
        app->metrics.frames[k] += n[k];
        app->metrics.frames_refused[k] += over;
        if (over > most) {
            most = over;
            worst = k;
        }
        refused += over;
    }
    for (uint32_t i = 0; i < refused; i++) {
        if (rc_auth_bucket_take(&c->refused, REFUSED_RATE, REFUSED_BURST, now))
            continue;
        app->metrics.ws_closes_frames++;
        gw_log_abuse("closing a WebSocket from %s (1008): %s frames over the read budgets (conn_read_rate %u/s, "
                     "ip_read_rate %u/s)",
                     c->peer, kind_names[worst], app->conf->conn_read_rate, app->conf->ip_read_rate);
        c->close_code = GW_CLOSE_POLICY_VIOLATION;
        c->close_sent = 1; /* the guard sends the close frame: nothing may follow it */
        return GW_CLOSE_POLICY_VIOLATION;
    }
    return 0;
}

void gw_ws_frames_setup(void)
{
    gw_wsguard_set_charge(charge);
}

void gw_ws_frames_received(struct gw_conn *c, int final)
{
    if (!c->rx_open)
        c->rx_msgs++;
    c->rx_open = !final;
}

/* Is c's message unfinished? Its number in *id. */
static int message_open(struct gw_conn *c, uint32_t *id)
{
    int open = gw_wsguard_message(lws_get_socket_fd(c->sock), id);
    if (open >= 0)
        return open;
    *id = c->rx_msgs;
    return c->rx_open;
}

void gw_ws_frames_tick(struct gw_app *app)
{
    /* the next sweep (uv_now ms); one app per process (workers are processes) */
    static uint64_t message_sweep_at;
    uint64_t now = uv_now(app->loop);
    uint64_t timeout = (uint64_t)app->conf->message_timeout_ms;
    if (now < message_sweep_at)
        return;
    message_sweep_at = now + (timeout / 4 < SWEEP_MAX_MS ? timeout / 4 : SWEEP_MAX_MS);
    for (struct gw_conn *c = app->conns; c; c = c->next) {
        uint32_t id;
        if (!c->sock || c->close_code || !message_open(c, &id)) {
            c->msg_seen = 0;
            continue;
        }
        if (!c->msg_seen || c->msg_id != id) {
            c->msg_id = id;
            c->msg_seen = now;
            continue;
        }
        if (now - c->msg_seen < timeout)
            continue;
        app->metrics.ws_closes_message++;
        gw_log_abuse("closing a WebSocket from %s (1008): a message unfinished after message_timeout (%llu ms)",
                     c->peer, (unsigned long long)timeout);
        gw_conn_close(c, GW_CLOSE_POLICY_VIOLATION);
    }
}
