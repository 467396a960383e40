/* gw_fault.c - test-only faults that break a promise on purpose (see
 * gw_fault.h): the chaos checker's self-test runs a short chaos run with
 * each and expects the violation of its kind. Never in force without
 * [server] test_clock = on: the variables are not even read then. */
#include "base/gw_fault.h"

#include <stdio.h>
#include <stdlib.h>

#include <uv.h>

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

static struct every slow_read = {"RANKCAST_TEST_SLOW_VIEW_READ", "view reads are answered %ld ms late", 0, 0, 0};

long gw_fault_slow_view_read_ms(int test_clock)
{
    (void)every_due(&slow_read, test_clock);
    return slow_read.k;
}

static struct every fail_read = {"RANKCAST_TEST_FAIL_VIEW_READ", "window read %ld fails as if Redis were unreachable",
                                 0, 0, 0};

int gw_fault_fail_view_read(int test_clock)
{
    return every_due(&fail_read, test_clock) && fail_read.count == fail_read.k;
}

static struct every slow_tick = {"RANKCAST_TEST_SLOW_TICK_MS", "each tick holds the loop %ld ms", 0, 0, 0};

long gw_fault_slow_tick_ms(int test_clock)
{
    (void)every_due(&slow_tick, test_clock);
    return slow_tick.k;
}

struct later {
    uv_timer_t timer;
    void (*fn)(void *, void *, int);
    void *a, *b;
    int c;
};

static void later_closed(uv_handle_t *hd)
{
    free(hd->data);
}

static void later_due(uv_timer_t *t)
{
    struct later *k = t->data;
    k->fn(k->a, k->b, k->c);
    uv_close((uv_handle_t *)&k->timer, later_closed);
}

int gw_fault_later(void *loop, long ms, void (*fn)(void *, void *, int), void *a, void *b, int c)
{
    struct later *k = calloc(1, sizeof *k);
    if (!k)
        return -1;
    *k = (struct later){.fn = fn, .a = a, .b = b, .c = c};
    uv_timer_init(loop, &k->timer);
    k->timer.data = k;
    uv_timer_start(&k->timer, later_due, (uint64_t)ms, 0);
    return 0;
}
