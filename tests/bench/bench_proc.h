/* bench_proc.h - what rankcast-bench reads about the gateway from /proc: the
 * process and its live children summed (a worker group's supervisor and its
 * workers). */
#ifndef BENCH_PROC_H
#define BENCH_PROC_H

#include <sys/types.h>

struct bench_proc {
    double cpu_s;   /* user + system CPU since the process started */
    long rss_kb;    /* VmRSS now */
    long hwm_kb;    /* VmHWM: peak RSS since start, or since bench_proc_reset_peak */
};

/* Reads /proc/PID/stat and /proc/PID/status. 0, or -1 when pid is gone. */
int bench_proc_read(pid_t pid, struct bench_proc *out);

/* Resets the peak RSS (VmHWM) to the current RSS by writing 5 to
 * /proc/PID/clear_refs, so a later read gives the peak of one case.
 * 0, or -1 when not permitted (the peak then covers the process's life). */
int bench_proc_reset_peak(pid_t pid);

#endif
