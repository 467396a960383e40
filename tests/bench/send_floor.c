/* send_floor.c - send_floor, the floor the gateway's fan-out is compared with
 * (tests/bench/run.sh, case K).
 *
 * What the kernel alone costs to deliver the same WebSocket frames: N
 * loopback TCP connection pairs (a listener on 127.0.0.1, N client sockets
 * connected to it, the accepted server sides); for --duration seconds, at
 * --tick-rate ticks a second, the sender thread writes one server-to-client
 * WebSocket text frame (0x81, the length, no mask, the payload: a delta-like
 * JSON of --payload bytes) to every server side, one non-blocking send() per
 * frame as the gateway does, while a reader thread drains every client side
 * with recv() (epoll). A frame send() could not take whole (EAGAIN or a short
 * write) is kept per connection and finished, before anything new, on a
 * later tick (as the gateway's queue would); such ticks are counted.
 *
 * Measured: the sender thread's CPU (CLOCK_THREAD_CPUTIME_ID, and the
 * user/system split from RUSAGE_THREAD) over the sending, per frame; the
 * reader thread's likewise. Loopback sends pay for the receiving side's TCP
 * work too (it runs in the sender's send() call), so the floor is the kernel
 * work of a send plus the matching receive, with no WebSocket library, no
 * JSON, no event loop.
 *
 * Output: one JSON object on one line on stdout. Exit 0 when the run
 * happened and every byte sent was read back; 1 on a bad option; 2 when the
 * tool could not run or the bytes did not add up (the JSON, when there is
 * one, says why in "fatal"). Only 127.0.0.1; every wait is bounded.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 9000          /* 2 fds each, below a 20,000 fd limit */
#define MAX_PAYLOAD (1u << 20)
#define CONNECT_TIMEOUT_S 20
#define DRAIN_TIMEOUT_S 5

static struct {
    unsigned conns;
    double tick_rate;     /* ticks (one frame per connection each) per second */
    double duration;      /* seconds of sending */
    unsigned payload;     /* bytes of JSON per frame */
    const char *label;
} O = {200, 20.0, 2.0, 160, NULL};

struct pair {
    int srv;              /* accepted side: the sender writes here */
    int cli;              /* connecting side: the reader drains it */
    unsigned left;        /* bytes of the current frame not yet sent (0: none) */
};

static struct pair *P;
static unsigned char *frame;
static size_t frame_len, header_len;

static atomic_int sending_done;         /* the sender has finished */
static atomic_uint_fast64_t bytes_read;
static atomic_int reader_failed;    /* the reader stopped on an error */
static struct {
    double cpu_s, user_s, sys_s;
    uint64_t recv_calls, wakeups;
    int err;
    char msg[160];
} R;                                    /* the reader's own, read after join */

static char fatal_msg[240];

static double now_s(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void thread_usage(double *user, double *sys)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    *user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    *sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fatal_msg, sizeof fatal_msg, fmt, ap);
    va_end(ap);
}

/* A delta as the gateway writes it ({"op":"delta","sub",...,"rows":[...],
 * "removed":[]}), rows added while they fit, then padded with spaces before
 * the last brace (still JSON) to exactly n bytes; below the smallest delta,
 * just spaces inside {}. */
static void make_payload(unsigned char *p, size_t n)
{
    char buf[256];
    size_t len = 0;
    int k = snprintf((char *)p, n + 1, "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":120045,\"total\":1000,\"rows\":[");
    const char *tail = "],\"removed\":[]}";
    if (k < 0 || (size_t)k + strlen(tail) > n) {
        memset(p, ' ', n);
        if (n >= 2) {
            p[0] = '{';
            p[n - 1] = '}';
        }
        return;
    }
    len = (size_t)k;
    for (unsigned r = 1;; r++) {
        int m = snprintf(buf, sizeof buf, "%s{\"rank\":%u,\"member\":\"u:%u\",\"score\":%u}", r > 1 ? "," : "",
                         r, 100 + 37 * r % 900, 60000 - 7 * r);
        if (m < 0 || len + (size_t)m + strlen(tail) > n)
            break;
        memcpy(p + len, buf, (size_t)m);
        len += (size_t)m;
    }
    memcpy(p + len, tail, strlen(tail) - 1); /* all but the closing brace */
    len += strlen(tail) - 1;
    memset(p + len, ' ', n - 1 - len);
    p[n - 1] = '}';
}

