/* test_vbatch.c - a run of change events judged once for every member list
 * (core/rc_vbatch.h): the ranks and composites it gives each list equal a
 * recomputation from the board itself, and what rc_vtrack_members_event
 * reaches event by event.
 *
 * The property test keeps a brute-force board (members named m000..., few
 * distinct composites, so that ties fall to the names as in Redis: byte-wise,
 * reversed on a desc board), random lists of up to 20 members (some not on
 * the board), and plays random runs of moves, joins and leaves on both desc
 * and asc boards; after each run every list not naming a joined member is
 * moved on by the run and compared with the board. Seed: RC_TEST_SEED=<n>. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rc_test_rng.h"

#include "rc_vbatch.h"
#include "rc_vtrack.h"

#define NM 90   /* members that can be on the board */
#define NLISTS 12
#define LMAX 20

struct board {
    int desc;
    int on[NM];
    double c[NM];
    char name[NM][8];
};

/* 1 when member a comes before member b on the board (stated here apart
 * from core: composite first, then the name byte-wise, both reversed on a
 * desc board). */
static int ahead(const struct board *b, int a, int z)
{
    if (b->c[a] != b->c[z])
        return b->desc ? b->c[a] > b->c[z] : b->c[a] < b->c[z];
    int s = strcmp(b->name[a], b->name[z]);
    return b->desc ? s > 0 : s < 0;
}

static int64_t rank_of(const struct board *b, int m)
{
    int64_t r = 1;
    for (int k = 0; k < NM; k++)
        if (k != m && b->on[k] && ahead(b, k, m))
            r++;
    return r;
}

static int64_t total_of(const struct board *b)
{
    int64_t n = 0;
    for (int k = 0; k < NM; k++)
        n += b->on[k];
    return n;
}

struct list {
    int n;
    int m[LMAX];
    struct rc_vtrack t, one; /* moved by runs; the same moved event by event */
    struct rc_vtrack_entry ent[LMAX], ent1[LMAX];
};

static int by_rank(const void *x, const void *y)
{
    const struct rc_vtrack_entry *a = x, *z = y;
    return (a->rank > z->rank) - (a->rank < z->rank);
}

/* The list's listed members on the board, by rank (as a read gives them). */
static size_t entries_of(const struct board *b, const struct list *l, struct rc_vtrack_entry *e)
{
    size_t k = 0;
    for (int j = 0; j < l->n; j++)
        if (b->on[l->m[j]])
            e[k++] = (struct rc_vtrack_entry){rank_of(b, l->m[j]), b->c[l->m[j]], (size_t)l->m[j]};
    qsort(e, k, sizeof *e, by_rank);
    return k;
}

static void read_list(const struct board *b, struct list *l, int64_t seq)
{
    rc_vtrack_members(&l->t, seq, total_of(b), l->ent, entries_of(b, l, l->ent), 0);
    rc_vtrack_members(&l->one, seq, total_of(b), l->ent1, entries_of(b, l, l->ent1), 0);
}

static void assert_list_is_board(const struct board *b, const struct list *l, const struct rc_vtrack *t)
{
    struct rc_vtrack_entry want[LMAX];
    size_t k = entries_of(b, l, want);
    assert_int_equal(t->nent, k);
    assert_int_equal(t->total, total_of(b));
    for (size_t i = 0; i < k; i++) {
        assert_int_equal(t->ent[i].rank, want[i].rank);
        assert_true(t->ent[i].c == want[i].c);
        assert_int_equal(t->ent[i].row, want[i].row);
    }
}

static int listed(const struct list *l, int m)
{
    for (int j = 0; j < l->n; j++)
        if (l->m[j] == m)
            return 1;
    return 0;
}

