/* gw_peers.c - accepted sockets: counts per address, header and body
 * deadlines (see gw_peers.h). */
#include "serve/gw_peers.h"

#include <uv.h>
#include <libwebsockets.h>

#include "rc_err.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/gw_group.h"
#include "base/gw_log.h"
#include "net/gw_iplimit.h"
#include "store/gw_read_gate.h"

/* Sockets accepted over a limit that still get a "503" answer; past these
 * an address (or the process) gets its sockets closed at once. */
#define REFUSE_SLACK 16
#define CHECK_EVERY_MS 200
/* Closing a socket costs lws some work; thousands timing out together
 * (a flood of silent connects) would hold the loop for seconds. So at most
 * this many are closed per turn, and the timer comes back at once for the
 * rest: deadlines slip by milliseconds under a flood, the loop never stalls. */
#define KILLS_PER_TURN 256
#define SWEEP_EVERY_MS 5000

enum list { L_NONE, L_HEADERS, L_BODY };

struct gw_peer {
    struct gw_peer *prev, *next; /* in p->lists[list] */
    struct gw_peers *p;
    struct lws *wsi;
    struct gw_ipentry *entry;    /* counted there while the socket lives */
    uint64_t since_ms;           /* when its current deadline started (uv_now) */
    enum list list;
    int refused;
    char ip[INET6_ADDRSTRLEN];
    uint8_t addr[16];            /* the address as the group's tables key it */
};

struct fifo {
    struct gw_peer *head, *tail;
};

struct gw_peers {
    uv_loop_t *loop;
    uv_timer_t timer;
    struct gw_peers_limits lim;
    struct gw_iplimit *per_ip;
    struct fifo lists[3];        /* [L_HEADERS], [L_BODY]; [L_NONE] unused */
    unsigned open;
    uint64_t timed_out, refused, handshakes_refused, last_sweep_ms;
    /* created, not yet attached: lws sets the wsi's opaque user data to
     * NULL after WSI_CREATE, so it is attached on the wsi's next callback */
    struct gw_peer *created;
    /* the socket between FILTER_NETWORK_CONNECTION and its WSI_CREATE */
    int pending;
    int pending_refused;
    char pending_ip[INET6_ADDRSTRLEN];
    uint8_t pending_addr[16];
    int group_full_logged;       /* the group's address table refused one (logged once) */
};

static void unlink_peer(struct gw_peer *e)
{
    if (e->list == L_NONE)
        return;
    struct fifo *f = &e->p->lists[e->list];
    if (e->prev)
        e->prev->next = e->next;
    else
        f->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        f->tail = e->prev;
    e->prev = e->next = NULL;
    e->list = L_NONE;
}

static void move_to(struct gw_peer *e, enum list to)
{
    unlink_peer(e);
    if (to == L_NONE)
        return;
    struct fifo *f = &e->p->lists[to];
    e->since_ms = uv_now(e->p->loop);
    e->list = to;
    e->prev = f->tail;
    if (f->tail)
        f->tail->next = e;
    else
        f->head = e;
    f->tail = e;
}

/* Closes the sockets whose deadline passed. Each list is in deadline order,
 * so only heads are looked at. */
static void on_timer(uv_timer_t *t)
{
    struct gw_peers *p = t->data;
    uint64_t now = uv_now(p->loop);
    const uint64_t limit[3] = {0, p->lim.header_timeout_ms, p->lim.body_timeout_ms};
    unsigned kills = 0;
    for (int l = L_HEADERS; l <= L_BODY; l++) {
        struct gw_peer *e;
        while ((e = p->lists[l].head) && now - e->since_ms >= limit[l]) {
            if (++kills > KILLS_PER_TURN) {
                uv_timer_start(&p->timer, on_timer, 1, CHECK_EVERY_MS);
                return;
            }
            unlink_peer(e);
            p->timed_out++;
            /* Outside any lws callback, so lws may close it here and now;
             * WSI_DESTROY frees e. */
            lws_set_timeout(e->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_SYNC);
        }
    }
    if (now - p->last_sweep_ms >= SWEEP_EVERY_MS) {
        p->last_sweep_ms = now;
        const struct gw_iplimit_rates r = {p->lim.ip_read_rate, p->lim.ip_read_burst, p->lim.ip_handshake_rate,
                                           p->lim.ip_handshake_burst};
        gw_iplimit_sweep(p->per_ip, (int64_t)now, &r);
    }
}

