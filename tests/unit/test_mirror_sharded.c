/* test_mirror_sharded.c - rc_mirror of a sharded board (core/rc_shard.h):
 * rows in the merged order (equal composites: the lower shard first, then
 * Redis's member order), one seq per shard (old, next, gap judged per shard),
 * and reloads that carry the vector.
 *
 * The unit cases each prove one rule. The property test runs random event
 * streams of every shard against a reference board sorted with
 * rc_shard_before and checks the mirror after every event, reloading it
 * from the reference (with the vector) whenever it asks. Fixed seed;
 * RC_TEST_SEED=<n> replays another one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rc_test_rng.h"

#include "rc_err.h"
#include "rc_mirror.h"
#include "rc_shard.h"

#define DEFAULT_SEED 20260402u
#define NAMES 48

/* ------------------------------------------------------------------------- */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------- */

/* The first member name "pN" (N from *from on) that rc_shard_of puts in
 * shard `shard` of `shards`, into out[16]; *from moves past it. */
static void member_of_shard(unsigned shard, unsigned shards, unsigned *from, char *out)
{
    for (;; (*from)++) {
        snprintf(out, 16, "p%u", *from);
        if (rc_shard_of(out, shards) == shard) {
            (*from)++;
            return;
        }
    }
}

/* 1 when row a comes before row b in the merged order. */
static int before(int desc, unsigned shards, double ca, const char *ma, double cb, const char *mb)
{
    return rc_shard_before(desc, ca, rc_shard_of(ma, shards), ma, cb, rc_shard_of(mb, shards), mb);
}

/* ------------------------------------------------------------------------- */
/* Unit cases                                                                */
/* ------------------------------------------------------------------------- */

/* Equal composites: the member of the lower shard ranks first, on desc and
 * asc boards alike, whatever the member names say; inside one shard the
 * names order them as Redis does (desc: the greater first). */
static void ties_across_shards_rank_lower_shard_first(void **state)
{
    (void)state;
    for (int desc = 0; desc <= 1; desc++) {
        unsigned from = 0;
        char a0[16], b0[16], a1[16];
        member_of_shard(0, 2, &from, a0);
        member_of_shard(0, 2, &from, b0);
        member_of_shard(1, 2, &from, a1);
        struct rc_mirror m;
        rc_mirror_init_sharded(&m, desc ? RC_ORDER_DESC : RC_ORDER_ASC, 2);
        int64_t vec[2] = {0, 0};
        assert_int_equal(rc_mirror_load_sharded(&m, vec, 0, NULL, 0), 0);
        /* all three at the same composite, arriving shard 1 first */
        assert_int_equal(rc_mirror_apply_shard(&m, 1, 1, a1, 1, 5.0, 0, NULL), RC_MIRROR_APPLIED);
        assert_int_equal(rc_mirror_apply_shard(&m, 0, 1, a0, 1, 5.0, 0, NULL), RC_MIRROR_APPLIED);
        assert_int_equal(rc_mirror_apply_shard(&m, 0, 2, b0, 1, 5.0, 0, NULL), RC_MIRROR_APPLIED);
        assert_int_equal(m.len, 3);
        assert_int_equal(m.seq, 3);
        assert_int_equal(m.total, 3);
        /* shard 0's two first, in Redis's member order, then shard 1's */
        const char *first = (strcmp(a0, b0) > 0) == desc ? a0 : b0;
        const char *second = first == a0 ? b0 : a0;
        assert_string_equal(m.rows[0].member, first);
        assert_string_equal(m.rows[1].member, second);
        assert_string_equal(m.rows[2].member, a1);
        assert_int_equal(rc_mirror_rank_of(&m, a1), 3);
        rc_mirror_free(&m);
    }
}

/* A load checks the merged order: rows in plain member order that put a
 * higher shard first at an equal composite are not what the merged read
 * returns, and leave the mirror empty and not exact. */
