/* gw_peers.h - every accepted socket, from accept to close, whatever it
 * becomes (an HTTP request, a WebSocket, nothing at all): the budgets that
 * hold before a client has proven anything (docs/security.md).
 *
 *   accept ──> its address's handshake bucket (ip_handshake_rate): empty,
 *     │          closed at once, before lws reads it or starts TLS
 *     ├──> counted (max_conns in total, max_conns_per_ip per address)
 *     │          over a limit: a few get "503" on their first request,
 *     │          past those the socket is closed at once
 *     ├─ HEADERS deadline (header_timeout, total, from accept)
 *     ├─ BODY    deadline (body_timeout, total, from the end of the headers)
 *     └─ none    (a request being answered, or a WebSocket: idle_timeout)
 *
 * Deadlines are kept in two FIFO lists (every entry of a list has the same
 * timeout, so the oldest is always at the head) and one timer checks the
 * heads: O(1) per socket, nothing scanned. A late socket is closed by lws
 * (LWS_TO_KILL_SYNC from the timer, outside any lws callback).
 *
 * In a worker group ([server] workers > 1) the counts are the group's:
 * each worker keeps its own open sockets and per-address counts live in
 * the shared region (base/gw_group.h) and adds the other workers' to its
 * own at each accept, so max_conns (when set, not auto) and
 * max_conns_per_ip hold across the group (docs/gateway.md, "Workers").
 *
 * The per-address entry also holds the address's read bucket
 * (ip_read_rate), kept after the address's last socket closes until the
 * bucket would be full again, so reconnecting does not refill it.
 */
#ifndef GW_PEERS_H
#define GW_PEERS_H

#include <stdint.h>

#include <uv.h>

struct lws;
struct sockaddr;
struct rc_bucket;
struct gw_peers;
struct gw_group;

/* What to do with a socket just accepted. */
enum gw_peer_verdict {
    GW_PEER_ACCEPT = 0,
    GW_PEER_REFUSE = 1, /* over a limit: answer 503 to its first request, then close */
    GW_PEER_DROP = 2,   /* far over a limit: close at once */
    GW_PEER_RATE = 3,   /* its address is over ip_handshake_rate: close at once (before any TLS handshake) */
};

struct gw_peers_limits {
    unsigned max_conns;        /* resolved (never 0) */
    unsigned max_conns_per_ip;
    uint64_t header_timeout_ms;
    uint64_t body_timeout_ms;
    double ip_read_rate, ip_read_burst;
    double ip_handshake_rate, ip_handshake_burst; /* new sockets per address (per process) */
    struct gw_group *group;    /* a worker group: max_conns_per_ip counts the group's sockets (NULL: one process) */
    unsigned worker;           /* this worker's index in group */
    int group_max_conns;       /* with group: max_conns counts the group's sockets too (it was set,
                                  not auto: auto is each worker's own file descriptor room) */
};

/* Creates the table and its timer on loop. NULL when out of memory. */
struct gw_peers *gw_peers_new(uv_loop_t *loop, const struct gw_peers_limits *limits);

/* Closes the timer (sockets are still tracked until lws has closed them). */
void gw_peers_stop(struct gw_peers *p);

/* Frees the table, once the loop has run the timer's close and lws is gone. */
void gw_peers_free(struct gw_peers *p);

/* LWS_CALLBACK_FILTER_NETWORK_CONNECTION: decides, and for an accepted (or
 * refused) socket remembers its address for the WSI_CREATE that follows. */
enum gw_peer_verdict gw_peers_on_accept(struct gw_peers *p, const struct sockaddr *addr);

/* LWS_CALLBACK_WSI_CREATE / WSI_DESTROY. Creation attaches the remembered
 * address to the wsi (see gw_peers_touch) and starts the header deadline;
 * a wsi lws made itself (the listener) is ignored. Returns RC_E_INTERNAL when out of
 * memory (the socket is then closed). */
int gw_peers_on_create(struct gw_peers *p, struct lws *wsi);
void gw_peers_on_destroy(struct gw_peers *p, struct lws *wsi);

/* Call on every lws callback before anything asks about the wsi: attaches
 * a just-created socket's record (lws clears the opaque user data after
 * WSI_CREATE, so it is attached on the next callback, the adoption one). */
void gw_peers_touch(struct gw_peers *p, struct lws *wsi);

/* The socket's source address ("" for one we did not accept), and whether
 * it was accepted over a limit (answer 503 and close). */
const char *gw_peers_ip(const struct lws *wsi);
int gw_peers_wsi_refused(const struct lws *wsi);

/* Its address's read bucket (NULL for a socket we did not accept). */
struct gw_read_owner;
struct rc_bucket *gw_peers_read_bucket(const struct lws *wsi);

/* Its address's rows of reads in flight (ip_read_rows; made on first use),
 * borrowed while the socket lives; NULL for a socket we did not accept, or
 * out of memory. */
struct gw_read_owner *gw_peers_read_rows(const struct lws *wsi);

/* Moves the socket between deadlines: the request's headers are complete
 * (no deadline while it is answered, or for good once it is a WebSocket),
 * a body follows, the body is complete. (No keep-alive: an answered HTTP
 * connection is closed, gw_http.c.) */
void gw_peers_headers_done(struct lws *wsi);
void gw_peers_body_expected(struct lws *wsi);
void gw_peers_body_done(struct lws *wsi);

/* 1 when the socket's body deadline has passed (checked on each body
 * chunk too, so a late chunk never gets in). */
int gw_peers_body_late(const struct lws *wsi);

/* Sockets open now; closed for a late header or body so far; refused
 * (503 or closed at accept) so far. */
unsigned gw_peers_open(const struct gw_peers *p);
uint64_t gw_peers_timed_out(const struct gw_peers *p);
uint64_t gw_peers_refused(const struct gw_peers *p);

/* Sockets closed at accept because their address was over
 * ip_handshake_rate, so far (not counted in gw_peers_refused). */
uint64_t gw_peers_handshakes_refused(const struct gw_peers *p);

#endif