static void play(uint64_t seed, int desc, size_t *moved_runs, size_t *same_runs)
{
    struct rng r = {seed};
    static struct board b;
    static struct list lists[NLISTS];
    struct rc_vbatch vb;
    rc_vbatch_init(&vb);
    memset(&b, 0, sizeof b);
    b.desc = desc;
    for (int k = 0; k < NM; k++) {
        snprintf(b.name[k], sizeof b.name[k], "m%03d", (int)below(&r, 1000));
        for (int j = 0; j < k; j++)
            if (strcmp(b.name[j], b.name[k]) == 0)
                snprintf(b.name[k], sizeof b.name[k], "x%03d", k); /* (distinct names) */
        b.on[k] = below(&r, 10) < 8;
        b.c[k] = (double)below(&r, 12);
    }
    int64_t seq = 1;
    for (int i = 0; i < NLISTS; i++) {
        struct list *l = &lists[i];
        l->n = 1 + (int)below(&r, LMAX);
        for (int j = 0; j < l->n; j++)
            l->m[j] = (int)below(&r, NM);
        /* distinct members */
        int seen[NM] = {0}, n = 0;
        for (int j = 0; j < l->n; j++)
            if (!seen[l->m[j]]++)
                l->m[n++] = l->m[j];
        l->n = n;
        read_list(&b, l, seq);
    }
    struct rc_vbatch_ev ev[64];
    char evname[64][8];
    for (int run = 0; run < 400; run++) {
        size_t n = below(&r, 40);
        for (size_t i = 0; i < n; i++) {
            int m = (int)below(&r, NM);
            struct rc_vbatch_ev *e = &ev[i];
            memcpy(evname[i], b.name[m], sizeof evname[i]);
            *e = (struct rc_vbatch_ev){.member = evname[i]};
            if (b.on[m]) {
                e->has_old = 1;
                e->old_rank = rank_of(&b, m);
                e->old_c = b.c[m];
            }
            if (!b.on[m] || below(&r, 10) != 0) {
                b.on[m] = 1;
                b.c[m] = below(&r, 4) == 0 && e->has_old ? b.c[m] : (double)below(&r, 12);
                e->has_new = 1;
                e->rank = rank_of(&b, m);
                e->c = b.c[m];
            } else {
                b.on[m] = 0;
            }
            /* every list event by event too (rc_vtrack_members_event) */
            for (int k = 0; k < NLISTS; k++) {
                struct list *l = &lists[k];
                int res = rc_vtrack_members_event(&l->one, seq + 1 + (int64_t)i, listed(l, m), e->has_old,
                                                  e->old_rank, e->has_new, e->rank, e->c);
                assert_true(res != RC_VTRACK_OLD);
            }
        }
        assert_int_equal(rc_vbatch_make(&vb, desc, seq, ev, n), 0);
        assert_int_equal(vb.seq1, seq + (int64_t)n);
        for (int k = 0; k < NLISTS; k++) {
            struct list *l = &lists[k];
            int joined = 0;
            for (size_t j = 0; j < vb.njoins; j++)
                for (int q = 0; q < l->n; q++)
                    joined |= strcmp(vb.joins[j], b.name[l->m[q]]) == 0;
            if (joined) {
                assert_false(l->one.ok); /* event by event: a listed member's arrival reads too */
                read_list(&b, l, seq + (int64_t)n);
                continue;
            }
            struct rc_vtrack_entry before[LMAX];
            size_t nbefore = l->t.nent;
            int64_t total_before = l->t.total;
            memcpy(before, l->t.ent, nbefore * sizeof before[0]);
            int res = rc_vbatch_apply(&vb, &l->t);
            assert_true(res == RC_VTRACK_SAME || res == RC_VTRACK_MOVED);
            assert_int_equal(l->t.seq, seq + (int64_t)n);
            assert_list_is_board(&b, l, &l->t);
            assert_true(l->one.ok);
            assert_list_is_board(&b, l, &l->one);
            int same = nbefore == l->t.nent && total_before == l->t.total;
            for (size_t i = 0; same && i < nbefore; i++)
                same = before[i].rank == l->t.ent[i].rank && before[i].c == l->t.ent[i].c &&
                       before[i].row == l->t.ent[i].row;
            assert_int_equal(res == RC_VTRACK_SAME, same);
            *(same ? same_runs : moved_runs) += 1;
        }
        seq += (int64_t)n;
        /* now and then a list reads again (a new one) */
        if (below(&r, 4) == 0)
            read_list(&b, &lists[below(&r, NLISTS)], seq);
    }
    rc_vbatch_free(&vb);
}

