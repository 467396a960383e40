/* sockfuzz.c - hostile clients over real sockets against a running gateway.
 *
 * Not a decoder fuzzer (those are fuzz_request.c and fuzz_conf.c): this one
 * opens many TCP connections to a live rankcast on 127.0.0.1 and sends what a
 * hostile or broken client would: pipelined and malformed HTTP requests,
 * chunked bodies, conflicting, duplicated or leniently spelt Content-Length
 * values ("+37", two of them, CL with TE), giant headers,
 * WebSocket handshakes followed by valid and broken frames (unmasked,
 * fragmented with control frames in between, truncated, bad opcodes, oversized
 * control frames, odd close payloads, random JSON ops), floods of empty
 * continuation frames after an unfinished message, ping and pong floods,
 * messages never finished, slow senders,
 * half-closes and resets, with valid traffic mixed in. What comes back is read
 * and dropped.
 *
 * A watchdog on its own connection, from another source address (127.0.0.2
 * by default, so the per-address limits the fuzz traffic runs into never
 * apply to it), asks GET /healthz every --interval ms. The run fails when an
 * answer takes longer than --deadline ms (a hang), when the gateway stops
 * answering, or when the process given by --pid dies.
 *
 * Determinism: connection N's whole plan (bytes, split points, delays, how it
 * ends) is drawn from its own generator seeded by (seed, N) (and --kinds and
 * the token, when given), so a seed fixes every connection's content whatever
 * the timing; only the interleaving of connections depends on the machine.
 * Every draw is a statement of its own: the order in which a compiler
 * evaluates function arguments must not change a plan.
 *
 * Finding the input behind a failure:
 *  - on exit (pass or fail) the inputs of the connections active around the
 *    end (or the failure) go to --dump DIR: inputs.txt (one line each: kind,
 *    timing, bytes sent, how it ended) and conn-N.bin (the bytes sent);
 *  - --replay-conn N (or A-B) sends just those connections, as the run did;
 *    bisecting the range finds one that leaves a report only at exit (a leak);
 *  - --print-conn N writes connection N's bytes (and its steps to stderr);
 *  - --replay FILE... sends each file in one write on its own connection,
 *    then checks /healthz: the shortest way to try a reproducer;
 *  - --log FILE has one line per connection with its local port, to match the
 *    gateway's own logs;
 *  - --kinds limits the kinds of connection, to fuzz around a known bug.
 *
 * Bounded: at most --conns fuzz sockets (default 150) plus the watchdog's,
 * at most 150 new connections a second, every connection closed within 20 s,
 * and the run itself ends after --seconds.
 *
 * Exit status: 0 passed, 1 the gateway failed (hang, death, no answer),
 * 2 usage or setup error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS_CAP 190     /* hard cap on fuzz sockets, whatever --conns says */
#define OPEN_RATE 150         /* new fuzz connections per second at most */
#define CONN_LIFETIME_MS 20000 /* every fuzz connection is closed by then */
#define WAIT_READ_MS 1500     /* a step that waits for an answer waits this long at most */
#define CLOSED_RING 8192      /* closed connections remembered for the dump */
#define DUMP_MAX 800          /* connection files written by one dump */
#define PLAN_MAX (512u * 1024u) /* bytes one connection may plan to send */

/* ---- small utilities ------------------------------------------------------------------------ */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sockfuzz: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sockfuzz: ", stdout);
    vfprintf(stdout, fmt, ap);
    fputc('\n', stdout);
    fflush(stdout);
    va_end(ap);
}

/* ---- the generator: splitmix64 seeds xoshiro256** ---------------------------------------------- */

