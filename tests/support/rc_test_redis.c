/* rc_test_redis.c - spawn and reap a private redis-server (see header). */
#define _GNU_SOURCE
#include "rc_test_redis.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Asks the kernel for a free port by binding port 0. Another process could
 * take it before redis-server binds; start() retries on failure. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = -1;
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port == 6379 ? -1 : port;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int wait_ready(struct rc_test_redis *r)
{
    for (int i = 0; i < 250; i++) {
        int status;
        if (waitpid(r->pid, &status, WNOHANG) == r->pid) {
            r->pid = 0;
            return -1; /* exited: most likely the port was taken */
        }
        redisContext *c = rc_test_redis_connect(r);
        if (c) {
            redisReply *rep = redisCommand(c, "PING");
            /* NOAUTH: a server started with --requirepass is up too */
            int ok = rep && ((rep->type == REDIS_REPLY_STATUS && strcmp(rep->str, "PONG") == 0) ||
                             (rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "NOAUTH", 6) == 0));
            freeReplyObject(rep);
            redisFree(c);
            if (ok)
                return 0;
        }
        sleep_ms(20);
    }
    return -1;
}

static pid_t spawn(struct rc_test_redis *r, const char *const *extra)
{
    char port[16], logfile[300];
    const char *argv[64];
    int n = 0;
    snprintf(port, sizeof port, "%d", r->port);
    snprintf(logfile, sizeof logfile, "%s/redis.log", r->dir);
    const char *base[] = {"redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "",
                          "--appendonly", "no", "--dir", r->dir, "--logfile", logfile, "--daemonize", "no",
                          NULL};
    for (int i = 0; base[i]; i++)
        argv[n++] = base[i];
    for (int i = 0; extra && extra[i] && n < 62; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execvp("redis-server", (char *const *)argv);
        _exit(127);
    }
    return pid;
}

int rc_test_redis_start(struct rc_test_redis *r, const char *const *extra_args)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "/tmp/rc-test-redis-XXXXXX");
    if (!mkdtemp(r->dir)) {
        perror("mkdtemp");
        return -1;
    }
    for (int attempt = 0; attempt < 5; attempt++) {
        r->port = free_port();
        if (r->port < 0)
            continue;
        r->pid = spawn(r, extra_args);
        if (r->pid < 0) {
            perror("fork");
            return -1;
        }
        if (wait_ready(r) == 0)
            return 0;
        if (r->pid > 0) {
            kill(r->pid, SIGKILL);
            waitpid(r->pid, NULL, 0);
            r->pid = 0;
        }
    }
    fprintf(stderr, "rc_test_redis: could not start redis-server (is it installed?)\n");
    return -1;
}

void rc_test_redis_kill(struct rc_test_redis *r)
{
    if (r->pid > 0) {
        kill(r->pid, SIGTERM);
        kill(r->pid, SIGCONT); /* a stopped server only sees SIGTERM once resumed */
        for (int i = 0; i < 250; i++) {
            if (waitpid(r->pid, NULL, WNOHANG) == r->pid) {
                r->pid = 0;
                break;
            }
            sleep_ms(20);
        }
        if (r->pid > 0) {
            kill(r->pid, SIGKILL);
            waitpid(r->pid, NULL, 0);
            r->pid = 0;
        }
    }
}

int rc_test_redis_restart(struct rc_test_redis *r, const char *const *extra_args)
{
    rc_test_redis_kill(r);
    /* the port was ours a moment ago; retry briefly in case the bind races */
    for (int attempt = 0; attempt < 5; attempt++) {
        r->pid = spawn(r, extra_args);
        if (r->pid < 0) {
            perror("fork");
            r->pid = 0;
            return -1;
        }
        if (wait_ready(r) == 0)
            return 0;
        if (r->pid > 0) {
            kill(r->pid, SIGKILL);
            waitpid(r->pid, NULL, 0);
            r->pid = 0;
        }
        sleep_ms(50);
    }
    fprintf(stderr, "rc_test_redis: could not restart redis-server on port %d\n", r->port);
    return -1;
}

void rc_test_redis_stop(struct rc_test_redis *r)
{
    rc_test_redis_kill(r);
    if (r->dir[0]) {
        char cmd[320];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->dir);
        if (system(cmd) != 0)
            fprintf(stderr, "rc_test_redis: could not remove %s\n", r->dir);
        r->dir[0] = '\0';
    }
}

redisContext *rc_test_redis_connect(const struct rc_test_redis *r)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", r->port, tv);
    if (c && c->err) {
        redisFree(c);
        return NULL;
    }
    return c;
}

redisReply *rc_test_redis_vask(const struct rc_test_redis *r, const char *password, const char *fmt, va_list ap)
{
    redisContext *c = rc_test_redis_connect(r);
    if (!c)
        return NULL;
    redisReply *rep = password ? redisCommand(c, "AUTH %s", password) : NULL;
    if (password && !rep) {
        redisFree(c);
        return NULL;
    }
    freeReplyObject(rep);
    rep = redisvCommand(c, fmt, ap);
    redisFree(c);
    return rep;
}

int rc_test_redis_setup(void **state)
{
    struct rc_test_redis_fixture *f = calloc(1, sizeof *f);
    if (!f || rc_test_redis_start(&f->redis, NULL) != 0) {
        free(f);
        return -1;
    }
    f->c = rc_test_redis_connect(&f->redis);
    *state = f;
    return f->c ? 0 : -1;
}

int rc_test_redis_teardown(void **state)
{
    struct rc_test_redis_fixture *f = *state;
    if (!f)
        return 0;
    if (f->c)
        redisFree(f->c);
    rc_test_redis_stop(&f->redis);
    free(f);
    return 0;
}
