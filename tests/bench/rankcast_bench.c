/* rankcast_bench.c - rankcast-bench, the load tool of the benchmarks (issue 6).
 *
 * libwebsockets clients on libuv, two threads, each with its own loop and lws
 * context:
 *   - the main thread: N viewer connections, their source addresses spread
 *     round robin over 127.0.0.A..127.0.0.B (so neither one address's
 *     ephemeral ports nor the gateway's max_conns_per_ip caps them), each
 *     subscribed to one view of one board (boards taken round robin); it
 *     also runs the phases and writes the report;
 *   - the writer thread: W writer connections carrying the admin key,
 *     sending writes paced at --rate per second (a 1 ms timer hands out what
 *     is due) or, with --rate 0, as fast as acks come back (--inflight per
 *     connection). A thread of its own, so reading thousands of viewers'
 *     deltas never holds the writes back;
 *   - for every write, the time from sending it to each viewer receiving the
 *     message that shows it.
 *
 * How a write is matched to what shows it: every accepted write gets the
 * board's next seq (PROTOCOL.md), and a delta or snapshot with seq S shows
 * the board as of S. So a viewer receiving seq S has now seen every write
 * with seq in (its last seq, S]. The ack tells the writer thread each write's
 * seq, and it stores the send time per board and seq (a preallocated table
 * of atomics the main thread reads). The default op is `set` with a value
 * that grows by one per write on that board, so every write changes the top
 * of the board and no write waits for a later one to become visible. A
 * delta that arrives before the ack of a write it shows is matched at the
 * end of the run.
 *
 * --verify (windows): each viewer keeps its window exactly as PROTOCOL.md
 * says a client must; once every write is answered the bench reads the true
 * window from Redis (ZRANGE ... REV WITHSCORES, ZCARD) and records when each
 * viewer's window became equal to it.
 *
 * --deflate: the viewers offer permessage-deflate (the writers never do);
 * the JSON's "wire" object then says what went over the wire: the gateway's
 * own payload byte and compression counters (GET /metrics at the start and
 * the end of the measurement) and the reply bytes the writers received
 * (acks: plain, so counted as received), so a case can report bytes per
 * delivered delta with and without compression.
 *
 * --idle-only: connect and subscribe, hold for --hold seconds, report how
 * many connections were still held. The open-file limit is per process: run
 * several of these for more connections than one process may open.
 *
 * Output: one JSON object on one line on stdout. Progress goes to stderr.
 * Exit status 0 when the run happened (the numbers say how it went), 1 on
 * a bad option, 2 when the tool itself could not run.
 */
#include <uv.h>
#include <libwebsockets.h>

#include <getopt.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_hist.h"
#include "bench_metrics.h"
#include "bench_proc.h"
#include "bench_scan.h"
#include "bench_window.h"

#define RING_BITS 20
#define RING_SIZE (1u << RING_BITS)     /* writes in flight, by id */
#define WRITES_PER_CALLBACK 256         /* then yield: enough to catch up after a stall */
#define RX_MAX (8u << 20)               /* largest message reassembled */
#define PENDING_MAX (4u << 20)          /* messages whose writes' acks had not come yet */
#define CLOSED_LOOP_TRACK (4u << 20)    /* send times kept per run when writes are not paced */
#define CONNECT_ATTEMPTS 3
#define SETTLE_CHECK_TICKS 20           /* ms between "are we done" scans */
#define TX_MAX 1024

enum phase { P_CONNECT, P_WRITE, P_SETTLE, P_HOLD, P_DONE };
enum conn_state { CS_NEW, CS_CONNECTING, CS_OPEN, CS_RETRY, CS_GONE };
enum view_kind { V_TOP, V_PAGE, V_FEED };

static const char *const error_codes[] = {"bad_request", "unknown_board", "unauthorized", "forbidden",
                                          "out_of_range", "rate_limited", "unavailable", "too_large",
                                          "internal", "other"};
#define NCODES (sizeof error_codes / sizeof error_codes[0])

/* Set up by the main thread before the writer thread may touch it (the
 * phase change to P_WRITE publishes it); sent_us and max_seq are then
 * written by the writer thread and read by the main thread. */
struct board {
    char name[65];
    int64_t base_seq;            /* seq of sent_us[0]: first seq after the viewers' snapshots; -1: none */
    _Atomic(int64_t) *sent_us;   /* send time of seq base_seq + i, 0 while unknown */
    size_t sent_cap;
    _Atomic(int64_t) max_seq;    /* highest seq acked */
    uint64_t writes;             /* writer thread: writes issued to it (the set values) */
    unsigned viewers;
    struct bench_row *target;    /* --verify: the window Redis holds after the writes */
    size_t ntarget;
    int64_t target_total;
};

/* A connection: viewers belong to the main thread, writers to the writer thread. */
struct conn {
    struct lws *wsi;
    unsigned idx;        /* position among all connections: picks the source address */
    uint8_t writer;
    uint8_t state;       /* enum conn_state */
    uint8_t subscribed;  /* viewer: first snapshot received */
    uint8_t sub_sent;
    uint8_t sub_failed;
    uint8_t attempts;
    uint8_t resolved;    /* done connecting: open and subscribed, refused, or given up */
    uint32_t board;      /* viewer: its board */
    int64_t next_seq;    /* viewer: first seq not yet seen */
    uint32_t inflight;   /* writer: writes awaiting an answer */
    uint64_t backlog;    /* writer: paced writes due, not yet sent */
    char *rx;
    size_t rx_len, rx_cap;
    struct bench_window win;
    int64_t changed_us;   /* --verify: when its window last changed */
    int64_t converged_us; /* --verify: when it first equalled Redis, or -1 */
};

struct wslot {
    int64_t send_us;
    uint32_t board;
    uint32_t live;
};

/* Writes first..last of a board reached a viewer at recv_us, before the
 * writer thread had the ack of (some of) them: matched at the end. */
struct pend {
    uint32_t board;
    int64_t first, last;
    int64_t recv_us;
};

struct options {
    const char *host, *path, *key, *label, *ready_file, *redis_host, *order;
    int port, redis_port;
    unsigned viewers, writers, members, inflight, conc, src_first, src_last, src_offset, tb_bits;
    double rate, duration, settle, connect_timeout, hold;
    uint64_t writes_cap;
    int op_incr, idle_only, verify, lws_log, deflate, jitter;
    long gateway_pid;
    enum view_kind view;
    int64_t view_offset;
    uint32_t view_limit;
};

/* Read-only once the threads run. */
static struct options O;
static struct board *boards;
static unsigned nboards;

static _Atomic int phase = P_CONNECT;
static _Atomic(int64_t) write_start_us;

/* The writer thread's state. The atomics are read by the main thread while
 * it runs; everything else only after it has been joined. */
static struct {
    uv_loop_t loop;
    struct lws_context *ctx;
    uv_timer_t timer;
    uv_async_t wake;
    uv_thread_t thread;
    int running;
    struct conn *conns;
    unsigned next_open, connecting;
    _Atomic unsigned open, given_up;
    _Atomic(uint64_t) issued, sent, answered;
    uint64_t reissued;           /* paced writes handed back by a closed writer and issued again */
    uint64_t acked, errors, lost, unknown, untracked;
    uint64_t reply_bytes; /* payload bytes of every reply the writers received */
    uint64_t err_by_code[NCODES];
    unsigned closes, connect_errors;
    struct bench_hist ack;
    int64_t last_send_us;
    unsigned rr_writer;
    uint64_t rr_board;
    int writing;
    struct wslot *ring;
    unsigned char tx[LWS_PRE + TX_MAX];
} W;

/* The main thread's state. */
static struct {
    uv_loop_t loop;
    struct lws_context *ctx;
    uv_timer_t timer;
    uv_signal_t sigint, sigterm;
    uint64_t ticks;
    int64_t last_tick_us;
    struct bench_hist stall; /* gaps between 1 ms ticks while measuring: the bench's own delays */

