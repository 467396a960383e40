/* test_idem_records.c - the idempotency records of lua/write.lua and
 * lua/enqueue.lua against a real redis-server: one small string per write,
 * shared by a queued write's enqueue and its application; a retried req
 * inside the window counts once, a redelivered entry is applied once, and
 * after the window the same req is a new write. The calls are built by the
 * gateway's own pure builders (core/rc_queue.h, core/rc_write_args.h) and
 * sent with EVAL on a blocking connection, the stream read as the consumer
 * reads it (gateway/jobs/gw_queue.c). One server for all. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "rc_admin_args.h"
#include "rc_lua.h"
#include "rc_proto.h"
#include "rc_queue.h"
#include "rc_test_redis.h"
#include "rc_test_writer.h"
#include "rc_write_args.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00Z */
#define RECORD "rc:{burst|}:req:r-1"

static const char *conf_text = "[board burst]\n"
                               "ops = incr\n"
                               "tiebreak = none\n"
                               "write_mode = queued\n"
                               "idempotency_window = 60s\n"
                               "[board plain]\n"
                               "tiebreak = none\n"
                               "idempotency_window = 60s\n";

struct fixture {
    struct rc_test_redis_fixture rf;
    struct rc_conf *conf;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    void *inner = NULL;
    if (!f || rc_test_redis_setup(&inner) != 0)
        return -1;
    f->rf = *(struct rc_test_redis_fixture *)inner;
    free(inner);
    f->conf = rc_test_conf(conf_text);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    struct rc_test_redis_fixture *inner = malloc(sizeof *inner);
    *inner = f->rf;
    free(f->conf);
    free(f);
    return rc_test_redis_teardown((void **)&inner);
}

static int fresh(void **state)
{
    struct fixture *f = *state;
    freeReplyObject(redisCommand(f->rf.c, "FLUSHALL"));
    return 0;
}

static redisReply *cmd(struct fixture *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(f->rf.c, fmt, ap);
    va_end(ap);
    assert_non_null(r);
    return r;
}

