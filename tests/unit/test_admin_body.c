/* test_admin_body.c - rc_proto_decode_admin_body, the REST admin body
 * (POST /api/v1/boards/{b}/reverse and /reset): no body means {}, a body
 * passes the strict JSON gate with the WebSocket's messages, reverse needs a
 * valid req, period must be a short string, and each refusal has the exact
 * code and message the REST API has always answered with.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rc_proto.h"

#define BAD RC_E_BAD_REQUEST
#define REQ_MSG "req must be the request id (1..64 printable characters) of the write to reverse"
#define S16 "abcdefghijklmnop"
#define S64 S16 S16 S16 S16

static int decode(enum rc_op op, const char *board, const char *text, struct rc_request *r, struct rc_error *err)
{
    err->code = 0;
    err->msg[0] = '\0';
    return rc_proto_decode_admin_body(op, board, text, strlen(text), r, err);
}

static void no_body_is_an_empty_object(void **state)
{
    struct rc_request r;
    struct rc_error err;
    (void)state;
    assert_int_equal(decode(RC_OP_RESET, "demo", "", &r, &err), 0);
    assert_int_equal(r.op, RC_OP_RESET);
    assert_string_equal(r.board, "demo");
    assert_string_equal(r.req, "");
    assert_string_equal(r.period, "");
    assert_null(r.id_json);
    /* but reverse without a body has no req */
    assert_int_equal(decode(RC_OP_REVERSE, "demo", "", &r, &err), BAD);
    assert_string_equal(err.msg, REQ_MSG);
}

static void reverse_takes_req_and_period(void **state)
{
    struct rc_request r;
    struct rc_error err;
    (void)state;
    assert_int_equal(decode(RC_OP_REVERSE, "match:7", "{\"req\":\"r-1\",\"period\":\"previous\"}", &r, &err), 0);
    assert_int_equal(r.op, RC_OP_REVERSE);
    assert_string_equal(r.board, "match:7");
    assert_string_equal(r.req, "r-1");
    assert_string_equal(r.period, "previous");
    assert_int_equal(decode(RC_OP_REVERSE, "demo", "{\"req\":\"" S64 "\"}", &r, &err), 0);
    assert_string_equal(r.req, S64);
}

static void reset_ignores_req_of_any_type_and_unknown_fields(void **state)
{
    struct rc_request r;
    struct rc_error err;
    (void)state;
    assert_int_equal(decode(RC_OP_RESET, "demo", "{\"req\":5,\"x\":[1]}", &r, &err), 0);
    assert_string_equal(r.req, "");
    assert_int_equal(decode(RC_OP_RESET, "demo", "{\"period\":\"current\"}", &r, &err), 0);
    assert_string_equal(r.period, "current");
}

/* Each refusal: its code and its exact message. */
static void refusals_name_their_fault(void **state)
{
    static const struct {
        enum rc_op op;
        const char *body;
        int code;
        const char *msg;
    } rows[] = {
        {RC_OP_REVERSE, "{\"req\":5}", BAD, REQ_MSG},
        {RC_OP_REVERSE, "{\"req\":\"\"}", BAD, REQ_MSG},
        {RC_OP_REVERSE, "{\"req\":\"" S64 "x\"}", BAD, REQ_MSG},
        {RC_OP_REVERSE, "{\"req\":\"a\\u0001b\"}", BAD, REQ_MSG},
        {RC_OP_REVERSE, "{}", BAD, REQ_MSG},
        {RC_OP_REVERSE, "{\"req\":\"r\",\"period\":5}", BAD, "period must be a string"},
        {RC_OP_REVERSE, "{\"req\":\"r\",\"period\":\"" S16 S16 "x\"}", BAD, "period must be a string"},
        {RC_OP_RESET, "{\"period\":null}", BAD, "period must be a string"},
        /* the strict gate, with the WebSocket's messages */
        {RC_OP_RESET, "[1]", BAD, "message must be a JSON object"},
        {RC_OP_RESET, "\"x\"", BAD, "message must be a JSON object"},
        {RC_OP_REVERSE, "{\"req\":\"r-1\",", BAD, "invalid JSON"},
        {RC_OP_REVERSE, "{\"req\":\"r-1\",\"req\":\"r-2\"}", BAD, "duplicate field req"},
        {RC_OP_RESET, "{\"period\":01}", BAD, NULL},
    };
    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct rc_request r;
        struct rc_error err;
        int rc = decode(rows[i].op, "demo", rows[i].body, &r, &err);
        if (rc != rows[i].code || (rows[i].msg && strcmp(err.msg, rows[i].msg) != 0))
            fail_msg("row %zu (%s): got %d '%s'", i, rows[i].body, rc, err.msg);
        assert_int_equal(err.code, rows[i].code);
    }
}

/* The period fits: RC_PERIOD_SEL_MAX bytes exactly are taken whole. */
static void period_at_its_limit_is_taken_whole(void **state)
{
    struct rc_request r;
    struct rc_error err;
    (void)state;
    assert_int_equal(RC_PERIOD_SEL_MAX, 32);
    assert_int_equal(decode(RC_OP_RESET, "demo", "{\"period\":\"" S16 S16 "\"}", &r, &err), 0);
    assert_string_equal(r.period, S16 S16);
}

/* A bad board or an op that has no body is the caller's error, not a crash. */
static void refuses_a_bad_board_and_a_non_admin_op(void **state)
{
    struct rc_request r;
    struct rc_error err;
    (void)state;
    assert_int_equal(decode(RC_OP_RESET, "bad name", "{}", &r, &err), BAD);
    assert_string_equal(err.msg, "board must be 1..64 characters of [A-Za-z0-9_.:-]");
    assert_int_equal(decode(RC_OP_RESET, NULL, "{}", &r, &err), BAD);
    assert_int_equal(decode(RC_OP_INCR, "demo", "{}", &r, &err), RC_E_INTERNAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_body_is_an_empty_object),
        cmocka_unit_test(reverse_takes_req_and_period),
        cmocka_unit_test(reset_ignores_req_of_any_type_and_unknown_fields),
        cmocka_unit_test(refusals_name_their_fault),
        cmocka_unit_test(period_at_its_limit_is_taken_whole),
        cmocka_unit_test(refuses_a_bad_board_and_a_non_admin_op),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
