/* test_shard.c - sharded boards (core/rc_shard): the member -> shard hash is
 * the documented FNV-1a and spreads members, shard names round-trip, the
 * merged order and the K-way merge agree with a sort of all rows, the rank
 * rule (rank in shard + counts of the other shards) equals the position in
 * the merged order, the streaming merge over pages (rc_shard_stream: export
 * and archive) gives the same order, ties by the shard rule and skipping
 * exhausted and empty shards, and feed cursors round-trip and refuse what
 * is not one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rc_shard.h"

static void test_hash_is_fnv1a_mod_shards(void **state)
{
    (void)state;
    /* FNV-1a 32 of "a" is 0xe40c292c; of "" the offset basis 0x811c9dc5 */
    assert_int_equal(rc_shard_of("a", 8), 0xe40c292cu % 8);
    assert_int_equal(rc_shard_of("", 7), 0x811c9dc5u % 7);
    assert_int_equal(rc_shard_of("user:1", 1), 0);
    assert_int_equal(rc_shard_of("user:1", 0), 0);
    /* stable: the same member, the same shard */
    assert_int_equal(rc_shard_of("user:101", 8), rc_shard_of("user:101", 8));
}

static void test_hash_spreads_members(void **state)
{
    (void)state;
    unsigned count[8] = {0};
    char m[32];
    for (int i = 0; i < 8000; i++) {
        snprintf(m, sizeof m, "user:%d", i);
        count[rc_shard_of(m, 8)]++;
    }
    for (int i = 0; i < 8; i++) {
        assert_true(count[i] > 800);
        assert_true(count[i] < 1200);
    }
}

static void test_names_round_trip(void **state)
{
    (void)state;
    char name[RC_SHARD_NAME_MAX + 1], board[RC_BOARD_MAX + 1];
    unsigned i = 99;
    assert_int_equal(rc_shard_name(name, sizeof name, "global", 7), 0);
    assert_string_equal(name, "global#7");
    assert_int_equal(rc_shard_split(name, board, &i), 1);
    assert_string_equal(board, "global");
    assert_int_equal(i, 7);
    assert_int_equal(rc_shard_split("demo", board, &i), 0);
    assert_string_equal(board, "demo");
    assert_int_equal(rc_shard_split("g#63", board, &i), 1);
    assert_int_equal(i, 63);
    assert_int_equal(rc_shard_split("g#64", board, &i), -1);
    assert_int_equal(rc_shard_split("g#", board, &i), -1);
    assert_int_equal(rc_shard_split("g#07", board, &i), -1);
    assert_int_equal(rc_shard_split("g#1x", board, &i), -1);
    assert_int_equal(rc_shard_split("#1", board, &i), -1);
    assert_int_equal(rc_shard_name(name, 4, "global", 7), -1);
}

static void test_order(void **state)
{
    (void)state;
    /* composite first, by the board's direction */
    assert_true(rc_shard_before(1, 5, 3, "a", 4, 0, "z"));
    assert_false(rc_shard_before(1, 4, 0, "z", 5, 3, "a"));
    assert_true(rc_shard_before(0, 4, 3, "a", 5, 0, "z"));
    /* equal composites: the lower shard */
    assert_true(rc_shard_before(1, 5, 1, "a", 5, 2, "z"));
    assert_true(rc_shard_before(0, 5, 1, "z", 5, 2, "a"));
    /* same shard: Redis's order (REV for desc) */
    assert_true(rc_shard_before(1, 5, 1, "b", 5, 1, "a"));
    assert_true(rc_shard_before(0, 5, 1, "a", 5, 1, "b"));
    assert_false(rc_shard_before(1, 5, 1, "a", 5, 1, "a"));
    assert_int_equal(rc_shard_count_inclusive(0, 3), 1);
    assert_int_equal(rc_shard_count_inclusive(4, 3), 0);
    assert_int_equal(rc_shard_count_inclusive(3, 3), -1);
}

/* A random board of S shards: rows with few distinct composites (many
 * ties), each shard's run sorted as Redis would, the merge against a sort
 * of everything, and the rank rule against the merged position. */
