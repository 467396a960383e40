/* test_queue.c - a queued write becomes the right lua/enqueue.lua call, its
 * entry reads back into the same request (with a req that makes redelivery
 * harmless), and the script's answers decode; no Redis involved. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_conf.h"
#include "rc_queue.h"

static const char *text =
    "[board burst]\n"
    "tiebreak = none\n"
    "ops = incr, set\n"
    "write_mode = queued\n"
    "queue_max = 50\n"
    "points_max = 1000\n"
    "points_min = -1000\n"
    "[board clears]\n"
    "fields = clears desc 16, revives asc 8\n"
    "tiebreak = none\n"
    "write_mode = queued\n";

static struct rc_conf *conf;

static int load(void **state)
{
    (void)state;
    struct rc_error err;
    conf = malloc(sizeof *conf);
    return rc_conf_parse("t.conf", text, strlen(text), conf, &err);
}

static int unload(void **state)
{
    (void)state;
    free(conf);
    return 0;
}

static void decode(const char *json, struct rc_request *r)
{
    struct rc_error err;
    if (rc_proto_decode(json, strlen(json), r, &err) != 0)
        fail_msg("decode %s: %s", json, err.msg);
}

/* The entry's field/value pairs from a built call (ARGV after the 6 fixed words). */
static size_t entry_of(const struct rc_queue_enqueue *a, const char **f, const char **v)
{
    size_t n = 0;
    for (unsigned i = 6; i + 1 < a->nargv; i += 2, n++) {
        f[n] = a->argv[i];
        v[n] = a->argv[i + 1];
    }
    return n;
}

static void test_incr_builds_keys_in_the_board_tag_and_the_entry(void **state)
{
    (void)state;
    struct rc_request r;
    struct rc_queue_enqueue a;
    struct rc_error err;
    decode("{\"op\":\"incr\",\"board\":\"burst\",\"member\":\"ann\",\"delta\":7,\"req\":\"r-1\"}", &r);
    assert_int_equal(rc_queue_enqueue_build(rc_conf_board_find(conf, "burst"), &r, 1234, &a, &err), 0);
    assert_int_equal(a.nkeys, 3);
    assert_string_equal(a.keys[0], "rc:{burst|}:in");
    assert_string_equal(a.keys[1], "rc:{burst|}:req:r-1");
    assert_string_equal(a.keys[2], "rc:{burst|}:blocked");
    assert_string_equal(a.argv[0], "50");       /* queue_max */
    assert_string_equal(a.argv[1], "r-1");
    assert_string_equal(a.argv[2], "600");      /* idempotency window, s */
    assert_string_equal(a.argv[3], RC_QUEUE_GROUP);
    assert_string_equal(a.argv[4], "ann");
    assert_string_equal(a.argv[5], "0");        /* records may be made */
    rc_queue_enqueue_no_new_record(&a);         /* the writer at its idempotency cap */
    assert_string_equal(a.argv[5], "1");

    const char *f[32], *v[32];
    size_t n = entry_of(&a, f, v);
    struct rc_request back;
    int64_t at = 0;
    assert_int_equal(rc_queue_entry_parse(rc_conf_board_find(conf, "burst"), "99-3", f, v, n, &back, &at), 0);
    assert_int_equal(back.op, RC_OP_INCR);
    assert_string_equal(back.member, "ann");
    assert_int_equal(back.value, 7);
    assert_string_equal(back.req, "r-1");
    assert_string_equal(back.board, "burst");
    assert_int_equal(at, 1234);
    rc_proto_decode_free(&r);
}

static void test_an_entry_without_req_is_written_with_one_from_its_id(void **state)
{
    (void)state;
    struct rc_request r, back;
    struct rc_queue_enqueue a;
    struct rc_error err;
    int64_t at;
    decode("{\"op\":\"set\",\"board\":\"burst\",\"member\":\"bo\",\"value\":-5}", &r);
    assert_int_equal(rc_queue_enqueue_build(rc_conf_board_find(conf, "burst"), &r, 1, &a, &err), 0);
    assert_string_equal(a.keys[1], "rc:{burst|}:req");
    assert_string_equal(a.argv[1], "");
    const char *f[32], *v[32];
    size_t n = entry_of(&a, f, v);
    assert_int_equal(rc_queue_entry_parse(rc_conf_board_find(conf, "burst"), "1795689245344-12", f, v, n, &back,
                                          &at), 0);
    assert_int_equal(back.op, RC_OP_SET);
    assert_int_equal(back.value, -5);
    assert_string_equal(back.req, "q 1795689245344-12"); /* a space: never a client's req */
    rc_proto_decode_free(&r);
}

static void test_submit_keeps_its_fields(void **state)
{
    (void)state;
    struct rc_request r, back;
    struct rc_queue_enqueue a;
    struct rc_error err;
    int64_t at;
    decode("{\"op\":\"submit\",\"board\":\"clears\",\"member\":\"cy\",\"fields\":{\"revives\":3,\"clears\":9}}", &r);
    const struct rc_board *b = rc_conf_board_find(conf, "clears");
    assert_int_equal(rc_queue_enqueue_build(b, &r, 5, &a, &err), 0);
    const char *f[32], *v[32];
    size_t n = entry_of(&a, f, v);
    assert_int_equal(rc_queue_entry_parse(b, "5-0", f, v, n, &back, &at), 0);
    assert_int_equal(back.op, RC_OP_SUBMIT);
    assert_int_equal(back.nfields, 2);
    for (unsigned i = 0; i < 2; i++) {
        int64_t want = strcmp(back.fields[i].name, "clears") == 0 ? 9 : 3;
        assert_int_equal(back.fields[i].value, want);
    }
    rc_proto_decode_free(&r);
}