struct gw_peers *gw_peers_new(uv_loop_t *loop, const struct gw_peers_limits *limits)
{
    struct gw_peers *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    /* A random key for the address table's hash; uv_hrtime when the
     * system has no randomness to give (early boot), never a fixed key. */
    uint64_t seed[2] = {0, 0};
    if (uv_random(NULL, NULL, seed, sizeof seed, 0, NULL) != 0)
        seed[0] = uv_hrtime(), seed[1] = (uint64_t)(uintptr_t)p;
    p->per_ip = gw_iplimit_new((struct rc_hash_key){seed[0], seed[1]});
    if (!p->per_ip) {
        free(p);
        return NULL;
    }
    p->loop = loop;
    p->lim = *limits;
    uv_timer_init(loop, &p->timer);
    p->timer.data = p;
    uv_timer_start(&p->timer, on_timer, CHECK_EVERY_MS, CHECK_EVERY_MS);
    uv_unref((uv_handle_t *)&p->timer);
    return p;
}

void gw_peers_stop(struct gw_peers *p)
{
    if (p && !uv_is_closing((uv_handle_t *)&p->timer))
        uv_close((uv_handle_t *)&p->timer, NULL);
}

void gw_peers_free(struct gw_peers *p)
{
    if (!p)
        return;
    gw_iplimit_free(p->per_ip);
    free(p);
}

static void format_ip(const struct sockaddr *addr, char *out, size_t len)
{
    const void *a = NULL;
    if (addr->sa_family == AF_INET)
        a = &((const struct sockaddr_in *)(const void *)addr)->sin_addr;
    else if (addr->sa_family == AF_INET6)
        a = &((const struct sockaddr_in6 *)(const void *)addr)->sin6_addr;
    if (!a || !inet_ntop(addr->sa_family, a, out, (socklen_t)len))
        snprintf(out, len, "?");
}

/* The address as 16 bytes, IPv4 as ::ffff:a.b.c.d (all zero for another
 * family): the group's tables' key. */
static void addr16(const struct sockaddr *addr, uint8_t out[16])
{
    memset(out, 0, 16);
    if (addr->sa_family == AF_INET) {
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &((const struct sockaddr_in *)(const void *)addr)->sin_addr, 4);
    } else if (addr->sa_family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)(const void *)addr)->sin6_addr, 16);
    }
}

/* This worker's counts changed: the others see them at their next accept. */
static void publish(struct gw_peers *p, const uint8_t addr[16], unsigned from_ip)
{
    if (!p->lim.group)
        return;
    gw_group_set_sockets(p->lim.group, p->lim.worker, p->open);
    if (gw_group_set_addr(p->lim.group, p->lim.worker, addr, from_ip) != 0 && !p->group_full_logged) {
        p->group_full_logged = 1;
        gw_log_warn("workers: this worker's table of source addresses has no room near one address (more than "
                    "about 16,000 addresses hold sockets here): its sockets from such addresses count towards "
                    "max_conns_per_ip on this worker only");
    }
}

enum gw_peer_verdict gw_peers_on_accept(struct gw_peers *p, const struct sockaddr *addr)
{
    char ip[INET6_ADDRSTRLEN];
    uint8_t key[16];
    format_ip(addr, ip, sizeof ip);
    addr16(addr, key);
    /* The handshake budget first: the cheapest refusal, before anything is
     * read or any TLS handshake begins. The entry is made here (it is at
     * WSI_CREATE anyway) so that the bucket outlives the address's sockets
     * until it refills (gw_iplimit_sweep): reconnecting does not refill it. */
    struct gw_ipentry *e = gw_iplimit_get(p->per_ip, ip);
    if (e && !rc_auth_bucket_take(&e->handshakes, p->lim.ip_handshake_rate, p->lim.ip_handshake_burst,
                             (int64_t)uv_now(p->loop))) {
        p->handshakes_refused++;
        return GW_PEER_RATE;
    }
    uint64_t from_ip = e ? e->count : 0, open = p->open;
    if (p->lim.group) {
        from_ip += gw_group_addr_others(p->lim.group, p->lim.worker, key);
        if (p->lim.group_max_conns)
            open += gw_group_sockets_others(p->lim.group, p->lim.worker);
    }
    int refuse = 0;
    if (open >= p->lim.max_conns || from_ip >= p->lim.max_conns_per_ip) {
        if (open >= (uint64_t)p->lim.max_conns + REFUSE_SLACK ||
            from_ip >= (uint64_t)p->lim.max_conns_per_ip + REFUSE_SLACK) {
            p->refused++;
            return GW_PEER_DROP;
        }
        refuse = 1;
        p->refused++;
    }
    p->pending = 1;
    p->pending_refused = refuse;
    memcpy(p->pending_ip, ip, sizeof ip);
    memcpy(p->pending_addr, key, sizeof key);
    return refuse ? GW_PEER_REFUSE : GW_PEER_ACCEPT;
}