    struct conn *conns;      /* the viewers */
    unsigned next_open, connecting;
    unsigned *retry;
    unsigned nretry;
    unsigned viewers_open, subscribed, sub_errors, connect_errors, resolved;
    unsigned closes;
    unsigned close_codes[5]; /* 1000, 1001, 1006, 1008/1009, other */
    uint64_t err_by_code[NCODES];

    struct bench_hist lat;
    uint64_t messages, resyncs, other_msgs;
    uint64_t message_bytes;  /* payload bytes of the messages counted in messages */
    struct pend *pending;
    size_t npending;
    uint64_t unmatched;

    int64_t start_us, connected_us, write_end_us, done_us, deadline_us, hold_end_us;
    struct bench_proc gw0, gw1;
    int gw_ok, peak_reset;
    struct bench_metrics m0, m1; /* the gateway's /metrics at the start and the end */
    int m_ok;
    unsigned deflate_open;       /* viewers whose handshake agreed permessage-deflate */
    unsigned writers_open_at_end; /* before the writer thread closes them */

    struct bench_parser *parser;
    int target_ready;
    int64_t target_us;
    char verify_error[512];

    unsigned char tx[LWS_PRE + TX_MAX];
    int fatal;
    char fatal_msg[200];
} B;

static int64_t now_us(void)
{
    return (int64_t)(uv_hrtime() / 1000);
}

static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rankcast-bench%s%s: ", O.label ? " " : "", O.label ? O.label : "");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void count_error(uint64_t *by_code, const char *js, size_t len)
{
    char code[32];
    unsigned i = NCODES - 1;
    if (bench_scan_str(js, len, "\"code\"", code, sizeof code) == 0)
        for (unsigned k = 0; k + 1 < NCODES; k++)
            if (strcmp(code, error_codes[k]) == 0)
                i = k;
    by_code[i]++;
}

/* ---- send times per board and seq ------------------------------------------------ */

/* Writer thread: seq was the answer to a write sent at send_us. */
static void record_sent(struct board *b, int64_t seq, int64_t send_us)
{
    if (seq > atomic_load_explicit(&b->max_seq, memory_order_relaxed))
        atomic_store_explicit(&b->max_seq, seq, memory_order_release);
    if (!b->sent_us || seq < b->base_seq)
        return;
    size_t i = (size_t)(seq - b->base_seq);
    if (i >= b->sent_cap) {
        W.untracked++;
        return;
    }
    atomic_store_explicit(&b->sent_us[i], send_us, memory_order_release);
}

/* Main thread: when the write with this seq was sent, 0 while unknown. */
static int64_t sent_time(const struct board *b, int64_t seq)
{
    size_t i = (size_t)(seq - b->base_seq);
    return b->sent_us && i < b->sent_cap ? atomic_load_explicit(&b->sent_us[i], memory_order_acquire) : 0;
}

/* Main thread, before writing starts: a send-time table for every board
 * with viewers, big enough for every write the run will send it. */
static int alloc_tables(void)
{
    uint64_t total = O.writes_cap ? O.writes_cap
                     : O.rate > 0 ? (uint64_t)(O.rate * (O.duration + 1)) + 1000
                                  : CLOSED_LOOP_TRACK;
    if (O.writes_cap && O.rate > 0 && (uint64_t)(O.rate * (O.duration + 1)) < total)
        total = (uint64_t)(O.rate * (O.duration + 1)) + 1000;
    size_t per_board = (size_t)(total / nboards) + 1024;
    for (unsigned i = 0; i < nboards; i++) {
        struct board *b = &boards[i];
        if (b->base_seq < 0)
            continue;
        b->sent_us = calloc(per_board, sizeof *b->sent_us);
        if (!b->sent_us)
            return -1;
        b->sent_cap = per_board;
    }
    return 0;
}

/* ---- viewers (main thread) ----------------------------------------------------------- */

/* Viewer v now shows its board as of seq: each write in (v's last seq, seq]
 * reached this screen now. */
static void deliver(struct conn *v, int64_t seq, int64_t now)
{
    struct board *b = &boards[v->board];
    if (seq < v->next_seq)
        return;
    if (b->base_seq >= 0) {
        int64_t from = v->next_seq > b->base_seq ? v->next_seq : b->base_seq;
        for (int64_t s = from; s <= seq; s++) {
            int64_t t = sent_time(b, s);
            if (t) {
                bench_hist_add(&B.lat, now - t);
            } else if (B.npending < PENDING_MAX) {
                B.pending[B.npending++] = (struct pend){v->board, s, seq, now};
                break;
            } else {
                B.unmatched += (uint64_t)(seq - s + 1);
                break;
            }
        }
    }
    v->next_seq = seq + 1;
}

/* Deliveries that came before their write's ack, matched at the end. */
static void resolve_pending(void)
{
    for (size_t i = 0; i < B.npending; i++) {
        const struct pend *p = &B.pending[i];
        for (int64_t s = p->first; s <= p->last; s++) {
            int64_t t = sent_time(&boards[p->board], s);
            if (t)
                bench_hist_add(&B.lat, p->recv_us - t);
            else
                B.unmatched++;
        }
    }
    B.npending = 0;
}

/* A viewer is done connecting: subscribed, refused, or given up on. */
static void resolve_viewer(struct conn *c)
{
    if (!c->resolved) {
        c->resolved = 1;
        B.resolved++;
    }
}

static int window_matches(const struct conn *v)
{
    const struct board *b = &boards[v->board];
    return bench_window_equal(&v->win, b->target, b->ntarget, b->target_total);
}

static void verify_apply(struct conn *v, const char *js, size_t len, int64_t now)
{
    const struct bench_msg *m = bench_parse(B.parser, js, len);
    if (!m)
        return;
    if (bench_window_apply(&v->win, m, O.view_offset + 1, O.view_limit) != 0)
        return;
    v->changed_us = now;
    if (B.target_ready && v->converged_us < 0 && window_matches(v))
        v->converged_us = now;
}

/* points from a stored composite: floor(c / 2^tb_bits) (core/rc_codec.c) */
static double points_of(double composite)
{
    return floor(composite / ldexp(1.0, (int)O.tb_bits));
}

/* Reads each board's true window (and size) from Redis, once every write is
 * answered; then marks the viewers already equal to it. Blocking, but only
 * for one short read per board after the load. */
static void read_targets(void)
{
    struct timeval tv = {2, 0};
    redisContext *rc = redisConnectWithTimeout(O.redis_host, O.redis_port, tv);
    B.target_ready = 1;
    B.target_us = now_us();
    if (!rc || rc->err) {
        snprintf(B.verify_error, sizeof B.verify_error, "redis %s:%d: %s", O.redis_host, O.redis_port,
                 rc ? rc->errstr : "out of memory");
        if (rc)
            redisFree(rc);
        return;
    }
    redisSetTimeout(rc, tv);
    int rev = strcmp(O.order, "asc") != 0;
    for (unsigned i = 0; i < nboards; i++) {
        struct board *b = &boards[i];
        char key[128];
        snprintf(key, sizeof key, "rc:{%s|}:z", b->name);
        long long first = O.view_offset, last = O.view_offset + O.view_limit - 1;
        redisReply *r = rev ? redisCommand(rc, "ZRANGE %s %lld %lld REV WITHSCORES", key, first, last)
                            : redisCommand(rc, "ZRANGE %s %lld %lld WITHSCORES", key, first, last);
        redisReply *z = redisCommand(rc, "ZCARD %s", key);
        if (!r || r->type != REDIS_REPLY_ARRAY || !z || z->type != REDIS_REPLY_INTEGER) {
            snprintf(B.verify_error, sizeof B.verify_error, "reading %s: %s", key,
                     r && r->type == REDIS_REPLY_ERROR ? r->str : rc->errstr);
        } else {
            b->ntarget = r->elements / 2;
            b->target = calloc(b->ntarget + 1, sizeof *b->target);
            for (size_t k = 0; b->target && k < b->ntarget; k++) {
                const redisReply *m = r->element[2 * k], *s = r->element[2 * k + 1];
                b->target[k].member = bench_intern(B.parser, m->str, m->len);
                b->target[k].score = points_of(strtod(s->str, NULL));
            }
            b->target_total = z->integer;
        }
        if (r)
            freeReplyObject(r);
        if (z)
            freeReplyObject(z);
    }
    redisFree(rc);
    for (unsigned i = 0; i < O.viewers; i++) {
        struct conn *v = &B.conns[i];
        if (v->subscribed && v->converged_us < 0 && window_matches(v))
            v->converged_us = v->changed_us;
    }
}