/* The server's frame: FIN + text, the length (7 bits, or 126 + 16 bits, or
 * 127 + 64 bits), no mask, the payload. */
static int make_frame(void)
{
    unsigned char h[10];
    size_t n = O.payload;
    h[0] = 0x81;
    if (n < 126) {
        h[1] = (unsigned char)n;
        header_len = 2;
    } else if (n <= 0xffff) {
        h[1] = 126;
        h[2] = (unsigned char)(n >> 8);
        h[3] = (unsigned char)n;
        header_len = 4;
    } else {
        h[1] = 127;
        for (int i = 0; i < 8; i++)
            h[2 + i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
        header_len = 10;
    }
    frame_len = header_len + n;
    frame = malloc(frame_len + 1);
    if (!frame)
        return -1;
    memcpy(frame, h, header_len);
    make_payload(frame + header_len, n);
    return 0;
}

/* N pairs: connect every client (non-blocking) and accept as they come,
 * bounded by CONNECT_TIMEOUT_S. */
static int open_pairs(void)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof a;
    int one = 1;
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (lfd < 0) {
        fail("socket: %s", strerror(errno));
        return -1;
    }
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 4096) < 0 ||
        getsockname(lfd, (struct sockaddr *)&a, &alen) < 0) {
        fail("listen on 127.0.0.1: %s", strerror(errno));
        close(lfd);
        return -1;
    }
    unsigned connected = 0, accepted = 0;
    double deadline = now_s(CLOCK_MONOTONIC) + CONNECT_TIMEOUT_S;
    while (accepted < O.conns) {
        /* keep at most 512 connects ahead of the accepts (the backlog) */
        while (connected < O.conns && connected - accepted < 512) {
            int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (c < 0) {
                fail("socket for connection %u: %s", connected, strerror(errno));
                close(lfd);
                return -1;
            }
            if (connect(c, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) {
                fail("connect %u: %s", connected, strerror(errno));
                close(c);
                close(lfd);
                return -1;
            }
            P[connected].cli = c;
            connected++;
        }
        int s = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (s >= 0) {
            /* as libwebsockets does on its sockets */
            setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            P[accepted].srv = s;
            accepted++;
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            fail("accept: %s", strerror(errno));
            close(lfd);
            return -1;
        }
        if (now_s(CLOCK_MONOTONIC) > deadline) {
            fail("only %u of %u connections accepted in %d s", accepted, O.conns, CONNECT_TIMEOUT_S);
            close(lfd);
            return -1;
        }
        struct pollfd pf = {lfd, POLLIN, 0};
        poll(&pf, 1, 100);
    }
    close(lfd);
    /* Accepts come in connect order on one listener, so srv[i] pairs with
     * cli[i] as a rule; nothing below depends on it (the totals do). */
    return 0;
}

/* The reader: every client side in one epoll set, drained until the sender
 * is done and every byte it sent has been read (or DRAIN_TIMEOUT_S after). */
