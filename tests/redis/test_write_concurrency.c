/* test_write_concurrency.c - several connections issue thousands of
 * interleaved writes (with retries of the same req on other connections) at a
 * real redis-server. Final scores must equal the sum of distinct writes, and
 * every reply's rank must be the true rank at its seq, checked by replaying
 * the change log from an empty board. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "rc_codec.h"
#include "rc_keys.h"
#include "rc_test_redis.h"
#include "rc_test_writer.h"

#define T0 1767225600000LL
#define NCONNS 4
#define NWRITES 6000
#define NMEMBERS 40
#define RETRY_EVERY 4 /* every 4th write is also resent with the same req */

static const char *conf_text =
    "[board race]\n"
    "tiebreak = earliest\n"
    "tiebreak_resolution = 1ms\n"
    "tiebreak_horizon = 1d\n"
    "tiebreak_base = 2026-01-01T00:00:00Z\n"
    "log_cap = 100000\n";

struct sent {
    int write;   /* index of the distinct write */
    int done;
    int code;
    struct rc_write_result res;
};

static int outstanding;

static void on_write(int code, const struct rc_write_result *res, const struct rc_error *err, void *privdata)
{
    struct sent *s = privdata;
    s->done = 1;
    s->code = code;
    if (res)
        s->res = *res;
    else
        fprintf(stderr, "write failed: %s\n", err ? err->msg : "?");
    outstanding--;
}

struct ev {
    int64_t seq;
    char member[16];
    double c;
    int64_t rank;
};