static void on_viewer_message(struct conn *v, const char *js, size_t len)
{
    char op[16];
    int64_t seq = -1, now = now_us();
    if (bench_scan_str(js, len, "\"op\"", op, sizeof op) != 0) {
        B.other_msgs++;
        return;
    }
    bench_scan_int(js, len, "\"seq\"", &seq);
    if (strcmp(op, "delta") == 0 || strcmp(op, "event") == 0) {
        if (!v->subscribed)
            return;
        B.messages++;
        B.message_bytes += len;
        deliver(v, seq, now);
    } else if (strcmp(op, "snapshot") == 0) {
        if (!v->subscribed) {
            struct board *b = &boards[v->board];
            v->subscribed = 1;
            v->next_seq = seq + 1;
            B.subscribed++;
            resolve_viewer(v);
            if (atomic_load(&phase) == P_CONNECT && (b->base_seq < 0 || seq + 1 < b->base_seq))
                b->base_seq = seq + 1;
        } else {
            B.messages++;
            B.message_bytes += len;
            B.resyncs++;
            deliver(v, seq, now);
        }
    } else if (strcmp(op, "error") == 0) {
        count_error(B.err_by_code, js, len);
        if (!v->subscribed && !v->sub_failed) {
            v->sub_failed = 1;
            B.sub_errors++;
            resolve_viewer(v);
        }
        return;
    } else {
        B.other_msgs++;
        return;
    }
    if (O.verify)
        verify_apply(v, js, len, now);
}

static int send_subscribe(struct conn *c)
{
    char *p = (char *)B.tx + LWS_PRE;
    char view[96];
    if (O.view == V_TOP)
        snprintf(view, sizeof view, "{\"top\":%u}", O.view_limit);
    else if (O.view == V_PAGE)
        snprintf(view, sizeof view, "{\"offset\":%" PRId64 ",\"limit\":%u}", O.view_offset, O.view_limit);
    else
        snprintf(view, sizeof view, "{\"feed\":true}");
    int n = snprintf(p, TX_MAX, "{\"op\":\"subscribe\",\"board\":\"%s\",\"view\":%s,\"id\":%u}",
                     boards[c->board].name, view, c->idx);
    c->sub_sent = 1;
    return lws_write(c->wsi, (unsigned char *)p, (size_t)n, LWS_WRITE_TEXT);
}

/* ---- writers (writer thread) -------------------------------------------------------------- */

static int write_wanted(const struct conn *w)
{
    if (w->state != CS_OPEN || w->inflight >= O.inflight)
        return 0;
    if (O.rate > 0)
        return w->backlog > 0;
    return atomic_load(&phase) == P_WRITE && (!O.writes_cap || atomic_load(&W.sent) < O.writes_cap);
}

static void on_writer_message(struct conn *w, const char *js, size_t len)
{
    char op[16];
    int64_t id = -1, seq = -1, now = now_us();
    W.reply_bytes += len;
    if (bench_scan_str(js, len, "\"op\"", op, sizeof op) != 0 || bench_scan_int(js, len, "\"id\"", &id) != 0) {
        W.unknown++;
        return;
    }
    struct wslot *s = &W.ring[(uint64_t)id & (RING_SIZE - 1)];
    if (!s->live) {
        W.unknown++;
        return;
    }
    s->live = 0;
    if (w->inflight)
        w->inflight--;
    if (strcmp(op, "ack") == 0 && bench_scan_int(js, len, "\"seq\"", &seq) == 0) {
        W.acked++;
        bench_hist_add(&W.ack, now - s->send_us);
        record_sent(&boards[s->board], seq, s->send_us);
    } else {
        W.errors++;
        if (strcmp(op, "error") == 0)
            count_error(W.err_by_code, js, len);
        else
            W.err_by_code[NCODES - 1]++;
    }
    atomic_fetch_add(&W.answered, 1);
    if (write_wanted(w))
        lws_callback_on_writable(w->wsi);
}

/* Sends one write on w; returns lws_write's result. */
static int send_write(struct conn *w)
{
    uint64_t id = atomic_load_explicit(&W.sent, memory_order_relaxed) + 1;
    uint32_t bi = (uint32_t)(W.rr_board++ % nboards);
    struct board *b = &boards[bi];
    uint64_t k = ++b->writes;
    char *p = (char *)W.tx + LWS_PRE;
    int n;
    if (O.op_incr)
        n = snprintf(p, TX_MAX, "{\"op\":\"incr\",\"board\":\"%s\",\"member\":\"u:%u\",\"delta\":1,\"id\":%" PRIu64 "}",
                     b->name, (unsigned)(((uint64_t)rand() << 16 ^ (uint64_t)rand()) % O.members), id);
    else
        n = snprintf(p, TX_MAX, "{\"op\":\"set\",\"board\":\"%s\",\"member\":\"u:%" PRIu64 "\",\"value\":%" PRIu64
                     ",\"id\":%" PRIu64 "}", b->name, k % O.members, k, id);
    struct wslot *s = &W.ring[id & (RING_SIZE - 1)];
    if (s->live) { /* its answer never came and the ring wrapped */
        W.lost++;
        atomic_fetch_add(&W.answered, 1);
    }
    int64_t t = now_us();
    *s = (struct wslot){t, bi, 1};
    w->inflight++;
    W.last_send_us = t;
    atomic_store(&W.sent, id);
    return lws_write(w->wsi, (unsigned char *)p, (size_t)n, LWS_WRITE_TEXT);
}

static int writer_writeable(struct conn *w)
{
    for (int n = 0; n < WRITES_PER_CALLBACK && write_wanted(w); n++) {
        if (n && lws_send_pipe_choked(w->wsi))
            break;
        if (O.rate > 0)
            w->backlog--;
        if (send_write(w) < 0)
            return -1;
    }
    if (write_wanted(w))
        lws_callback_on_writable(w->wsi);
    return 0;
}

/* Hands the writes due by now to the open writers, round robin. */
static void pace(int64_t now)
{
    double el = (double)(now - atomic_load(&write_start_us)) / 1e6;
    uint64_t due = (uint64_t)(O.rate * (el < O.duration ? el : O.duration));
    uint64_t issued = atomic_load(&W.issued);
    if (O.jitter && due > issued) {
        /* --jitter: write k is due at (k + u) / rate, u uniform in [0, 0.5),
         * so writes land at every phase of the gateway's tick instead of a
         * fixed one, yet stay at least half a period apart. One at a time. */
        static double next_at = -1;
        static uint64_t rng = 0x9e3779b97f4a7c15u;
        if (next_at < 0) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            next_at = ((double)issued + (double)(rng >> 11) / 9007199254740992.0 * 0.5) / O.rate;
        }
        if (el < next_at)
            return;
        next_at = -1;
        due = issued + 1;
    }
    if (O.writes_cap && due > O.writes_cap)
        due = O.writes_cap;
    if (!atomic_load(&W.open) || due <= issued)
        return;
    while (issued < due) {
        struct conn *w = &W.conns[W.rr_writer++ % O.writers];
        if (w->state != CS_OPEN)
            continue;
        w->backlog++;
        issued++;
    }
    atomic_store(&W.issued, issued);
    for (unsigned i = 0; i < O.writers; i++)
        if (write_wanted(&W.conns[i]))
            lws_callback_on_writable(W.conns[i].wsi);
}

/* ---- connections (both threads: each its own) -------------------------------------------- */

static const struct lws_protocols protocols[];