static void *reader(void *arg)
{
    (void)arg;
    static unsigned char buf[256 * 1024];
    struct epoll_event ev[512];
    double u0, s0, u1, s1, c0;
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) {
        R.err = 1;
        snprintf(R.msg, sizeof R.msg, "epoll_create1: %s", strerror(errno));
        return NULL;
    }
    for (unsigned i = 0; i < O.conns; i++) {
        struct epoll_event e = {.events = EPOLLIN, .data.u32 = i};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, P[i].cli, &e) < 0) {
            R.err = 1;
            snprintf(R.msg, sizeof R.msg, "epoll_ctl: %s", strerror(errno));
            close(ep);
            return NULL;
        }
    }
    c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
    thread_usage(&u0, &s0);
    double drain_deadline = 0;
    uint64_t got = 0;
    for (;;) {
        int n = epoll_wait(ep, ev, 512, 50);
        if (n < 0 && errno != EINTR) {
            R.err = 1;
            snprintf(R.msg, sizeof R.msg, "epoll_wait: %s", strerror(errno));
            break;
        }
        if (n > 0)
            R.wakeups++;
        for (int k = 0; k < n; k++) {
            int fd = P[ev[k].data.u32].cli;
            for (;;) {
                ssize_t r = recv(fd, buf, sizeof buf, 0);
                R.recv_calls++;
                if (r > 0) {
                    got += (uint64_t)r;
                    if ((size_t)r < sizeof buf)
                        break; /* level-triggered: the rest, if any, next round */
                    continue;
                }
                if (r == 0) {
                    R.err = 1;
                    snprintf(R.msg, sizeof R.msg, "a connection closed");
                } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                    R.err = 1;
                    snprintf(R.msg, sizeof R.msg, "recv: %s", strerror(errno));
                }
                break;
            }
        }
        atomic_store(&bytes_read, got);
        if (R.err) {
            atomic_store(&reader_failed, 1);
            break;
        }
        if (atomic_load(&sending_done)) {
            if (!drain_deadline)
                drain_deadline = now_s(CLOCK_MONOTONIC) + DRAIN_TIMEOUT_S;
            if (n == 0 || now_s(CLOCK_MONOTONIC) > drain_deadline)
                break; /* nothing more came in 50 ms after the sender's end */
        }
    }
    close(ep);
    R.cpu_s = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    thread_usage(&u1, &s1);
    R.user_s = u1 - u0;
    R.sys_s = s1 - s0;
    return NULL;
}

static void put_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

static void usage(void)
{
    fprintf(stderr,
            "usage: send_floor [options]\n"
            "  --conns N         loopback connection pairs (200; at most %u)\n"
            "  --tick-rate R     ticks per second, one frame to every connection per tick (20)\n"
            "  --duration S      seconds of sending (2)\n"
            "  --payload B       bytes of JSON per frame, the header not included (160)\n"
            "  --label L         names the run in the JSON\n",
            MAX_CONNS);
}