#define NROWS 400
struct row {
    double c;
    unsigned shard;
    char member[16];
};
static int g_desc;
static int cmp_rows(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (rc_shard_before(g_desc, x->c, x->shard, x->member, y->c, y->shard, y->member))
        return -1;
    if (rc_shard_before(g_desc, y->c, y->shard, y->member, x->c, x->shard, x->member))
        return 1;
    return 0;
}

static void check_board(unsigned S, int desc, unsigned seed)
{
    static struct row rows[NROWS], byshard[RC_SHARDS_MAX][NROWS];
    static double cs[RC_SHARDS_MAX][NROWS];
    static const char *ms[RC_SHARDS_MAX][NROWS];
    size_t n[RC_SHARDS_MAX] = {0};
    srand(seed);
    g_desc = desc;
    for (int i = 0; i < NROWS; i++) {
        snprintf(rows[i].member, sizeof rows[i].member, "m%d", i);
        rows[i].c = (double)(rand() % 25);
        rows[i].shard = rc_shard_of(rows[i].member, S);
        byshard[rows[i].shard][n[rows[i].shard]++] = rows[i];
    }
    struct rc_shard_run runs[RC_SHARDS_MAX];
    for (unsigned j = 0; j < S; j++) {
        qsort(byshard[j], n[j], sizeof(struct row), cmp_rows);
        for (size_t k = 0; k < n[j]; k++) {
            cs[j][k] = byshard[j][k].c;
            ms[j][k] = byshard[j][k].member;
        }
        runs[j].c = cs[j];
        runs[j].member = ms[j];
        runs[j].n = n[j];
    }
    qsort(rows, NROWS, sizeof(struct row), cmp_rows);
    /* every page of the merge is the sorted truth */
    struct rc_shard_pick pick[NROWS];
    for (size_t skip = 0; skip < NROWS; skip += 37) {
        size_t got = rc_shard_merge(desc, runs, S, skip, pick, 50);
        size_t want = NROWS - skip < 50 ? NROWS - skip : 50;
        assert_int_equal(got, want);
        for (size_t k = 0; k < got; k++)
            assert_string_equal(ms[pick[k].shard][pick[k].index], rows[skip + k].member);
    }
    /* the rank rule: for every row, rank in its shard plus the counts of the
     * others (inclusive for lower shards) is its merged position */
    for (int pos = 0; pos < NROWS; pos++) {
        const struct row *r = &rows[pos];
        size_t ahead = 0;
        for (unsigned j = 0; j < S; j++) {
            int inc = rc_shard_count_inclusive(j, r->shard);
            for (size_t k = 0; k < n[j]; k++) {
                double c = cs[j][k];
                if (inc < 0) {
                    if (strcmp(ms[j][k], r->member) == 0)
                        ahead += k;
                } else if (desc ? (c > r->c || (inc && c == r->c)) : (c < r->c || (inc && c == r->c))) {
                    ahead++;
                }
            }
        }
        assert_int_equal(ahead, pos);
    }
}

static void test_merge_and_rank_rule(void **state)
{
    (void)state;
    for (unsigned S = 2; S <= 9; S++) {
        check_board(S, 1, 100 + S);
        check_board(S, 0, 200 + S);
    }
    check_board(64, 1, 7);
}

/* Drains runs through the streaming merge row by row, as the export and the
 * archive do (offer a shard's next row once its last was taken, clear it
 * when used up); out gets (shard, index) in order. */
static size_t stream_all(int desc, const struct rc_shard_run *runs, unsigned S, struct rc_shard_pick *out)
{
    struct rc_shard_stream st;
    size_t pos[RC_SHARDS_MAX] = {0}, got = 0;
    rc_shard_stream_init(&st, desc, S);
    for (unsigned j = 0; j < S; j++)
        if (runs[j].n > 0)
            rc_shard_stream_offer(&st, j, runs[j].c[0], runs[j].member[0]);
    for (int j; (j = rc_shard_stream_next(&st)) >= 0;) {
        out[got].shard = (unsigned)j;
        out[got].index = pos[j]++;
        got++;
        if (pos[j] < runs[j].n)
            rc_shard_stream_offer(&st, (unsigned)j, runs[j].c[pos[j]], runs[j].member[pos[j]]);
        else
            rc_shard_stream_clear(&st, (unsigned)j);
    }
    return got;
}