static void open_conn(struct conn *c)
{
    char src[16], host[64];
    unsigned span = O.src_last - O.src_first + 1;
    snprintf(src, sizeof src, "127.0.0.%u", O.src_first + (c->idx + O.src_offset) % span);
    snprintf(host, sizeof host, "%s:%d", O.host, O.port);
    struct lws_client_connect_info i;
    memset(&i, 0, sizeof i);
    i.context = c->writer ? W.ctx : B.ctx;
    i.address = O.host;
    i.port = O.port;
    i.path = O.path;
    i.host = host;
    i.protocol = "rankcast.v1";
    i.local_protocol_name = "rankcast.v1";
    i.iface = src;
    i.userdata = c;
    i.pwsi = &c->wsi;
    c->attempts++;
    c->state = CS_CONNECTING;
    if (c->writer)
        W.connecting++;
    else
        B.connecting++;
    if (!lws_client_connect_via_info(&i) && c->state == CS_CONNECTING) {
        /* failed at once, without CONNECTION_ERROR */
        c->state = CS_GONE;
        c->wsi = NULL;
        if (c->writer) {
            W.connecting--;
            W.connect_errors++;
            atomic_fetch_add(&W.given_up, 1);
        } else {
            B.connecting--;
            B.connect_errors++;
            resolve_viewer(c);
        }
    }
}

static void pump_viewer_connects(void)
{
    while (B.connecting < O.conc && B.nretry) {
        struct conn *c = &B.conns[B.retry[--B.nretry]];
        if (c->state == CS_RETRY)
            open_conn(c);
    }
    while (B.connecting < O.conc && B.next_open < O.viewers)
        open_conn(&B.conns[B.next_open++]);
}

static void on_connect_error(struct conn *c, const char *why)
{
    if (c->state != CS_CONNECTING)
        return;
    c->wsi = NULL;
    if (c->writer) {
        W.connecting--;
        if (c->attempts < CONNECT_ATTEMPTS && atomic_load(&phase) == P_CONNECT) {
            c->state = CS_NEW; /* the writer thread's tick opens it again */
            return;
        }
        c->state = CS_GONE;
        W.connect_errors++;
        atomic_fetch_add(&W.given_up, 1);
        say("writer %u failed: %s", c->idx, why ? why : "(no reason)");
        return;
    }
    B.connecting--;
    if (atomic_load(&phase) == P_CONNECT && c->attempts < CONNECT_ATTEMPTS) {
        c->state = CS_RETRY;
        B.retry[B.nretry++] = (unsigned)(c - B.conns);
        return;
    }
    c->state = CS_GONE;
    B.connect_errors++;
    resolve_viewer(c);
    if (B.connect_errors <= 5)
        say("viewer %u failed: %s", c->idx, why ? why : "(no reason)");
}

static void on_established(struct conn *c)
{
    c->state = CS_OPEN;
    /* lws 4.1 inflates 1 KiB per turn and, on libuv, stalls between turns
     * until another socket event (see gateway/serve/gw_ws.c): inflate a
     * whole message (up to the protocol's 64 KiB rx buffer) at once. -1:
     * not negotiated. */
    if (!c->writer && O.deflate && lws_set_extension_option(c->wsi, "permessage-deflate", "rx_buf_size", "16") == 0)
        B.deflate_open++;
    if (c->writer) {
        W.connecting--;
        atomic_fetch_add(&W.open, 1);
        if (W.writing)
            lws_callback_on_writable(c->wsi);
    } else {
        B.connecting--;
        B.viewers_open++;
        lws_callback_on_writable(c->wsi);
    }
}

static void on_closed(struct conn *c)
{
    if (c->state == CS_RETRY || c->state == CS_GONE || c->state == CS_NEW)
        return; /* a failed connect, already counted */
    if (c->state == CS_CONNECTING) {
        on_connect_error(c, "closed during the handshake");
        return;
    }
    int done = atomic_load(&phase) == P_DONE;
    if (c->writer) {
        atomic_fetch_sub(&W.open, 1);
        if (!done) {
            W.closes++;
            W.lost += c->inflight;
            atomic_fetch_add(&W.answered, c->inflight);
            /* Its paced writes not sent yet go back to pace(), which hands
             * them to the open writers: left issued, they would never be
             * sent, so --verify would never see sent reach issued and never
             * read Redis's window (bench case E's "0 of 100 equal, last at
             * 0.0 ms"). (pace and this run on the writer thread.) */
            atomic_fetch_sub(&W.issued, c->backlog);
            W.reissued += c->backlog;
        }
        c->backlog = 0;
    } else {
        B.viewers_open--;
        if (!done)
            B.closes++;
        resolve_viewer(c);
    }
    c->state = CS_GONE;
    c->wsi = NULL;
    c->inflight = 0;
}

/* Reassembles fragments (lws may split a message under load), then hands
 * the whole message on. */
static int on_receive(struct conn *c, struct lws *wsi, const char *in, size_t len)
{
    int final = lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0;
    const char *msg = in;
    size_t n = len;
    if (c->rx_len || !final) {
        if (c->rx_len + len > RX_MAX)
            return -1;
        if (c->rx_len + len > c->rx_cap) {
            size_t cap = c->rx_cap ? c->rx_cap : 4096;
            while (cap < c->rx_len + len)
                cap *= 2;
            char *rx = realloc(c->rx, cap);
            if (!rx)
                return -1;
            c->rx = rx;
            c->rx_cap = cap;
        }
        memcpy(c->rx + c->rx_len, in, len);
        c->rx_len += len;
        if (!final)
            return 0;
        msg = c->rx;
        n = c->rx_len;
        c->rx_len = 0;
    }
    if (c->writer)
        on_writer_message(c, msg, n);
    else
        on_viewer_message(c, msg, n);
    return 0;
}

static void note_close_code(const struct conn *c, const void *in, size_t len)
{
    if (c->writer || atomic_load(&phase) == P_DONE)
        return;
    unsigned code = len >= 2 ? ((unsigned)((const unsigned char *)in)[0] << 8 | ((const unsigned char *)in)[1]) : 0;
    B.close_codes[code == 1000 ? 0 : code == 1001 ? 1 : code == 1006 ? 2 : (code == 1008 || code == 1009) ? 3 : 4]++;
}

/* The one lws callback of both contexts: each connection's events arrive on
 * the thread that owns it. */
static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    struct conn *c = user;
    switch (reason) {
    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
        if (c && c->writer && O.key) {
            unsigned char **p = in, *end = *p + len;
            char auth[200];
            int n = snprintf(auth, sizeof auth, "Bearer %s", O.key);
            if (lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, (unsigned char *)auth, n, p, end))
                return -1;
        }
        return 0;
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        if (c)
            on_connect_error(c, in ? (const char *)in : NULL);
        return 0;
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        if (c)
            on_established(c);
        return 0;
    case LWS_CALLBACK_CLIENT_RECEIVE:
        return c ? on_receive(c, wsi, in, len) : 0;
    case LWS_CALLBACK_CLIENT_WRITEABLE:
        if (!c || c->state != CS_OPEN || atomic_load(&phase) == P_DONE)
            return 0;
        if (c->writer)
            return writer_writeable(c);
        return c->sub_sent ? 0 : (send_subscribe(c) < 0 ? -1 : 0);
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        if (c)
            note_close_code(c, in, len);
        return 0;
    case LWS_CALLBACK_CLIENT_CLOSED:
        if (c)
            on_closed(c);
        return 0;
    default:
        return 0;
    }
}