static int parse(int argc, char **argv)
{
    static const struct option opts[] = {
        {"conns", required_argument, NULL, 'n'},   {"tick-rate", required_argument, NULL, 'r'},
        {"duration", required_argument, NULL, 'd'}, {"payload", required_argument, NULL, 'p'},
        {"label", required_argument, NULL, 'l'},   {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        errno = 0;
        switch (c) {
        case 'n': {
            unsigned long v = strtoul(optarg, &end, 10);
            if (*end || !*optarg || errno || v < 1 || v > MAX_CONNS)
                return -1;
            O.conns = (unsigned)v;
            break;
        }
        case 'r':
            O.tick_rate = strtod(optarg, &end);
            if (*end || !*optarg || errno || !(O.tick_rate > 0) || O.tick_rate > 10000)
                return -1;
            break;
        case 'd':
            O.duration = strtod(optarg, &end);
            if (*end || !*optarg || errno || !(O.duration > 0) || O.duration > 600)
                return -1;
            break;
        case 'p': {
            unsigned long v = strtoul(optarg, &end, 10);
            if (*end || !*optarg || errno || v < 1 || v > MAX_PAYLOAD)
                return -1;
            O.payload = (unsigned)v;
            break;
        }
        case 'l':
            O.label = optarg;
            break;
        default:
            return -1;
        }
    }
    return optind == argc ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (parse(argc, argv) < 0) {
        usage();
        return 1;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    P = calloc(O.conns, sizeof *P);
    if (!P || make_frame() < 0) {
        fprintf(stderr, "send_floor: out of memory\n");
        return 2;
    }
    for (unsigned i = 0; i < O.conns; i++)
        P[i].srv = P[i].cli = -1;

    /* the sender's numbers */
    uint64_t ticks = 0, frames = 0, sends = 0, bytes_sent = 0, eagain = 0, short_sends = 0, late_ticks = 0;
    uint64_t frames_queued_max = 0;
    double cpu_s = 0, user_s = 0, sys_s = 0, wall_s = 0, proc_cpu_s = 0;
    int reader_started = 0, rc = 0;
    pthread_t rt;

    if (open_pairs() < 0) {
        rc = 2;
        goto out;
    }
    if (pthread_create(&rt, NULL, reader, NULL) != 0) {
        fail("cannot start the reader thread");
        rc = 2;
        goto out;
    }
    reader_started = 1;

    struct rusage pr0, pr1;
    getrusage(RUSAGE_SELF, &pr0);
    double u0, s0, u1, s1;
    thread_usage(&u0, &s0);
    double c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
    double period = 1.0 / O.tick_rate;
    uint64_t nticks = (uint64_t)(O.duration * O.tick_rate + 0.5);
    if (!nticks)
        nticks = 1;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double start = (double)t0.tv_sec + (double)t0.tv_nsec / 1e9;

    for (uint64_t t = 0; t < nticks && !atomic_load(&reader_failed); t++) {
        double due = start + (double)t * period;
        double now = now_s(CLOCK_MONOTONIC);
        if (now < due) {
            double d = due;
            struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
        } else if (now > due + period) {
            late_ticks++; /* the previous tick's sends took longer than a tick */
        }
        uint64_t queued = 0;
        for (unsigned i = 0; i < O.conns; i++) {
            struct pair *p = &P[i];
            /* what an earlier tick could not send goes first; then this tick's frame */
            for (int round = 0; round < 2; round++) {
                if (!p->left) {
                    if (round == 1)
                        break;
                    p->left = (unsigned)frame_len;
                    frames++;
                } else if (round == 1) {
                    break;
                }
                ssize_t w = send(p->srv, frame + (frame_len - p->left), p->left, MSG_DONTWAIT | MSG_NOSIGNAL);
                sends++;
                if (w > 0) {
                    bytes_sent += (uint64_t)w;
                    if ((size_t)w < p->left)
                        short_sends++;
                    p->left -= (unsigned)w;
                } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                    eagain++;
                } else {
                    fail("send: %s", w < 0 ? strerror(errno) : "wrote nothing");
                    rc = 2;
                    goto stop;
                }
                if (p->left)
                    break; /* the socket is full: the rest on a later tick */
            }
            if (p->left)
                queued++;
        }
        if (queued > frames_queued_max)
            frames_queued_max = queued;
        ticks++;
    }
    /* what is still owed, for at most DRAIN_TIMEOUT_S (the reader keeps reading) */
    {
        double deadline = now_s(CLOCK_MONOTONIC) + DRAIN_TIMEOUT_S;
        for (;;) {
            unsigned owed = 0;
            for (unsigned i = 0; i < O.conns; i++) {
                struct pair *p = &P[i];
                if (!p->left)
                    continue;
                ssize_t w = send(p->srv, frame + (frame_len - p->left), p->left, MSG_DONTWAIT | MSG_NOSIGNAL);
                sends++;
                if (w > 0) {
                    bytes_sent += (uint64_t)w;
                    p->left -= (unsigned)w;
                } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                    fail("send: %s", strerror(errno));
                    rc = 2;
                    goto stop;
                }
                if (p->left)
                    owed++;
            }
            if (!owed || atomic_load(&reader_failed))
                break;
            if (now_s(CLOCK_MONOTONIC) > deadline) {
                fail("%u connections still had frames unsent %d s after the end", owed, DRAIN_TIMEOUT_S);
                rc = 2;
                break;
            }
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
stop:
    wall_s = now_s(CLOCK_MONOTONIC) - start;
    cpu_s = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    thread_usage(&u1, &s1);
    user_s = u1 - u0;
    sys_s = s1 - s0;
    atomic_store(&sending_done, 1);
    pthread_join(rt, NULL);
    reader_started = 0;
    getrusage(RUSAGE_SELF, &pr1);
    proc_cpu_s = (double)(pr1.ru_utime.tv_sec - pr0.ru_utime.tv_sec) +
                 (double)(pr1.ru_utime.tv_usec - pr0.ru_utime.tv_usec) / 1e6 +
                 (double)(pr1.ru_stime.tv_sec - pr0.ru_stime.tv_sec) +
                 (double)(pr1.ru_stime.tv_usec - pr0.ru_stime.tv_usec) / 1e6;
    if (R.err && !fatal_msg[0]) {
        fail("reader: %s", R.msg);
        rc = 2;
    }
    if (!rc && atomic_load(&bytes_read) != bytes_sent) {
        fail("read %" PRIu64 " bytes of %" PRIu64 " sent", (uint64_t)atomic_load(&bytes_read), bytes_sent);
        rc = 2;
    }

out:
    if (reader_started) {
        atomic_store(&sending_done, 1);
        pthread_join(rt, NULL);
    }
    {
        double fps = ticks ? (double)frames / ((double)ticks / O.tick_rate) : 0; /* over the ticks' span */
        uint64_t br = atomic_load(&bytes_read);
        printf("{\"tool\":\"send_floor\",\"label\":");
        put_string(O.label ? O.label : "");
        printf(",\"conns\":%u,\"payload_bytes\":%u,\"frame_bytes\":%zu,\"tick_rate\":%.3f,\"duration_s\":%.3f,",
               O.conns, O.payload, frame_len, O.tick_rate, O.duration);
        printf("\"ticks\":%" PRIu64 ",\"late_ticks\":%" PRIu64 ",\"frames\":%" PRIu64 ",\"sends\":%" PRIu64
               ",\"eagain\":%" PRIu64 ",\"short_sends\":%" PRIu64 ",\"conns_queued_max\":%" PRIu64 ",",
               ticks, late_ticks, frames, sends, eagain, short_sends, frames_queued_max);
        printf("\"bytes_sent\":%" PRIu64 ",\"bytes_read\":%" PRIu64 ",\"wall_s\":%.3f,\"frames_per_s\":%.1f,", bytes_sent,
               br, wall_s, fps);
        printf("\"sender\":{\"cpu_s\":%.4f,\"user_s\":%.4f,\"sys_s\":%.4f,\"us_per_frame\":%.3f,\"cpu_per_s\":%.3f},",
               cpu_s, user_s, sys_s, frames ? cpu_s * 1e6 / (double)frames : 0.0, wall_s > 0 ? cpu_s / wall_s : 0.0);
        printf("\"reader\":{\"cpu_s\":%.4f,\"user_s\":%.4f,\"sys_s\":%.4f,\"us_per_frame\":%.3f,\"recv_calls\":%" PRIu64
               ",\"wakeups\":%" PRIu64 "},",
               R.cpu_s, R.user_s, R.sys_s, frames ? R.cpu_s * 1e6 / (double)frames : 0.0, R.recv_calls, R.wakeups);
        printf("\"process_cpu_s\":%.4f,\"fatal\":", proc_cpu_s);
        put_string(fatal_msg);
        printf("}\n");
        fflush(stdout);
    }
    if (fatal_msg[0])
        fprintf(stderr, "send_floor: %s\n", fatal_msg);
    for (unsigned i = 0; i < O.conns; i++) {
        if (P[i].srv >= 0)
            close(P[i].srv);
        if (P[i].cli >= 0)
            close(P[i].cli);
    }
    free(P);
    free(frame);
    return rc;
}