int gw_peers_on_create(struct gw_peers *p, struct lws *wsi)
{
    if (!p->pending)
        return 0; /* not one of ours (the listening socket) */
    p->pending = 0;
    struct gw_peer *e = calloc(1, sizeof *e);
    struct gw_ipentry *ent = gw_iplimit_get(p->per_ip, p->pending_ip);
    if (!e || !ent) {
        free(e);
        return RC_E_INTERNAL;
    }
    e->p = p;
    e->wsi = wsi;
    e->entry = ent;
    e->refused = p->pending_refused;
    memcpy(e->ip, p->pending_ip, sizeof e->ip);
    memcpy(e->addr, p->pending_addr, sizeof e->addr);
    ent->count++;
    p->open++;
    publish(p, e->addr, ent->count);
    p->created = e;
    move_to(e, L_HEADERS);
    return 0;
}

void gw_peers_touch(struct gw_peers *p, struct lws *wsi)
{
    if (p->created && p->created->wsi == wsi) {
        lws_set_opaque_user_data(wsi, p->created);
        p->created = NULL;
    }
}

void gw_peers_on_destroy(struct gw_peers *p, struct lws *wsi)
{
    gw_peers_touch(p, wsi);
    struct gw_peer *e = lws_get_opaque_user_data(wsi);
    if (!e || e->p != p)
        return;
    lws_set_opaque_user_data(wsi, NULL);
    unlink_peer(e);
    e->entry->count--;
    p->open--;
    publish(p, e->addr, e->entry->count);
    free(e);
}

static struct gw_peer *peer(const struct lws *wsi)
{
    return wsi ? lws_get_opaque_user_data(wsi) : NULL;
}

const char *gw_peers_ip(const struct lws *wsi)
{
    struct gw_peer *e = peer(wsi);
    return e ? e->ip : "";
}

int gw_peers_wsi_refused(const struct lws *wsi)
{
    struct gw_peer *e = peer(wsi);
    return e && e->refused;
}

struct rc_bucket *gw_peers_read_bucket(const struct lws *wsi)
{
    struct gw_peer *e = peer(wsi);
    return e ? &e->entry->reads : NULL;
}

struct gw_read_owner *gw_peers_read_rows(const struct lws *wsi)
{
    struct gw_peer *e = peer(wsi);
    if (e && !e->entry->read_rows)
        e->entry->read_rows = gw_read_gate_owner_new();
    return e ? e->entry->read_rows : NULL;
}

void gw_peers_headers_done(struct lws *wsi)
{
    struct gw_peer *e = peer(wsi);
    if (e)
        move_to(e, L_NONE);
}

void gw_peers_body_expected(struct lws *wsi)
{
    struct gw_peer *e = peer(wsi);
    if (e)
        move_to(e, L_BODY);
}

void gw_peers_body_done(struct lws *wsi)
{
    struct gw_peer *e = peer(wsi);
    if (e)
        move_to(e, L_NONE);
}

int gw_peers_body_late(const struct lws *wsi)
{
    struct gw_peer *e = peer(wsi);
    return e && e->list == L_BODY && uv_now(e->p->loop) - e->since_ms >= e->p->lim.body_timeout_ms;
}

unsigned gw_peers_open(const struct gw_peers *p)
{
    return p->open;
}

uint64_t gw_peers_timed_out(const struct gw_peers *p)
{
    return p->timed_out;
}

uint64_t gw_peers_refused(const struct gw_peers *p)
{
    return p->refused;
}

uint64_t gw_peers_handshakes_refused(const struct gw_peers *p)
{
    return p->handshakes_refused;
}