static const struct lws_protocols protocols[] = {
    {"rankcast.v1", callback, 0, 64 * 1024, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* Offered by the viewers with --deflate, as browsers offer it. */
static const struct lws_extension deflate_ext[] = {
    {"permessage-deflate", lws_extension_callback_pm_deflate, "permessage-deflate; client_max_window_bits"},
    {NULL, NULL, NULL},
};

static struct lws_context *new_context(uv_loop_t *loop, struct lws_context **pctx, int deflate)
{
    struct lws_context_creation_info info;
    void *foreign[1] = {loop};
    memset(&info, 0, sizeof info);
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.protocols = protocols;
    info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_DISABLE_IPV6;
    info.foreign_loops = foreign;
    info.pcontext = pctx;
    if (deflate)
        info.extensions = deflate_ext;
    info.timeout_secs = 20;
    info.connect_timeout_secs = 20;
    /* lws clears *pcontext when the context is gone, but does not set it */
    *pctx = lws_create_context(&info);
    return *pctx;
}

/* ---- the writer thread --------------------------------------------------------------------- */

static void on_writer_tick(uv_timer_t *t)
{
    (void)t;
    int ph = atomic_load(&phase);
    if (ph == P_CONNECT) {
        for (unsigned i = 0; i < O.writers && W.connecting < O.conc; i++)
            if (W.conns[i].state == CS_NEW)
                open_conn(&W.conns[i]);
        return;
    }
    if (ph != P_WRITE && ph != P_SETTLE)
        return;
    if (!W.writing) {
        W.writing = 1;
        for (unsigned i = 0; i < O.writers; i++)
            if (W.conns[i].state == CS_OPEN)
                lws_callback_on_writable(W.conns[i].wsi);
    }
    if (O.rate > 0)
        pace(now_us());
}

/* The main thread says stop: close everything on this loop. */
static void on_writer_wake(uv_async_t *a)
{
    (void)a;
    if (atomic_load(&phase) != P_DONE)
        return;
    uv_timer_stop(&W.timer);
    uv_close((uv_handle_t *)&W.timer, NULL);
    uv_close((uv_handle_t *)&W.wake, NULL);
    if (W.ctx)
        lws_context_destroy(W.ctx);
}

static void writer_thread(void *arg)
{
    (void)arg;
    uv_run(&W.loop, UV_RUN_DEFAULT);
    if (W.ctx) {
        lws_context_destroy(W.ctx);
        uv_run(&W.loop, UV_RUN_DEFAULT);
    }
    if (uv_loop_close(&W.loop) != 0)
        say("the writer loop was not clean at exit");
}

static int start_writers(void)
{
    W.conns = calloc(O.writers, sizeof *W.conns);
    W.ring = calloc(RING_SIZE, sizeof *W.ring);
    if (!W.conns || !W.ring)
        return -1;
    for (unsigned i = 0; i < O.writers; i++) {
        W.conns[i].idx = i;
        W.conns[i].writer = 1;
    }
    uv_loop_init(&W.loop);
    if (!new_context(&W.loop, &W.ctx, 0))
        return -1;
    uv_timer_init(&W.loop, &W.timer);
    uv_timer_start(&W.timer, on_writer_tick, 1, 1);
    uv_async_init(&W.loop, &W.wake, on_writer_wake);
    if (uv_thread_create(&W.thread, writer_thread, NULL) != 0)
        return -1;
    W.running = 1;
    return 0;
}

/* ---- phases (main thread) -------------------------------------------------------------------- */

static void write_ready_file(unsigned held)
{
    if (!O.ready_file)
        return;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", O.ready_file);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "%u\n", held);
    if (fclose(f) == 0)
        rename(tmp, O.ready_file);
}

static void gateway_snapshot(struct bench_proc *p)
{
    if (O.gateway_pid > 0 && bench_proc_read((pid_t)O.gateway_pid, p) != 0)
        B.gw_ok = 0;
}

static void start_measuring(int64_t now)
{
    B.connected_us = now;
    if (O.gateway_pid > 0) {
        B.gw_ok = 1;
        B.peak_reset = bench_proc_reset_peak((pid_t)O.gateway_pid) == 0;
        gateway_snapshot(&B.gw0);
    }
    B.m_ok = bench_metrics_read(O.host, O.port, O.key, &B.m0) == 0;
    say("%u/%u viewers subscribed, %u/%u writers open after %.1f s", B.subscribed, O.viewers,
        atomic_load(&W.open), O.writers, (double)(now - B.start_us) / 1e6);
}

static int connect_done(void)
{
    return B.next_open == O.viewers && !B.connecting && !B.nretry && B.resolved == O.viewers &&
           atomic_load(&W.open) + atomic_load(&W.given_up) == O.writers;
}

/* Every write answered and every viewer caught up with its board. */
static int settled(void)
{
    uint64_t sent = atomic_load(&W.sent);
    if (O.rate > 0 && sent < atomic_load(&W.issued))
        return 0;
    if (atomic_load(&W.answered) < sent)
        return 0;
    for (unsigned i = 0; i < O.viewers; i++) {
        const struct conn *v = &B.conns[i];
        if (v->state != CS_OPEN || !v->subscribed)
            continue;
        if (v->next_seq <= atomic_load_explicit(&boards[v->board].max_seq, memory_order_acquire))
            return 0;
        if (O.verify && v->converged_us < 0)
            return 0;
    }
    return 1;
}

static void finish(void);

static void on_tick(uv_timer_t *t)
{
    (void)t;
    int64_t now = now_us();
    int ph = atomic_load(&phase);
    B.ticks++;
    if (ph == P_DONE)
        return;
    if (ph == P_WRITE || ph == P_SETTLE)
        bench_hist_add(&B.stall, now - B.last_tick_us);
    B.last_tick_us = now;
    if (now > B.deadline_us) {
        say("overall deadline reached in phase %d: stopping", ph);
        finish();
        return;
    }
    switch (ph) {
    case P_CONNECT:
        pump_viewer_connects();
        if (!connect_done() && now < B.start_us + (int64_t)(O.connect_timeout * 1e6))
            break;
        start_measuring(now);
        if (O.idle_only) {
            atomic_store(&phase, P_HOLD);
            B.hold_end_us = now + (int64_t)(O.hold * 1e6);
            write_ready_file(B.subscribed);
            break;
        }
        if (O.writers && !atomic_load(&W.open)) {
            snprintf(B.fatal_msg, sizeof B.fatal_msg, "no writer connection could be opened");
            B.fatal = 1;
            finish();
            return;
        }
        if (alloc_tables() != 0) {
            snprintf(B.fatal_msg, sizeof B.fatal_msg, "out of memory for the send-time tables");
            B.fatal = 1;
            finish();
            return;
        }
        atomic_store(&write_start_us, now);
        atomic_store(&phase, P_WRITE); /* publishes the tables to the writer thread */
        break;
    case P_WRITE: {
        double el = (double)(now - atomic_load(&write_start_us)) / 1e6;
        uint64_t done = O.rate > 0 ? atomic_load(&W.issued) : atomic_load(&W.sent);
        if (el >= O.duration || (O.writes_cap && done >= O.writes_cap) || !O.writers) {
            atomic_store(&phase, P_SETTLE);
            B.write_end_us = now;
        }
        break;
    }
    case P_SETTLE: {
        uint64_t sent = atomic_load(&W.sent);
        if (O.verify && !B.target_ready && (O.rate <= 0 || sent >= atomic_load(&W.issued)) &&
            atomic_load(&W.answered) >= sent)
            read_targets();
        if (B.ticks % SETTLE_CHECK_TICKS == 0 && (settled() || now > B.write_end_us + (int64_t)(O.settle * 1e6)))
            finish();
        break;
    }
    case P_HOLD:
        if (now >= B.hold_end_us)
            finish();
        break;
    default:
        break;
    }
}

/* ---- report ------------------------------------------------------------------------ */

static void put_hist(const char *name, const struct bench_hist *h)
{
    printf("\"%s\":{\"n\":%" PRIu64 ",\"mean\":%.3f,\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"p999\":%.3f,\"max\":%.3f}",
           name, h->count, h->count ? h->sum_us / (double)h->count / 1000.0 : 0.0,
           (double)bench_hist_quantile(h, 0.50) / 1000.0, (double)bench_hist_quantile(h, 0.90) / 1000.0,
           (double)bench_hist_quantile(h, 0.99) / 1000.0, (double)bench_hist_quantile(h, 0.999) / 1000.0,
           (double)h->max_us / 1000.0);
}

static void put_string(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        if ((unsigned char)*s >= 0x20)
            putchar(*s);
    }
    putchar('"');
}

static void put_verify(void)
{
    unsigned conv = 0, within = 0, equal_now = 0, viewers = 0;
    double max_ms = 0;
    int64_t end = W.last_send_us;
    for (unsigned i = 0; i < O.viewers; i++) {
        const struct conn *v = &B.conns[i];
        if (!v->subscribed)
            continue;
        viewers++;
        if (B.target_ready && window_matches(v))
            equal_now++;
        if (v->converged_us < 0)
            continue;
        conv++;
        double ms = v->converged_us > end ? (double)(v->converged_us - end) / 1000.0 : 0.0;
        if (ms > max_ms)
            max_ms = ms;
        if (ms <= 1000.0)
            within++;
    }
    printf("\"verify\":{\"viewers\":%u,\"converged\":%u,\"within_1s\":%u,\"equal_at_end\":%u,"
           "\"max_converge_ms\":%.3f,\"redis_read_after_last_send_ms\":%.3f,\"error\":",
           viewers, conv, within, equal_now, max_ms, B.target_ready ? (double)(B.target_us - end) / 1000.0 : -1.0);
    put_string(B.verify_error);
    printf("},");
}

/* Called after the writer thread has been joined: W is plain memory again. */
static void report(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double self_cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                      (double)ru.ru_stime.tv_usec / 1e6;
    int64_t wstart = atomic_load(&write_start_us);
    uint64_t sent = atomic_load(&W.sent);
    /* measured: from the first write to the end; writing: first to last send */
    double meas_s = wstart ? (double)(B.done_us - wstart) / 1e6 : 0;
    double write_s = sent && W.last_send_us > wstart ? (double)(W.last_send_us - wstart) / 1e6 : 0;
    double rate_s = write_s > 0.001 ? write_s : 0.001;

    /* viewers behind their board at the end, and deliveries expected */
    unsigned behind = 0, held = 0;
    uint64_t expected = 0;
    for (unsigned i = 0; i < O.viewers; i++) {
        const struct conn *v = &B.conns[i];
        if (v->state != CS_OPEN || !v->subscribed)
            continue;
        held++;
        const struct board *b = &boards[v->board];
        int64_t max = atomic_load(&b->max_seq);
        if (b->base_seq >= 0 && max >= b->base_seq)
            expected += (uint64_t)(max - b->base_seq + 1);
        if (v->next_seq <= max)
            behind++;
    }

    printf("{\"tool\":\"rankcast-bench\",\"label\":");
    put_string(O.label ? O.label : "");
    printf(",\"mode\":\"%s\",\"viewers\":%u,\"boards\":%u,\"writers\":%u,\"op\":\"%s\",\"rate\":%.0f,"
           "\"inflight\":%u,\"duration_s\":%.3f,",
           O.idle_only ? "idle" : O.verify ? "verify" : "load", O.viewers, nboards, O.writers,
           O.op_incr ? "incr" : "set", O.rate, O.inflight, O.duration);
    printf("\"connect\":{\"seconds\":%.3f,\"viewers_open\":%u,\"subscribed\":%u,\"sub_errors\":%u,"
           "\"connect_errors\":%u,\"writers_open\":%u},",
           (double)((B.connected_us ? B.connected_us : B.done_us) - B.start_us) / 1e6, B.viewers_open, B.subscribed,
           B.sub_errors, B.connect_errors + W.connect_errors, B.writers_open_at_end);
    printf("\"held\":%u,", held);
    printf("\"writes\":{\"issued\":%" PRIu64 ",\"sent\":%" PRIu64 ",\"acked\":%" PRIu64 ",\"errors\":%" PRIu64
           ",\"lost\":%" PRIu64 ",\"reissued\":%" PRIu64 ",\"unknown_replies\":%" PRIu64 ",\"untracked\":%" PRIu64
           ",\"seconds\":%.3f,\"sent_per_s\":%.1f,\"acked_per_s\":%.1f,\"error_codes\":{",
           O.rate > 0 ? atomic_load(&W.issued) : sent, sent, W.acked, W.errors, W.lost, W.reissued, W.unknown, W.untracked,
           write_s, (double)sent / rate_s, (double)W.acked / rate_s);
    int first = 1;
    for (unsigned k = 0; k < NCODES; k++) {
        if (!W.err_by_code[k] && !B.err_by_code[k])
            continue;
        printf("%s\"%s\":%" PRIu64, first ? "" : ",", error_codes[k], W.err_by_code[k] + B.err_by_code[k]);
        first = 0;
    }
    printf("}},");
    put_hist("ack_ms", &W.ack);
    putchar(',');
    put_hist("latency_ms", &B.lat);
    putchar(',');
    put_hist("bench_tick_gap_ms", &B.stall);
    printf(",\"deliveries\":{\"write_deliveries\":%" PRIu64 ",\"expected\":%" PRIu64 ",\"per_s\":%.1f,"
           "\"messages\":%" PRIu64 ",\"messages_per_s\":%.1f,\"message_bytes\":%" PRIu64 ",\"resyncs\":%" PRIu64
           ",\"viewers_behind\":%u,\"unmatched\":%" PRIu64 ",\"other_messages\":%" PRIu64 "},",
           B.lat.count, expected, sent ? (double)B.lat.count / rate_s : 0.0, B.messages,
           sent ? (double)B.messages / rate_s : 0.0, B.message_bytes, B.resyncs, behind, B.unmatched, B.other_msgs);
    printf("\"closes\":%u,\"writer_closes\":%u,\"close_codes\":{\"1000\":%u,\"1001\":%u,\"1006\":%u,"
           "\"1008_1009\":%u,\"other\":%u},",
           B.closes + W.closes, W.closes, B.close_codes[0], B.close_codes[1], B.close_codes[2], B.close_codes[3],
           B.close_codes[4]);
    if (O.verify)
        put_verify();
    /* What went over the wire, from the gateway's counters (payload bytes,
     * frame headers not included) and the writers' replies. */
    printf("\"wire\":{\"ok\":%s,\"deflate\":%s,\"deflate_viewers\":%u,\"bytes_sent\":%" PRIu64
           ",\"writer_reply_bytes\":%" PRIu64 ",\"deltas_queued\":%" PRIu64 ",\"deflate_messages\":%" PRIu64
           ",\"deflate_compressed\":%" PRIu64 ",\"deflate_runs\":%" PRIu64 "},",
           B.m_ok ? "true" : "false", O.deflate ? "true" : "false", B.deflate_open, B.m1.bytes_sent - B.m0.bytes_sent,
           W.reply_bytes, B.m1.deltas_sent - B.m0.deltas_sent, B.m1.deflate_messages - B.m0.deflate_messages,
           B.m1.deflate_compressed - B.m0.deflate_compressed, B.m1.deflate_runs - B.m0.deflate_runs);
    /* The gateway's own share of the ack time: its script round trips
     * during the run (a histogram: bucket bounds in ms, writes within each). */
    printf("\"gateway_rtt\":{\"ok\":%s,\"le_ms\":[", B.m_ok && B.m0.rtt_n == B.m1.rtt_n ? "true" : "false");
    for (unsigned i = 0; B.m_ok && i < B.m1.rtt_n && B.m0.rtt_n == B.m1.rtt_n; i++)
        if (isinf(B.m1.rtt_le[i]))
            printf("%s-1", i ? "," : ""); /* +Inf */
        else
            printf("%s%g", i ? "," : "", B.m1.rtt_le[i] * 1000);
    printf("],\"cum\":[");
    for (unsigned i = 0; B.m_ok && i < B.m1.rtt_n && B.m0.rtt_n == B.m1.rtt_n; i++)
        printf("%s%" PRIu64, i ? "," : "", B.m1.rtt_cum[i] - B.m0.rtt_cum[i]);
    printf("]},");
    if (O.gateway_pid > 0) {
        double span = meas_s > 0 ? meas_s : (double)(B.done_us - B.connected_us) / 1e6;
        printf("\"gateway\":{\"pid\":%ld,\"ok\":%s,\"cpu_s\":%.3f,\"cpu_per_s\":%.3f,\"rss_kb\":%ld,"
               "\"peak_rss_kb\":%ld,\"peak_is_per_run\":%s},",
               O.gateway_pid, B.gw_ok ? "true" : "false", B.gw1.cpu_s - B.gw0.cpu_s,
               span > 0 ? (B.gw1.cpu_s - B.gw0.cpu_s) / span : 0.0, B.gw1.rss_kb, B.gw1.hwm_kb,
               B.peak_reset ? "true" : "false");
    }
    printf("\"measured_s\":%.3f,\"bench_cpu_s\":%.3f,\"fatal\":", meas_s, self_cpu);
    put_string(B.fatal ? B.fatal_msg : "");
    printf("}\n");
    fflush(stdout);
}

/* ---- start and stop -------------------------------------------------------------------- */

static void finish(void)
{
    if (atomic_load(&phase) == P_DONE)
        return;
    atomic_store(&phase, P_DONE);
    B.done_us = now_us();
    if (!B.connected_us)
        start_measuring(B.done_us);
    gateway_snapshot(&B.gw1);
    if (B.m_ok)
        B.m_ok = bench_metrics_read(O.host, O.port, O.key, &B.m1) == 0;
    B.writers_open_at_end = atomic_load(&W.open);
    if (W.running) {
        uv_async_send(&W.wake);
        uv_thread_join(&W.thread);
        W.running = 0;
    }
    resolve_pending();
    report();
    uv_timer_stop(&B.timer);
    uv_close((uv_handle_t *)&B.timer, NULL);
    uv_close((uv_handle_t *)&B.sigint, NULL);
    uv_close((uv_handle_t *)&B.sigterm, NULL);
    if (B.ctx)
        lws_context_destroy(B.ctx);
}

static void on_signal(uv_signal_t *s, int signum)
{
    (void)s;
    say("signal %d: reporting and stopping", signum);
    finish();
}

static void usage(void)
{
    fprintf(stderr,
            "usage: rankcast-bench --port PORT [options]\n"
            "  --host H              gateway address (127.0.0.1)    --path P  (/ws)\n"
            "  --viewers N           viewer connections (0)\n"
            "  --boards A,B,...      boards to view and write (demo)\n"
            "  --boards-prefix P --board-count K   boards P0 .. P(K-1)\n"
            "  --view top:N | page:OFFSET:LIMIT | feed   (top:10)\n"
            "  --writers W           writer connections (4), with --key KEY or $RANKCAST_ADMIN_KEY\n"
            "  --rate R              writes/s in total, paced; 0 = as fast as acks allow (0)\n"
            "  --jitter              with --rate: each write at a random moment in the first half of\n"
            "                        its period (writes land at every phase of the gateway's tick)\n"
            "  --inflight K          writes in flight per writer (1 with --rate 0, else 1000)\n"
            "  --op set|incr         set: value grows per write (every write shows at the top);\n"
            "                        incr: delta 1 on a random member (throughput) (set)\n"
            "  --members M           members per board (1000)\n"
            "  --duration S          seconds of writing (10)   --writes N  stop after N writes\n"
            "  --settle S            wait at most S s after the writes for answers and deliveries (3)\n"
            "  --connect-timeout S   (60)   --connect-concurrency N (200)\n"
            "  --src-first A --src-last B --src-offset O   source addresses 127.0.0.A..B (2..250)\n"
            "  --gateway-pid PID     report the gateway's CPU seconds and (peak) RSS from /proc\n"
            "  --idle-only --hold S [--ready-file F]   hold subscribed connections S s, report how many\n"
            "  --verify --redis-port P [--redis-host H] [--tb-bits T (29)] [--order desc|asc]\n"
            "                        compare every viewer's window with Redis after the writes\n"
            "  --label NAME          echoed in the JSON     --lws-log LEVEL   lws log bitmask (3)\n"
            "  --deflate             viewers offer permessage-deflate; the JSON's \"wire\" has the gateway's byte counters\n");
}

static int parse_view(const char *s)
{
    unsigned long a, b;
    if (strcmp(s, "feed") == 0) {
        O.view = V_FEED;
        O.view_limit = 1;
        return 0;
    }
    if (sscanf(s, "top:%lu", &a) == 1 && a >= 1 && a <= 1000) {
        O.view = V_TOP;
        O.view_offset = 0;
        O.view_limit = (uint32_t)a;
        return 0;
    }
    if (sscanf(s, "page:%lu:%lu", &a, &b) == 2 && b >= 1 && b <= 1000) {
        O.view = V_PAGE;
        O.view_offset = (int64_t)a;
        O.view_limit = (uint32_t)b;
        return 0;
    }
    return -1;
}

static int add_board(const char *name, size_t len)
{
    if (len == 0 || len > 64)
        return -1;
    struct board *nb = realloc(boards, (nboards + 1) * sizeof *nb);
    if (!nb)
        return -1;
    boards = nb;
    struct board *b = &boards[nboards++];
    memset(b, 0, sizeof *b);
    memcpy(b->name, name, len);
    b->base_seq = -1;
    atomic_init(&b->max_seq, -1);
    return 0;
}

static int bad(const char *what)
{
    fprintf(stderr, "rankcast-bench: %s\n", what);
    return -1;
}

static int parse_args(int argc, char **argv)
{
    enum { O_HOST = 256, O_PORT, O_PATH, O_VIEWERS, O_BOARDS, O_PREFIX, O_COUNT, O_VIEW, O_WRITERS, O_RATE,
           O_INFLIGHT, O_OP, O_MEMBERS, O_DURATION, O_WRITES, O_SETTLE, O_CTIMEOUT, O_CONC, O_SRC_FIRST,
           O_SRC_LAST, O_SRC_OFFSET, O_KEY, O_GWPID, O_IDLE, O_HOLD, O_READY, O_VERIFY, O_RPORT, O_RHOST,
           O_TB, O_ORDER, O_LABEL, O_LWSLOG, O_DEFLATE, O_JITTER, O_HELP };
    static const struct option opts[] = {
        {"host", 1, 0, O_HOST}, {"port", 1, 0, O_PORT}, {"path", 1, 0, O_PATH}, {"viewers", 1, 0, O_VIEWERS},
        {"boards", 1, 0, O_BOARDS}, {"boards-prefix", 1, 0, O_PREFIX}, {"board-count", 1, 0, O_COUNT},
        {"view", 1, 0, O_VIEW}, {"writers", 1, 0, O_WRITERS}, {"rate", 1, 0, O_RATE},
        {"inflight", 1, 0, O_INFLIGHT}, {"op", 1, 0, O_OP}, {"members", 1, 0, O_MEMBERS},
        {"duration", 1, 0, O_DURATION}, {"writes", 1, 0, O_WRITES}, {"settle", 1, 0, O_SETTLE},
        {"connect-timeout", 1, 0, O_CTIMEOUT}, {"connect-concurrency", 1, 0, O_CONC},
        {"src-first", 1, 0, O_SRC_FIRST}, {"src-last", 1, 0, O_SRC_LAST}, {"src-offset", 1, 0, O_SRC_OFFSET},
        {"key", 1, 0, O_KEY}, {"gateway-pid", 1, 0, O_GWPID}, {"idle-only", 0, 0, O_IDLE},
        {"hold", 1, 0, O_HOLD}, {"ready-file", 1, 0, O_READY}, {"verify", 0, 0, O_VERIFY},
        {"redis-port", 1, 0, O_RPORT}, {"redis-host", 1, 0, O_RHOST}, {"tb-bits", 1, 0, O_TB},
        {"order", 1, 0, O_ORDER}, {"label", 1, 0, O_LABEL}, {"lws-log", 1, 0, O_LWSLOG},
        {"deflate", 0, 0, O_DEFLATE}, {"jitter", 0, 0, O_JITTER}, {"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
    const char *list = NULL, *prefix = NULL;
    unsigned count = 0;
    int inflight_given = 0, c;
    O.host = "127.0.0.1";
    O.path = "/ws";
    O.redis_host = "127.0.0.1";
    O.order = "desc";
    O.writers = 4;
    O.members = 1000;
    O.duration = 10;
    O.settle = 3;
    O.connect_timeout = 60;
    O.conc = 200;
    O.src_first = 2;
    O.src_last = 250;
    O.tb_bits = 29;
    O.hold = 10;
    O.lws_log = LLL_ERR | LLL_WARN;
    O.key = getenv("RANKCAST_ADMIN_KEY");
    parse_view("top:10");
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_HOST: O.host = optarg; break;
        case O_PORT: O.port = atoi(optarg); break;
        case O_PATH: O.path = optarg; break;
        case O_VIEWERS: O.viewers = (unsigned)strtoul(optarg, NULL, 10); break;
        case O_BOARDS: list = optarg; break;
        case O_PREFIX: prefix = optarg; break;
        case O_COUNT: count = (unsigned)strtoul(optarg, NULL, 10); break;
        case O_VIEW:
            if (parse_view(optarg) != 0)
                return bad("bad --view (top:N, page:OFFSET:LIMIT or feed)");
            break;
        case O_WRITERS: O.writers = (unsigned)strtoul(optarg, NULL, 10); break;
        case O_RATE: O.rate = strtod(optarg, NULL); break;
        case O_INFLIGHT: O.inflight = (unsigned)strtoul(optarg, NULL, 10); inflight_given = 1; break;
        case O_OP:
            if (strcmp(optarg, "set") != 0 && strcmp(optarg, "incr") != 0)
                return bad("--op is set or incr");
            O.op_incr = optarg[0] == 'i';
            break;
        case O_MEMBERS: O.members = (unsigned)strtoul(optarg, NULL, 10); break;
        case O_DURATION: O.duration = strtod(optarg, NULL); break;
        case O_WRITES: O.writes_cap = strtoull(optarg, NULL, 10); break;
        case O_SETTLE: O.settle = strtod(optarg, NULL); break;
        case O_CTIMEOUT: O.connect_timeout = strtod(optarg, NULL); break;
        case O_CONC: O.conc = (unsigned)strtoul(optarg, NULL, 10); break;
        case O_SRC_FIRST: O.src_first = (unsigned)strtoul(optarg, NULL, 10); break;
        case O_SRC_LAST: O.src_last = (unsigned)strtoul(optarg, NULL, 10); break;
        case O_SRC_OFFSET: O.src_offset = (unsigned)strtoul(optarg, NULL, 10); break;
        case O_KEY: O.key = optarg; break;
        case O_GWPID: O.gateway_pid = strtol(optarg, NULL, 10); break;
        case O_IDLE: O.idle_only = 1; break;
        case O_HOLD: O.hold = strtod(optarg, NULL); break;
        case O_READY: O.ready_file = optarg; break;
        case O_VERIFY: O.verify = 1; break;
        case O_RPORT: O.redis_port = atoi(optarg); break;
        case O_RHOST: O.redis_host = optarg; break;
        case O_TB: O.tb_bits = (unsigned)strtoul(optarg, NULL, 10); break;
        case O_ORDER: O.order = optarg; break;
        case O_LABEL: O.label = optarg; break;
        case O_DEFLATE: O.deflate = 1; break;
        case O_JITTER: O.jitter = 1; break;
        case O_LWSLOG: O.lws_log = atoi(optarg); break;
        case O_HELP: usage(); exit(0);
        default: return -1;
        }
    }
    if (O.port < 1 || O.port > 65535)
        return bad("--port is required");
    if (prefix) {
        if (count < 1 || count > 100000)
            return bad("--board-count 1..100000 goes with --boards-prefix");
        for (unsigned i = 0; i < count; i++) {
            char name[80];
            int n = snprintf(name, sizeof name, "%s%u", prefix, i);
            if (add_board(name, (size_t)n) != 0)
                return bad("a board name is too long (64 at most)");
        }
    } else {
        const char *s = list ? list : "demo";
        while (*s) {
            size_t n = strcspn(s, ",");
            if (add_board(s, n) != 0)
                return bad("bad --boards");
            s += n + (s[n] == ',');
        }
    }
    if (!nboards)
        return bad("no boards");
    if (O.idle_only)
        O.writers = 0;
    if (!inflight_given)
        O.inflight = O.rate > 0 ? 1000 : 1;
    if (O.inflight < 1 || (uint64_t)O.inflight * O.writers >= RING_SIZE / 2)
        return bad("--inflight x --writers must stay below 524288");
    if (O.members < 1 || O.conc < 1 || O.src_first < 1 || O.src_last > 254 || O.src_first > O.src_last)
        return bad("bad --members, --connect-concurrency or --src-*");
    if (O.writers && (!O.key || !*O.key))
        return bad("writers need --key or RANKCAST_ADMIN_KEY");
    if (O.verify && (O.view == V_FEED || !O.redis_port))
        return bad("--verify needs a window view and --redis-port");
    if (O.duration < 0 || O.duration > 3600 || O.settle < 0 || O.settle > 600 || O.hold < 0 || O.hold > 3600 ||
        O.connect_timeout <= 0 || O.connect_timeout > 600 || O.rate < 0 || O.rate > 1e7)
        return bad("a duration or the rate is out of range");
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv) != 0) {
        usage();
        return 1;
    }
    lws_set_log_level(O.lws_log, NULL);
    srand((unsigned)getpid());
    B.conns = calloc(O.viewers ? O.viewers : 1, sizeof *B.conns);
    B.retry = calloc(O.viewers ? O.viewers : 1, sizeof *B.retry);
    B.pending = malloc(PENDING_MAX * sizeof *B.pending);
    B.parser = O.verify ? bench_parser_new() : NULL;
    if (!B.conns || !B.retry || !B.pending || (O.verify && !B.parser)) {
        fprintf(stderr, "rankcast-bench: out of memory\n");
        return 2;
    }
    for (unsigned i = 0; i < O.viewers; i++) {
        struct conn *c = &B.conns[i];
        c->idx = O.writers + i;
        c->converged_us = -1;
        c->board = i % nboards;
        boards[c->board].viewers++;
    }

    uv_loop_init(&B.loop);
    if (!new_context(&B.loop, &B.ctx, O.deflate)) {
        fprintf(stderr, "rankcast-bench: lws_create_context failed (libwebsockets-evlib-uv missing?)\n");
        return 2;
    }
    if (O.writers && start_writers() != 0) {
        fprintf(stderr, "rankcast-bench: cannot start the writer thread\n");
        return 2;
    }
    B.start_us = now_us();
    B.last_tick_us = B.start_us;
    B.deadline_us = B.start_us + (int64_t)((O.connect_timeout + O.duration + O.settle + O.hold + 30) * 1e6);
    uv_timer_init(&B.loop, &B.timer);
    uv_timer_start(&B.timer, on_tick, 1, 1);
    uv_signal_init(&B.loop, &B.sigint);
    uv_signal_init(&B.loop, &B.sigterm);
    uv_signal_start(&B.sigint, on_signal, SIGINT);
    uv_signal_start(&B.sigterm, on_signal, SIGTERM);
    pump_viewer_connects();

    uv_run(&B.loop, UV_RUN_DEFAULT);
    if (B.ctx) {
        lws_context_destroy(B.ctx);
        uv_run(&B.loop, UV_RUN_DEFAULT);
    }
    int rc = uv_loop_close(&B.loop);
    if (rc != 0)
        say("libuv loop not clean at exit (%s)", uv_strerror(rc));
    for (unsigned i = 0; i < O.viewers; i++) {
        free(B.conns[i].rx);
        bench_window_free(&B.conns[i].win);
    }
    for (unsigned i = 0; i < O.writers && W.conns; i++)
        free(W.conns[i].rx);
    for (unsigned i = 0; i < nboards; i++) {
        free((void *)boards[i].sent_us);
        free(boards[i].target);
    }
    bench_parser_free(B.parser);
    free(boards);
    free(B.conns);
    free(B.retry);
    free(B.pending);
    free(W.conns);
    free(W.ring);
    return B.fatal ? 2 : 0;
}
