/* gw_workers.c - one job: the supervisor of a worker group (gw_workers.h).
 *
 *   start: block SIGCHLD/SIGTERM/SIGINT, fork every worker
 *   loop:  sigtimedwait for a signal or the next restart due
 *     SIGCHLD          reap; per core/rc_workers.h: restart after the
 *                      backoff, fail the group (a worker that could not
 *                      start), or count it done (stopping)
 *     SIGTERM, SIGINT  stop: SIGTERM to every worker (each closes its
 *                      WebSockets with 1001 as a single gateway does), no
 *                      more restarts; SIGKILL to any left after STOP_WAIT_MS
 *   end:   when stopping and no worker is left
 *
 * A worker asks the kernel for SIGTERM when the supervisor dies
 * (PR_SET_PDEATHSIG), so a supervisor killed outright leaves no orphans. */
#define _GNU_SOURCE /* strsignal; prctl */
#include "gw_workers.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/gw_group.h"
#include "base/gw_log.h"
#include "rc_workers.h"

#define STOP_WAIT_MS 30000 /* then SIGKILL: a worker that will not stop */
#define WAIT_MAX_MS 1000   /* sigtimedwait's longest nap: waitpid runs at least this often */

struct slot {
    pid_t pid;            /* 0: not running */
    int64_t started_ms;   /* monotonic */
    int64_t due_ms;       /* restart due (monotonic); 0: none pending */
    uint64_t restarts;
    struct rc_restart backoff;
};

struct sup {
    unsigned n;
    struct gw_group *g;
    struct slot s[RC_WORKERS_MAX];
    sigset_t old_mask;
    pid_t self;
    int stopping, failed, unclean;
    int64_t stop_at_ms;
    unsigned live;
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_signal(int sig)
{
    (void)sig; /* only so the signal is queued while blocked; sigtimedwait takes it */
}

/* In the new worker, right after fork: the signal state a gateway starts
 * from, and death with its supervisor. Returns 0, or -1 if the supervisor
 * is already gone. */
static int become_worker(struct sup *s)
{
    signal(SIGCHLD, SIG_DFL);
    signal(SIGTERM, SIG_DFL); /* the worker's loop installs its own (gw_lifecycle) */
    signal(SIGINT, SIG_DFL);
    sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0)
        gw_log_warn("worker: prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
    return getppid() == s->self ? 0 : -1;
}

/* Forks worker i. Returns 1 in the child, 0 in the supervisor. */
static int spawn(struct sup *s, unsigned i, struct gw_worker_id *me)
{
    struct slot *w = &s->s[i];
    w->due_ms = 0;
    pid_t pid = fork();
    if (pid == 0) {
        if (become_worker(s) != 0)
            _exit(0);
        me->index = i;
        me->count = s->n;
        me->restarts = w->restarts;
        return 1;
    }
    if (pid < 0) {
        int64_t d = rc_workers_restart_delay(&w->backoff, mono_ms(), mono_ms());
        gw_log_error("workers: cannot fork worker %u: %s; trying again in %lld ms", i, strerror(errno), (long long)d);
        w->due_ms = mono_ms() + d;
        return 0;
    }
    w->pid = pid;
    w->started_ms = mono_ms();
    s->live++;
    gw_log_info("workers: worker %u started (pid %ld)%s", i, (long)pid, w->restarts ? ", a restart" : "");
    return 0;
}

static void signal_all(struct sup *s, int sig)
{
    for (unsigned i = 0; i < s->n; i++)
        if (s->s[i].pid > 0)
            kill(s->s[i].pid, sig);
}

static void begin_stop(struct sup *s, const char *why)
{
    if (s->stopping)
        return;
    s->stopping = 1;
    s->stop_at_ms = mono_ms();
    gw_log_info("workers: %s: stopping %u running workers", why, s->live);
    for (unsigned i = 0; i < s->n; i++)
        s->s[i].due_ms = 0;
    signal_all(s, SIGTERM);
}

/* One worker ended with wait status st. */
static void on_end(struct sup *s, unsigned i, int st)
{
    struct slot *w = &s->s[i];
    int exited = WIFEXITED(st), code = exited ? WEXITSTATUS(st) : 0, sig = exited ? 0 : WTERMSIG(st);
    char how[64];
    if (exited)
        snprintf(how, sizeof how, "exited with code %d", code);
    else
        snprintf(how, sizeof how, "killed by signal %d (%s)", sig, strsignal(sig));
    pid_t pid = w->pid;
    w->pid = 0;
    s->live--;
    gw_group_retire(s->g, i, w->restarts);
    switch (rc_workers_end(s->stopping, exited, code)) {
    case RC_WORKER_DONE:
        if (!(exited && code == 0) && !(!exited && sig == SIGTERM)) {
            s->unclean = 1;
            gw_log_warn("workers: worker %u (pid %ld) %s while stopping", i, (long)pid, how);
        }
        return;
    case RC_WORKER_FAIL:
        gw_log_error("workers: worker %u (pid %ld) could not start (exit %d, see its lines above): stopping the group",
                     i, (long)pid, code);
        s->failed = 1;
        begin_stop(s, "a worker could not start");
        return;
    case RC_WORKER_RESTART: {
        int64_t now = mono_ms();
        int64_t d = rc_workers_restart_delay(&w->backoff, w->started_ms, now);
        w->restarts++;
        w->due_ms = now + d;
        gw_log_warn("workers: worker %u (pid %ld) %s after %lld ms; restarting it in %lld ms (restart %llu)", i,
                    (long)pid, how, (long long)(now - w->started_ms), (long long)d, (unsigned long long)w->restarts);
        return;
    }
    }
}

static void reap(struct sup *s)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        for (unsigned i = 0; i < s->n; i++) {
            if (s->s[i].pid == pid) {
                on_end(s, i, st);
                break;
            }
        }
    }
}