static void test_stream_equals_merge(void **state)
{
    (void)state;
    /* ties everywhere: composites 0..2 over four shards, one shard empty */
    static const double c0[] = {2, 2, 1, 0}, c1[] = {2, 1, 1}, c3[] = {2, 0};
    static const char *m0[] = {"d", "a", "b", "c"}, *m1[] = {"e", "g", "f"}, *m3[] = {"h", "i"};
    const struct rc_shard_run runs[4] = {{c0, m0, 4}, {c1, m1, 3}, {NULL, NULL, 0}, {c3, m3, 2}};
    struct rc_shard_pick want[9], got[9];
    assert_int_equal(rc_shard_merge(1, runs, 4, 0, want, 9), 9);
    assert_int_equal(stream_all(1, runs, 4, got), 9);
    for (int k = 0; k < 9; k++) {
        assert_int_equal(got[k].shard, want[k].shard);
        assert_int_equal(got[k].index, want[k].index);
    }
    /* equal composites: the lower shard first (d, a of shard 0 before e) */
    assert_int_equal(got[0].shard, 0);
    assert_int_equal(got[1].shard, 0);
    assert_int_equal(got[2].shard, 1);
    assert_int_equal(got[3].shard, 3);
}

static void test_stream_ties_go_to_the_lower_shard(void **state)
{
    (void)state;
    struct rc_shard_stream st;
    for (int desc = 0; desc <= 1; desc++) {
        rc_shard_stream_init(&st, desc, 3);
        /* the same composite everywhere: the member never decides across shards */
        rc_shard_stream_offer(&st, 2, 5, "a");
        rc_shard_stream_offer(&st, 1, 5, "z");
        assert_int_equal(rc_shard_stream_next(&st), 1);
        rc_shard_stream_offer(&st, 0, 5, "m");
        assert_int_equal(rc_shard_stream_next(&st), 0);
        /* a better composite wins whatever its shard */
        rc_shard_stream_offer(&st, 2, desc ? 6 : 4, "a");
        assert_int_equal(rc_shard_stream_next(&st), 2);
    }
}

static void test_stream_skips_exhausted_and_empty_shards(void **state)
{
    (void)state;
    struct rc_shard_stream st;
    rc_shard_stream_init(&st, 1, 4);
    /* nothing offered: every shard empty */
    assert_int_equal(rc_shard_stream_next(&st), -1);
    rc_shard_stream_offer(&st, 3, 1, "x");
    rc_shard_stream_offer(&st, 1, 9, "y");
    assert_int_equal(rc_shard_stream_next(&st), 1);
    /* shard 1 used up: the next is shard 3, even with a worse row */
    rc_shard_stream_clear(&st, 1);
    assert_int_equal(rc_shard_stream_next(&st), 3);
    rc_shard_stream_clear(&st, 3);
    assert_int_equal(rc_shard_stream_next(&st), -1);
    /* zero shards: nothing, ever */
    rc_shard_stream_init(&st, 0, 0);
    assert_int_equal(rc_shard_stream_next(&st), -1);
}

static void test_stream_property(void **state)
{
    (void)state;
    static double cs[RC_SHARDS_MAX][64];
    static char names[RC_SHARDS_MAX][64][8];
    static const char *ms[RC_SHARDS_MAX][64];
    static struct rc_shard_pick want[RC_SHARDS_MAX * 64], got[RC_SHARDS_MAX * 64];
    srand(42);
    for (int round = 0; round < 200; round++) {
        unsigned S = 1 + (unsigned)rand() % 12;
        int desc = rand() % 2;
        struct rc_shard_run runs[RC_SHARDS_MAX];
        size_t total = 0;
        for (unsigned j = 0; j < S; j++) {
            size_t n = (size_t)rand() % 7; /* empty shards too */
            /* each shard's run in its own order: composites monotone, equal
             * composites by member the Redis way */
            double c = desc ? 10 : 0;
            for (size_t k = 0; k < n; k++) {
                if (rand() % 2)
                    c += desc ? -1 : 1;
                cs[j][k] = c;
                int w = snprintf(names[j][k], sizeof names[j][k], "%c%u", desc ? (char)('z' - k) : (char)('a' + k), j);
                assert_true(w > 0 && w < (int)sizeof names[j][k]);
                ms[j][k] = names[j][k];
            }
            runs[j] = (struct rc_shard_run){cs[j], ms[j], n};
            total += n;
        }
        assert_int_equal(rc_shard_merge(desc, runs, S, 0, want, total), total);
        assert_int_equal(stream_all(desc, runs, S, got), total);
        for (size_t k = 0; k < total; k++) {
            assert_int_equal(got[k].shard, want[k].shard);
            assert_int_equal(got[k].index, want[k].index);
        }
    }
}

