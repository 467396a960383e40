/* rows_encode.c - the text of one member list's delta, in core alone
 * (issue 26): 50 rows whose rank moved, each with prev_rank, as bench case
 * M's lists send them at 2,000 writes/s. Prints the microseconds one
 * rc_proto_rows_delta takes and its size.
 *
 *   build/tests/bench/rows_encode [iterations]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rc_proto.h"

#define ROWS 50

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 100000;
    struct rc_row rows[ROWS];
    char names[ROWS][16];
    size_t pick[ROWS];
    int64_t prev[ROWS];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < ROWS; i++) {
        snprintf(names[i], sizeof names[i], "p%d", 1000 + i * 137);
        rows[i].member = names[i];
        rows[i].score = 1234 + i * 7;
        rows[i].rank = 100 + i * 200;
        pick[i] = (size_t)i;
        prev[i] = 90 + i * 200;
    }
    struct rc_delta_msg m = {
        .sub = "v12",
        .seq = 123456,
        .total = 10000,
        .rows = {.rows = rows, .n = ROWS, .pick = pick, .prev_rank = prev},
    };
    struct timespec a, b;
    size_t bytes = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < iters; i++) {
        char *s = rc_proto_rows_delta(&m);
        if (!s)
            return 1;
        bytes = strlen(s);
        free(s);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double us = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 1e3 / iters;
    printf("%.2f us per delta of %d rows, %zu bytes\n", us, ROWS, bytes);
    return 0;
}