/* How long to sleep: until the next restart due, at most WAIT_MAX_MS. */
static int64_t next_wait_ms(const struct sup *s, int64_t now)
{
    int64_t wait = WAIT_MAX_MS;
    for (unsigned i = 0; i < s->n; i++)
        if (s->s[i].due_ms && s->s[i].due_ms - now < wait)
            wait = s->s[i].due_ms - now;
    return wait < 0 ? 0 : wait;
}

int gw_workers_run(unsigned n, struct gw_group *g, struct gw_worker_id *me, int *exit_code)
{
    static struct sup sup; /* static: a worker returns out of this frame */
    struct sup *s = &sup;
    sigset_t set;
    memset(s, 0, sizeof *s);
    s->n = n > RC_WORKERS_MAX ? RC_WORKERS_MAX : n;
    s->g = g;
    s->self = getpid();
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    /* Handlers, not just a mask: a signal ignored when we were started (a
     * shell's background job ignores SIGINT) would otherwise be dropped, and
     * an ignored SIGCHLD would reap the workers behind our back. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigprocmask(SIG_BLOCK, &set, &s->old_mask);
    gw_log_info("workers: supervisor (pid %ld) starting %u workers on one port", (long)s->self, s->n);
    for (unsigned i = 0; i < s->n; i++)
        if (spawn(s, i, me))
            return 1;
    for (;;) {
        reap(s);
        if (s->stopping && s->live == 0)
            break;
        int64_t now = mono_ms();
        if (s->stopping && now - s->stop_at_ms > STOP_WAIT_MS) {
            gw_log_error("workers: %u workers still running %d s after SIGTERM: killing them", s->live,
                         STOP_WAIT_MS / 1000);
            signal_all(s, SIGKILL);
            s->unclean = 1;
            s->stop_at_ms = now; /* and wait for them */
        }
        for (unsigned i = 0; !s->stopping && i < s->n; i++)
            if (s->s[i].due_ms && s->s[i].due_ms <= now && spawn(s, i, me))
                return 1;
        int64_t wait = next_wait_ms(s, mono_ms());
        struct timespec ts = {(time_t)(wait / 1000), (long)(wait % 1000) * 1000000L};
        siginfo_t info;
        int sig = sigtimedwait(&set, &info, &ts);
        if (sig == SIGTERM || sig == SIGINT)
            begin_stop(s, sig == SIGTERM ? "received SIGTERM" : "received SIGINT");
    }
    sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
    *exit_code = s->failed || s->unclean ? 1 : 0;
    gw_log_info("workers: every worker has stopped; supervisor exits %d", *exit_code);
    return 0;
}