static int ev_cmp(const void *a, const void *b)
{
    const struct ev *x = a, *y = b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Rank of m on a desc board as ZREVRANK counts it: higher score first, equal
 * scores in reverse member order. */
static int64_t true_rank(char names[][16], const double *score, const int *present, int n, int m)
{
    int64_t r = 1;
    for (int i = 0; i < n; i++) {
        if (i == m || !present[i])
            continue;
        if (score[i] > score[m] || (score[i] == score[m] && strcmp(names[i], names[m]) > 0))
            r++;
    }
    return r;
}

static const struct sent *sort_ctx;

static int reply_seq_cmp(const void *a, const void *b)
{
    int64_t x = sort_ctx[*(const int *)a].res.seq, y = sort_ctx[*(const int *)b].res.seq;
    return (x > y) - (x < y);
}

static void test_interleaved_writes_sum_and_rank_at_every_seq(void **state)
{
    (void)state;
    struct rc_test_redis redis;
    struct rc_test_writer w;
    assert_int_equal(rc_test_redis_start(&redis, NULL), 0);
    assert_int_equal(rc_test_writer_open(&w, redis.port, NCONNS), 0);
    struct rc_conf *conf = rc_test_conf(conf_text);
    const struct rc_board *b = rc_conf_board_find(conf, "race");
    struct rc_period p;
    assert_int_equal(rc_period_select(&b->period, NULL, T0, &p), 0);

    int nsends = NWRITES + NWRITES / RETRY_EVERY;
    struct sent *sends = calloc((size_t)nsends, sizeof *sends);
    int *member_of = calloc(NWRITES, sizeof *member_of);
    int64_t *delta_of = calloc(NWRITES, sizeof *delta_of);
    srand(7);
    int k = 0;
    for (int i = 0; i < NWRITES; i++) {
        member_of[i] = rand() % NMEMBERS;
        delta_of[i] = rand() % 60 - 5; /* some negative, some zero */
        int copies = i % RETRY_EVERY == 0 ? 2 : 1;
        for (int c = 0; c < copies; c++) {
            char json[200];
            snprintf(json, sizeof json,
                     "{\"op\":\"incr\",\"board\":\"race\",\"member\":\"m%02d\",\"delta\":%lld,\"req\":\"w%d\"}",
                     member_of[i], (long long)delta_of[i], i);
            struct rc_request r;
            struct rc_error err;
            assert_int_equal(rc_proto_decode(json, strlen(json), &r, &err), 0);
            sends[k].write = i;
            /* the copy goes out on another connection, so the two race */
            struct gw_redis *front = w.redis[(i + c) % NCONNS];
            int64_t now = T0 + i / 3; /* several writes share a millisecond: ties happen */
            assert_int_equal(gw_write_submit(front, &w.script, b, &r, &p, now, on_write, &sends[k], &err), 0);
            outstanding++;
            k++;
            rc_proto_decode_free(&r);
        }
        if (i % 500 == 0) /* let the connections start sending while we queue more */
            uv_run(&w.loop, UV_RUN_NOWAIT);
    }
    assert_int_equal(k, nsends);
    while (outstanding > 0)
        uv_run(&w.loop, UV_RUN_ONCE);

    /* Each distinct write was applied exactly once. */
    int *applied = calloc(NWRITES, sizeof *applied);
    int64_t expect[NMEMBERS] = {0};
    int changed = 0;
    for (int i = 0; i < nsends; i++) {
        assert_true(sends[i].done);
        assert_int_equal(sends[i].code, 0);
        assert_int_equal(sends[i].res.status, 0);
        if (!sends[i].res.duplicate)
            applied[sends[i].write]++;
        if (sends[i].res.changed)
            changed++;
    }
    for (int i = 0; i < NWRITES; i++) {
        assert_int_equal(applied[i], 1);
        expect[member_of[i]] += delta_of[i];
    }

    redisContext *sync = rc_test_redis_connect(&redis);
    char z[RC_KEY_MAX], logk[RC_KEY_MAX], seqk[RC_KEY_MAX];
    rc_keys_board(z, sizeof z, "race", "", "z", NULL);
    rc_keys_board(logk, sizeof logk, "race", "", "log", NULL);
    rc_keys_board(seqk, sizeof seqk, "race", "", "seq", NULL);
    for (int m = 0; m < NMEMBERS; m++) {
        redisReply *r = redisCommand(sync, "ZSCORE %s m%02d", z, m);
        int64_t pts = 0;
        uint64_t slot;
        if (r->type == REDIS_REPLY_STRING)
            assert_int_equal(rc_codec_decode_points(&b->layout, strtod(r->str, NULL), &pts, &slot), 0);
        assert_int_equal(pts, expect[m]);
        freeReplyObject(r);
    }

    /* Replay the log from an empty board. */
    redisReply *seq = redisCommand(sync, "GET %s", seqk);
    int64_t final_seq = atoll(seq->str);
    freeReplyObject(seq);
    assert_int_equal(final_seq, changed);
    redisReply *log = redisCommand(sync, "LRANGE %s 0 -1", logk);
    assert_int_equal((int64_t)log->elements, final_seq);
    struct ev *evs = calloc(log->elements, sizeof *evs);
    for (size_t i = 0; i < log->elements; i++) {
        cJSON *e = cJSON_Parse(log->element[i]->str);
        assert_non_null(e);
        evs[i].seq = (int64_t)cJSON_GetObjectItem(e, "seq")->valuedouble;
        snprintf(evs[i].member, sizeof evs[i].member, "%s", cJSON_GetObjectItem(e, "member")->valuestring);
        evs[i].c = cJSON_GetObjectItem(e, "c")->valuedouble;
        evs[i].rank = (int64_t)cJSON_GetObjectItem(e, "rank")->valuedouble;
        cJSON_Delete(e);
    }
    freeReplyObject(log);
    qsort(evs, (size_t)final_seq, sizeof *evs, ev_cmp);
    int64_t *rank_at = calloc((size_t)final_seq + 1, sizeof *rank_at);
    for (int i = 0; i < nsends; i++)
        if (sends[i].res.changed)
            rank_at[sends[i].res.seq] = sends[i].res.rank;
    char names[NMEMBERS][16];
    double score[NMEMBERS] = {0};
    int present[NMEMBERS] = {0};
    for (int m = 0; m < NMEMBERS; m++)
        snprintf(names[m], sizeof names[m], "m%02d", m);
    /* Every reply (changes, duplicates, no-ops) answers for one seq: bucket
     * them by seq and check each against the replayed board at that seq. */
    int *by_seq = malloc((size_t)nsends * sizeof *by_seq);
    for (int i = 0; i < nsends; i++)
        by_seq[i] = i;
    sort_ctx = sends;
    qsort(by_seq, (size_t)nsends, sizeof *by_seq, reply_seq_cmp);
    int next = 0, checked = 0;
    while (next < nsends && sends[by_seq[next]].res.seq == 0) {
        assert_int_equal(sends[by_seq[next]].res.rank, 0); /* before any change: absent */
        next++;
    }
    int ties = 0;
    for (int64_t i = 0; i < final_seq; i++) {
        assert_int_equal(evs[i].seq, i + 1); /* no gaps, no repeats */
        int m = atoi(evs[i].member + 1);
        score[m] = evs[i].c;
        present[m] = 1;
        int64_t r = true_rank(names, score, present, NMEMBERS, m);
        assert_int_equal(evs[i].rank, r);
        assert_int_equal(rank_at[evs[i].seq], r);
        for (int o = 0; o < NMEMBERS; o++)
            if (o != m && present[o] && score[o] == score[m])
                ties++;
        for (; next < nsends && sends[by_seq[next]].res.seq == evs[i].seq; next++, checked++) {
            const struct rc_write_result *res = &sends[by_seq[next]].res;
            int rm = atoi(res->member + 1);
            assert_int_equal(res->rank, present[rm] ? true_rank(names, score, present, NMEMBERS, rm) : 0);
        }
    }
    assert_int_equal(next, nsends);
    free(by_seq);
    print_message("%d writes (+%d retries) over %d connections, %lld changes replayed, %d replies checked, "
                  "%d exact ties seen\n",
                  NWRITES, NWRITES / RETRY_EVERY, NCONNS, (long long)final_seq, checked, ties);

    redisFree(sync);
    free(rank_at);
    free(evs);
    free(applied);
    free(member_of);
    free(delta_of);
    free(sends);
    free(conf);
    rc_test_writer_close(&w);
    rc_test_redis_stop(&redis);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interleaved_writes_sum_and_rank_at_every_seq),
    };
    return cmocka_run_group_tests_name("write_concurrency", tests, NULL, NULL);
}