static void test_cursor_round_trip(void **state)
{
    (void)state;
    struct rc_shard_cursor c, d;
    char text[RC_SHARD_CURSOR_MAX];
    memset(&c, 0, sizeof c);
    c.n = 3;
    rc_shard_cursor_set(&c, 0, 17, "0123456789abcdef");
    rc_shard_cursor_set(&c, 1, 0, "");
    rc_shard_cursor_set(&c, 2, 123456789012345, "fedcba9876543210");
    assert_int_equal(rc_shard_cursor_sum(&c), 17 + 123456789012345);
    assert_int_equal(rc_shard_cursor_format(&c, text, sizeof text), 0);
    assert_string_equal(text, "01234567:17.:0.fedcba98:123456789012345");
    assert_int_equal(rc_shard_cursor_parse(text, 3, &d), 0);
    assert_int_equal(d.n, 3);
    assert_int_equal(d.seq[2], 123456789012345);
    assert_string_equal(d.epoch[0], "01234567");
    assert_string_equal(d.epoch[1], "");
    /* the widest cursor fits */
    memset(&c, 0, sizeof c);
    c.n = RC_SHARDS_MAX;
    for (unsigned i = 0; i < c.n; i++)
        rc_shard_cursor_set(&c, i, 999999999999999999, "ffffffffffffffff");
    assert_int_equal(rc_shard_cursor_format(&c, text, sizeof text), 0);
    assert_int_equal(rc_shard_cursor_parse(text, RC_SHARDS_MAX, &d), 0);
    assert_int_equal(rc_shard_cursor_format(&c, text, 10), -1);
}