static void test_a_write_refused_direct_is_refused_before_queueing(void **state)
{
    (void)state;
    struct rc_request r;
    struct rc_queue_enqueue a;
    struct rc_error err;
    const struct rc_board *b = rc_conf_board_find(conf, "burst");
    decode("{\"op\":\"set\",\"board\":\"burst\",\"member\":\"bo\",\"value\":5000}", &r);
    assert_int_equal(rc_queue_enqueue_build(b, &r, 1, &a, &err), RC_E_OUT_OF_RANGE);
    rc_proto_decode_free(&r);
    decode("{\"op\":\"best\",\"board\":\"burst\",\"member\":\"bo\",\"value\":5}", &r);
    assert_int_equal(rc_queue_enqueue_build(b, &r, 1, &a, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "not allowed"));
    rc_proto_decode_free(&r);
}

static void test_foreign_entries_are_refused(void **state)
{
    (void)state;
    const struct rc_board *b = rc_conf_board_find(conf, "burst");
    struct rc_request back;
    int64_t at;
    const char *f1[] = {"op", "m"}, *v1[] = {"incr", "x"}; /* no at, no v */
    assert_int_equal(rc_queue_entry_parse(b, "1-0", f1, v1, 2, &back, &at), RC_E_BAD_REQUEST);
    const char *f2[] = {"op", "m", "at", "v", "zz"}, *v2[] = {"incr", "x", "1", "2", "3"};
    assert_int_equal(rc_queue_entry_parse(b, "1-0", f2, v2, 5, &back, &at), RC_E_BAD_REQUEST);
    const char *f3[] = {"op", "m", "at", "v"}, *v3[] = {"drop", "x", "1", "2"};
    assert_int_equal(rc_queue_entry_parse(b, "1-0", f3, v3, 4, &back, &at), RC_E_BAD_REQUEST);
    const char *f4[] = {"op", "m", "at", "v"}, *v4[] = {"incr", "a b", "1", "2"};
    assert_int_equal(rc_queue_entry_parse(b, "1-0", f4, v4, 4, &back, &at), RC_E_BAD_REQUEST);
    const char *f5[] = {"op", "m", "at", "v"}, *v5[] = {"incr", "x", "1", "2.5"};
    assert_int_equal(rc_queue_entry_parse(b, "1-0", f5, v5, 4, &back, &at), RC_E_BAD_REQUEST);
}

static void test_enqueue_answers_decode(void **state)
{
    (void)state;
    struct rc_queue_result res;
    struct rc_reply_item ok[] = {{0, 0, "ok"}, {0, 0, "17-0"}, {1, 3, NULL}};
    assert_int_equal(rc_queue_result_parse(ok, 3, &res), 0);
    assert_int_equal(res.status, RC_QUEUE_OK);
    assert_string_equal(res.entry, "17-0");
    assert_int_equal(res.length, 3);
    struct rc_reply_item dup[] = {{0, 0, "duplicate"}, {0, 0, "16-2"}, {0, 0, "ann"}};
    assert_int_equal(rc_queue_result_parse(dup, 3, &res), 0);
    assert_int_equal(res.status, RC_QUEUE_DUPLICATE);
    assert_string_equal(res.entry, "16-2");
    assert_string_equal(res.member, "ann");
    struct rc_reply_item full[] = {{0, 0, "full"}, {1, 50, NULL}};
    assert_int_equal(rc_queue_result_parse(full, 2, &res), 0);
    assert_int_equal(res.status, RC_QUEUE_FULL);
    assert_int_equal(res.length, 50);
    struct rc_reply_item forb[] = {{0, 0, "forbidden"}};
    assert_int_equal(rc_queue_result_parse(forb, 1, &res), 0);
    assert_int_equal(res.status, RC_QUEUE_FORBIDDEN);
    struct rc_reply_item none[] = {{0, 0, "no_record"}}; /* at the cap, a req without a record */
    assert_int_equal(rc_queue_result_parse(none, 1, &res), 0);
    assert_int_equal(res.status, RC_QUEUE_NO_RECORD);
    struct rc_reply_item odd[] = {{0, 0, "what"}};
    assert_int_equal(rc_queue_result_parse(odd, 1, &res), RC_E_INTERNAL);
    struct rc_reply_item short_ok[] = {{0, 0, "ok"}};
    assert_int_equal(rc_queue_result_parse(short_ok, 1, &res), RC_E_INTERNAL);
}

static void test_stream_id_gives_its_milliseconds(void **state)
{
    (void)state;
    int64_t ms;
    assert_int_equal(rc_queue_id_ms("1795689245344-12", &ms), 0);
    assert_int_equal(ms, 1795689245344LL);
    assert_int_equal(rc_queue_id_ms("7", &ms), 0);
    assert_int_equal(ms, 7);
    assert_int_equal(rc_queue_id_ms("x-1", &ms), RC_E_BAD_REQUEST);
    assert_int_equal(rc_queue_id_ms("99999999999999999999999-0", &ms), RC_E_BAD_REQUEST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_incr_builds_keys_in_the_board_tag_and_the_entry),
        cmocka_unit_test(test_an_entry_without_req_is_written_with_one_from_its_id),
        cmocka_unit_test(test_submit_keeps_its_fields),
        cmocka_unit_test(test_a_write_refused_direct_is_refused_before_queueing),
        cmocka_unit_test(test_foreign_entries_are_refused),
        cmocka_unit_test(test_enqueue_answers_decode),
        cmocka_unit_test(test_stream_id_gives_its_milliseconds),
    };
    return cmocka_run_group_tests(tests, load, unload);
}