static void runs_move_every_list_as_a_recomputation_does(void **state)
{
    (void)state;
    const char *env = getenv("RC_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : 20261128;
    size_t moved = 0, same = 0;
    for (int i = 0; i < 6; i++) {
        play(seed + (uint64_t)i, 1, &moved, &same);
        play(seed + 100 + (uint64_t)i, 0, &moved, &same);
    }
    assert_true(moved > 1000);
    assert_true(same > 50); /* (empty runs and runs that miss a list) */
}

static void what_a_run_cannot_judge_is_said(void **state)
{
    (void)state;
    struct rc_vbatch vb;
    rc_vbatch_init(&vb);
    struct rc_vtrack_entry ent[2] = {{1, 9, 0}, {3, 5, 1}};
    struct rc_vtrack t;
    /* a move of an unlisted member from rank 4 to 2 (desc, composites 4 -> 7) */
    struct rc_vbatch_ev ev[] = {{.member = "b", .has_old = 1, .old_rank = 4, .old_c = 4, .has_new = 1, .rank = 2, .c = 7}};
    assert_int_equal(rc_vbatch_make(&vb, 1, 10, ev, 1), 0);
    rc_vtrack_members(&t, 9, 5, ent, 2, 0);
    assert_int_equal(rc_vbatch_apply(&vb, &t), -1); /* not at the run's start */
    rc_vtrack_members(&t, 10, 5, ent, 2, 1);
    assert_int_equal(rc_vbatch_apply(&vb, &t), -1); /* shared places */
    rc_vtrack_members(&t, 10, 5, ent, 2, 0);
    rc_vtrack_members_cut(&t);
    assert_int_equal(rc_vbatch_apply(&vb, &t), -1); /* a roster cut at its best */
    rc_vtrack_members(&t, 10, 5, ent, 2, 0);
    assert_int_equal(rc_vbatch_apply(&vb, &t), RC_VTRACK_MOVED);
    assert_int_equal(t.seq, 11);
    assert_int_equal(t.ent[0].rank, 1);
    assert_int_equal(t.ent[1].rank, 4); /* passed */
    /* events it cannot judge: no member, a rank 0, neither old nor new */
    struct rc_vbatch_ev bad[] = {{.member = "", .has_new = 1, .rank = 1},
                                 {.member = "a", .has_old = 1, .old_rank = 0, .has_new = 1, .rank = 1},
                                 {.member = "a"}};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(rc_vbatch_make(&vb, 1, 10, &bad[i], 1), -1);
        rc_vtrack_members(&t, 10, 5, ent, 2, 0);
        assert_int_equal(rc_vbatch_apply(&vb, &t), -1);
    }
    rc_vbatch_free(&vb);
}

/* rc_vbatch_prefetch is a hint: any tracker takes it (none, an empty list,
 * a page tracker) and an apply after it moves the list as without it. */
static void a_prefetch_changes_nothing(void **state)
{
    (void)state;
    struct rc_vbatch vb;
    rc_vbatch_init(&vb);
    struct rc_vbatch_ev ev[] = {{.member = "b", .has_old = 1, .old_rank = 4, .old_c = 4, .has_new = 1, .rank = 2, .c = 7}};
    assert_int_equal(rc_vbatch_make(&vb, 1, 10, ev, 1), 0);
    struct rc_vtrack t, page;
    memset(&page, 0, sizeof page);
    rc_vbatch_prefetch(&page); /* (not a member list) */
    rc_vtrack_members(&t, 10, 5, NULL, 0, 0);
    rc_vbatch_prefetch(&t); /* (no entries) */
    struct rc_vtrack_entry ent[2] = {{1, 9, 0}, {3, 5, 1}};
    rc_vtrack_members(&t, 10, 5, ent, 2, 0);
    rc_vbatch_prefetch(&t);
    assert_int_equal(rc_vbatch_apply(&vb, &t), RC_VTRACK_MOVED);
    assert_int_equal(t.seq, 11);
    assert_int_equal(t.ent[0].rank, 1);
    assert_int_equal(t.ent[1].rank, 4);
    rc_vbatch_free(&vb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(runs_move_every_list_as_a_recomputation_does),
        cmocka_unit_test(what_a_run_cannot_judge_is_said),
        cmocka_unit_test(a_prefetch_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
