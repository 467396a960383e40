/* bench_proc.c - the gateway's CPU time and memory from /proc (see bench_proc.h). */
#include "bench_proc.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int bench_proc_read(pid_t pid, struct bench_proc *out)
{
    char path[64], buf[4096];
    memset(out, 0, sizeof *out);
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
    out->cpu_s = (double)(utime + stime) / (double)(hz > 0 ? hz : 100);

    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    if (!(f = fopen(path, "r")))
        return -1;
    while (fgets(buf, sizeof buf, f)) {
        if (strncmp(buf, "VmRSS:", 6) == 0)
            sscanf(buf + 6, "%ld", &out->rss_kb);
        else if (strncmp(buf, "VmHWM:", 6) == 0)
            sscanf(buf + 6, "%ld", &out->hwm_kb);
    }
    fclose(f);
    return 0;
}

int bench_proc_reset_peak(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/clear_refs", (long)pid);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}
