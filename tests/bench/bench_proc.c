/* bench_proc.c - the gateway's CPU time and memory from /proc (see bench_proc.h).
 * A gateway with workers ([server] workers > 1) is a supervisor and its
 * children: the figures are summed over the process and its live children. */
#include "bench_proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One process's figures, added to out. 0, or -1 when pid is gone. */
static int read_one(pid_t pid, struct bench_proc *out)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* the command name may hold spaces and ')': fields start after the last ')' */
    char *p = strrchr(buf, ')');
    unsigned long utime = 0, stime = 0;
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    out->cpu_s += (double)(utime + stime) / (double)(hz > 0 ? hz : 100);

    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    if (!(f = fopen(path, "r")))
        return -1;
    long v;
    while (fgets(buf, sizeof buf, f)) {
        if (strncmp(buf, "VmRSS:", 6) == 0 && sscanf(buf + 6, "%ld", &v) == 1)
            out->rss_kb += v;
        else if (strncmp(buf, "VmHWM:", 6) == 0 && sscanf(buf + 6, "%ld", &v) == 1)
            out->hwm_kb += v;
    }
    fclose(f);
    return 0;
}

/* Calls fn on each live child of pid (/proc/PID/task/PID/children). */
static void each_child(pid_t pid, void (*fn)(pid_t, void *), void *arg)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)pid, (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    long c;
    while (fscanf(f, "%ld", &c) == 1)
        fn((pid_t)c, arg);
    fclose(f);
}

static void add_child(pid_t c, void *arg)
{
    read_one(c, arg); /* a child that just ended adds nothing */
}

int bench_proc_read(pid_t pid, struct bench_proc *out)
{
    memset(out, 0, sizeof *out);
    if (read_one(pid, out) != 0)
        return -1;
    each_child(pid, add_child, out);
    return 0;
}

static int reset_one(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/clear_refs", (long)pid);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static void reset_child(pid_t c, void *arg)
{
    if (reset_one(c) != 0)
        *(int *)arg = -1;
}

int bench_proc_reset_peak(pid_t pid)
{
    int rc = reset_one(pid);
    each_child(pid, reset_child, &rc);
    return rc;
}