static void load_refuses_rows_out_of_merged_order(void **state)
{
    (void)state;
    unsigned from = 0;
    char s0[16], s1[16];
    member_of_shard(0, 2, &from, s0);
    member_of_shard(1, 2, &from, s1);
    struct rc_mirror m;
    rc_mirror_init_sharded(&m, RC_ORDER_DESC, 2);
    int64_t vec[2] = {4, 7};
    struct rc_mirror_row good[2] = {{s0, 3.0}, {s1, 3.0}}, bad[2] = {{s1, 3.0}, {s0, 3.0}};
    assert_int_equal(rc_mirror_load_sharded(&m, vec, 2, bad, 2), RC_E_INTERNAL);
    assert_int_equal(m.exact, 0);
    assert_int_equal(m.len, 0);
    assert_int_equal(rc_mirror_load_sharded(&m, vec, 2, good, 2), 0);
    assert_int_equal(m.exact, 1);
    assert_int_equal(m.seq, 11);
    assert_int_equal(m.shard_seq[0], 4);
    assert_int_equal(m.shard_seq[1], 7);
    rc_mirror_free(&m);
}

/* Each shard's events are judged against that shard's seq: the next of
 * shard 1 applies while shard 0 stays; one of shard 0 skipping a seq is a
 * gap though shard 1 is far ahead. */
static void gap_is_judged_per_shard(void **state)
{
    (void)state;
    unsigned from = 0;
    char s0[16], s1[16];
    member_of_shard(0, 2, &from, s0);
    member_of_shard(1, 2, &from, s1);
    struct rc_mirror m;
    rc_mirror_init_sharded(&m, RC_ORDER_DESC, 2);
    int64_t vec[2] = {3, 10};
    assert_int_equal(rc_mirror_load_sharded(&m, vec, 0, NULL, 0), 0);
    assert_int_equal(rc_mirror_apply_shard(&m, 1, 11, s1, 1, 2.0, 0, NULL), RC_MIRROR_APPLIED);
    assert_int_equal(m.shard_seq[0], 3);
    assert_int_equal(m.shard_seq[1], 11);
    assert_int_equal(m.seq, 14);
    assert_int_equal(rc_mirror_apply_shard(&m, 0, 5, s0, 1, 1.0, 0, NULL), RC_MIRROR_GAP);
    assert_int_equal(m.exact, 0);
    assert_int_equal(rc_mirror_needs_reload(&m), 1);
    rc_mirror_free(&m);
}

/* An event at or below its shard's seq is already in the rows: ignored,
 * the mirror stays exact and unchanged. */
static void event_at_or_below_its_shard_seq_is_old(void **state)
{
    (void)state;
    unsigned from = 0;
    char s0[16], s1[16];
    member_of_shard(0, 2, &from, s0);
    member_of_shard(1, 2, &from, s1);
    struct rc_mirror m;
    rc_mirror_init_sharded(&m, RC_ORDER_ASC, 2);
    int64_t vec[2] = {6, 2};
    struct rc_mirror_row rows[1] = {{s0, 1.0}};
    assert_int_equal(rc_mirror_load_sharded(&m, vec, 1, rows, 1), 0);
    assert_int_equal(rc_mirror_apply_shard(&m, 0, 6, s0, 1, 9.0, 1, NULL), RC_MIRROR_OLD);
    assert_int_equal(rc_mirror_apply_shard(&m, 1, 1, s1, 1, 0.5, 0, NULL), RC_MIRROR_OLD);
    assert_int_equal(m.exact, 1);
    assert_int_equal(m.len, 1);
    assert_true(m.rows[0].c == 1.0);
    assert_int_equal(m.seq, 8);
    rc_mirror_free(&m);
}

/* An event naming a member that belongs to another shard than its own
 * channel's contradicts the mirror: a gap, not a guess. */
static void member_of_another_shard_is_a_gap(void **state)
{
    (void)state;
    unsigned from = 0;
    char s1[16];
    member_of_shard(1, 2, &from, s1);
    struct rc_mirror m;
    rc_mirror_init_sharded(&m, RC_ORDER_DESC, 2);
    int64_t vec[2] = {0, 0};
    assert_int_equal(rc_mirror_load_sharded(&m, vec, 0, NULL, 0), 0);
    assert_int_equal(rc_mirror_apply_shard(&m, 0, 1, s1, 1, 1.0, 0, NULL), RC_MIRROR_GAP);
    assert_int_equal(m.exact, 0);
    rc_mirror_free(&m);
}

/* After a gap, a reload with the read's vector makes it exact again; the
 * events that raced the read are then applied or ignored shard by shard. */
