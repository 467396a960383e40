/* bench_metrics.c - GET /metrics, blocking (bench_metrics.h). */
#include "bench_metrics.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define RESPONSE_MAX (1u << 20)

static int counter(const char *text, const char *name, uint64_t *out)
{
    size_t n = strlen(name);
    for (const char *p = text; (p = strstr(p, name)) != NULL; p += n) {
        if ((p == text || p[-1] == '\n') && p[n] == ' ') {
            *out = strtoull(p + n + 1, NULL, 10);
            return 0;
        }
    }
    return -1;
}

static void rtt_buckets(const char *text, struct bench_metrics *out)
{
    static const char name[] = "rankcast_script_rtt_seconds_bucket{le=\"";
    out->rtt_n = 0;
    for (const char *p = text; (p = strstr(p, name)) != NULL && out->rtt_n < BENCH_RTT_MAX;) {
        p += sizeof name - 1;
        char *end;
        double le = strncmp(p, "+Inf", 4) == 0 ? INFINITY : strtod(p, &end);
        const char *v = strstr(p, "} ");
        if (!v)
            break;
        out->rtt_le[out->rtt_n] = le;
        out->rtt_cum[out->rtt_n++] = strtoull(v + 2, NULL, 10);
    }
}

int bench_metrics_read(const char *host, int port, const char *key, struct bench_metrics *out)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    char req[1024];
    int rn = snprintf(req, sizeof req, "GET /metrics HTTP/1.1\r\nHost: %s:%d\r\n%s%.700s%sConnection: close\r\n\r\n",
                      host, port, key && *key ? "Authorization: Bearer " : "", key && *key ? key : "",
                      key && *key ? "\r\n" : "");
    if (rn < 0 || (size_t)rn >= sizeof req) {
        close(fd);
        return -1;
    }
    char *buf = malloc(RESPONSE_MAX + 1);
    size_t len = 0;
    int rc = -1;
    if (buf && connect(fd, (struct sockaddr *)&a, sizeof a) == 0 && send(fd, req, (size_t)rn, MSG_NOSIGNAL) == rn) {
        ssize_t k;
        while (len < RESPONSE_MAX && (k = recv(fd, buf + len, RESPONSE_MAX - len, 0)) > 0)
            len += (size_t)k;
        buf[len] = '\0';
        memset(out, 0, sizeof *out);
        if (strncmp(buf, "HTTP/1.1 200", 12) == 0 && counter(buf, "rankcast_bytes_sent_total", &out->bytes_sent) == 0) {
            (void)counter(buf, "rankcast_deltas_sent_total", &out->deltas_sent);
            (void)counter(buf, "rankcast_deflate_messages_total", &out->deflate_messages);
            (void)counter(buf, "rankcast_deflate_compressed_total", &out->deflate_compressed);
            (void)counter(buf, "rankcast_deflate_runs_total", &out->deflate_runs);
            (void)counter(buf, "rankcast_deflate_connections_total", &out->deflate_conns);
            rtt_buckets(buf, out);
            rc = 0;
        }
    }
    free(buf);
    close(fd);
    return rc;
}