static long long integer(struct fixture *f, const char *fmt, const char *arg)
{
    redisReply *r = cmd(f, fmt, arg);
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

/* How many idempotency records the server holds (both kinds, req and the
 * old queued-path qreq, match). */
static long long records(struct fixture *f)
{
    redisReply *r = cmd(f, "KEYS rc:*req:*");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    long long n = (long long)r->elements;
    freeReplyObject(r);
    return n;
}

/* MEMORY USAGE summed over every idempotency record. */
static long long record_bytes(struct fixture *f)
{
    redisReply *r = cmd(f, "KEYS rc:*req:*");
    long long sum = 0;
    for (size_t i = 0; i < r->elements; i++)
        sum += integer(f, "MEMORY USAGE %s", r->element[i]->str);
    freeReplyObject(r);
    return sum;
}

static void get_string(struct fixture *f, const char *key, char *out, size_t cap)
{
    redisReply *r = cmd(f, "GET %s", key);
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    snprintf(out, cap, "%s", r->str);
    freeReplyObject(r);
}

static struct rc_request request(const char *board, const char *member, int64_t delta, const char *req)
{
    struct rc_request r;
    memset(&r, 0, sizeof r);
    r.op = RC_OP_INCR;
    snprintf(r.board, sizeof r.board, "%s", board);
    snprintf(r.member, sizeof r.member, "%s", member);
    snprintf(r.req, sizeof r.req, "%s", req);
    r.value = delta;
    return r;
}

static redisReply *eval(struct fixture *f, const char *script, unsigned nkeys, const char (*keys)[RC_KEY_MAX],
                        unsigned nargv, const char *const *argv)
{
    const char *words[3 + 16 + 64];
    char nk[8];
    unsigned n = 0;
    snprintf(nk, sizeof nk, "%u", nkeys);
    words[n++] = "EVAL";
    words[n++] = script;
    words[n++] = nk;
    for (unsigned i = 0; i < nkeys; i++)
        words[n++] = keys[i];
    for (unsigned i = 0; i < nargv; i++)
        words[n++] = argv[i];
    redisReply *r = redisCommandArgv(f->rf.c, (int)n, words, NULL);
    assert_non_null(r);
    if (r->type == REDIS_REPLY_ERROR)
        fail_msg("script error: %s", r->str);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    return r;
}

/* lua/enqueue.lua for an incr on the queued board, making no new record
 * when no_new (the writer at its cap); out the reply's status and entry. */
static void enqueue_as(struct fixture *f, const char *member, const char *req, int no_new, char status[16],
                       char entry[64])
{
    struct rc_request r = request("burst", member, 1, req);
    struct rc_queue_enqueue a;
    struct rc_error err = {0, ""};
    assert_int_equal(rc_queue_enqueue_build(rc_conf_board_find(f->conf, "burst"), &r, T0, &a, &err), 0);
    if (no_new)
        rc_queue_enqueue_no_new_record(&a);
    redisReply *x = eval(f, rc_lua_enqueue, a.nkeys, a.keys, a.nargv, a.argv);
    snprintf(status, 16, "%s", x->element[0]->str);
    snprintf(entry, 64, "%s", x->elements > 1 && x->element[1]->str ? x->element[1]->str : "");
    freeReplyObject(x);
}

static void enqueue(struct fixture *f, const char *member, const char *req, char status[16], char entry[64])
{
    enqueue_as(f, member, req, 0, status, entry);
}

/* lua/write.lua for request r on board b (no period), making no new record
 * when no_new; the reply's status, and its member and score when score is
 * not NULL (64 bytes each). */
static void write_as(struct fixture *f, const char *board, const struct rc_request *r, int64_t at, int no_new,
                     char status[16], char *member, char *score)
{
    struct rc_write_args a;
    struct rc_period none;
    struct rc_error err = {0, ""};
    memset(&none, 0, sizeof none);
    assert_int_equal(rc_write_args_build(rc_conf_board_find(f->conf, board), r, &none, at, 0, &a, &err), 0);
    if (no_new)
        rc_write_args_no_new_record(&a);
    redisReply *x = eval(f, rc_lua_write, a.nkeys, a.keys, a.nargv, a.argv);
    snprintf(status, 16, "%s", x->element[0]->str);
    if (score && x->elements == 8) {
        snprintf(score, 64, "%s", x->element[1]->str);
        snprintf(member, 64, "%s", x->element[6]->str);
    }
    freeReplyObject(x);
}

static void write_req(struct fixture *f, const char *board, const struct rc_request *r, int64_t at, char status[16])
{
    write_as(f, board, r, at, 0, status, NULL, NULL);
}

/* The consumer's step for stream entry `entry` (by id, however often it was
 * delivered): read it back into a request and apply it through write.lua. */
static void apply_entry(struct fixture *f, const char *entry, char status[16])
{
    redisReply *x = cmd(f, "XRANGE rc:{burst|}:in %s %s", entry, entry);
    assert_int_equal(x->type, REDIS_REPLY_ARRAY);
    assert_int_equal(x->elements, 1);
    const redisReply *kv = x->element[0]->element[1];
    const char *fs[32], *vs[32];
    size_t nf = kv->elements / 2;
    for (size_t i = 0; i < nf; i++) {
        fs[i] = kv->element[2 * i]->str;
        vs[i] = kv->element[2 * i + 1]->str;
    }
    struct rc_request r;
    int64_t at;
    const struct rc_board *b = rc_conf_board_find(f->conf, "burst");
    assert_int_equal(rc_queue_entry_parse(b, entry, fs, vs, nf, &r, &at), 0);
    write_req(f, "burst", &r, at, status);
    freeReplyObject(x);
}

static long long seq_of(struct fixture *f, const char *board)
{
    char key[RC_KEY_MAX];
    assert_int_equal(rc_keys_board(key, sizeof key, board, "", "seq", NULL), 0);
    redisReply *r = cmd(f, "GET %s", key);
    long long v = r->type == REDIS_REPLY_STRING ? atoll(r->str) : 0;
    freeReplyObject(r);
    return v;
}

/* Ends the record's window now (as its TTL would), and waits until it is gone. */
static void expire_now(struct fixture *f, const char *key)
{
    freeReplyObject(cmd(f, "PEXPIRE %s 1", key));
    for (int i = 0; i < 1000 && integer(f, "EXISTS %s", key) == 1; i++)
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    assert_int_equal(integer(f, "EXISTS %s", key), 0);
}

static void test_a_queued_write_with_req_keeps_one_record_from_enqueue_to_applied(void **state)
{
    struct fixture *f = *state;
    char st[16], entry[64], value[256], want[256];
    enqueue(f, "user:101", "r-1", st, entry);
    assert_string_equal(st, "ok");
    /* queued: the one record, in the queued state, for the window */
    assert_int_equal(records(f), 1);
    get_string(f, RECORD, value, sizeof value);
    snprintf(want, sizeof want, "#%s\nuser:101", entry);
    assert_string_equal(value, want);
    long long ttl = integer(f, "TTL %s", RECORD);
    assert_true(ttl > 0 && ttl <= 60);
    /* applied: the same record now says what the write did, and keeps its entry */
    apply_entry(f, entry, st);
    assert_string_equal(st, "ok");
    assert_int_equal(records(f), 1);
    get_string(f, RECORD, value, sizeof value);
    snprintf(want, sizeof want, "user:101\n\n1\n#%s", entry);
    assert_string_equal(value, want);
    ttl = integer(f, "TTL %s", RECORD);
    assert_true(ttl > 0 && ttl <= 60);
    /* small: with a short req and member the write's records take under
     * 128 bytes (MEMORY USAGE of each: key, value and its dict entry; 104
     * for this one on Redis 7.0) */
    assert_true(record_bytes(f) > 0 && record_bytes(f) < 128);
}

static void test_a_retried_req_inside_the_window_counts_once_queued_or_applied(void **state)
{
    struct fixture *f = *state;
    char st[16], entry[64], again[64];
    enqueue(f, "user:101", "r-1", st, entry);
    enqueue(f, "user:101", "r-1", st, again); /* retried while queued */
    assert_string_equal(st, "duplicate");
    assert_string_equal(again, entry);
    apply_entry(f, entry, st);
    assert_string_equal(st, "ok");
    enqueue(f, "user:101", "r-1", st, again); /* retried once applied */
    assert_string_equal(st, "duplicate");
    assert_string_equal(again, entry);
    /* the entry delivered again (applied, not acknowledged) changes nothing */
    apply_entry(f, entry, st);
    assert_string_equal(st, "duplicate");
    assert_int_equal(seq_of(f, "burst"), 1);
    assert_int_equal(integer(f, "XLEN %s", "rc:{burst|}:in"), 1);
    assert_int_equal(records(f), 1);
    /* without a req the consumer's "q ENTRY-ID" is the one record */
    enqueue(f, "user:102", "", st, entry);
    assert_int_equal(records(f), 1);
    apply_entry(f, entry, st);
    assert_string_equal(st, "ok");
    apply_entry(f, entry, st);
    assert_string_equal(st, "duplicate");
    assert_int_equal(seq_of(f, "burst"), 2);
    assert_int_equal(records(f), 2);
}

static void test_after_the_window_a_retried_req_is_a_new_write(void **state)
{
    struct fixture *f = *state;
    char st[16], entry[64], second[64];
    enqueue(f, "user:101", "r-1", st, entry);
    apply_entry(f, entry, st);
    expire_now(f, RECORD);
    enqueue(f, "user:101", "r-1", st, second);
    assert_string_equal(st, "ok");
    assert_string_not_equal(second, entry);
    apply_entry(f, second, st);
    assert_string_equal(st, "ok");
    assert_int_equal(seq_of(f, "burst"), 2);
    assert_int_equal(records(f), 1);

    /* a direct board likewise: once in the window, again after it */
    struct rc_request r = request("plain", "u", 5, "d-1");
    write_req(f, "plain", &r, T0, st);
    assert_string_equal(st, "ok");
    write_req(f, "plain", &r, T0, st);
    assert_string_equal(st, "duplicate");
    assert_int_equal(seq_of(f, "plain"), 1);
    expire_now(f, "rc:{plain|}:req:d-1");
    write_req(f, "plain", &r, T0, st);
    assert_string_equal(st, "ok");
    assert_int_equal(seq_of(f, "plain"), 2);
}

/* lua/admin.lua's reverse of req on the queued board: status and message. */
static void reverse(struct fixture *f, const char *req, char status[16], char message[160])
{
    struct rc_request r;
    struct rc_admin_args a;
    struct rc_period none;
    struct rc_error err = {0, ""};
    char nk[8];
    const char *words[3 + RC_ADMIN_NKEYS + RC_ADMIN_NARGV];
    size_t lens[3 + RC_ADMIN_NKEYS + RC_ADMIN_NARGV];
    memset(&r, 0, sizeof r);
    memset(&none, 0, sizeof none);
    r.op = RC_OP_REVERSE;
    snprintf(r.board, sizeof r.board, "burst");
    snprintf(r.req, sizeof r.req, "%s", req);
    assert_int_equal(rc_admin_args_build(rc_conf_board_find(f->conf, "burst"), &r, &none, T0, 0, 0, 0, &a, &err), 0);
    snprintf(nk, sizeof nk, "%d", RC_ADMIN_NKEYS);
    words[0] = "EVAL", lens[0] = 4;
    words[1] = rc_lua_admin, lens[1] = strlen(rc_lua_admin);
    words[2] = nk, lens[2] = strlen(nk);
    for (unsigned i = 0; i < RC_ADMIN_NKEYS + RC_ADMIN_NARGV; i++)
        words[3 + i] = a.words[i], lens[3 + i] = a.lens[i];
    redisReply *x = redisCommandArgv(f->rf.c, 3 + RC_ADMIN_NKEYS + RC_ADMIN_NARGV, words, lens);
    assert_non_null(x);
    if (x->type == REDIS_REPLY_ERROR)
        fail_msg("script error: %s", x->str);
    snprintf(status, 16, "%s", x->element[0]->str);
    snprintf(message, 160, "%s", x->element[5]->type == REDIS_REPLY_STRING ? x->element[5]->str : "");
    freeReplyObject(x);
}

static void test_a_queued_write_is_reversed_by_its_req_once_applied_not_before(void **state)
{
    struct fixture *f = *state;
    char st[16], entry[64], msg[160];
    enqueue(f, "user:101", "r-1", st, entry);
    reverse(f, "r-1", st, msg);
    assert_string_equal(st, "bad_request");
    assert_string_equal(msg, "that write is queued and not applied yet: nothing to reverse");
    apply_entry(f, entry, st);
    reverse(f, "r-1", st, msg); /* the applied record, "\n#ENTRY-ID" after its points */
    assert_string_equal(st, "ok");
    assert_int_equal(seq_of(f, "burst"), 2);
}

/* Every key of the server with a digest of its value and its expiry, one
 * string: equal before and after means the call wrote nothing. */
static void snapshot(struct fixture *f, char *out, size_t cap)
{
    static const char lua[] =
        "local ks = redis.call('KEYS', '*') table.sort(ks) local o = {} "
        "for _, k in ipairs(ks) do o[#o + 1] = k .. '=' .. redis.sha1hex(redis.call('DUMP', k)) .. "
        "'/' .. redis.call('PEXPIRETIME', k) end return table.concat(o, ' ')";
    redisReply *r = cmd(f, "EVAL %s 0", lua);
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_true(r->len < cap);
    snprintf(out, cap, "%s", r->str);
    freeReplyObject(r);
}

/* A writer at its idempotency cap (idempotency_max_per_key) sends its
 * writes with no new record: a retry of a req it made is answered as ever,
 * a new req is refused "no_record" and nothing is written. */
static void test_with_no_new_record_a_req_with_a_record_is_a_duplicate_and_one_without_writes_nothing(void **state)
{
    struct fixture *f = *state;
    char st[16], member[64], score[64], before[4096], after[4096], entry[64], again[64];
    /* a direct board: the applied write's retry answers its member and points */
    struct rc_request r = request("plain", "u", 5, "d-1");
    write_req(f, "plain", &r, T0, st);
    assert_string_equal(st, "ok");
    snapshot(f, before, sizeof before);
    struct rc_request retry = request("plain", "u", 7, "d-1");
    write_as(f, "plain", &retry, T0, 1, st, member, score);
    assert_string_equal(st, "duplicate");
    assert_string_equal(member, "u");
    assert_string_equal(score, "5");
    snapshot(f, after, sizeof after);
    assert_string_equal(after, before);
    /* a new req: refused, no record, no points, seq and log as they were */
    struct rc_request fresh_req = request("plain", "v", 3, "d-2");
    write_as(f, "plain", &fresh_req, T0, 1, st, member, score);
    assert_string_equal(st, "no_record");
    snapshot(f, after, sizeof after);
    assert_string_equal(after, before);
    assert_int_equal(integer(f, "EXISTS %s", "rc:{plain|}:req:d-2"), 0);
    assert_int_equal(seq_of(f, "plain"), 1);
    assert_int_equal(integer(f, "LLEN %s", "rc:{plain|}:log"), 1);

    /* a queued board: the retry answers its entry, a new req (or none) queues nothing */
    enqueue(f, "user:101", "r-1", st, entry);
    assert_string_equal(st, "ok");
    snapshot(f, before, sizeof before);
    enqueue_as(f, "user:101", "r-1", 1, st, again);
    assert_string_equal(st, "duplicate");
    assert_string_equal(again, entry);
    enqueue_as(f, "user:102", "r-2", 1, st, again);
    assert_string_equal(st, "no_record");
    enqueue_as(f, "user:102", "", 1, st, again); /* the consumer's "q ID" would be a new record */
    assert_string_equal(st, "no_record");
    snapshot(f, after, sizeof after);
    assert_string_equal(after, before);
    assert_int_equal(integer(f, "XLEN %s", "rc:{burst|}:in"), 1);
    /* applied, the retry is still a duplicate with no new record */
    apply_entry(f, entry, st);
    assert_string_equal(st, "ok");
    enqueue_as(f, "user:101", "r-1", 1, st, again);
    assert_string_equal(st, "duplicate");
    assert_string_equal(again, entry);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_queued_write_with_req_keeps_one_record_from_enqueue_to_applied, fresh),
        cmocka_unit_test_setup(test_a_retried_req_inside_the_window_counts_once_queued_or_applied, fresh),
        cmocka_unit_test_setup(test_after_the_window_a_retried_req_is_a_new_write, fresh),
        cmocka_unit_test_setup(test_a_queued_write_is_reversed_by_its_req_once_applied_not_before, fresh),
        cmocka_unit_test_setup(
            test_with_no_new_record_a_req_with_a_record_is_a_duplicate_and_one_without_writes_nothing, fresh),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