static void test_cursor_refuses_what_is_not_one(void **state)
{
    (void)state;
    struct rc_shard_cursor d;
    static const char *bad[] = {"", ":1", ":1.:2.:3", "0123456:1.:2", "0123456G:1.:2", ":1.:-2", ":1.:x",
                                ":1.:2.", ":1,:2", ":1.:2 ", "ABCDEF01:1.:2", ":1.:9999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(rc_shard_cursor_parse(bad[i], 2, &d), -1);
    assert_int_equal(rc_shard_cursor_parse(":1.:2", 2, &d), 0);
    assert_int_equal(rc_shard_cursor_parse(":1.:2", 65, &d), -1);
}

static void test_board_epoch(void **state)
{
    (void)state;
    const char *none[3] = {"", "", ""};
    const char *a[3] = {"aaaaaaaaaaaaaaaa", "", ""};
    const char *b[3] = {"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", ""};
    const char *b2[3] = {"aaaaaaaaaaaaaaaa", "cccccccccccccccc", ""};
    char e0[RC_EPOCH_MAX + 1], e1[RC_EPOCH_MAX + 1], e2[RC_EPOCH_MAX + 1], e3[RC_EPOCH_MAX + 1];
    rc_shard_epoch(none, 3, e0);
    assert_string_equal(e0, "");
    rc_shard_epoch(a, 3, e1);
    rc_shard_epoch(b, 3, e2);
    rc_shard_epoch(b2, 3, e3);
    assert_int_equal(strlen(e1), 16);
    assert_string_not_equal(e1, e2);
    assert_string_not_equal(e2, e3);
    rc_shard_epoch(b, 3, e0);
    assert_string_equal(e0, e2);
}

static void cursor_of(struct rc_shard_cursor *c, unsigned n)
{
    memset(c, 0, sizeof *c);
    c->n = n;
}

static void test_feed_steps(void **state)
{
    (void)state;
    struct rc_shard_cursor c;
    cursor_of(&c, 3);
    rc_shard_cursor_set(&c, 0, 5, "aaaaaaaa11111111");
    /* shard 1 has no history yet; shard 2 at 0 too */
    assert_int_equal(rc_shard_step(&c, 0, 5, "", 0), RC_SHARD_SKIP);
    assert_int_equal(rc_shard_step(&c, 0, 4, "", 0), RC_SHARD_SKIP);
    assert_int_equal(rc_shard_step(&c, 0, 6, "", 0), RC_SHARD_NEXT);
    assert_int_equal(rc_shard_step(&c, 0, 7, "", 0), RC_SHARD_RESYNC); /* a gap */
    /* the first write of a shard without a history names its epoch */
    assert_int_equal(rc_shard_step(&c, 1, 1, "bbbbbbbb22222222", 0), RC_SHARD_BEGAN);
    assert_int_equal(rc_shard_step(&c, 1, 2, "bbbbbbbb22222222", 0), RC_SHARD_RESYNC);
    /* a new history on a shard that had one: start over */
    assert_int_equal(rc_shard_step(&c, 0, 1, "cccccccc33333333", 0), RC_SHARD_RESYNC);
    assert_int_equal(rc_shard_step(&c, 0, 6, "aaaaaaaa11111111", 0), RC_SHARD_NEXT); /* its own: as ever */
    assert_int_equal(rc_shard_step(&c, 2, 1, "dddddddd44444444", 1), RC_SHARD_RESYNC); /* a reset */
    assert_int_equal(rc_shard_step(&c, 3, 1, "", 0), RC_SHARD_RESYNC); /* no such shard */
}

static void test_replayable(void **state)
{
    (void)state;
    struct rc_shard_cursor c, now;
    int64_t first[3] = {3, 0, 1};
    cursor_of(&c, 3);
    cursor_of(&now, 3);
    rc_shard_cursor_set(&c, 0, 5, "aaaaaaaa");
    rc_shard_cursor_set(&now, 0, 9, "aaaaaaaa");
    rc_shard_cursor_set(&now, 2, 4, "eeeeeeee"); /* began since c: all of it in the log (first 1) */
    assert_true(rc_shard_replayable(&c, &now, first));
    first[0] = 6; /* the log starts right after c */
    assert_true(rc_shard_replayable(&c, &now, first));
    first[0] = 7; /* change 6 is gone */
    assert_false(rc_shard_replayable(&c, &now, first));
    first[0] = 3;
    first[2] = 2; /* shard 2's first change is gone */
    assert_false(rc_shard_replayable(&c, &now, first));
    first[2] = 1;
    rc_shard_cursor_set(&now, 0, 4, "aaaaaaaa"); /* behind c: a history lost */
    assert_false(rc_shard_replayable(&c, &now, first));
    rc_shard_cursor_set(&now, 0, 9, "ffffffff"); /* another history on shard 0 */
    assert_false(rc_shard_replayable(&c, &now, first));
    rc_shard_cursor_set(&now, 0, 5, "aaaaaaaa"); /* nothing new on shard 0: its log need not reach */
    first[0] = 0;
    assert_true(rc_shard_replayable(&c, &now, first));
    now.n = 2;
    assert_false(rc_shard_replayable(&c, &now, first));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_is_fnv1a_mod_shards),
        cmocka_unit_test(test_hash_spreads_members),
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_merge_and_rank_rule),
        cmocka_unit_test(test_stream_equals_merge),
        cmocka_unit_test(test_stream_ties_go_to_the_lower_shard),
        cmocka_unit_test(test_stream_skips_exhausted_and_empty_shards),
        cmocka_unit_test(test_stream_property),
        cmocka_unit_test(test_cursor_round_trip),
        cmocka_unit_test(test_cursor_refuses_what_is_not_one),
        cmocka_unit_test(test_board_epoch),
        cmocka_unit_test(test_feed_steps),
        cmocka_unit_test(test_replayable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
