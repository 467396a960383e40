/* list_runs.c - what a catch-up of many member lists costs in core alone
 * (issue 26): each list judging each event (rc_vtrack_members_event, as
 * gw_reads.c did for every lazy list) against one run made once and
 * applied to every list (core/rc_vbatch.h, gw_reads_batch.c), on a board
 * like bench case M's (10,000 members, points 1000 + k % 997, so about ten
 * share each value and the names order them; incr writes of 1..7 on random
 * members). Checks that both end at the board's own ranks.
 *
 *   list_runs [events a run = 100] [runs = 40] [lists = 5000] [members a list = 50]
 *
 * Prints the mean time of a run each way, and per list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rc_vbatch.h"
#include "rc_vtrack.h"

#define N 10000

static char name[N][8];
static double points[N];
static int order[N], pos[N]; /* members by rank; each member's index there */

static int ahead(int a, int z)
{
    if (points[a] != points[z])
        return points[a] > points[z];
    return strcmp(name[a], name[z]) > 0; /* (desc: ties by name, reversed) */
}

static int by_board(const void *x, const void *y)
{
    int a = *(const int *)x, z = *(const int *)y;
    return ahead(a, z) ? -1 : ahead(z, a) ? 1 : 0;
}

static int by_rank(const void *x, const void *y)
{
    const struct rc_vtrack_entry *a = x, *z = y;
    return (a->rank > z->rank) - (a->rank < z->rank);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int E = argc > 1 ? atoi(argv[1]) : 100, R = argc > 2 ? atoi(argv[2]) : 40;
    int L = argc > 3 ? atoi(argv[3]) : 5000, LN = argc > 4 ? atoi(argv[4]) : 50;
    if (E < 1 || R < 1 || L < 1 || LN < 1 || LN > RC_VBATCH_ENTRIES_MAX || LN > N) {
        fprintf(stderr, "list_runs: [events 1..] [runs 1..] [lists 1..] [members a list 1..%d]\n",
                RC_VBATCH_ENTRIES_MAX);
        return 2;
    }
    srand(1);
    for (int k = 0; k < N; k++) {
        snprintf(name[k], sizeof name[k], "m%d", k);
        points[k] = 1000 + k % 997;
        order[k] = k;
    }
    qsort(order, N, sizeof order[0], by_board);
    for (int i = 0; i < N; i++)
        pos[order[i]] = i;
    struct rc_vtrack *one = calloc((size_t)L, sizeof *one), *run = calloc((size_t)L, sizeof *run);
    struct rc_vtrack_entry *e1 = calloc((size_t)L * LN, sizeof *e1), *e2 = calloc((size_t)L * LN, sizeof *e2);
    struct rc_vbatch_ev *ev = calloc((size_t)E, sizeof *ev);
    char *taken = calloc(N, 1);
    if (!one || !run || !e1 || !e2 || !ev || !taken)
        return 1;
    for (int l = 0; l < L; l++) {
        struct rc_vtrack_entry *e = &e1[(size_t)l * LN];
        memset(taken, 0, N);
        for (int j = 0; j < LN; j++) {
            int m;
            do
                m = rand() % N;
            while (taken[m]);
            taken[m] = 1;
            e[j] = (struct rc_vtrack_entry){pos[m] + 1, points[m], (size_t)m};
        }
        qsort(e, (size_t)LN, sizeof *e, by_rank);
        memcpy(&e2[(size_t)l * LN], e, (size_t)LN * sizeof *e);
        rc_vtrack_members(&one[l], 0, N, e, (size_t)LN, 0);
        rc_vtrack_members(&run[l], 0, N, &e2[(size_t)l * LN], (size_t)LN, 0);
    }
    struct rc_vbatch vb;
    rc_vbatch_init(&vb);
    double t_one = 0, t_run = 0;
    int64_t seq = 0;
    for (int r = 0; r < R; r++) {
        for (int i = 0; i < E; i++) {
            int m = rand() % N, o = pos[m], p = o;
            double was = points[m];
            points[m] += 1 + i % 7;
            while (p > 0 && ahead(m, order[p - 1])) {
                order[p] = order[p - 1];
                pos[order[p]] = p;
                p--;
            }
            order[p] = m;
            pos[m] = p;
            ev[i] = (struct rc_vbatch_ev){name[m], 1, 1, o + 1, p + 1, was, points[m]};
        }
        double t0 = now_s();
        for (int l = 0; l < L; l++)
            for (int i = 0; i < E; i++)
                rc_vtrack_members_event(&one[l], seq + 1 + i, 0, 1, ev[i].old_rank, 1, ev[i].rank, ev[i].c);
        double t1 = now_s();
        if (rc_vbatch_make(&vb, 1, seq, ev, (size_t)E) != 0)
            return 1;
        for (int l = 0; l < L; l++)
            if (rc_vbatch_apply(&vb, &run[l]) < 0)
                return 1;
        t_one += t1 - t0;
        t_run += now_s() - t1;
        seq += E;
    }
    for (int l = 0; l < L; l++)
        for (size_t j = 0; j < one[l].nent; j++)
            if (one[l].ent[j].rank != run[l].ent[j].rank || one[l].ent[j].rank != pos[one[l].ent[j].row] + 1) {
                fprintf(stderr, "list_runs: list %d entry %zu: ranks differ\n", l, j);
                return 1;
            }
    printf("%d lists of %d, runs of %d events: event by event %.2f ms a run (%.2f us a list), "
           "one run for all %.2f ms (%.2f us a list)\n",
           L, LN, E, t_one / R * 1e3, t_one / R / L * 1e6, t_run / R * 1e3, t_run / R / L * 1e6);
    rc_vbatch_free(&vb);
    free(one);
    free(run);
    free(e1);
    free(e2);
    free(ev);
    free(taken);
    return 0;
}