struct rng {
    uint64_t s[4];
};

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1342543de82ef95ULL) ^ 0x5eedf00dULL;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rnext(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* 0..n-1 (n > 0) */
static uint32_t rbelow(struct rng *r, uint32_t n)
{
    return (uint32_t)((rnext(r) >> 32) * (uint64_t)n >> 32);
}

/* lo..hi inclusive */
static uint32_t rrange(struct rng *r, uint32_t lo, uint32_t hi)
{
    return lo + rbelow(r, hi - lo + 1);
}

/* true with probability pct/100 */
static int rpct(struct rng *r, unsigned pct)
{
    return rbelow(r, 100) < pct;
}

#define PICK(r, arr) ((arr)[rbelow((r), (uint32_t)(sizeof(arr) / sizeof((arr)[0])))])

/* ---- growable bytes ---------------------------------------------------------------------------- */

struct buf {
    unsigned char *p;
    size_t len, cap;
};

static void buf_reserve(struct buf *b, size_t extra)
{
    if (b->len + extra <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra)
        cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (!p)
        die("out of memory");
    b->p = p;
    b->cap = cap;
}

static void put(struct buf *b, const void *data, size_t n)
{
    if (!n)
        return;
    buf_reserve(b, n);
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void puts_(struct buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void putc_(struct buf *b, unsigned char c)
{
    put(b, &c, 1);
}

static void putf(struct buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void put_fill(struct buf *b, unsigned char c, size_t n)
{
    if (!n)
        return;
    buf_reserve(b, n);
    memset(b->p + b->len, c, n);
    b->len += n;
}

static void put_random(struct buf *b, struct rng *r, size_t n, int printable)
{
    buf_reserve(b, n);
    for (size_t i = 0; i < n; i++)
        b->p[b->len++] = printable ? (unsigned char)rrange(r, 0x21, 0x7e) : (unsigned char)rnext(r);
}

/* ---- a connection's plan ---------------------------------------------------------------------- */

/* A step sends bytes [off, off + len) of the plan, delay_ms after the
 * previous step finished (and, with STEP_WAIT_READ, once something came back
 * or WAIT_READ_MS passed). */
#define STEP_WAIT_READ (1u << 0) /* wait for an answer before this step */

struct step {
    size_t off, len;
    uint32_t delay_ms;
    unsigned flags;
};

enum end_mode {
    END_CLOSE,     /* close() right after the last byte */
    END_HALFCLOSE, /* shutdown(SHUT_WR), read until EOF or end_wait_ms, close */
    END_LINGER,    /* read until EOF or end_wait_ms, then close */
    END_RST,       /* SO_LINGER 0 and close: an abrupt reset */
};
static const char *const end_names[] = {"close", "halfclose", "linger", "rst"};

#define MARK_MAX 256

struct plan {
    struct buf bytes;
    struct step *steps;
    size_t nsteps, cap;
    enum end_mode end;
    uint32_t end_wait_ms;
    int no_read;      /* never read: a stuck reader */
    int rst_after_wait; /* END_LINGER / END_HALFCLOSE finish with a reset */
    char kind[48];
    /* logical boundaries while generating (between requests or frames) */
    size_t marks[MARK_MAX];
    unsigned mark_flags[MARK_MAX];
    unsigned nmarks;
};

static void plan_free(struct plan *p)
{
    free(p->bytes.p);
    free(p->steps);
    memset(p, 0, sizeof *p);
}

static void mark(struct plan *p, unsigned flags)
{
    if (p->nmarks < MARK_MAX && p->bytes.len > 0 &&
        (p->nmarks == 0 || p->marks[p->nmarks - 1] < p->bytes.len)) {
        p->marks[p->nmarks] = p->bytes.len;
        p->mark_flags[p->nmarks] = flags;
        p->nmarks++;
    }
}

static void add_step(struct plan *p, size_t off, size_t len, uint32_t delay, unsigned flags)
{
    if (!len)
        return;
    if (p->nsteps == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 16;
        p->steps = realloc(p->steps, p->cap * sizeof *p->steps);
        if (!p->steps)
            die("out of memory");
    }
    p->steps[p->nsteps++] = (struct step){off, len, delay, flags};
}

/* ---- what the generators draw from ------------------------------------------------------------ */

struct gen {
    struct rng *r;
    struct plan *p;
    const char *token; /* the admin key, or "" */
};

static const char *const boards[] = {"demo", "demo", "demo", "laps", "clears", "daily", "weekly", "hot",
                                     "match:1", "match:424242", "nosuch", "match:", "de mo", "-",
                                     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
static const char *const members[] = {"u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "user:101", "a@b.c",
                                      "u9", "", "bad member", "\xc3\xbc", "x/y", "..", "u1\\u0000"};
static const char *const numbers[] = {"0", "1", "-1", "7", "50", "1000", "1001", "-0", "1.5", "1e3",
                                      "16777215", "16777216", "-16777216", "3600000", "9007199254740992",
                                      "1e308", "-1e308", "1e999", "99999999999999999999", "0.0000001",
                                      "1e-320", "2147483648", "4294967296", "65535", "NaN", "Infinity"};
static const char *const ops[] = {"subscribe", "subscribe", "unsubscribe", "incr", "incr", "set",
                                  "best", "submit", "rank", "ping", "ping", "auth", "freeze",
                                  "reveal", "remove", "unblock", "reverse", "reset", "", "SUBSCRIBE",
                                  "pong", "snapshot", "incr "};

static void json_string_raw(struct gen *g, struct buf *b, const char *s)
{
    (void)g;
    putc_(b, '"');
    puts_(b, s);
    putc_(b, '"');
}

/* A string value: mostly tame, sometimes escapes, lone surrogates, raw
 * invalid UTF-8 or control bytes. */
static void json_string_weird(struct gen *g, struct buf *b)
{
    static const char *const bits[] = {"a", "\\u0000", "\\ud800", "\\udfff\\ud800", "\\\"", "\\\\",
                                       "\xff", "\xc3\x28", "\xe2\x82", "\t", "\\n", "%00", "\xf0\x9f\x98\x80",
                                       "\\u00e9", "\\x41", "\\"};
    putc_(b, '"');
    unsigned n = rrange(g->r, 0, 12);
    for (unsigned i = 0; i < n; i++)
        puts_(b, PICK(g->r, bits));
    if (rpct(g->r, 5))
        put_random(b, g->r, rrange(g->r, 1, 300), 1);
    putc_(b, '"');
}

static void json_value(struct gen *g, struct buf *b, int depth)
{
    switch (rbelow(g->r, depth > 3 ? 5 : 8)) {
    case 0: puts_(b, "null"); break;
    case 1: puts_(b, rpct(g->r, 50) ? "true" : "false"); break;
    case 2: puts_(b, PICK(g->r, numbers)); break;
    case 3: json_string_raw(g, b, PICK(g->r, members)); break;
    case 4: json_string_weird(g, b); break;
    case 5:
    case 6: {
        putc_(b, '[');
        unsigned n = rrange(g->r, 0, 4);
        for (unsigned i = 0; i < n; i++) {
            if (i)
                putc_(b, ',');
            json_value(g, b, depth + 1);
        }
        putc_(b, ']');
        break;
    }
    default: {
        putc_(b, '{');
        unsigned n = rrange(g->r, 0, 4);
        for (unsigned i = 0; i < n; i++) {
            if (i)
                putc_(b, ',');
            json_string_raw(g, b, PICK(g->r, ops));
            putc_(b, ':');
            json_value(g, b, depth + 1);
        }
        putc_(b, '}');
    }
    }
}

static void jkey(struct buf *b, int *first, const char *k)
{
    if (!*first)
        putc_(b, ',');
    *first = 0;
    putf(b, "\"%s\":", k);
}

/* A value for field `k`: the right type most of the time when tame, anything
 * when not. */
static void jfield(struct gen *g, struct buf *b, int *first, const char *k, const char *good, int tame)
{
    jkey(b, first, k);
    if (tame || rpct(g->r, 70))
        puts_(b, good);
    else
        json_value(g, b, 0);
}

static void json_view(struct gen *g, struct buf *b, int tame)
{
    /* (every draw in its own statement: the order of evaluation of function
     * arguments is unspecified, and the plan must not depend on the compiler) */
    unsigned kind = rbelow(g->r, tame ? 4 : 6);
    unsigned x = rpct(g->r, 90) ? rrange(g->r, 1, 20) : rrange(g->r, 0, 2000);
    unsigned y = rrange(g->r, 0, 60);
    const char *m = PICK(g->r, members);
    const char *num = PICK(g->r, numbers);
    switch (kind) {
    case 0: putf(b, "{\"top\":%u}", x); break;
    case 1: putf(b, "{\"offset\":%u,\"limit\":%u}", y / 2, x); break;
    case 2: putf(b, "{\"around\":\"%s\",\"radius\":%u}", m, y); break;
    case 3: puts_(b, "{\"feed\":true}"); break;
    case 4: json_value(g, b, 0); break;
    default: putf(b, "{\"top\":%s,\"feed\":%s}", num, x & 1 ? "1" : "true");
    }
}

/* One client message: an op with its fields, tame (what a correct client
 * sends, board and member valid) or not. */
static void json_op(struct gen *g, struct buf *b, int tame)
{
    static const char *const tame_ops[] = {"subscribe", "subscribe", "incr", "incr", "set", "best",
                                           "rank", "ping", "unsubscribe", "submit"};
    static const char *const tame_boards[] = {"demo", "demo", "laps", "match:7", "daily", "weekly", "hot"};
    static const char *const tame_members[] = {"u1", "u2", "u3", "u4", "u5", "u6", "user:101", "a@b.c"};
    char tmp[160];
    const char *op = tame ? PICK(g->r, tame_ops) : PICK(g->r, ops);
    const char *board = tame ? PICK(g->r, tame_boards) : PICK(g->r, boards);
    int first = 1;
    if (!strcmp(op, "submit") && tame)
        board = "clears";
    if (!strcmp(op, "best") && tame && rpct(g->r, 50))
        board = "laps";
    putc_(b, '{');
    if (!tame && rpct(g->r, 5)) { /* the op last, or twice */
        jkey(b, &first, "board");
        json_string_raw(g, b, board);
    }
    jkey(b, &first, "op");
    if (tame || rpct(g->r, 90))
        json_string_raw(g, b, op);
    else
        json_value(g, b, 0);
    if (rpct(g->r, 80)) {
        snprintf(tmp, sizeof tmp, "%u", rbelow(g->r, 100000));
        jfield(g, b, &first, "id", rpct(g->r, 80) ? tmp : "\"x\"", tame);
    }
    snprintf(tmp, sizeof tmp, "\"%s\"", board);
    if (strcmp(op, "ping") && strcmp(op, "unsubscribe") && strcmp(op, "auth"))
        jfield(g, b, &first, "board", tmp, tame);
    snprintf(tmp, sizeof tmp, "\"%s\"", tame ? PICK(g->r, tame_members) : PICK(g->r, members));
    if (!strcmp(op, "subscribe")) {
        jkey(b, &first, "view");
        json_view(g, b, tame);
        if (rpct(g->r, 20))
            jfield(g, b, &first, "period", rpct(g->r, 50) ? "\"current\"" : "\"previous\"", tame);
        if (rpct(g->r, 10))
            jfield(g, b, &first, "since", "{\"seq\":1,\"epoch\":\"e\"}", tame);
        if (rpct(g->r, 10))
            jfield(g, b, &first, "places", "\"shared\"", tame);
        if (rpct(g->r, 10))
            jfield(g, b, &first, "max_rate", "5", tame);
    } else if (!strcmp(op, "unsubscribe")) {
        snprintf(tmp, sizeof tmp, "\"s%u\"", rrange(g->r, 1, 6));
        jfield(g, b, &first, "sub", tmp, tame);
    } else if (!strcmp(op, "incr")) {
        jfield(g, b, &first, "member", tmp, tame);
        snprintf(tmp, sizeof tmp, "%d", (int)rrange(g->r, 0, 200) - 50);
        jfield(g, b, &first, "delta", tmp, tame);
    } else if (!strcmp(op, "set") || !strcmp(op, "best")) {
        jfield(g, b, &first, "member", tmp, tame);
        snprintf(tmp, sizeof tmp, "%u", rrange(g->r, 0, 5000));
        jfield(g, b, &first, "value", tmp, tame);
    } else if (!strcmp(op, "submit")) {
        jfield(g, b, &first, "member", tmp, tame);
        unsigned clears = rrange(g->r, 0, 100), revives = rrange(g->r, 0, 9), ms = rrange(g->r, 0, 100000);
        snprintf(tmp, sizeof tmp, "{\"clears\":%u,\"revives\":%u,\"first_clear_ms\":%u}", clears, revives, ms);
        jfield(g, b, &first, "fields", tmp, tame);
    } else if (!strcmp(op, "rank") || !strcmp(op, "remove") || !strcmp(op, "unblock")) {
        jfield(g, b, &first, "member", tmp, tame);
    } else if (!strcmp(op, "auth")) {
        snprintf(tmp, sizeof tmp, "\"%s\"", rpct(g->r, 50) ? g->token : "eyJhbGciOiJIUzI1NiJ9.e30.x");
        jfield(g, b, &first, "token", tmp, tame);
    } else if (!strcmp(op, "reveal")) {
        jfield(g, b, &first, "steps", rpct(g->r, 50) ? "1" : "\"all\"", tame);
    } else if (!strcmp(op, "reverse")) {
        snprintf(tmp, sizeof tmp, "\"r%u\"", rbelow(g->r, 50));
        jfield(g, b, &first, "req", tmp, tame);
    }
    if ((!strcmp(op, "incr") || !strcmp(op, "set") || !strcmp(op, "best") || !strcmp(op, "submit")) &&
        rpct(g->r, 50)) {
        snprintf(tmp, sizeof tmp, "\"r%u\"", rbelow(g->r, 50));
        jfield(g, b, &first, "req", tmp, tame);
    }
    if (!tame) {
        unsigned extra = rpct(g->r, 30) ? rrange(g->r, 1, 4) : 0;
        for (unsigned i = 0; i < extra; i++) {
            jkey(b, &first, PICK(g->r, ops));
            json_value(g, b, 0);
        }
    }
    putc_(b, '}');
    if (!tame && rpct(g->r, 5))
        putc_(b, (unsigned char)PICK(g->r, "}],\0 x"));
}

/* Any message a hostile client might send as a text frame. */
static void json_hostile(struct gen *g, struct buf *b)
{
    switch (rbelow(g->r, 12)) {
    case 0: { /* deep nesting */
        unsigned n = rrange(g->r, 100, 3000);
        put_fill(b, '[', n);
        if (rpct(g->r, 50))
            put_fill(b, ']', n);
        break;
    }
    case 1: json_value(g, b, 0); break;
    case 2: {
        unsigned n = rrange(g->r, 1, 200);
        put_random(b, g->r, n, rpct(g->r, 50));
        break;
    }
    case 3: /* one huge string field */
        puts_(b, "{\"op\":\"ping\",\"id\":\"");
        put_fill(b, 'A', rrange(g->r, 100, 70000));
        puts_(b, "\"}");
        break;
    case 4: puts_(b, ""); break;
    default: json_op(g, b, 0);
    }
}

/* ---- HTTP ------------------------------------------------------------------------------------ */

static const char *const paths[] = {
    "/healthz", "/healthz", "/metrics", "/api/v1/boards/demo", "/api/v1/boards/demo?top=5",
    "/api/v1/boards/demo?offset=2&limit=3", "/api/v1/boards/demo?around=u1&radius=2",
    "/api/v1/boards/demo/scores", "/api/v1/boards/demo/scores", "/api/v1/boards/demo/members/u1",
    "/api/v1/members/u1/profile", "/api/v1/members/u2/profile", "/", "/ws", "/index.html", "/api/v1/boards",
    "/api/v1/boards/demo/stats", "/api/v1/boards/laps/scores", "/api/v1/boards/clears/scores",
    "/api/v1/boards/match:7/scores", "/api/v1/boards/daily?period=previous", "/api/v1/boards/demo/reverse",
    "/api/v1/boards/demo/reset", "/api/v1/boards/demo/members/u9?block=1", "/api/v1/boards/demo/blocked/u9",
    "/api/v1/boards/demo/freeze", "/api/v1/boards/demo/reveal", "/api/v1/debug/clock", "/nope",
    "/api/v2/boards/demo", "/api/v1/boards/nosuch", "/api/v1/boards/weekly/members/u1?period=2020-W01",
    "/rankcast.js", "/favicon.ico", "/api/v1/boards/demo?top=0", "/api/v1/boards/demo?top=1001",
    "/api/v1/boards/demo?around=&radius=99", "/api/v1/boards/hot?top=3"};

static const char *const weird_paths[] = {
    "", "*", "//healthz", "/healthz/", "/healthz?x=1&x=2", "/%00", "/..%2f..%2fetc%2fpasswd",
    "/../../../../etc/passwd", "/api/v1/boards/demo/../../../healthz", "/api/v1/boards/%64emo",
    "/api/v1/boards/demo?top=99999999999999999999", "/api/v1/boards/demo?top=-1", "/api/v1/boards/demo?top=",
    "/api/v1/boards/demo?around=u1&radius=-5", "/api/v1/boards/demo?offset=2147483648&limit=1",
    "/api/v1/a/b/c/d/e/f/g/h/i/j/k", "/api/v1/boards/demo/members/", "/api/v1/members//profile",
    "http://127.0.0.1/healthz", "/?token=", "/%zz%", "/api/v1/boards/demo?period=", "/\xff\xfe",
    "/api/v1/boards/demo#frag", "/api/v1//boards///demo", "/api/v1/boards/demo?&&&&=&=", "/ws?token=x"};

static const char *const methods[] = {"GET", "GET", "GET", "POST", "POST", "POST", "PUT", "DELETE", "HEAD", "OPTIONS"};
static const char *const weird_methods[] = {"HEAD", "OPTIONS", "PATCH", "CONNECT", "TRACE", "get", "GETT",
                                            "", "POST POST", "PRI", "G\x00T", "DELETE"};

/* Body for method+path: what the endpoint expects, mostly. */
static void http_body(struct gen *g, struct buf *b, const char *path, int tame)
{
    if (!tame && rpct(g->r, 20)) {
        if (rpct(g->r, 30))
            put_random(b, g->r, rrange(g->r, 0, 600), 0);
        else
            json_hostile(g, b);
        return;
    }
    if (strstr(path, "/scores")) {
        static const char *const wops[] = {"incr", "set", "best", "submit"};
        const char *op = tame ? (strstr(path, "clears") ? "submit" : strstr(path, "laps") ? "best" : "incr")
                              : PICK(g->r, wops);
        putf(b, "{\"member\":\"u%u\",\"op\":\"%s\"", rrange(g->r, 1, 9), op);
        if (!strcmp(op, "incr"))
            putf(b, ",\"delta\":%d", (int)rrange(g->r, 0, 100) - 20);
        else if (!strcmp(op, "submit"))
        {
            unsigned clears = rrange(g->r, 0, 9), ms = rrange(g->r, 0, 9999);
            putf(b, ",\"fields\":{\"clears\":%u,\"revives\":1,\"first_clear_ms\":%u}", clears, ms);
        }
        else
            putf(b, ",\"value\":%u", rrange(g->r, 0, 99999));
        if (rpct(g->r, 50))
            putf(b, ",\"req\":\"q%u\"", rbelow(g->r, 40));
        putc_(b, '}');
    } else if (strstr(path, "/profile")) {
        unsigned who = rbelow(g->r, 100);
        putf(b, "{\"name\":\"Player %u\",\"avatar\":\"a%u.png\"}", who, who % 9);
    } else if (strstr(path, "/reverse")) {
        putf(b, "{\"req\":\"q%u\"}", rbelow(g->r, 40));
    } else if (strstr(path, "/reveal")) {
        puts_(b, rpct(g->r, 50) ? "{\"steps\":1}" : "{\"steps\":\"all\"}");
    } else if (strstr(path, "/clock")) {
        puts_(b, "{\"offset_ms\":0}");
    } else {
        puts_(b, "{}");
    }
}

static void crlf(struct gen *g, struct buf *b, int tame)
{
    if (tame || rpct(g->r, 97))
        puts_(b, "\r\n");
    else
        puts_(b, rpct(g->r, 70) ? "\n" : "\r");
}

/* A chunked body: valid chunks of `body`, or broken ones. */
static void chunked(struct gen *g, struct buf *b, const struct buf *body, int tame)
{
    size_t off = 0;
    int broken = !tame && rpct(g->r, 50);
    while (off < body->len) {
        size_t n = rrange(g->r, 1, 64);
        if (n > body->len - off)
            n = body->len - off;
        if (broken && rpct(g->r, 20)) {
            static const char *const sizes[] = {"ffffffffffffffff", "-1", "0x10", "zz", "", " 5",
                                                "7fffffff", "100000000", "1;ext=\"x\"", "00000000000000000001"};
            puts_(b, PICK(g->r, sizes));
        } else {
            putf(b, "%zx", n);
            if (rpct(g->r, 5))
                puts_(b, ";name=value");
        }
        crlf(g, b, !broken);
        put(b, body->p + off, n);
        if (!broken || rpct(g->r, 80))
            crlf(g, b, !broken);
        off += n;
    }
    if (!broken || rpct(g->r, 50)) {
        puts_(b, "0\r\n");
        if (rpct(g->r, 10))
            puts_(b, "X-Trailer: 1\r\n");
        puts_(b, "\r\n");
    }
}

static void header(struct buf *b, const char *name, const char *value)
{
    puts_(b, name);
    puts_(b, ": ");
    puts_(b, value);
    puts_(b, "\r\n");
}

/* One HTTP request. tame: what a correct client sends (method and path
 * fit, honest Content-Length, valid credentials). */
static void http_request(struct gen *g, int tame, int keep_alive)
{
    struct buf *b = &g->p->bytes;
    struct buf body = {0};
    const char *path = PICK(g->r, paths);
    const char *method = PICK(g->r, methods);
    int has_body;
    if (!tame && rpct(g->r, 15))
        path = PICK(g->r, weird_paths);
    if (!tame && rpct(g->r, 10))
        method = PICK(g->r, weird_methods);
    if (tame) {
        method = strstr(path, "/scores") || strstr(path, "/reverse") || strstr(path, "/reset") ||
                         strstr(path, "/freeze") || strstr(path, "/reveal")
                     ? "POST"
                 : strstr(path, "/profile") ? (rpct(g->r, 50) ? "PUT" : "GET")
                 : strstr(path, "block")    ? "DELETE"
                 : rpct(g->r, 10)           ? "HEAD" /* curl -I, uptime checkers */
                                            : "GET";
    }
    has_body = !strcmp(method, "POST") || !strcmp(method, "PUT") || (!tame && rpct(g->r, 10));
    if (has_body)
        http_body(g, &body, path, tame);

    /* request line */
    puts_(b, method);
    putc_(b, ' ');
    if (!tame && rpct(g->r, 3)) {
        /* a target longer than anything sane */
        puts_(b, "/api/v1/boards/");
        put_fill(b, 'a', rrange(g->r, 500, 9000));
    } else {
        puts_(b, path);
    }
    if (!tame && rpct(g->r, 3)) {
        crlf(g, b, tame); /* HTTP/0.9 style: no version */
    } else {
        static const char *const versions[] = {"HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.1x",
                                               "HTTP/9.9", "http/1.1", "HTTP/1.", "HTTP/01.1"};
        putc_(b, ' ');
        puts_(b, !tame && rpct(g->r, 5) ? PICK(g->r, versions) : "HTTP/1.1");
        crlf(g, b, tame);
    }

    /* headers */
    if (tame || rpct(g->r, 90))
        header(b, "Host", "127.0.0.1");
    if (!tame && rpct(g->r, 5))
        header(b, "Host", "other.example");
    if ((tame && (has_body || strstr(path, "block") || rpct(g->r, 30))) || (!tame && rpct(g->r, 40))) {
        char auth[256];
        snprintf(auth, sizeof auth, "Bearer %s", tame || rpct(g->r, 70) ? g->token : "not-a-valid-key-0123456789");
        if (!tame && rpct(g->r, 10))
            snprintf(auth, sizeof auth, "%s", rpct(g->r, 50) ? "Bearer" : "Basic dXNlcjpwYXNz");
        header(b, "Authorization", auth);
    }
    if (rpct(g->r, 30))
        header(b, "User-Agent", "sockfuzz/1");
    if (rpct(g->r, 20))
        header(b, "Accept", "*/*");
    if (!keep_alive)
        header(b, "Connection", "close");
    else if (rpct(g->r, 20))
        header(b, "Connection", "keep-alive");
    if (!tame) {
        static const char *const extra[][2] = {
            {"Range", "bytes=0-10"}, {"Range", "bytes=-5"}, {"Range", "bytes=10-2"},
            {"Range", "bytes=0-1,3-4,99999999999-"}, {"Range", "bytes=18446744073709551615-"},
            {"Expect", "100-continue"}, {"Origin", "http://evil.example"}, {"Origin", "null"},
            {"Connection", "Upgrade"}, {"Upgrade", "websocket"}, {"Upgrade", "h2c"},
            {"HTTP2-Settings", "AAMAAABkAARAAAAAAAIAAAAA"}, {"Cookie", "a=b; c=d"},
            {"If-Modified-Since", "Thu, 01 Jan 1970 00:00:00 GMT"}, {"If-None-Match", "\"x\""},
            {"Accept-Encoding", "gzip, deflate, br"}, {"Content-Type", "application/json"},
            {"Content-Type", "multipart/form-data; boundary=x"}, {"Sec-WebSocket-Version", "13"},
            {"Transfer-Encoding", "identity"}, {"X-Forwarded-For", "10.0.0.1"}, {"Authorization", ""},
            {"Host", ""}, {"Content-Length", ""}};
        unsigned n = rpct(g->r, 50) ? rrange(g->r, 1, 4) : 0;
        for (unsigned i = 0; i < n; i++) {
            unsigned k = rbelow(g->r, (uint32_t)(sizeof extra / sizeof extra[0]));
            header(b, extra[k][0], extra[k][1]);
        }
        if (rpct(g->r, 4)) { /* a giant header */
            puts_(b, rpct(g->r, 50) ? "X-Big: " : "Cookie: ");
            put_fill(b, 'b', rrange(g->r, 1000, 70000));
            crlf(g, b, tame);
        }
        if (rpct(g->r, 3)) { /* very many headers */
            unsigned m = rrange(g->r, 50, 400);
            for (unsigned i = 0; i < m; i++)
                putf(b, "X-H%u: v\r\n", i);
        }
        if (rpct(g->r, 4)) { /* malformed header lines */
            static const char *const bad[] = {"NoColon\r\n", " folded continuation\r\n", "X Space: v\r\n",
                                              ": empty-name\r\n", "X-Nul: a\0b\r\n", "X-Ctl: \x01\x02\r\n",
                                              "Content-Length : 3\r\n", "\tTab: v\r\n", "X-Utf8: \xff\xfe\r\n"};
            const char *l = PICK(g->r, bad);
            put(b, l, !strcmp(l, "X-Nul: a") ? 12 : strlen(l));
        }
    }

    /* framing of the body */
    if (has_body) {
        int mode = tame ? 0 : (int)rbelow(g->r, 12);
        char cl[64];
        switch (mode) {
        case 0:
        case 1:
        case 2: /* honest */
            snprintf(cl, sizeof cl, "%zu", body.len);
            header(b, "Content-Length", cl);
            crlf(g, b, tame);
            put(b, body.p, body.len);
            break;
        case 3: /* announced longer than sent: the next request becomes body */
            snprintf(cl, sizeof cl, "%zu", body.len + rrange(g->r, 1, 200));
            header(b, "Content-Length", cl);
            crlf(g, b, tame);
            put(b, body.p, body.len);
            break;
        case 4: /* announced shorter than sent: the rest is the next request */
            snprintf(cl, sizeof cl, "%u", body.len ? rbelow(g->r, (uint32_t)body.len) : 0u);
            header(b, "Content-Length", cl);
            crlf(g, b, tame);
            put(b, body.p, body.len);
            break;
        case 5: { /* not a number */
            static const char *const bad[] = {"abc", "-1", "+5", "1e3", " 5", "5, 5", "0x10", "",
                                              "18446744073709551616", "18446744073709551615", "4294967296",
                                              "9223372036854775807", "-9223372036854775808", "00000000002",
                                              "2 ", "65537", "99999999999999999999999999999"};
            header(b, "Content-Length", PICK(g->r, bad));
            crlf(g, b, tame);
            put(b, body.p, body.len);
            break;
        }
        case 6: /* two Content-Length headers: different, or the same twice */
            snprintf(cl, sizeof cl, "%zu", body.len);
            header(b, "Content-Length", cl);
            if (rpct(g->r, 60))
                snprintf(cl, sizeof cl, "%u", rbelow(g->r, 100));
            header(b, "Content-Length", cl);
            crlf(g, b, tame);
            put(b, body.p, body.len);
            break;
        case 10: /* the right length, spelt leniently ("+37", "37, 37", "037"), or CL before TE */
            switch (rbelow(g->r, 4)) {
            case 0: snprintf(cl, sizeof cl, "+%zu", body.len); break;
            case 1: snprintf(cl, sizeof cl, "%zu, %zu", body.len, body.len); break;
            case 2: snprintf(cl, sizeof cl, "0%zu", body.len); break;
            default: snprintf(cl, sizeof cl, "%zu", body.len);
            }
            header(b, "Content-Length", cl);
            if (rpct(g->r, 50)) {
                header(b, "Transfer-Encoding", "chunked");
                crlf(g, b, tame);
                chunked(g, b, &body, tame);
            } else {
                crlf(g, b, tame);
                put(b, body.p, body.len);
            }
            break;
        case 7:
        case 8: /* chunked */
            header(b, "Transfer-Encoding", rpct(g->r, 80) ? "chunked" : rpct(g->r, 50) ? "gzip, chunked" : "Chunked");
            if (rpct(g->r, 20)) {
                snprintf(cl, sizeof cl, "%zu", body.len);
                header(b, "Content-Length", cl);
            }
            crlf(g, b, tame);
            chunked(g, b, &body, tame);
            break;
        case 9: { /* a body over max_frame (64k as shipped) */
            size_t n = rrange(g->r, 65000, 140000);
            snprintf(cl, sizeof cl, "%zu", n);
            header(b, "Content-Length", cl);
            crlf(g, b, tame);
            put(b, body.p, body.len);
            if (n > body.len)
                put_fill(b, ' ', rpct(g->r, 80) ? n - body.len : (n - body.len) / 2);
            break;
        }
        default: /* no framing at all */
            crlf(g, b, tame);
            put(b, body.p, body.len);
        }
    } else {
        if (!tame && rpct(g->r, 5))
            header(b, "Content-Length", PICK(g->r, numbers));
        crlf(g, b, tame);
    }
    free(body.p);
}

/* ---- WebSocket ------------------------------------------------------------------------------ */

#define WS_CONT 0x0
#define WS_TEXT 0x1
#define WS_BIN 0x2
#define WS_CLOSE 0x8
#define WS_PING 0x9
#define WS_PONG 0xA

/* A frame. lenmode 0: minimal length encoding, 1: 16-bit, 2: 64-bit.
 * declared: the length written in the header (normally n). */
static void ws_frame_ex(struct gen *g, int fin, unsigned rsv, unsigned op, int masked, const unsigned char *pl,
                        size_t n, int lenmode, uint64_t declared)
{
    struct buf *b = &g->p->bytes;
    putc_(b, (unsigned char)((fin ? 0x80 : 0) | ((rsv & 7) << 4) | (op & 0xf)));
    unsigned char m = masked ? 0x80 : 0;
    if (lenmode == 0 && declared < 126) {
        putc_(b, (unsigned char)(m | declared));
    } else if (lenmode <= 1 && declared < 65536) {
        putc_(b, m | 126);
        putc_(b, (unsigned char)(declared >> 8));
        putc_(b, (unsigned char)declared);
    } else {
        putc_(b, m | 127);
        for (int i = 7; i >= 0; i--)
            putc_(b, (unsigned char)(declared >> (8 * i)));
    }
    unsigned char key[4] = {0, 0, 0, 0};
    if (masked) {
        uint64_t k = rnext(g->r);
        for (int i = 0; i < 4; i++)
            key[i] = (unsigned char)(k >> (8 * i));
        if (rpct(g->r, 3))
            memset(key, 0, 4);
        put(b, key, 4);
    }
    buf_reserve(b, n);
    for (size_t i = 0; i < n; i++)
        b->p[b->len++] = pl[i] ^ key[i & 3];
}

static void ws_frame(struct gen *g, int fin, unsigned op, const unsigned char *pl, size_t n)
{
    ws_frame_ex(g, fin, 0, op, 1, pl, n, 0, n);
}

/* A text message, whole or in fragments, with control frames in between
 * when interleave is set (legal: control frames may come between fragments). */
static void ws_message(struct gen *g, const struct buf *msg, int fragments, int interleave)
{
    if (fragments <= 1 || msg->len < 2) {
        ws_frame(g, 1, WS_TEXT, msg->p, msg->len);
        return;
    }
    size_t off = 0;
    for (int i = 0; i < fragments; i++) {
        size_t left = msg->len - off;
        size_t n = i == fragments - 1 ? left : rbelow(g->r, (uint32_t)(left + 1));
        ws_frame(g, i == fragments - 1, i == 0 ? WS_TEXT : WS_CONT, msg->p + off, n);
        off += n;
        if (interleave && i < fragments - 1 && rpct(g->r, 50)) {
            static const unsigned char ping[] = "keepalive";
            unsigned op = rpct(g->r, 70) ? WS_PING : WS_PONG;
            ws_frame(g, 1, op, ping, rbelow(g->r, 10));
        }
    }
}

static void ws_close_frame(struct gen *g, int tame)
{
    unsigned char pl[200];
    size_t n = 0;
    unsigned code = 1000;
    if (!tame) {
        static const unsigned codes[] = {1000, 1001, 1002, 0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 3000,
                                         4999, 5000, 65535};
        code = PICK(g->r, codes);
    }
    pl[n++] = (unsigned char)(code >> 8);
    pl[n++] = (unsigned char)code;
    if (!tame) {
        switch (rbelow(g->r, 6)) {
        case 0: n = 0; break;              /* no code at all (allowed) */
        case 1: n = 1; break;              /* one byte: never valid */
        case 2: memcpy(pl + n, "\xff\xfe\xc3", 3); n += 3; break; /* reason not UTF-8 */
        case 3: memset(pl + n, 'r', 123); n += 123; break;        /* 125 bytes: the most allowed */
        case 4: memset(pl + n, 'r', 150); n += 150; break;        /* over 125: oversized control */
        default: memcpy(pl + n, "bye", 3); n += 3;
        }
    }
    ws_frame_ex(g, 1, 0, WS_CLOSE, 1, pl, n, n > 125 ? 1 : 0, n);
}

/* The handshake: valid (with or without subprotocol, key in header or
 * query) or broken in one of many ways. */
static void ws_handshake(struct gen *g, int tame)
{
    struct buf *b = &g->p->bytes;
    static const char *const keys[] = {"dGhlIHNhbXBsZSBub25jZQ==", "x3JJHMbDL1EzLkh9GBhXDw==", "AQIDBAUGBwgJCgsMDQ4PEA=="};
    static const char *const wpaths[] = {"/ws", "/ws", "/ws", "/", "/healthz", "/api/v1/boards/demo", "/nope",
                                         "/ws?token=bad-token-0123456789"};
    int broken = !tame && rpct(g->r, 40);
    unsigned what = broken ? rbelow(g->r, 12) : 99;
    const char *path = tame ? "/ws" : PICK(g->r, wpaths);
    putf(b, "%s %s", what == 0 ? "POST" : "GET", path);
    if (!strcmp(path, "/ws") && rpct(g->r, 40))
        putf(b, "?token=%s", g->token);
    puts_(b, what == 1 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
    header(b, "Host", "127.0.0.1");
    if (what != 2)
        header(b, "Upgrade", what == 3 ? "websocket2" : rpct(g->r, 20) ? "WebSocket" : "websocket");
    if (what != 4)
        header(b, "Connection", rpct(g->r, 20) ? "keep-alive, Upgrade" : "Upgrade");
    if (what != 5)
        header(b, "Sec-WebSocket-Key", what == 6 ? "short" : what == 7 ? "" : PICK(g->r, keys));
    if (what != 8)
        header(b, "Sec-WebSocket-Version", what == 9 ? (rpct(g->r, 50) ? "8" : "99999999999") : "13");
    if (rpct(g->r, 60) || what == 10)
        header(b, "Sec-WebSocket-Protocol", what == 10 ? (rpct(g->r, 50) ? "other" : "rankcast.v1, , ,x")
                                                       : "rankcast.v1");
    if (rpct(g->r, 20))
        header(b, "Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits");
    if (rpct(g->r, 30))
        header(b, "Origin", rpct(g->r, 50) ? "http://127.0.0.1" : "http://evil.example");
    if (rpct(g->r, 30)) {
        char auth[200];
        snprintf(auth, sizeof auth, "Bearer %s", rpct(g->r, 85) ? g->token : "wrong-token-0123456789abcdef");
        header(b, "Authorization", auth);
    }
    if (what == 11)
        header(b, "Content-Length", "5");
    puts_(b, "\r\n");
    if (what == 0 || what == 11)
        puts_(b, "hello");
}

/* One hostile frame-level event after the handshake. */
static void ws_hostile_item(struct gen *g)
{
    struct buf msg = {0};
    unsigned char junk[300];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)rnext(g->r);
    switch (rbelow(g->r, 24)) {
    case 0:
    case 1:
    case 2: /* a valid message */
        json_op(g, &msg, rpct(g->r, 50));
        ws_message(g, &msg, rpct(g->r, 20) ? (int)rrange(g->r, 2, 6) : 1, 1);
        break;
    case 3:
    case 4: { /* a hostile message */
        json_hostile(g, &msg);
        int frags = rpct(g->r, 30) ? (int)rrange(g->r, 2, 8) : 1;
        ws_message(g, &msg, frags, rpct(g->r, 50));
        break;
    }
    case 5: /* unmasked: a server-style frame from a client */
        json_op(g, &msg, 1);
        ws_frame_ex(g, 1, 0, WS_TEXT, 0, msg.p, msg.len, 0, msg.len);
        break;
    case 6: /* a continuation with no message started */
        ws_frame(g, rpct(g->r, 50), WS_CONT, (const unsigned char *)"{}", 2);
        break;
    case 7: /* a new text frame in the middle of a fragmented one */
        ws_frame(g, 0, WS_TEXT, (const unsigned char *)"{\"op\":", 6);
        ws_frame(g, 1, WS_TEXT, (const unsigned char *)"{\"op\":\"ping\"}", 13);
        break;
    case 8: /* bad opcodes */
    {
        size_t n = rbelow(g->r, 40);
        ws_frame_ex(g, 1, 0, (unsigned)PICK(g->r, "\x03\x04\x05\x06\x07\x0b\x0c\x0d\x0e\x0f"), 1, junk, n, 0, n);
        break;
    }
    case 9: { /* oversized or fragmented control frames */
        unsigned op = rpct(g->r, 50) ? WS_PING : WS_PONG;
        size_t n = rrange(g->r, 126, 300);
        if (rpct(g->r, 50))
            ws_frame_ex(g, 1, 0, op, 1, junk, n, 1, n);
        else
            ws_frame(g, 0, op, junk, 4);
        break;
    }
    case 10: ws_close_frame(g, 0); break;
    case 11: { /* binary frames, a burst past the tolerated count */
        unsigned n = rpct(g->r, 50) ? rrange(g->r, 1, 3) : rrange(g->r, 8, 14);
        for (unsigned i = 0; i < n; i++)
            ws_frame(g, 1, WS_BIN, junk, rbelow(g->r, 100));
        break;
    }
    case 12: /* RSV bits without an extension */
        ws_frame_ex(g, 1, rrange(g->r, 1, 7), WS_TEXT, 1, (const unsigned char *)"{\"op\":\"ping\"}", 13, 0, 13);
        break;
    case 13: /* a length far beyond anything (and beyond the bytes sent) */
    {
        size_t n = rbelow(g->r, 50);
        uint64_t declared = rpct(g->r, 50) ? 0x7fffffffffffffffULL : rpct(g->r, 50) ? 0xffffffffffffffffULL : 70000;
        ws_frame_ex(g, 1, 0, WS_TEXT, 1, junk, n, 2, declared);
        break;
    }
    case 14: { /* a message over max_frame, whole or in fragments */
        size_t n = rrange(g->r, 60000, 140000);
        puts_(&msg, "{\"op\":\"ping\",\"x\":\"");
        put_fill(&msg, 'z', n);
        puts_(&msg, "\"}");
        ws_message(g, &msg, rpct(g->r, 50) ? 1 : (int)rrange(g->r, 2, 12), 0);
        break;
    }
    case 15: /* non-minimal length encodings of a valid message */
        json_op(g, &msg, 1);
        ws_frame_ex(g, 1, 0, WS_TEXT, 1, msg.p, msg.len, rpct(g->r, 50) ? 1 : 2, msg.len);
        break;
    case 16: { /* a ping flood */
        unsigned n = rrange(g->r, 10, 80);
        for (unsigned i = 0; i < n; i++)
            ws_frame(g, 1, WS_PING, junk, rbelow(g->r, 126));
        break;
    }
    case 17: /* empty text frames */
        ws_frame(g, 1, WS_TEXT, junk, 0);
        break;
    case 18: { /* many fragments of one message, each tiny */
        json_op(g, &msg, 0);
        ws_message(g, &msg, (int)(msg.len < 200 ? msg.len : 200), 1);
        break;
    }
    case 19: { /* an unfinished message, then a flood of (mostly empty) continuation frames */
        unsigned n = rrange(g->r, 100, 20000);
        ws_frame(g, 0, WS_TEXT, (const unsigned char *)"{\"op\":", 6);
        for (unsigned i = 0; i < n; i++)
            ws_frame(g, 0, WS_CONT, junk, rpct(g->r, 95) ? 0 : rbelow(g->r, 4));
        if (rpct(g->r, 30))
            ws_frame(g, 1, WS_CONT, (const unsigned char *)"\"ping\"}", 7); /* finished after all */
        break;
    }
    case 20: /* a ping or pong flood past the read budgets (conn_read_burst 400 as shipped) */
    case 21: {
        unsigned op = rpct(g->r, 50) ? WS_PING : WS_PONG;
        unsigned n = rrange(g->r, 300, 5000);
        for (unsigned i = 0; i < n; i++)
            ws_frame(g, 1, op, junk, rpct(g->r, 70) ? 0 : rbelow(g->r, 126));
        break;
    }
    case 22: { /* a message never finished: fragments that stop, or a frame cut short */
        json_op(g, &msg, 1);
        size_t cut = msg.len > 1 ? rrange(g->r, 1, (uint32_t)msg.len - 1) : 0;
        if (rpct(g->r, 50))
            ws_frame(g, 0, WS_TEXT, msg.p, cut);
        else
            ws_frame_ex(g, 1, 0, WS_TEXT, 1, msg.p, cut, 0, msg.len);
        break;
    }
    default: /* raw garbage where a frame header should be */
        put(&g->p->bytes, junk, rrange(g->r, 1, 64));
    }
    free(msg.p);
}

/* ---- connection plans -------------------------------------------------------------------------- */

enum kind {
    K_HTTP_VALID,
    K_HTTP_PIPELINED,
    K_HTTP_HOSTILE,
    K_WS_VALID,
    K_WS_HOSTILE,
    K_RAW,
    K_IDLE,
    K_COUNT
};
static const char *const kind_names[K_COUNT] = {"http-valid", "http-pipelined", "http-hostile", "ws-valid",
                                                "ws-hostile", "raw", "idle"};
static const unsigned kind_weights[K_COUNT] = {16, 18, 18, 14, 24, 4, 6};
/* --kinds: the kinds drawn from (all by default); a plan depends on the seed,
 * its connection number and this set */
static unsigned kinds_mask = (1u << K_COUNT) - 1;

/* Random mutations of the whole stream: flips, interesting bytes, inserted
 * tokens, deletions, duplications. */
static void mutate(struct gen *g)
{
    static const char *const tokens[] = {"\r\n", "\r\n\r\n", ":", " ", "\0", "0\r\n\r\n", "%",
                                         "Content-Length: 5\r\n", "Transfer-Encoding: chunked\r\n",
                                         "GET /healthz HTTP/1.1\r\n\r\n", "{}", "\xff\xff", "\x81\xfe\xff\xff",
                                         "\x88\x80\0\0\0\0", "\"", "\\", "9999999999"};
    struct buf *b = &g->p->bytes;
    unsigned n = rrange(g->r, 1, 8);
    for (unsigned i = 0; i < n && b->len; i++) {
        size_t at = rbelow(g->r, (uint32_t)b->len);
        switch (rbelow(g->r, 6)) {
        case 0: b->p[at] ^= (unsigned char)(1u << rbelow(g->r, 8)); break;
        case 1: b->p[at] = (unsigned char)PICK(g->r, "\0\xff\r\n: 0\x7f\x80"); break;
        case 2: { /* insert a token */
            const char *t = PICK(g->r, tokens);
            size_t tl = t[0] ? strlen(t) : 1;
            buf_reserve(b, tl);
            memmove(b->p + at + tl, b->p + at, b->len - at);
            memcpy(b->p + at, t, tl);
            b->len += tl;
            break;
        }
        case 3: { /* delete a range */
            size_t dl = rrange(g->r, 1, 32);
            if (dl > b->len - at)
                dl = b->len - at;
            memmove(b->p + at, b->p + at + dl, b->len - at - dl);
            b->len -= dl;
            break;
        }
        case 4: { /* duplicate a range */
            size_t dl = rrange(g->r, 1, 64);
            if (dl > b->len - at)
                dl = b->len - at;
            if (b->len + dl > PLAN_MAX)
                break;
            buf_reserve(b, dl);
            memmove(b->p + at + dl, b->p + at, b->len - at);
            b->len += dl;
            break;
        }
        default: /* truncate */
            if (rpct(g->r, 30))
                b->len = at;
        }
    }
    g->p->nmarks = 0; /* the boundaries moved */
}

/* Splits the bytes into steps. */
static void chunk(struct gen *g)
{
    struct plan *p = g->p;
    size_t len = p->bytes.len;
    unsigned how = rbelow(g->r, 10);
    if (len == 0)
        return;
    if (how < 3 || (how < 6 && !p->nmarks)) { /* all at once: one packet */
        add_step(p, 0, len, 0, 0);
    } else if (how < 6) { /* at the boundaries the generator left */
        size_t off = 0;
        for (unsigned i = 0; i < p->nmarks && off < len; i++) {
            size_t end = p->marks[i] < len ? p->marks[i] : len;
            if (end > off)
                add_step(p, off, end - off, rpct(g->r, 60) ? 0 : rrange(g->r, 1, 80), 0);
            off = end;
        }
        if (off < len)
            add_step(p, off, len - off, rrange(g->r, 0, 50), 0);
        /* carry the wait flags onto the step that starts at each mark */
        for (size_t s = 1; s < p->nsteps; s++)
            for (unsigned i = 0; i < p->nmarks; i++)
                if (p->marks[i] == p->steps[s].off && (p->mark_flags[i] & STEP_WAIT_READ))
                    p->steps[s].flags |= STEP_WAIT_READ;
    } else if (how < 9) { /* random pieces */
        size_t off = 0;
        while (off < len) {
            size_t n = rpct(g->r, 30) ? rrange(g->r, 1, 16) : rrange(g->r, 1, 4096);
            if (n > len - off)
                n = len - off;
            add_step(p, off, n, rpct(g->r, 70) ? 0 : rrange(g->r, 1, 40), 0);
            off += n;
        }
    } else { /* a slow sender: a few bytes at a time, ~6 s at most */
        size_t off = 0;
        uint32_t total = 0;
        while (off < len) {
            size_t n = rrange(g->r, 1, 8);
            uint32_t d = rrange(g->r, 10, 250);
            if (total + d > 6000 || p->nsteps > 400) {
                n = len - off; /* the rest at once */
                d = 0;
            }
            if (n > len - off)
                n = len - off;
            add_step(p, off, n, d, 0);
            total += d;
            off += n;
        }
        snprintf(p->kind + strlen(p->kind), sizeof p->kind - strlen(p->kind), "+slow");
    }
}

/* Builds connection `id`'s whole plan from (seed, id) alone. */
static void plan_build(struct plan *p, uint64_t seed, uint64_t id, const char *token)
{
    struct rng r;
    struct gen g = {&r, p, token};
    memset(p, 0, sizeof *p);
    rng_seed(&r, seed, id + 1);
    unsigned total = 0, pickw;
    for (int k = 0; k < K_COUNT; k++)
        total += kinds_mask & (1u << k) ? kind_weights[k] : 0;
    pickw = rbelow(&r, total);
    enum kind kind = 0;
    while (!(kinds_mask & (1u << kind)) || pickw >= kind_weights[kind]) {
        if (kinds_mask & (1u << kind))
            pickw -= kind_weights[kind];
        kind++;
    }
    snprintf(p->kind, sizeof p->kind, "%s", kind_names[kind]);
    int mutable = 0;

    switch (kind) {
    case K_HTTP_VALID: {
        unsigned n = rrange(&r, 1, 4);
        for (unsigned i = 0; i < n; i++) {
            http_request(&g, 1, i + 1 < n || rpct(&r, 50));
            mark(p, STEP_WAIT_READ);
        }
        break;
    }
    case K_HTTP_PIPELINED: {
        /* several requests written back to back, most with bodies */
        unsigned n = rrange(&r, 2, 8);
        int tame = rpct(&r, 40);
        for (unsigned i = 0; i < n; i++) {
            if (rpct(&r, 25)) {
                /* the tiny POST the freeze was first seen with */
                putf(&p->bytes, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
                     rpct(&r, 50) ? "/healthz" : PICK(&r, paths));
            } else {
                http_request(&g, tame, i + 1 < n || rpct(&r, 70));
            }
            mark(p, 0);
        }
        mutable = !tame;
        break;
    }
    case K_HTTP_HOSTILE: {
        unsigned n = rrange(&r, 1, 4);
        for (unsigned i = 0; i < n; i++) {
            http_request(&g, 0, rpct(&r, 70));
            mark(p, rpct(&r, 50) ? STEP_WAIT_READ : 0);
        }
        mutable = 1;
        break;
    }
    case K_WS_VALID: {
        struct buf msg = {0};
        ws_handshake(&g, 1);
        mark(p, STEP_WAIT_READ);
        unsigned n = rrange(&r, 1, 25);
        for (unsigned i = 0; i < n; i++) {
            msg.len = 0;
            json_op(&g, &msg, 1);
                int frags = rpct(&r, 15) ? (int)rrange(&r, 2, 4) : 1;
            ws_message(&g, &msg, frags, rpct(&r, 50));
            mark(p, rpct(&r, 40) ? STEP_WAIT_READ : 0);
        }
        if (rpct(&r, 50))
            ws_close_frame(&g, 1);
        free(msg.p);
        break;
    }
    case K_WS_HOSTILE: {
        ws_handshake(&g, rpct(&r, 70));
        mark(p, rpct(&r, 50) ? STEP_WAIT_READ : 0);
        unsigned n = rrange(&r, 1, 20);
        for (unsigned i = 0; i < n && p->bytes.len < PLAN_MAX / 2; i++) {
            ws_hostile_item(&g);
            mark(p, rpct(&r, 20) ? STEP_WAIT_READ : 0);
        }
        if (rpct(&r, 30)) /* cut the last frame short */
            p->bytes.len -= rbelow(&r, (uint32_t)(p->bytes.len < 8 ? p->bytes.len : 8));
        mutable = rpct(&r, 50);
        break;
    }
    case K_RAW:
        if (rpct(&r, 50)) {
            unsigned n = rrange(&r, 1, 4096);
            put_random(&p->bytes, &r, n, rpct(&r, 50));
        } else { /* an HTTP/2 preface, a TLS hello, an SSH banner */
            static const char *const pre[] = {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
                                              "SSH-2.0-OpenSSH_9.0\r\n", "\r\n\r\n\r\n\r\n", "GET"};
            puts_(&p->bytes, PICK(&r, pre));
        }
        break;
    case K_IDLE:
        /* connect and say (almost) nothing; the lifetime cap or the end closes it */
        if (rpct(&r, 50))
            puts_(&p->bytes, rpct(&r, 50) ? "GET /healthz HTTP/1.1\r\n" : "G");
        break;
    default:
        break;
    }
    if (mutable && rpct(&r, 35)) {
        mutate(&g);
        snprintf(p->kind + strlen(p->kind), sizeof p->kind - strlen(p->kind), "+mut");
    }
    if (p->bytes.len > PLAN_MAX)
        p->bytes.len = PLAN_MAX;
    chunk(&g);

    unsigned e = rbelow(&r, 100);
    p->end = e < 25 ? END_CLOSE : e < 45 ? END_HALFCLOSE : e < 80 ? END_LINGER : END_RST;
    p->end_wait_ms = rrange(&r, 0, 2500);
    p->no_read = rpct(&r, 5);
    p->rst_after_wait = rpct(&r, 20);
    if (kind == K_IDLE) { /* hold the connection, then go away either way */
        p->end = rpct(&r, 50) ? END_LINGER : END_HALFCLOSE;
        p->end_wait_ms = rrange(&r, 500, 12000);
        p->rst_after_wait = rpct(&r, 50);
    }
}

/* ---- sockets --------------------------------------------------------------------------------- */

static int open_socket(const char *src, const char *dst, int port, int *err)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (src) {
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        inet_pton(AF_INET, src, &sa.sin_addr);
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            *err = errno;
            close(fd);
            return -1;
        }
    }
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, dst, &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 && errno != EINPROGRESS) {
        *err = errno;
        close(fd);
        return -1;
    }
    return fd;
}

static int socket_error(int fd)
{
    int e = 0;
    socklen_t l = sizeof e;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) != 0)
        return errno;
    return e;
}