static void reload_with_vector_then_raced_events(void **state)
{
    (void)state;
    unsigned from = 0;
    char s0[16], s1[16], t1[16];
    member_of_shard(0, 2, &from, s0);
    member_of_shard(1, 2, &from, s1);
    member_of_shard(1, 2, &from, t1);
    struct rc_mirror m;
    rc_mirror_init_sharded(&m, RC_ORDER_DESC, 2);
    assert_int_equal(rc_mirror_apply_shard(&m, 0, 1, s0, 1, 1.0, 0, NULL), RC_MIRROR_GAP); /* never loaded */
    int64_t vec[2] = {5, 8};
    struct rc_mirror_row rows[2] = {{s0, 9.0}, {s1, 4.0}};
    assert_int_equal(rc_mirror_load_sharded(&m, vec, 2, rows, 2), 0);
    assert_int_equal(m.seq, 13);
    /* raced: shard 1's seq 8 is in the read, its 9 is not; shard 0's 6 is not */
    assert_int_equal(rc_mirror_apply_shard(&m, 1, 8, s1, 1, 4.0, 1, NULL), RC_MIRROR_OLD);
    assert_int_equal(rc_mirror_apply_shard(&m, 1, 9, t1, 1, 20.0, 0, NULL), RC_MIRROR_APPLIED);
    assert_int_equal(rc_mirror_apply_shard(&m, 0, 6, s0, 0, 0.0, 1, NULL), RC_MIRROR_APPLIED);
    assert_int_equal(m.len, 2);
    assert_string_equal(m.rows[0].member, t1);
    assert_string_equal(m.rows[1].member, s1);
    assert_int_equal(m.total, 2);
    assert_int_equal(m.seq, 15);
    assert_int_equal(m.shard_seq[0], 6);
    assert_int_equal(m.shard_seq[1], 9);
    rc_mirror_free(&m);
}

/* The two APIs do not mix: the unsharded load and apply refuse a sharded
 * mirror and the sharded ones an unsharded mirror (caller bugs). */
static void sharded_and_unsharded_calls_do_not_mix(void **state)
{
    (void)state;
    struct rc_mirror sh, plain;
    int64_t vec[2] = {0, 0};
    rc_mirror_init_sharded(&sh, RC_ORDER_DESC, 2);
    rc_mirror_init(&plain, RC_ORDER_DESC);
    assert_int_equal(rc_mirror_load(&sh, 0, 0, NULL, 0), RC_E_INTERNAL);
    assert_int_equal(rc_mirror_load_sharded(&plain, vec, 0, NULL, 0), RC_E_INTERNAL);
    assert_int_equal(rc_mirror_load_sharded(&sh, NULL, 0, NULL, 0), RC_E_INTERNAL);
    assert_int_equal(rc_mirror_load_sharded(&sh, vec, 0, NULL, 0), 0);
    assert_int_equal(rc_mirror_apply(&sh, 1, "x", 1, 1.0, 0, NULL), RC_E_INTERNAL);
    assert_int_equal(rc_mirror_load(&plain, 0, 0, NULL, 0), 0);
    assert_int_equal(rc_mirror_apply_shard(&plain, 0, 1, "x", 1, 1.0, 0, NULL), RC_E_INTERNAL);
    assert_null(plain.shard_seq);
    rc_mirror_free(&sh);
    rc_mirror_free(&plain);
}

/* rc_mirror_free keeps the shard count: the mirror loads again with a
 * vector; an init with shards <= 1 is an unsharded mirror. */
