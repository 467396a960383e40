/* gw_fault.c - test-only faults that break a promise on purpose (see
 * gw_fault.h): the chaos checker's self-test runs a short chaos run with
 * each and expects the violation of its kind. Never in force without
 * [server] test_clock = on: the variables are not even read then. */
#include "base/gw_fault.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/gw_log.h"

struct every {
    const char *var;  /* the environment variable */
    const char *what; /* for the warning */
    int loaded;
    long k;     /* every kth call says 1; 0: never */
    long count; /* calls so far */
};

static struct every ack_early = {"RANKCAST_TEST_ACK_EARLY", "every %ld. write is acked before its script runs", 0, 0, 0};
static struct every drop_row = {"RANKCAST_TEST_DROP_DELTA_ROW", "every %ld. delta loses its first row", 0, 0, 0};
static struct every no_fill = {"RANKCAST_TEST_NO_GAP_FILL", "feeds forward past a gap (every %ld. one) unfilled", 0,
                               0, 0};

static int every_due(struct every *e, int test_clock)
{
    if (!e->loaded) {
        e->loaded = 1;
        const char *v = test_clock ? getenv(e->var) : NULL;
        if (v && atol(v) > 0) {
            e->k = atol(v);
            char what[120];
            snprintf(what, sizeof what, e->what, e->k);
            gw_log_warn("test fault: %s (%s, a test setting)", what, e->var);
        }
    }
    return e->k > 0 && ++e->count % e->k == 0;
}

int gw_fault_ack_early(int test_clock)
{
    return every_due(&ack_early, test_clock);
}

int gw_fault_drop_delta_row(int test_clock)
{
    return every_due(&drop_row, test_clock);
}

int gw_fault_no_gap_fill(int test_clock)
{
    return every_due(&no_fill, test_clock);
}