static void close_rst(int fd)
{
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
}

/* ---- the run's state ---------------------------------------------------------------------------- */

enum cstate { C_CONNECTING, C_SENDING, C_ENDING };

struct conn {
    int fd;
    uint64_t id;
    struct plan plan;
    enum cstate state;
    size_t step, step_sent, sent;
    int64_t t_open, t_ready, t_wait_until, t_end;
    uint64_t rx, rx_at_step;
    int waiting; /* for an answer before the current step */
    int port;    /* local port, to find the connection in the gateway's own logs */
    const char *why; /* how it ended */
};

struct closed_rec {
    uint64_t id;
    int64_t t_open, t_close;
    size_t sent, planned;
    uint64_t rx;
    const char *why;
    char kind[48];
};

struct opts {
    int port;
    uint64_t seed;
    int seconds;
    int max_conns;
    int deadline_ms;
    int interval_ms;
    int ready_ms;
    long pid;
    const char *watch_src;
    const char *dump;
    const char *log; /* --log FILE: one line per connection */
    const char *token;
    long only_lo, only_hi; /* --replay-conn N or A-B: just these connections */
};

struct watchdog {
    int fd;             /* the probe under way, or -1 */
    int sent;           /* its request is out */
    int64_t t_start, t_next;
    int64_t last_ok_start, last_ok_end;
    char rx[4096];
    size_t rx_len;
    unsigned probes, answered, non200, misses_in_row;
    int64_t worst_ms, sum_ms;
    int status;
};