static void free_keeps_shards_and_reloads(void **state)
{
    (void)state;
    struct rc_mirror m;
    int64_t vec[3] = {1, 2, 3};
    rc_mirror_init_sharded(&m, RC_ORDER_ASC, 3);
    assert_int_equal(rc_mirror_load_sharded(&m, vec, 0, NULL, 0), 0);
    rc_mirror_free(&m);
    assert_int_equal(m.shards, 3);
    assert_null(m.shard_seq);
    assert_int_equal(m.exact, 0);
    assert_int_equal(rc_mirror_load_sharded(&m, vec, 0, NULL, 0), 0);
    assert_int_equal(m.seq, 6);
    rc_mirror_free(&m);
    rc_mirror_init_sharded(&m, RC_ORDER_ASC, 1);
    assert_int_equal(m.shards, 0);
    assert_int_equal(rc_mirror_load(&m, 0, 0, NULL, 0), 0);
    rc_mirror_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Property: random streams of every shard against a reference board         */
/* ------------------------------------------------------------------------- */

struct ref {
    char name[NAMES][16];
    int present[NAMES];
    double c[NAMES];
    int64_t seq[RC_SHARDS_MAX];
};

static int desc_g;
static unsigned shards_g;
static const struct ref *ref_g;

static int ref_cmp(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (before(desc_g, shards_g, ref_g->c[i], ref_g->name[i], ref_g->c[j], ref_g->name[j]))
        return -1;
    return before(desc_g, shards_g, ref_g->c[j], ref_g->name[j], ref_g->c[i], ref_g->name[i]);
}

/* The reference's members in merged order into idx; returns how many. */
static size_t ref_sorted(const struct ref *r, int desc, unsigned shards, size_t *idx)
{
    size_t n = 0;
    for (size_t i = 0; i < NAMES; i++)
        if (r->present[i])
            idx[n++] = i;
    desc_g = desc;
    shards_g = shards;
    ref_g = r;
    qsort(idx, n, sizeof *idx, ref_cmp);
    return n;
}

static void reload_from(struct rc_mirror *m, struct ref *r, int desc, unsigned shards)
{
    size_t idx[NAMES];
    struct rc_mirror_row rows[NAMES];
    size_t n = ref_sorted(r, desc, shards, idx);
    for (size_t k = 0; k < n; k++)
        rows[k] = (struct rc_mirror_row){r->name[idx[k]], r->c[idx[k]]};
    assert_int_equal(rc_mirror_load_sharded(m, r->seq, (int64_t)n, rows, n), 0);
}

static void check_against(const struct rc_mirror *m, const struct ref *r, int desc, unsigned shards)
{
    size_t idx[NAMES];
    size_t n = ref_sorted(r, desc, shards, idx);
    int64_t sum = 0;
    for (unsigned i = 0; i < shards; i++) {
        assert_int_equal(m->shard_seq[i], r->seq[i]);
        sum += r->seq[i];
    }
    assert_int_equal(m->seq, sum);
    assert_int_equal(m->total, (int64_t)n);
    assert_true(m->len <= n);
    for (size_t k = 0; k < m->len; k++) {
        assert_string_equal(m->rows[k].member, r->name[idx[k]]);
        assert_true(m->rows[k].c == r->c[idx[k]]);
    }
}

static void random_streams_keep_sharded_mirror_equal_to_merged_board(void **state)
{
    (void)state;
    const char *env = getenv("RC_TEST_SEED");
    struct rng rng = {env && *env ? strtoull(env, NULL, 0) : DEFAULT_SEED};
    for (int round = 0; round < 300; round++) {
        int desc = (int)below(&rng, 2);
        unsigned shards = 2 + (unsigned)below(&rng, 4);
        struct ref r;
        memset(&r, 0, sizeof r);
        for (size_t i = 0; i < NAMES; i++)
            snprintf(r.name[i], sizeof r.name[i], "m%zu", i);
        struct rc_mirror m;
        rc_mirror_init_sharded(&m, desc ? RC_ORDER_DESC : RC_ORDER_ASC, shards);
        (void)rc_mirror_set_want(&m, 1 + below(&rng, 12));
        reload_from(&m, &r, desc, shards);
        for (int step = 0; step < 200; step++) {
            size_t i = below(&rng, NAMES);
            unsigned sh = rc_shard_of(r.name[i], shards);
            int was = r.present[i];
            int has_new = !was || below(&rng, 5) != 0;
            double c = (double)below(&rng, 4); /* few scores: many ties across shards */
            r.seq[sh]++;
            r.present[i] = has_new;
            r.c[i] = has_new ? c : 0;
            int res = rc_mirror_apply_shard(&m, sh, r.seq[sh], r.name[i], has_new, c, was, NULL);
            assert_int_equal(res, RC_MIRROR_APPLIED);
            if (rc_mirror_needs_reload(&m))
                reload_from(&m, &r, desc, shards);
            check_against(&m, &r, desc, shards);
        }
        rc_mirror_free(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ties_across_shards_rank_lower_shard_first),
        cmocka_unit_test(load_refuses_rows_out_of_merged_order),
        cmocka_unit_test(gap_is_judged_per_shard),
        cmocka_unit_test(event_at_or_below_its_shard_seq_is_old),
        cmocka_unit_test(member_of_another_shard_is_a_gap),
        cmocka_unit_test(reload_with_vector_then_raced_events),
        cmocka_unit_test(sharded_and_unsharded_calls_do_not_mix),
        cmocka_unit_test(free_keeps_shards_and_reloads),
        cmocka_unit_test(random_streams_keep_sharded_mirror_equal_to_merged_board),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