struct run {
    struct opts o;
    struct conn *conns;
    int nconns;
    uint64_t next_id;
    struct closed_rec ring[CLOSED_RING];
    uint64_t nclosed;
    struct watchdog w;
    int64_t t0;
    /* stats */
    uint64_t opened, refused, send_errors, bytes_out, bytes_in, resets;
    uint64_t kind_count[K_COUNT];
    char failure[512];
    FILE *log;
    int quiet; /* waiting for the gateway to come up: misses are expected */
};

static int proc_alive(long pid)
{
    char path[64], buf[512];
    if (pid <= 0)
        return 1;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

static void fail(struct run *R, const char *fmt, ...)
{
    if (R->failure[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(R->failure, sizeof R->failure, fmt, ap);
    va_end(ap);
}

/* ---- fuzz connections --------------------------------------------------------------------------- */

static void conn_finish(struct run *R, int i, const char *why, int rst)
{
    struct conn *c = &R->conns[i];
    if (c->fd >= 0) {
        if (rst) {
            close_rst(c->fd);
            R->resets++;
        } else {
            close(c->fd);
        }
    }
    if (R->log)
        fprintf(R->log, "conn %llu port %d kind=%s open=+%.3fs closed=+%.3fs sent=%zu/%zu rx=%llu end=%s\n",
                (unsigned long long)c->id, c->port, c->plan.kind, (double)(c->t_open - R->t0) / 1000,
                (double)(now_ms() - R->t0) / 1000, c->sent, c->plan.bytes.len, (unsigned long long)c->rx, why);
    struct closed_rec *rec = &R->ring[R->nclosed++ % CLOSED_RING];
    rec->id = c->id;
    rec->t_open = c->t_open;
    rec->t_close = now_ms();
    rec->sent = c->sent;
    rec->planned = c->plan.bytes.len;
    rec->rx = c->rx;
    rec->why = why;
    snprintf(rec->kind, sizeof rec->kind, "%s", c->plan.kind);
    plan_free(&c->plan);
    R->conns[i] = R->conns[--R->nconns];
}

static int conn_open(struct run *R, uint64_t id)
{
    struct conn *c = &R->conns[R->nconns];
    int err = 0;
    memset(c, 0, sizeof *c);
    c->id = id;
    plan_build(&c->plan, R->o.seed, id, R->o.token);
    c->fd = open_socket(NULL, "127.0.0.1", R->o.port, &err);
    c->t_open = now_ms();
    c->t_end = c->t_open + CONN_LIFETIME_MS;
    R->nconns++;
    R->opened++;
    for (int k = 0; k < K_COUNT; k++)
        if (!strncmp(c->plan.kind, kind_names[k], strlen(kind_names[k])) &&
            (c->plan.kind[strlen(kind_names[k])] == '\0' || c->plan.kind[strlen(kind_names[k])] == '+'))
            R->kind_count[k]++;
    if (c->fd < 0) {
        R->refused++;
        conn_finish(R, R->nconns - 1, err == ECONNREFUSED ? "refused" : "connect-error", 0);
        return -1;
    }
    struct sockaddr_in la;
    socklen_t ll = sizeof la;
    if (getsockname(c->fd, (struct sockaddr *)&la, &ll) == 0)
        c->port = ntohs(la.sin_port);
    c->state = C_CONNECTING;
    c->t_ready = c->t_open + (c->plan.nsteps ? c->plan.steps[0].delay_ms : 0);
    return 0;
}

/* The step is done: move on, or start the end. */
static void next_step(struct conn *c, int64_t now)
{
    c->step++;
    c->step_sent = 0;
    if (c->step < c->plan.nsteps) {
        c->t_ready = now + c->plan.steps[c->step].delay_ms;
        c->waiting = (c->plan.steps[c->step].flags & STEP_WAIT_READ) != 0;
        c->rx_at_step = c->rx;
        c->t_wait_until = now + WAIT_READ_MS;
    }
}

/* Everything is sent: end the way the plan says. Returns 1 when closed. */
static int conn_start_end(struct run *R, int i, int64_t now)
{
    struct conn *c = &R->conns[i];
    switch (c->plan.end) {
    case END_CLOSE:
        conn_finish(R, i, "close", 0);
        return 1;
    case END_RST:
        conn_finish(R, i, "rst", 1);
        return 1;
    case END_HALFCLOSE:
        shutdown(c->fd, SHUT_WR);
        /* fall through */
    default:
        c->state = C_ENDING;
        if (now + c->plan.end_wait_ms < c->t_end)
            c->t_end = now + c->plan.end_wait_ms;
        return 0;
    }
}

/* Sends what is due. Returns 1 when the connection was closed. */
static int conn_send(struct run *R, int i, int64_t now)
{
    struct conn *c = &R->conns[i];
    while (c->state == C_SENDING && c->step < c->plan.nsteps) {
        const struct step *s = &c->plan.steps[c->step];
        if (now < c->t_ready)
            return 0;
        if (c->waiting && c->rx == c->rx_at_step && now < c->t_wait_until && !c->plan.no_read)
            return 0;
        c->waiting = 0;
        ssize_t n = send(c->fd, c->plan.bytes.p + s->off + c->step_sent, s->len - c->step_sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                return 0;
            R->send_errors++;
            conn_finish(R, i, errno == EPIPE ? "epipe" : errno == ECONNRESET ? "reset-by-gateway" : "send-error", 0);
            return 1;
        }
        c->step_sent += (size_t)n;
        c->sent += (size_t)n;
        R->bytes_out += (uint64_t)n;
        if (c->step_sent < s->len)
            return 0; /* the socket is full: wait for POLLOUT */
        next_step(c, now);
    }
    if (c->state == C_SENDING && c->step >= c->plan.nsteps)
        return conn_start_end(R, i, now);
    return 0;
}

/* Reads and drops what came. Returns 1 when the connection was closed. */
static int conn_recv(struct run *R, int i)
{
    struct conn *c = &R->conns[i];
    static char scratch[65536];
    for (int rounds = 0; rounds < 4; rounds++) {
        ssize_t n = recv(c->fd, scratch, sizeof scratch, MSG_DONTWAIT);
        if (n > 0) {
            c->rx += (uint64_t)n;
            R->bytes_in += (uint64_t)n;
            continue;
        }
        if (n == 0) {
            conn_finish(R, i, c->state == C_ENDING ? "eof-at-end" : "eof-mid-send", 0);
            return 1;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return 0;
        conn_finish(R, i, errno == ECONNRESET ? "reset-by-gateway" : "recv-error", 0);
        return 1;
    }
    return 0;
}

/* ---- the watchdog ------------------------------------------------------------------------------ */

static const char probe_req[] = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";

static void watch_close(struct watchdog *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    w->sent = 0;
    w->rx_len = 0;
}

/* Starts a probe. Returns 0, or -1 when the connect failed at once. */
static int watch_start(struct run *R, int64_t now)
{
    struct watchdog *w = &R->w;
    int err = 0;
    watch_close(w);
    w->t_start = now;
    w->probes++;
    w->fd = open_socket(R->o.watch_src, "127.0.0.1", R->o.port, &err);
    if (w->fd < 0 && (err == EADDRNOTAVAIL || err == EINVAL))
        die("cannot bind the watchdog to %s: %s", R->o.watch_src, strerror(err));
    return w->fd < 0 ? -1 : 0;
}

/* The content-length value of the answer's headers, or -1. */
static long content_length(const char *rx, const char *hdr_end)
{
    static const char name[] = "\ncontent-length:";
    for (const char *p = rx; p + sizeof name - 1 < hdr_end; p++) {
        size_t k = 0;
        while (k < sizeof name - 1 && (p[k] | 0x20) == (name[k] | 0x20))
            k++;
        if (k == sizeof name - 1)
            return strtol(p + k, NULL, 10);
    }
    return -1;
}

/* 1 once a whole answer is in (status line, headers, Content-Length bytes). */
static int watch_complete(const struct watchdog *w)
{
    const char *hdr_end = strstr(w->rx, "\r\n\r\n");
    if (!hdr_end || strncmp(w->rx, "HTTP/1.", 7) != 0)
        return 0;
    long n = content_length(w->rx, hdr_end);
    if (n < 0)
        return 0; /* wait for EOF */
    return (size_t)(hdr_end + 4 - w->rx) + (size_t)n <= w->rx_len || w->rx_len == sizeof w->rx - 1;
}

static void watch_answered(struct run *R, int64_t now)
{
    struct watchdog *w = &R->w;
    int64_t ms = now - w->t_start;
    w->answered++;
    w->misses_in_row = 0;
    w->sum_ms += ms;
    if (ms > w->worst_ms)
        w->worst_ms = ms;
    w->status = atoi(w->rx + 9);
    if (w->status != 200)
        w->non200++;
    w->last_ok_start = w->t_start;
    w->last_ok_end = now;
    watch_close(w);
    w->t_next = w->t_start + R->o.interval_ms;
}

/* A probe got no answer (refused, or closed without one). Two in a row fail
 * the run: one may be an unlucky race with a limit. */
static void watch_missed(struct run *R, int64_t now, const char *why)
{
    struct watchdog *w = &R->w;
    watch_close(w);
    if (!proc_alive(R->o.pid)) {
        fail(R, "the gateway (pid %ld) died", R->o.pid);
        return;
    }
    if (++w->misses_in_row >= 2)
        fail(R, "/healthz got no answer twice in a row (%s)", why);
    else if (!R->quiet)
        say("warning: a /healthz probe got no answer (%s); trying again", why);
    w->t_next = now + 50;
}

static short watch_events(const struct watchdog *w)
{
    return w->sent ? POLLIN : POLLOUT;
}

static void watch_io(struct run *R, short revents, int64_t now)
{
    struct watchdog *w = &R->w;
    if (!w->sent) {
        int e = socket_error(w->fd);
        if (e) {
            watch_missed(R, now, strerror(e));
            return;
        }
        if (!(revents & POLLOUT))
            return;
        if (send(w->fd, probe_req, sizeof probe_req - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof probe_req - 1)) {
            watch_missed(R, now, "send failed");
            return;
        }
        w->sent = 1;
        return;
    }
    ssize_t n = recv(w->fd, w->rx + w->rx_len, sizeof w->rx - 1 - w->rx_len, MSG_DONTWAIT);
    if (n > 0) {
        w->rx_len += (size_t)n;
        w->rx[w->rx_len] = '\0';
        if (watch_complete(w))
            watch_answered(R, now);
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        /* EOF: an answer without Content-Length ends here */
        if (w->rx_len > 12 && !strncmp(w->rx, "HTTP/1.", 7))
            watch_answered(R, now);
        else
            watch_missed(R, now, n == 0 ? "closed without an answer" : strerror(errno));
    }
}

/* ---- the dump ------------------------------------------------------------------------------------ */

static void dump_conn(struct run *R, FILE *idx, uint64_t id, const char *kind, int64_t t_open, int64_t t_close,
                      size_t sent, size_t planned, uint64_t rx, const char *state)
{
    char path[4096];
    struct plan p;
    plan_build(&p, R->o.seed, id, R->o.token);
    snprintf(path, sizeof path, "%s/conn-%llu.bin", R->o.dump, (unsigned long long)id);
    FILE *f = fopen(path, "wb");
    if (f) {
        if (p.bytes.len)
            fwrite(p.bytes.p, 1, sent < p.bytes.len ? sent : p.bytes.len, f);
        fclose(f);
    }
    fprintf(idx, "conn %llu kind=%s open=+%.3fs %s=+%.3fs sent=%zu/%zu rx=%llu end=%s steps=%zu wait=%ums%s\n",
            (unsigned long long)id, kind, (double)(t_open - R->t0) / 1000, t_close ? "closed" : "now",
            (double)((t_close ? t_close : now_ms()) - R->t0) / 1000, sent, planned, (unsigned long long)rx, state,
            p.nsteps, p.end_wait_ms, p.no_read ? " no-read" : "");
    plan_free(&p);
}

/* Writes the inputs of every connection open at or after `since`. */
static void dump(struct run *R, int64_t since)
{
    char path[4096];
    if (!R->o.dump)
        return;
    mkdir(R->o.dump, 0755);
    snprintf(path, sizeof path, "%s/inputs.txt", R->o.dump);
    FILE *idx = fopen(path, "w");
    if (!idx) {
        say("cannot write %s: %s", path, strerror(errno));
        return;
    }
    fprintf(idx, "# sockfuzz --seed %llu: connections active from +%.3fs on%s\n", (unsigned long long)R->o.seed,
            (double)(since - R->t0) / 1000, R->failure[0] ? " (the failure's window)" : "");
    fprintf(idx, "# %s\n", R->failure[0] ? R->failure : "no failure");
    fprintf(idx, "# replay one: sockfuzz --port P --replay-conn N --seed %llu; or send the bytes: sockfuzz --port P "
                 "--replay conn-N.bin ...\n",
            (unsigned long long)R->o.seed);
    unsigned written = 0;
    uint64_t first = R->nclosed > CLOSED_RING ? R->nclosed - CLOSED_RING : 0;
    for (uint64_t k = first; k < R->nclosed && written < DUMP_MAX; k++) {
        const struct closed_rec *rec = &R->ring[k % CLOSED_RING];
        if (rec->t_close < since)
            continue;
        dump_conn(R, idx, rec->id, rec->kind, rec->t_open, rec->t_close, rec->sent, rec->planned, rec->rx, rec->why);
        written++;
    }
    for (int i = 0; i < R->nconns && written < DUMP_MAX; i++) {
        const struct conn *c = &R->conns[i];
        dump_conn(R, idx, c->id, c->plan.kind, c->t_open, 0, c->sent, c->plan.bytes.len, c->rx,
                  c->state == C_ENDING ? "open-ending" : "open-sending");
        written++;
    }
    fclose(idx);
    say("inputs of %u connections written to %s", written, R->o.dump);
}

/* ---- the loop ------------------------------------------------------------------------------------- */

static volatile sig_atomic_t stop_flag;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

/* Runs the watchdog alone until one probe started now is answered or fails.
 * Returns 0 when answered (R->w.status holds the status). */
static int probe_blocking(struct run *R)
{
    unsigned before = R->w.answered;
    R->w.t_next = 0;
    while (!R->failure[0] && R->w.answered == before && !stop_flag) {
        int64_t now = now_ms();
        if (!proc_alive(R->o.pid)) {
            fail(R, "the gateway (pid %ld) died", R->o.pid);
            break;
        }
        if (R->w.fd >= 0 && now - R->w.t_start > R->o.deadline_ms) {
            fail(R, "hang: GET /healthz unanswered for %lld ms (deadline %d ms)", (long long)(now - R->w.t_start),
                 R->o.deadline_ms);
            break;
        }
        if (R->w.fd < 0) {
            if (now < R->w.t_next) {
                sleep_ms(10);
                continue;
            }
            if (watch_start(R, now) != 0) {
                watch_missed(R, now, "connection refused");
                continue;
            }
        }
        struct pollfd pf = {R->w.fd, watch_events(&R->w), 0};
        if (poll(&pf, 1, 50) > 0)
            watch_io(R, pf.revents, now_ms());
    }
    return R->w.answered != before ? 0 : -1;
}

/* Waits until /healthz answers 200: the gateway is up and has Redis. */
static int wait_ready(struct run *R)
{
    int64_t until = now_ms() + R->o.ready_ms;
    R->quiet = 1;
    while (now_ms() < until && !stop_flag) {
        if (probe_blocking(R) == 0 && R->w.status == 200) {
            R->w = (struct watchdog){.fd = -1};
            R->quiet = 0;
            return 0;
        }
        if (R->failure[0] && !proc_alive(R->o.pid))
            return -1;
        R->failure[0] = '\0'; /* not up yet: refused or 503 */
        R->w.misses_in_row = 0;
        sleep_ms(100);
    }
    return -1;
}

static void run_loop(struct run *R)
{
    struct rng sched;
    struct pollfd *pfd = calloc((size_t)R->o.max_conns + 1, sizeof *pfd);
    int *pidx = calloc((size_t)R->o.max_conns + 1, sizeof *pidx);
    if (!pfd || !pidx)
        die("out of memory");
    rng_seed(&sched, R->o.seed, 0);
    int64_t end = R->t0 + (int64_t)R->o.seconds * 1000;
    int64_t phase_end = 0, last_alive_check = 0, quiet_since = 0;
    int target = 1;
    double open_tokens = 0;
    int64_t last_tokens = R->t0;
    R->w = (struct watchdog){.fd = -1, .t_next = R->t0, .last_ok_start = R->t0, .last_ok_end = R->t0};

    for (;;) {
        int64_t now = now_ms();
        int fuzzing = now < end && !stop_flag && !R->failure[0];
        if (R->o.only_lo >= 0 && R->next_id > (uint64_t)R->o.only_hi && R->nconns == 0)
            fuzzing = 0; /* replayed them all */

        /* the watchdog first: is the gateway alive and answering? */
        if (now - last_alive_check >= 100) {
            last_alive_check = now;
            if (!proc_alive(R->o.pid))
                fail(R, "the gateway (pid %ld) died", R->o.pid);
        }
        if (R->w.fd >= 0 && now - R->w.t_start > R->o.deadline_ms)
            fail(R, "hang: GET /healthz unanswered for %lld ms (deadline %d ms); last answer at +%.3fs",
                 (long long)(now - R->w.t_start), R->o.deadline_ms, (double)(R->w.last_ok_end - R->t0) / 1000);
        if (R->failure[0])
            break;
        /* the end: every fuzz connection closed, then one probe started
         * after that must be answered */
        if (!fuzzing && R->nconns == 0) {
            if (!quiet_since) {
                quiet_since = now;
                if (R->w.fd < 0)
                    R->w.t_next = now;
            } else if (R->w.last_ok_start >= quiet_since) {
                break;
            }
        }
        if (R->w.fd < 0 && now >= R->w.t_next) {
            if (watch_start(R, now) != 0)
                watch_missed(R, now, "connection refused");
            if (R->failure[0])
                break;
        }

        /* how many fuzz connections to hold: phases of 0.5..3 s at a random level */
        if (fuzzing && now >= phase_end) {
            unsigned lvl = rbelow(&sched, 10);
            int half = R->o.max_conns / 2 + 1;
            target = lvl < 2 ? (int)rrange(&sched, 1, 8)
                   : lvl < 7 ? (int)rrange(&sched, 1, (uint32_t)half)
                             : (int)rrange(&sched, (uint32_t)half, (uint32_t)R->o.max_conns);
            if (target > R->o.max_conns)
                target = R->o.max_conns;
            phase_end = now + rrange(&sched, 500, 3000);
        }
        open_tokens += (double)(now - last_tokens) * OPEN_RATE / 1000.0;
        if (open_tokens > OPEN_RATE / 5)
            open_tokens = OPEN_RATE / 5;
        last_tokens = now;
        /* a probe running late pauses new connections: the dump then shows
         * what came before the trouble, not what piled up after it */
        int suspicious = R->w.fd >= 0 && now - R->w.t_start > 1000;
        while (fuzzing && !suspicious && R->nconns < target && open_tokens >= 1) {
            open_tokens -= 1;
            if (R->o.only_lo >= 0 && R->next_id > (uint64_t)R->o.only_hi)
                break;
            conn_open(R, R->next_id++);
        }

        /* timers of the fuzz connections */
        for (int i = 0; i < R->nconns;) {
            struct conn *c = &R->conns[i];
            int closed = 0;
            if (!fuzzing || now >= c->t_end) {
                if (c->state == C_ENDING && !c->plan.rst_after_wait)
                    conn_finish(R, i, fuzzing ? "end-wait-over" : "run-over", 0);
                else
                    conn_finish(R, i, fuzzing ? "lifetime-rst" : "run-over-rst", 1);
                closed = 1;
            } else if (c->state == C_SENDING) {
                closed = conn_send(R, i, now);
            }
            if (!closed)
                i++;
        }

        /* poll */
        int n = 0;
        int64_t wake = now + 50;
        for (int i = 0; i < R->nconns; i++) {
            struct conn *c = &R->conns[i];
            short ev = 0;
            if (c->state == C_CONNECTING)
                ev = POLLOUT;
            else if (c->state == C_SENDING && now >= c->t_ready && !c->waiting)
                ev = POLLOUT;
            if (c->state != C_CONNECTING && !c->plan.no_read)
                ev |= POLLIN;
            if (c->state == C_SENDING && c->t_ready > now && c->t_ready < wake)
                wake = c->t_ready;
            pfd[n] = (struct pollfd){c->fd, ev, 0};
            pidx[n++] = i;
        }
        int wfd = -1;
        if (R->w.fd >= 0) {
            wfd = n;
            pfd[n++] = (struct pollfd){R->w.fd, watch_events(&R->w), 0};
        } else if (R->w.t_next < wake) {
            wake = R->w.t_next;
        }
        int timeout = (int)(wake - now);
        if (timeout < 0)
            timeout = 0;
        int got = poll(pfd, (nfds_t)n, timeout);
        if (got < 0 && errno != EINTR)
            die("poll: %s", strerror(errno));
        if (got <= 0)
            continue;
        now = now_ms();
        if (wfd >= 0 && pfd[wfd].revents)
            watch_io(R, pfd[wfd].revents, now);
        /* walk backwards: closing one swaps the last connection into its slot */
        for (int k = (wfd >= 0 ? wfd : n) - 1; k >= 0; k--) {
            int i = pidx[k];
            struct conn *c = &R->conns[i];
            short re = pfd[k].revents;
            if (!re || i >= R->nconns || c->fd != pfd[k].fd)
                continue;
            if (c->state == C_CONNECTING) {
                int e = socket_error(c->fd);
                if (e) {
                    R->refused++;
                    conn_finish(R, i, e == ECONNREFUSED ? "refused" : "connect-error", 0);
                    continue;
                }
                c->state = C_SENDING;
                c->rx_at_step = 0;
                c->waiting = c->plan.nsteps && (c->plan.steps[0].flags & STEP_WAIT_READ);
                c->t_wait_until = now + WAIT_READ_MS;
                conn_send(R, i, now);
                continue;
            }
            if (re & (POLLIN | POLLHUP | POLLERR)) {
                if (c->plan.no_read) {
                    if (re & (POLLHUP | POLLERR)) {
                        conn_finish(R, i, "hup", 0);
                        continue;
                    }
                } else if (conn_recv(R, i)) {
                    continue;
                }
            }
            if ((re & POLLOUT) && c->state == C_SENDING)
                conn_send(R, i, now);
        }
    }
    free(pfd);
    free(pidx);
}

/* --replay FILE...: each file's bytes in one write on its own connection,
 * all at once; then the watchdog for --seconds (3 by default here). */
static int replay_files(struct run *R, char **files, int nfiles, int seconds_given)
{
    int *fds = calloc((size_t)nfiles + 1, sizeof *fds);
    if (!fds)
        die("out of memory");
    for (int i = 0; i < nfiles; i++) {
        FILE *f = fopen(files[i], "rb");
        struct buf b = {0};
        char tmp[65536];
        size_t n;
        int err = 0;
        if (!f)
            die("cannot read %s", files[i]);
        while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
            put(&b, tmp, n);
        fclose(f);
        fds[i] = open_socket(NULL, "127.0.0.1", R->o.port, &err);
        if (fds[i] < 0)
            die("connect: %s", strerror(err));
        struct pollfd pf = {fds[i], POLLOUT, 0};
        poll(&pf, 1, 2000);
        size_t off = 0;
        int64_t until = now_ms() + 5000;
        while (off < b.len && now_ms() < until) {
            ssize_t k = send(fds[i], b.p + off, b.len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k > 0)
                off += (size_t)k;
            else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                break;
            else
                poll(&pf, 1, 50);
        }
        say("sent %s (%zu of %zu bytes)", files[i], off, b.len);
        free(b.p);
    }
    int64_t end = now_ms() + (int64_t)(seconds_given ? R->o.seconds : 3) * 1000;
    R->w = (struct watchdog){.fd = -1};
    while (now_ms() < end && !R->failure[0] && !stop_flag) {
        probe_blocking(R);
        for (int i = 0; i < nfiles; i++) { /* drain answers so the gateway is not held up by us */
            char tmp[4096];
            if (fds[i] >= 0 && recv(fds[i], tmp, sizeof tmp, MSG_DONTWAIT) == 0) {
                close(fds[i]);
                fds[i] = -1;
            }
        }
        sleep_ms(R->o.interval_ms);
    }
    for (int i = 0; i < nfiles; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    if (R->failure[0]) {
        say("FAIL: %s", R->failure);
        return 1;
    }
    say("pass: %u probes answered, worst %lld ms", R->w.answered, (long long)R->w.worst_ms);
    return 0;
}

static void usage(void);

/* --kinds a,b,...: only these kinds of connection (to fuzz around a known bug
 * while it is being fixed, e.g. --kinds ws-valid,ws-hostile,raw,idle) */
static void parse_kinds(const char *list)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    kinds_mask = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < K_COUNT && strcmp(t, kind_names[k]) != 0)
            k++;
        if (k == K_COUNT) {
            fprintf(stderr, "sockfuzz: unknown kind %s (kinds: http-valid, http-pipelined, http-hostile, "
                            "ws-valid, ws-hostile, raw, idle)\n", t);
            exit(2);
        }
        kinds_mask |= 1u << k;
    }
    if (!kinds_mask)
        usage();
}

static void usage(void)
{
    fputs("usage: sockfuzz --port PORT [--seed N] [--seconds N] [--conns N] [--deadline MS]\n"
          "                [--interval MS] [--pid GATEWAY_PID] [--watch-src ADDR] [--dump DIR]\n"
          "                [--token KEY] [--ready MS] [--replay-conn N|A-B] [--kinds K,K,...]\n"
          "                [--log FILE]   (one line per connection: number, local port, kind, how it ended)\n"
          "       sockfuzz --print-conn N [--seed N] [--token KEY]    connection N's bytes to stdout\n"
          "       sockfuzz --port PORT [--pid PID] --replay FILE...   send each file, then check /healthz\n"
          "  --token defaults to $RANKCAST_ADMIN_KEY, --watch-src to 127.0.0.2; defaults: --seed 1,\n"
          "  --seconds 60, --conns 150 (190 at most), --deadline 5000, --interval 250 (10..500).\n"
          "  kinds: http-valid, http-pipelined, http-hostile, ws-valid, ws-hostile, raw, idle (all by default)\n",
          stderr);
    exit(2);
}

static void print_conn(const struct opts *o, uint64_t id)
{
    struct plan p;
    plan_build(&p, o->seed, id, o->token);
    if (p.bytes.len)
        fwrite(p.bytes.p, 1, p.bytes.len, stdout);
    fprintf(stderr, "conn %llu: kind=%s bytes=%zu steps=%zu end=%s wait=%ums%s%s\n", (unsigned long long)id, p.kind,
            p.bytes.len, p.nsteps, end_names[p.end], p.end_wait_ms, p.no_read ? " no-read" : "",
            p.rst_after_wait ? " rst-after-wait" : "");
    for (size_t s = 0; s < p.nsteps; s++)
        fprintf(stderr, "  step %zu: %zu bytes at %zu after %u ms%s\n", s, p.steps[s].len, p.steps[s].off,
                p.steps[s].delay_ms, p.steps[s].flags & STEP_WAIT_READ ? " (waits for an answer)" : "");
    plan_free(&p);
}

int main(int argc, char **argv)
{
    struct run *R = calloc(1, sizeof *R);
    char **replay = NULL;
    int nreplay = 0, seconds_given = 0;
    long print_id = -1;
    if (!R)
        die("out of memory");
    R->o = (struct opts){.port = 0, .seed = 1, .seconds = 60, .max_conns = 150, .deadline_ms = 5000,
                         .interval_ms = 250, .ready_ms = 30000, .pid = 0, .watch_src = "127.0.0.2",
                         .dump = NULL, .token = getenv("RANKCAST_ADMIN_KEY"), .only_lo = -1, .only_hi = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (!strcmp(a, name) && v && (i++, 1))
        if (OPT("--port"))
            R->o.port = atoi(v);
        else if (OPT("--seed"))
            R->o.seed = strtoull(v, NULL, 0);
        else if (OPT("--seconds"))
            R->o.seconds = atoi(v), seconds_given = 1;
        else if (OPT("--conns"))
            R->o.max_conns = atoi(v);
        else if (OPT("--deadline"))
            R->o.deadline_ms = atoi(v);
        else if (OPT("--interval"))
            R->o.interval_ms = atoi(v);
        else if (OPT("--ready"))
            R->o.ready_ms = atoi(v);
        else if (OPT("--pid"))
            R->o.pid = atol(v);
        else if (OPT("--watch-src"))
            R->o.watch_src = v;
        else if (OPT("--dump"))
            R->o.dump = v;
        else if (OPT("--log"))
            R->o.log = v;
        else if (OPT("--token"))
            R->o.token = v;
        else if (OPT("--replay-conn")) {
            char *dash;
            R->o.only_lo = strtol(v, &dash, 10);
            R->o.only_hi = *dash == '-' ? strtol(dash + 1, NULL, 10) : R->o.only_lo;
            if (R->o.only_lo < 0 || R->o.only_hi < R->o.only_lo)
                usage();
            R->next_id = (uint64_t)R->o.only_lo;
        }
        else if (OPT("--print-conn"))
            print_id = atol(v);
        else if (OPT("--kinds"))
            parse_kinds(v);
        else if (!strcmp(a, "--replay") && v) {
            replay = argv + i + 1;
            nreplay = argc - i - 1;
            break;
        } else
            usage();
#undef OPT
    }
    if (!R->o.token)
        R->o.token = "";
    if (print_id >= 0) {
        print_conn(&R->o, (uint64_t)print_id);
        free(R);
        return 0;
    }
    if (R->o.port <= 0 || R->o.port > 65535 || R->o.max_conns < 1 || R->o.deadline_ms < 100 ||
        R->o.interval_ms < 10 || R->o.interval_ms > 500 || R->o.seconds < 0)
        usage();
    if (R->o.max_conns > MAX_CONNS_CAP)
        R->o.max_conns = MAX_CONNS_CAP;
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, on_stop_signal);
    signal(SIGTERM, on_stop_signal);
    R->conns = calloc((size_t)R->o.max_conns + 1, sizeof *R->conns);
    if (!R->conns)
        die("out of memory");
    R->w = (struct watchdog){.fd = -1};
    if (wait_ready(R) != 0) {
        int rc = R->failure[0] ? 1 : 2;
        say("FAIL: %s", R->failure[0] ? R->failure : "the gateway did not answer GET /healthz with 200 in time");
        watch_close(&R->w);
        free(R->conns);
        free(R);
        return rc;
    }
    if (replay) {
        int rc = replay_files(R, replay, nreplay, seconds_given);
        free(R->conns);
        free(R);
        return rc;
    }

    say("seed %llu: %d s, up to %d connections to 127.0.0.1:%d, watchdog from %s every %d ms (deadline %d ms)",
        (unsigned long long)R->o.seed, R->o.seconds, R->o.max_conns, R->o.port, R->o.watch_src, R->o.interval_ms,
        R->o.deadline_ms);
    if (R->o.log && !(R->log = fopen(R->o.log, "w")))
        die("cannot write %s: %s", R->o.log, strerror(errno));
    R->t0 = now_ms();
    run_loop(R);

    /* the failure's window: from a little before the last good answer */
    int64_t since = R->failure[0] ? R->w.last_ok_start - 2000 : now_ms() - 3000;
    if (since < R->t0)
        since = R->t0;
    if (stop_flag && !R->failure[0])
        say("interrupted");
    say("%llu connections (%llu http-valid, %llu pipelined, %llu http-hostile, %llu ws-valid, %llu ws-hostile, "
        "%llu raw, %llu idle), %llu resets sent, %llu refused, %.1f MB out, %.1f MB in",
        (unsigned long long)R->opened, (unsigned long long)R->kind_count[K_HTTP_VALID],
        (unsigned long long)R->kind_count[K_HTTP_PIPELINED], (unsigned long long)R->kind_count[K_HTTP_HOSTILE],
        (unsigned long long)R->kind_count[K_WS_VALID], (unsigned long long)R->kind_count[K_WS_HOSTILE],
        (unsigned long long)R->kind_count[K_RAW], (unsigned long long)R->kind_count[K_IDLE],
        (unsigned long long)R->resets, (unsigned long long)R->refused, (double)R->bytes_out / 1e6,
        (double)R->bytes_in / 1e6);
    say("watchdog: %u probes, %u answered (%u not 200), mean %lld ms, worst %lld ms", R->w.probes, R->w.answered,
        R->w.non200, R->w.answered ? (long long)(R->w.sum_ms / R->w.answered) : 0LL, (long long)R->w.worst_ms);
    dump(R, since);
    /* close what is left (a failure stops the loop with connections open) */
    while (R->nconns)
        conn_finish(R, R->nconns - 1, "run-over", 1);
    watch_close(&R->w);
    free(R->conns);
    if (R->log)
        fclose(R->log);
    int rc = 0;
    if (R->failure[0]) {
        say("FAIL (seed %llu): %s", (unsigned long long)R->o.seed, R->failure);
        rc = 1;
    } else {
        say("pass (seed %llu)", (unsigned long long)R->o.seed);
    }
    free(R);
    return rc;
}
