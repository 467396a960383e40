/* test_proto_decode.c - rc_proto_decode and rc_proto_decode_write_body
 * against PROTOCOL.md: every malformed class yields its exact code and a
 * message naming the field, every documented op and view decodes, and no
 * input crashes or leaks (run under -fsanitize=address,undefined too).
 *
 * Message texts in the tables are written with ' for " to stay readable;
 * quote() turns them into JSON before decoding.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "rc_json_gate.h"
#include "rc_proto.h"

#define S16 "abcdefghijklmnop"
#define S32 S16 S16
#define S64 S32 S32
#define S128 S64 S64
#define D16 "1234567890123456"
#define D64 D16 D16 D16 D16

#define BAD RC_E_BAD_REQUEST

#define SUB(view) "{'op':'subscribe','board':'b','view':" view "}"
#define SUBX(view, extra) "{'op':'subscribe','board':'b','view':" view "," extra "}"
#define INCR(delta) "{'op':'incr','board':'b','member':'m','delta':" delta "}"
#define INCRX(extra) "{'op':'incr','board':'b','member':'m','delta':1," extra "}"
#define SUBMIT(fields) "{'op':'submit','board':'b','member':'m','fields':" fields "}"

/* Copies text[0..len) to buf replacing ' with ", and NUL-terminates. */
static void quote(const char *text, size_t len, char *buf)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = text[i] == '\'' ? '"' : text[i];
    buf[len] = '\0';
}

/* Decodes a ' quoted text; the caller frees *r. */
static int decode_q(const char *text, struct rc_request *r, struct rc_error *err)
{
    size_t len = strlen(text);
    char *buf = malloc(len + 1);
    int rc;

    assert_non_null(buf);
    quote(text, len, buf);
    rc = rc_proto_decode(buf, len, r, err);
    free(buf);
    return rc;
}

/* Decodes text that must be accepted; the caller frees *r. */
static void decode_ok(const char *text, struct rc_request *r)
{
    struct rc_error err = {0, ""};
    int rc = decode_q(text, r, &err);
    if (rc != 0)
        fail_msg("'%s' refused: %d %s", text, rc, err.msg);
}

/* ---- the table of malformed messages ----------------------------------- */

struct bad_case {
    const char *name;
    const char *text; /* ' stands for " */
    size_t len;       /* 0: strlen(text); else exact (embedded NUL) */
    int code;
    const char *msg;  /* substring of err.msg */
    const char *id;   /* expected id_json (' for "), NULL: none */
};

static const struct bad_case BAD_CASES[] = {
    /* gates: JSON and UTF-8 */
    {"rejects_empty_message_as_invalid_json", "", 0, BAD, "invalid JSON", NULL},
    {"rejects_whitespace_only_message", " \n\t", 0, BAD, "invalid JSON", NULL},
    {"rejects_unclosed_object", "{'op':'ping'", 0, BAD, "invalid JSON", NULL},
    {"rejects_trailing_garbage", "{'op':'ping'} x", 0, BAD, "invalid JSON", NULL},
    {"rejects_second_object_after_first", "{'op':'ping'}{}", 0, BAD, "invalid JSON", NULL},
    {"rejects_nul_byte_after_object", "{'op':'ping'}\0", 14, BAD, "invalid JSON", NULL},
    {"rejects_nul_byte_inside_string", "{'op':'pi\0ng'}", 14, BAD, "invalid JSON", NULL},
    {"rejects_nan_literal", INCR("NaN"), 0, BAD, "invalid JSON", NULL},
    {"rejects_infinity_literal", INCR("Infinity"), 0, BAD, "invalid JSON", NULL},
    {"rejects_negative_infinity_literal", INCR("-Infinity"), 0, BAD, "invalid JSON", NULL},
    {"rejects_raw_control_char_in_string", "{'op':'pi\x01ng'}", 0, BAD, "invalid JSON", NULL},
    {"rejects_raw_newline_in_string", "{'op':'ping','x':'a\nb'}", 0, BAD, "invalid JSON", NULL},
    {"rejects_control_char_between_tokens", "{\x01'op':'ping'}", 0, BAD, "invalid JSON", NULL},
    {"rejects_unknown_escape", "{'op':'ping','x':'\\q'}", 0, BAD, "invalid JSON", NULL},
    {"rejects_non_hex_unicode_escape", "{'op':'ping','x':'\\uzzzz'}", 0, BAD, "invalid JSON",
     NULL},
    {"rejects_short_unicode_escape", "{'op':'ping','x':'\\u12'}", 0, BAD, "invalid JSON", NULL},
    {"rejects_lone_surrogate_escape", "{'op':'ping','x':'\\ud800'}", 0, BAD, "invalid JSON",
     NULL},
    {"rejects_unicode_nul_escape_that_would_cut_a_name",
     "{'op':'incr','board':'b','member':'m\\u0000x','delta':1}", 0, BAD, "\\u0000", NULL},
    {"rejects_utf8_bad_continuation", "{'op':'ping','x':'\xc3\x28'}", 0, BAD,
     "message is not valid UTF-8", NULL},
    {"rejects_utf8_overlong_two_bytes", "{'op':'ping','x':'\xc0\xaf'}", 0, BAD,
     "not valid UTF-8", NULL},
    {"rejects_utf8_overlong_three_bytes", "{'op':'ping','x':'\xe0\x80\xaf'}", 0, BAD,
     "not valid UTF-8", NULL},
    {"rejects_utf8_encoded_surrogate", "{'op':'ping','x':'\xed\xa0\x80'}", 0, BAD,
     "not valid UTF-8", NULL},
    {"rejects_utf8_above_u10ffff", "{'op':'ping','x':'\xf4\x90\x80\x80'}", 0, BAD,
     "not valid UTF-8", NULL},
    {"rejects_utf8_truncated_sequence", "{'op':'ping'}\xe2\x82", 0, BAD, "not valid UTF-8",
     NULL},
    {"rejects_utf8_invalid_lead_byte", "{'op':'ping','x':'\xff'}", 0, BAD, "not valid UTF-8",
     NULL},
    /* the strict gate: what RFC 8259 forbids that cJSON lets through, and
     * what we refuse by policy (duplicate keys, \u0000), anywhere in the
     * message, in fields we would otherwise ignore too */
    {"rejects_number_with_leading_zero", INCR("01"), 0, BAD, "leading zero", NULL},
    {"rejects_negative_number_with_leading_zero", INCR("-01"), 0, BAD, "leading zero", NULL},
    {"rejects_leading_zero_in_an_ignored_field", "{'op':'ping','x':007}", 0, BAD, "leading zero",
     NULL},
    {"rejects_leading_zero_in_an_id_without_echo", "{'id':01,'op':'ping'}", 0, BAD,
     "leading zero", NULL},
    {"rejects_fraction_dot_without_digits", "{'op':'ping','x':1.}", 0, BAD, "malformed number",
     NULL},
    {"rejects_fraction_without_integer_digits", "{'op':'ping','x':-.5}", 0, BAD,
     "malformed number", NULL},
    {"rejects_exponent_right_after_fraction_dot", "{'op':'ping','x':1.e3}", 0, BAD,
     "malformed number", NULL},
    {"rejects_utf8_bom_before_the_object", "\xef\xbb\xbf{'op':'ping'}", 0, BAD,
     "byte order mark", NULL},
    {"rejects_utf8_bom_after_leading_whitespace", " \xef\xbb\xbf{'op':'ping'}", 0, BAD,
     "byte order mark", NULL},
    {"rejects_non_ascii_byte_between_tokens", "{'op':'ping'\xc3\xa9}", 0, BAD, "invalid JSON",
     NULL},
    {"rejects_delta_that_underflows_to_zero", INCR("1e-400"), 0, BAD, "underflows", NULL},
    {"rejects_negative_delta_that_underflows_to_zero", INCR("-1e-400"), 0, BAD, "underflows",
     NULL},
    {"rejects_underflowing_number_in_an_ignored_field", "{'op':'ping','x':[2e-324]}", 0, BAD,
     "underflows", NULL},
    {"rejects_overflowing_number_in_an_ignored_field", "{'op':'ping','x':1.8e308}", 0, BAD,
     "overflows", NULL},
    {"rejects_duplicate_ignored_field", "{'op':'ping','x':1,'x':2}", 0, BAD, "duplicate field x",
     NULL},
    {"rejects_duplicate_key_in_a_nested_ignored_object", "{'op':'ping','x':[1,{'a':1,'a':1}]}", 0,
     BAD, "duplicate field x[1].a", NULL},
    {"rejects_duplicate_key_spelled_with_an_escape", "{'op':'ping','\\u006fp':'ping'}", 0, BAD,
     "duplicate field op", NULL},
    {"rejects_duplicate_block_flag",
     "{'op':'remove','board':'b','member':'m','block':false,'block':true}", 0, BAD,
     "duplicate field block", NULL},
    {"rejects_duplicate_view_kind_key", SUB("{'feed':true,'feed':true}"), 0, BAD,
     "duplicate field view.feed", NULL},
    {"rejects_raw_tab_inside_a_string", "{'op':'ping','x':'a\tb'}", 0, BAD,
     "raw control character U+0009", NULL},
    {"rejects_raw_nul_inside_a_string_naming_it", "{'op':'pi\0ng'}", 14, BAD,
     "raw control character U+0000", NULL},
    {"rejects_raw_unit_separator_inside_a_key", "{'op':'ping','\x1f':1}", 0, BAD,
     "raw control character U+001F", NULL},
    {"rejects_unicode_nul_escape_in_an_ignored_field", "{'op':'ping','x':'\\u0000'}", 0, BAD,
     "\\u0000", NULL},
    {"rejects_unicode_nul_escape_in_a_key", "{'op':'ping','a\\u0000':1}", 0, BAD, "\\u0000",
     NULL},

    {"rejects_array_message", "[1,2]", 0, BAD, "message must be a JSON object", NULL},
    {"rejects_string_message", "'ping'", 0, BAD, "message must be a JSON object", NULL},
    {"rejects_number_message", "42", 0, BAD, "message must be a JSON object", NULL},
    {"rejects_null_message", "null", 0, BAD, "message must be a JSON object", NULL},

    /* id */
    {"rejects_object_id_without_echo", "{'id':{'a':1},'op':'ping'}", 0, BAD,
     "id must be a JSON scalar", NULL},
    {"rejects_array_id_without_echo", "{'id':[1],'op':'ping'}", 0, BAD,
     "id must be a JSON scalar", NULL},
    {"rejects_infinite_id_without_echo", "{'id':1e400,'op':'ping'}", 0, BAD,
     "overflows", NULL},
    {"rejects_duplicate_id_without_echo", "{'id':1,'id':2,'op':'ping'}", 0, BAD,
     "duplicate field id", NULL},

    /* op */
    {"rejects_missing_op_echoing_id", "{'id':7}", 0, BAD, "missing field op", "7"},
    {"rejects_numeric_op_echoing_id", "{'id':'a','op':5}", 0, BAD, "op must be a string",
     "'a'"},
    {"rejects_null_op", "{'op':null}", 0, BAD, "op must be a string", NULL},
    {"rejects_unknown_op_echoing_id", "{'id':true,'op':'xyz'}", 0, BAD, "unknown op 'xyz'",
     "true"},
    {"rejects_op_in_wrong_case", "{'id':null,'op':'PING'}", 0, BAD, "unknown op 'PING'",
     "null"},
    {"rejects_empty_op", "{'op':''}", 0, BAD, "unknown op ''", NULL},
    {"rejects_duplicate_op", "{'op':'ping','op':'incr'}", 0, BAD, "duplicate field op", NULL},

    /* subscribe: board and view */
    {"rejects_subscribe_without_board_echoing_id",
     "{'id':1,'op':'subscribe','view':{'top':10}}", 0, BAD, "missing field board", "1"},
    {"rejects_subscribe_without_view", "{'op':'subscribe','board':'b'}", 0, BAD,
     "missing field view", NULL},
    {"rejects_view_that_is_not_an_object", SUB("10"), 0, BAD, "view must be an object", NULL},
    {"rejects_numeric_board", "{'op':'subscribe','board':5,'view':{'top':1}}", 0, BAD,
     "board must be a string", NULL},
    {"rejects_empty_board", "{'op':'subscribe','board':'','view':{'top':1}}", 0, BAD,
     "board must be 1..64 characters of [A-Za-z0-9_.:-]", NULL},
    {"rejects_oversize_board", "{'op':'subscribe','board':'" S64 "x','view':{'top':1}}", 0, BAD,
     "board must be 1..64 characters", NULL},
    {"rejects_board_with_space", "{'op':'subscribe','board':'a b','view':{'top':1}}", 0, BAD,
     "board must be 1..64", NULL},
    {"rejects_board_with_slash", "{'op':'subscribe','board':'a/b','view':{'top':1}}", 0, BAD,
     "board must be 1..64", NULL},
    {"rejects_board_with_at_sign", "{'op':'subscribe','board':'a@b','view':{'top':1}}", 0, BAD,
     "board must be 1..64", NULL},
    {"rejects_board_with_non_ascii_letter",
     "{'op':'subscribe','board':'caf\xc3\xa9','view':{'top':1}}", 0, BAD, "board must be 1..64",
     NULL},
    {"rejects_empty_view", SUB("{}"), 0, BAD,
     "view must be one of top, offset/limit, around, feed, members, team", NULL},
    {"rejects_view_with_only_unknown_keys", SUB("{'bottom':5}"), 0, BAD, "view must be one of",
     NULL},
    {"rejects_view_mixing_top_and_feed", SUB("{'top':5,'feed':true}"), 0, BAD,
     "view must be one of", NULL},
    {"rejects_view_mixing_top_and_limit", SUB("{'top':5,'limit':5}"), 0, BAD,
     "view must be one of", NULL},
    {"rejects_view_mixing_around_and_offset", SUB("{'around':'m','offset':5}"), 0, BAD,
     "view must be one of", NULL},
    {"rejects_top_zero", SUB("{'top':0}"), 0, BAD, "view.top must be 1..1000", NULL},
    {"rejects_top_over_max_rows", SUB("{'top':1001}"), 0, BAD, "view.top must be 1..1000",
     NULL},
    {"rejects_top_as_string", SUB("{'top':'5'}"), 0, BAD, "view.top must be an integer", NULL},
    {"rejects_fractional_top", SUB("{'top':1.5}"), 0, BAD, "view.top must be an integer", NULL},
    {"rejects_duplicate_view_key", SUB("{'top':5,'top':6}"), 0, BAD, "duplicate field view.top",
     NULL},
    {"rejects_negative_offset", SUB("{'offset':-1,'limit':5}"), 0, BAD,
     "view.offset must be 0..2147483647", NULL},
    {"rejects_offset_beyond_int32", SUB("{'offset':2147483648,'limit':5}"), 0, BAD,
     "view.offset must be 0..2147483647", NULL},
    {"rejects_zero_limit", SUB("{'offset':0,'limit':0}"), 0, BAD, "view.limit must be 1..1000",
     NULL},
    {"rejects_limit_over_max_rows", SUB("{'offset':0,'limit':1001}"), 0, BAD,
     "view.limit must be 1..1000", NULL},
    {"rejects_page_without_limit", SUB("{'offset':5}"), 0, BAD, "missing field view.limit",
     NULL},
    {"rejects_page_without_offset", SUB("{'limit':5}"), 0, BAD, "missing field view.offset",
     NULL},
    {"rejects_around_empty_member", SUB("{'around':''}"), 0, BAD,
     "view.around must be 1..128 characters of [A-Za-z0-9_.:@-]", NULL},
    {"rejects_around_numeric_member", SUB("{'around':101}"), 0, BAD,
     "view.around must be a string", NULL},
    {"rejects_around_without_member", SUB("{'radius':3}"), 0, BAD, "missing field view.around",
     NULL},
    {"rejects_radius_over_max", SUB("{'around':'m','radius':51}"), 0, BAD,
     "view.radius must be 0..50", NULL},
    {"rejects_negative_radius", SUB("{'around':'m','radius':-1}"), 0, BAD,
     "view.radius must be 0..50", NULL},
    {"rejects_feed_false", SUB("{'feed':false}"), 0, BAD, "view.feed must be true", NULL},
    {"rejects_feed_as_number", SUB("{'feed':1}"), 0, BAD, "view.feed must be true", NULL},

    /* subscribe: period and since */
    {"rejects_numeric_period", SUBX("{'top':5}", "'period':2026"), 0, BAD,
     "period must be a string", NULL},
    {"rejects_empty_period", SUBX("{'top':5}", "'period':''"), 0, BAD,
     "period must be 1..32 characters of [A-Za-z0-9-]", NULL},
    {"rejects_oversize_period", SUBX("{'top':5}", "'period':'" S32 "x'"), 0, BAD,
     "period must be 1..32", NULL},
    {"rejects_period_with_slash", SUBX("{'top':5}", "'period':'2026/W47'"), 0, BAD,
     "period must be 1..32", NULL},
    {"rejects_since_that_is_not_an_object", SUBX("{'feed':true}", "'since':5"), 0, BAD,
     "since must be an object", NULL},
    {"rejects_since_without_seq", SUBX("{'feed':true}", "'since':{}"), 0, BAD,
     "missing field since.seq", NULL},
    {"rejects_negative_since_seq", SUBX("{'feed':true}", "'since':{'seq':-1}"), 0, BAD,
     "since.seq must be 0..9007199254740991", NULL},
    {"rejects_fractional_since_seq", SUBX("{'feed':true}", "'since':{'seq':1.5}"), 0, BAD,
     "since.seq must be an integer", NULL},
    {"rejects_since_seq_as_string", SUBX("{'feed':true}", "'since':{'seq':'5'}"), 0, BAD,
     "since.seq must be an integer", NULL},
    {"rejects_since_epoch_as_number", SUBX("{'feed':true}", "'since':{'seq':5,'epoch':7}"), 0, BAD,
     "since.epoch must be a string", NULL},
    {"rejects_since_epoch_null", SUBX("{'feed':true}", "'since':{'seq':5,'epoch':null}"), 0, BAD,
     "since.epoch must be a string", NULL},
    {"rejects_since_epoch_with_a_dash", SUBX("{'feed':true}", "'since':{'seq':5,'epoch':'ab-cd'}"), 0, BAD,
     "since.epoch must be 0..32 characters of [A-Za-z0-9]", NULL},
    {"rejects_since_cursor_as_number", SUBX("{'feed':true}", "'since':{'seq':5,'cursor':7}"), 0, BAD,
     "since.cursor must be a cursor", NULL},
    {"rejects_empty_since_cursor", SUBX("{'feed':true}", "'since':{'seq':5,'cursor':''}"), 0, BAD,
     "since.cursor must be a cursor", NULL},
    {"rejects_since_cursor_with_upper_case", SUBX("{'feed':true}", "'since':{'seq':5,'cursor':'ABCDEF01:1.:2'}"),
     0, BAD, "since.cursor must be a cursor", NULL},
    {"rejects_oversize_since_epoch", SUBX("{'feed':true}", "'since':{'seq':5,'epoch':'" S32 "x'}"), 0, BAD,
     "since.epoch must be 0..32", NULL},

    /* subscribe: max_rate (v1.1) */
    {"rejects_max_rate_zero", SUBX("{'top':5}", "'max_rate':0"), 0, BAD, "max_rate must be 1..50", NULL},
    {"rejects_max_rate_over_fifty", SUBX("{'top':5}", "'max_rate':51"), 0, BAD, "max_rate must be 1..50", NULL},
    {"rejects_fractional_max_rate", SUBX("{'top':5}", "'max_rate':1.5"), 0, BAD, "max_rate must be an integer",
     NULL},
    {"rejects_max_rate_as_string", SUBX("{'top':5}", "'max_rate':'2'"), 0, BAD, "max_rate must be an integer",
     NULL},
    {"rejects_max_rate_null", SUBX("{'top':5}", "'max_rate':null"), 0, BAD, "max_rate", NULL},
    {"rejects_max_rate_on_a_feed", SUBX("{'feed':true}", "'max_rate':2"), 0, BAD, "max_rate applies to top",
     NULL},

    /* unsubscribe */
    {"rejects_unsubscribe_without_sub", "{'id':'u','op':'unsubscribe'}", 0, BAD,
     "missing field sub", "'u'"},
    {"rejects_empty_sub", "{'op':'unsubscribe','sub':''}", 0, BAD,
     "sub must be 1..32 printable ASCII characters", NULL},
    {"rejects_oversize_sub", "{'op':'unsubscribe','sub':'" S32 "x'}", 0, BAD,
     "sub must be 1..32", NULL},
    {"rejects_sub_with_space", "{'op':'unsubscribe','sub':'s 1'}", 0, BAD, "sub must be 1..32",
     NULL},
    {"rejects_numeric_sub", "{'op':'unsubscribe','sub':1}", 0, BAD, "sub must be a string",
     NULL},

    /* incr and the integer rules */
    {"rejects_incr_without_board", "{'op':'incr','member':'m','delta':1}", 0, BAD,
     "missing field board", NULL},
    {"rejects_incr_without_member", "{'op':'incr','board':'b','delta':1}", 0, BAD,
     "missing field member", NULL},
    {"rejects_incr_without_delta", "{'id':3,'op':'incr','board':'b','member':'m'}", 0, BAD,
     "missing field delta", "3"},
    {"rejects_delta_as_string", INCR("'5'"), 0, BAD, "delta must be an integer", NULL},
    {"rejects_delta_as_bool", INCR("true"), 0, BAD, "delta must be an integer", NULL},
    {"rejects_delta_as_null", INCR("null"), 0, BAD, "delta must be an integer", NULL},
    {"rejects_delta_as_array", INCR("[5]"), 0, BAD, "delta must be an integer", NULL},
    {"rejects_fractional_delta", INCR("1.5"), 0, BAD, "delta must be an integer", NULL},
    {"rejects_tiny_fraction_delta", INCR("1e-300"), 0, BAD, "delta must be an integer", NULL},
    {"rejects_overflowing_delta_as_out_of_range", INCR("1e400"), 0, BAD,
     "number 1e400 is out of range: it overflows a double", NULL},
    {"rejects_negative_overflowing_delta", INCR("-1e400"), 0, BAD,
     "number -1e400 is out of range", NULL},
    {"rejects_delta_of_2_pow_53", INCR("9007199254740992"), 0, BAD,
     "delta is beyond ±9007199254740991", NULL},
    {"rejects_delta_that_rounds_to_2_pow_53", INCR("9007199254740993"), 0, BAD,
     "delta is beyond ±9007199254740991", NULL},
    {"rejects_negative_delta_beyond_safe", INCR("-9007199254740993"), 0, BAD,
     "delta is beyond ±9007199254740991", NULL},
    {"rejects_huge_finite_delta", INCR("1e300"), 0, BAD, "delta is beyond", NULL},
    {"rejects_80_digit_delta_as_beyond_safe", INCR(D64 D16), 0, BAD, "delta is beyond", NULL},

    /* member and req */
    {"rejects_empty_member", "{'op':'incr','board':'b','member':'','delta':1}", 0, BAD,
     "member must be 1..128 characters of [A-Za-z0-9_.:@-]", NULL},
    {"rejects_oversize_member", "{'op':'incr','board':'b','member':'" S128 "x','delta':1}", 0,
     BAD, "member must be 1..128", NULL},
    {"rejects_member_with_space", "{'op':'incr','board':'b','member':'user 1','delta':1}", 0,
     BAD, "member must be 1..128", NULL},
    {"rejects_numeric_member", "{'op':'incr','board':'b','member':101,'delta':1}", 0, BAD,
     "member must be a string", NULL},
    {"rejects_object_member", "{'op':'incr','board':'b','member':{'id':1},'delta':1}", 0, BAD,
     "member must be a string", NULL},
    {"rejects_empty_req", INCRX("'req':''"), 0, BAD,
     "req must be 1..64 printable ASCII characters without spaces", NULL},
    {"rejects_oversize_req", INCRX("'req':'" S64 "x'"), 0, BAD, "req must be 1..64", NULL},
    {"rejects_req_with_space", INCRX("'req':'r 1'"), 0, BAD, "req must be 1..64", NULL},
    {"rejects_req_with_non_ascii", INCRX("'req':'r\xc3\xa9q'"), 0, BAD, "req must be 1..64",
     NULL},
    {"rejects_numeric_req", INCRX("'req':7"), 0, BAD, "req must be a string", NULL},

    /* set and best */
    {"rejects_set_without_value", "{'op':'set','board':'b','member':'m'}", 0, BAD,
     "missing field value", NULL},
    {"rejects_set_with_delta_instead_of_value", "{'op':'set','board':'b','member':'m','delta':1}",
     0, BAD, "missing field value", NULL},
    {"rejects_fractional_set_value", "{'op':'set','board':'b','member':'m','value':0.25}", 0,
     BAD, "value must be an integer", NULL},
    {"rejects_best_value_as_string", "{'op':'best','board':'b','member':'m','value':'9'}", 0,
     BAD, "value must be an integer", NULL},
    {"rejects_overflowing_best_value", "{'op':'best','board':'b','member':'m','value':1e999}", 0,
     BAD, "overflows", NULL},

    /* submit */
    {"rejects_submit_without_fields", "{'op':'submit','board':'b','member':'m'}", 0, BAD,
     "missing field fields", NULL},
    {"rejects_submit_without_member", "{'op':'submit','board':'b','fields':{'a':1}}", 0, BAD,
     "missing field member", NULL},
    {"rejects_fields_as_array", SUBMIT("[1,2]"), 0, BAD, "fields must be an object", NULL},
    {"rejects_empty_fields", SUBMIT("{}"), 0, BAD, "fields must have 1..8 entries", NULL},
    {"rejects_nine_fields",
     SUBMIT("{'a':1,'b':2,'c':3,'d':4,'e':5,'f':6,'g':7,'h':8,'i':9}"), 0, BAD,
     "fields must have 1..8 entries", NULL},
    {"rejects_uppercase_field_name", SUBMIT("{'Kills':1}"), 0, BAD,
     "fields: names must be 1..32 characters of [a-z0-9_], starting with a letter", NULL},
    {"rejects_field_name_starting_with_digit", SUBMIT("{'1st':1}"), 0, BAD,
     "fields: names must be", NULL},
    {"rejects_empty_field_name", SUBMIT("{'':1}"), 0, BAD, "fields: names must be", NULL},
    {"rejects_oversize_field_name", SUBMIT("{'a" S32 "':1}"), 0, BAD, "fields: names must be",
     NULL},
    {"rejects_fractional_field_value", SUBMIT("{'kills':1.5}"), 0, BAD,
     "fields.kills must be an integer", NULL},
    {"rejects_string_field_value", SUBMIT("{'kills':'3'}"), 0, BAD,
     "fields.kills must be an integer", NULL},
    {"rejects_field_value_beyond_safe", SUBMIT("{'kills':-9007199254740993}"), 0, BAD,
     "fields.kills is beyond ±9007199254740991", NULL},
    {"rejects_overflowing_field_value", SUBMIT("{'kills':1e400}"), 0, BAD, "overflows", NULL},
    {"rejects_duplicate_field_names", SUBMIT("{'kills':1,'kills':2}"), 0, BAD,
     "duplicate field fields.kills", NULL},

    /* shared places (v1.1) */
    {"rejects_places_of_another_word", "{'id':3,'op':'subscribe','board':'b','view':{'top':3},'places':'dense'}",
     0, BAD, "places must be", "3"},
    {"rejects_places_that_is_not_a_string", "{'op':'subscribe','board':'b','view':{'top':3},'places':true}", 0,
     BAD, "places must be", NULL},
    {"rejects_places_on_a_feed", "{'op':'subscribe','board':'b','view':{'feed':true},'places':'shared'}", 0, BAD,
     "places applies to window views", NULL},
    /* rank */
    {"rejects_rank_without_member", "{'id':9,'op':'rank','board':'b'}", 0, BAD,
     "missing field member", "9"},
    {"rejects_rank_without_board", "{'op':'rank','member':'m'}", 0, BAD, "missing field board",
     NULL},
    {"rejects_rank_with_bad_period", "{'op':'rank','board':'b','member':'m','period':'x y'}", 0,
     BAD, "period must be 1..32", NULL},
    /* freeze and reveal (v1.1) */
    {"rejects_freeze_without_board", "{'op':'freeze'}", 0, BAD, "missing field board", NULL},
    {"rejects_reveal_steps_zero", "{'op':'reveal','board':'b','steps':0}", 0, BAD, "steps must be a whole number", NULL},
    {"rejects_reveal_steps_negative", "{'op':'reveal','board':'b','steps':-2}", 0, BAD, "steps must be", NULL},
    {"rejects_reveal_steps_fraction", "{'op':'reveal','board':'b','steps':1.5}", 0, BAD, "steps must be", NULL},
    {"rejects_reveal_steps_other_word", "{'op':'reveal','board':'b','steps':'most'}", 0, BAD, "steps must be", NULL},
    {"rejects_reveal_steps_past_2_53", "{'op':'reveal','board':'b','steps':9007199254740992}", 0, BAD, "steps must be",
     NULL},
    {"rejects_live_that_is_not_a_bool", "{'op':'subscribe','board':'b','view':{'top':3},'live':1}", 0, BAD,
     "live must be true or false", NULL},
};

#define NBAD (sizeof BAD_CASES / sizeof BAD_CASES[0])

/* One row of BAD_CASES: exact code, message substring, id echo or none. */
static void run_bad_case(void **state)
{
    const struct bad_case *c = *state;
    size_t len = c->len ? c->len : strlen(c->text);
    char *buf = malloc(len + 1);
    char id[64];
    struct rc_request r;
    struct rc_error err = {0, ""};
    int rc;

    assert_non_null(buf);
    quote(c->text, len, buf);
    rc = rc_proto_decode(buf, len, &r, &err);
    free(buf);
    assert_int_equal(rc, c->code);
    assert_int_equal(err.code, c->code);
    if (!strstr(err.msg, c->msg))
        fail_msg("message \"%s\" lacks \"%s\"", err.msg, c->msg);
    if (c->id) {
        quote(c->id, strlen(c->id), id);
        assert_non_null(r.id_json);
        assert_string_equal(r.id_json, id);
    } else {
        assert_null(r.id_json);
    }
    rc_proto_decode_free(&r);
}

/* ---- accepted messages ------------------------------------------------- */

static void decodes_auth_with_its_token(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'auth','id':5,'token':'eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjF9.c2ln'}", &r);
    assert_int_equal(r.op, RC_OP_AUTH);
    assert_string_equal(r.token, "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjF9.c2ln");
    assert_string_equal(r.id_json, "5");
    rc_proto_decode_free(&r);
    assert_null(r.token);
}

static void refuses_auth_without_a_jwt_shaped_token(void **state)
{
    static const char *const bad[] = {"{'op':'auth'}", "{'op':'auth','token':7}", "{'op':'auth','token':'abc'}",
                                      "{'op':'auth','token':'a.b'}", "{'op':'auth','token':'a b.c.d'}"};
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct rc_request r;
        struct rc_error err = {0, ""};
        assert_int_equal(decode_q(bad[i], &r, &err), RC_E_BAD_REQUEST);
        assert_null(r.token);
        rc_proto_decode_free(&r);
    }
}

static void decodes_freeze_reveal_and_live(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'freeze','id':1,'board':'b','period':'previous'}", &r);
    assert_int_equal(r.op, RC_OP_FREEZE);
    assert_string_equal(r.period, "previous");
    rc_proto_decode_free(&r);
    decode_ok("{'op':'reveal','board':'b','steps':3}", &r);
    assert_int_equal(r.op, RC_OP_REVEAL);
    assert_int_equal(r.steps, 3);
    rc_proto_decode_free(&r);
    decode_ok("{'op':'reveal','board':'b','steps':'all'}", &r);
    assert_int_equal(r.steps, RC_STEPS_ALL);
    rc_proto_decode_free(&r);
    decode_ok("{'op':'reveal','board':'b'}", &r);
    assert_int_equal(r.steps, 1); /* the next change */
    rc_proto_decode_free(&r);
    decode_ok("{'op':'subscribe','board':'b','view':{'top':3},'live':true}", &r);
    assert_int_equal(r.view.live, 1);
    rc_proto_decode_free(&r);
    decode_ok("{'op':'subscribe','board':'b','view':{'top':3}}", &r);
    assert_int_equal(r.view.live, 0);
    rc_proto_decode_free(&r);
}

static void decodes_subscribe_top_from_protocol_example(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'subscribe','id':1,'board':'b','view':{'top':10}}", &r);
    assert_int_equal(r.op, RC_OP_SUBSCRIBE);
    assert_string_equal(r.id_json, "1");
    assert_string_equal(r.board, "b");
    assert_int_equal(r.view.kind, RC_VIEW_TOP);
    assert_int_equal(r.view.offset, 0);
    assert_int_equal(r.view.limit, 10);
    assert_string_equal(r.period, "");
    assert_int_equal(r.has_since, 0);
    rc_proto_decode_free(&r);
}

static void decodes_places_shared_and_unique(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'subscribe','board':'b','view':{'offset':2,'limit':3},'places':'shared'}", &r);
    assert_int_equal(r.view.places, 1);
    rc_proto_decode_free(&r);
    decode_ok("{'op':'subscribe','board':'b','view':{'around':'m'},'places':'unique'}", &r);
    assert_int_equal(r.view.places, 0);
    rc_proto_decode_free(&r);
    decode_ok("{'op':'subscribe','board':'b','view':{'feed':true},'places':'unique'}", &r);
    assert_int_equal(r.view.places, 0);
    rc_proto_decode_free(&r);
}

static void decodes_subscribe_page(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'subscribe','board':'match:1842','view':{'offset':20,'limit':10}}", &r);
    assert_null(r.id_json);
    assert_string_equal(r.board, "match:1842");
    assert_int_equal(r.view.kind, RC_VIEW_PAGE);
    assert_int_equal(r.view.offset, 20);
    assert_int_equal(r.view.limit, 10);
    rc_proto_decode_free(&r);
}

static void decodes_subscribe_around_with_radius(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'subscribe','board':'b','view':{'around':'user:101','radius':3}}", &r);
    assert_int_equal(r.view.kind, RC_VIEW_AROUND);
    assert_string_equal(r.view.around, "user:101");
    assert_int_equal(r.view.radius, 3);
    rc_proto_decode_free(&r);
}

static void decodes_around_radius_default_of_five(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'subscribe','board':'b','view':{'around':'a@b.c'}}", &r);
    assert_int_equal(r.view.kind, RC_VIEW_AROUND);
    assert_string_equal(r.view.around, "a@b.c");
    assert_int_equal(r.view.radius, 5);
    rc_proto_decode_free(&r);
}

static void decodes_subscribe_feed_with_since(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'subscribe','board':'b','view':{'feed':true},'since':{'seq':41}}", &r);
    assert_int_equal(r.view.kind, RC_VIEW_FEED);
    assert_int_equal(r.has_since, 1);
    assert_int_equal(r.since_seq, 41);
    assert_int_equal(r.has_since_epoch, 0); /* v1: no epoch */
    rc_proto_decode_free(&r);
    decode_ok("{'op':'subscribe','board':'b','view':{'feed':true},'since':{'seq':41,'epoch':'0f1e2d3c4b5a6978'}}", &r);
    assert_int_equal(r.has_since_epoch, 1);
    assert_string_equal(r.since_epoch, "0f1e2d3c4b5a6978");
    rc_proto_decode_free(&r);
    decode_ok("{'op':'subscribe','board':'b','view':{'feed':true},'since':{'seq':0,'epoch':''}}", &r);
    assert_int_equal(r.has_since_epoch, 1); /* the epoch of a board without a history */
    assert_string_equal(r.since_epoch, "");
    assert_int_equal(r.has_since_cursor, 0);
    rc_proto_decode_free(&r);
    /* a sharded board's feed (docs/sharded.md) */
    decode_ok("{'op':'subscribe','board':'b','view':{'feed':true},'since':{'seq':7,'cursor':'0a1b2c3d:5.:2'}}", &r);
    assert_int_equal(r.has_since_cursor, 1);
    assert_string_equal(r.since_cursor, "0a1b2c3d:5.:2");
    rc_proto_decode_free(&r);
}

static void decodes_max_rate_on_window_views(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'subscribe','board':'b','view':{'top':10}}", &r);
    assert_int_equal(r.view.max_rate, 0); /* absent: every tick */
    rc_proto_decode_free(&r);
    decode_ok("{'op':'subscribe','board':'b','view':{'top':10},'max_rate':2}", &r);
    assert_int_equal(r.view.max_rate, 2);
    rc_proto_decode_free(&r);
    decode_ok("{'op':'subscribe','board':'b','view':{'offset':5,'limit':5},'max_rate':1}", &r);
    assert_int_equal(r.view.max_rate, 1);
    rc_proto_decode_free(&r);
    decode_ok("{'op':'subscribe','board':'b','view':{'around':'a'},'max_rate':50}", &r);
    assert_int_equal(r.view.max_rate, 50);
    rc_proto_decode_free(&r);
}

static void decodes_period_selectors(void **state)
{
    static const char *const periods[] = {"current", "previous", "2026-W47", "2026-11-21T13",
                                          "-1", S32};
    (void)state;
    for (size_t i = 0; i < sizeof periods / sizeof periods[0]; i++) {
        char text[256];
        struct rc_request r;
        snprintf(text, sizeof text,
                 "{'op':'subscribe','board':'b','view':{'top':5},'period':'%s'}", periods[i]);
        decode_ok(text, &r);
        assert_string_equal(r.period, periods[i]);
        rc_proto_decode_free(&r);
    }
}

static void decodes_view_limits_at_their_maximum(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok(SUB("{'top':1000}"), &r);
    assert_int_equal(r.view.limit, 1000);
    rc_proto_decode_free(&r);
    decode_ok(SUB("{'offset':2147483647,'limit':1000}"), &r);
    assert_int_equal(r.view.offset, 2147483647u);
    assert_int_equal(r.view.limit, 1000);
    rc_proto_decode_free(&r);
    decode_ok(SUB("{'around':'m','radius':50}"), &r);
    assert_int_equal(r.view.radius, 50);
    rc_proto_decode_free(&r);
    decode_ok(SUB("{'around':'m','radius':0}"), &r);
    assert_int_equal(r.view.radius, 0);
    rc_proto_decode_free(&r);
}

static void decodes_unsubscribe(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'unsubscribe','id':'u1','sub':'s1'}", &r);
    assert_int_equal(r.op, RC_OP_UNSUBSCRIBE);
    assert_string_equal(r.id_json, "\"u1\"");
    assert_string_equal(r.sub, "s1");
    rc_proto_decode_free(&r);
}

static void decodes_incr_with_negative_delta_and_req(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'incr','id':2,'board':'b','member':'user:101','delta':-50,'req':'r-1'}", &r);
    assert_int_equal(r.op, RC_OP_INCR);
    assert_string_equal(r.member, "user:101");
    assert_int_equal(r.value, -50);
    assert_string_equal(r.req, "r-1");
    rc_proto_decode_free(&r);
}

static void decodes_set_and_best(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'set','board':'b','member':'m','value':1100}", &r);
    assert_int_equal(r.op, RC_OP_SET);
    assert_int_equal(r.value, 1100);
    assert_string_equal(r.req, "");
    rc_proto_decode_free(&r);
    decode_ok("{'op':'best','board':'b','member':'m','value':-7,'req':'x'}", &r);
    assert_int_equal(r.op, RC_OP_BEST);
    assert_int_equal(r.value, -7);
    assert_string_equal(r.req, "x");
    rc_proto_decode_free(&r);
}

static void decodes_submit_fields_in_order(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok(SUBMIT("{'kills':12,'deaths':3,'time_ms':-1}"), &r);
    assert_int_equal(r.op, RC_OP_SUBMIT);
    assert_int_equal(r.nfields, 3);
    assert_string_equal(r.fields[0].name, "kills");
    assert_int_equal(r.fields[0].value, 12);
    assert_string_equal(r.fields[1].name, "deaths");
    assert_int_equal(r.fields[1].value, 3);
    assert_string_equal(r.fields[2].name, "time_ms");
    assert_int_equal(r.fields[2].value, -1);
    rc_proto_decode_free(&r);
}

static void decodes_submit_with_max_fields(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok(SUBMIT("{'a':1,'b':2,'c':3,'d':4,'e':5,'f':6,'g':7,'" S32 "':8}"), &r);
    assert_int_equal(r.nfields, RC_MAX_FIELDS);
    assert_string_equal(r.fields[7].name, S32);
    assert_int_equal(r.fields[7].value, 8);
    rc_proto_decode_free(&r);
}

static void decodes_rank_with_period(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'rank','id':5,'board':'b','member':'user:101','period':'previous'}", &r);
    assert_int_equal(r.op, RC_OP_RANK);
    assert_string_equal(r.member, "user:101");
    assert_string_equal(r.period, "previous");
    rc_proto_decode_free(&r);
}

static void decodes_ping(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'ping','id':'abc'}", &r);
    assert_int_equal(r.op, RC_OP_PING);
    assert_string_equal(r.id_json, "\"abc\"");
    rc_proto_decode_free(&r);
}

static void echoes_scalar_ids_as_json(void **state)
{
    static const struct {
        const char *in, *out;
    } ids[] = {
        {"null", "null"},
        {"true", "true"},
        {"false", "false"},
        {"0", "0"},
        {"-3", "-3"},
        {"1.5", "1.5"},
        {"1000000000000000", "1000000000000000"},
        {"9007199254740991", "9007199254740991"},
        {"1e3", "1000"},
        {"'x'", "\"x\""},
        {"'a\\\"b'", "\"a\\\"b\""},
        {"'\\u00e9'", "\"\xc3\xa9\""},
        {"''", "\"\""},
    };
    (void)state;
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char text[128];
        struct rc_request r;
        snprintf(text, sizeof text, "{'id':%s,'op':'ping'}", ids[i].in);
        decode_ok(text, &r);
        assert_non_null(r.id_json);
        assert_string_equal(r.id_json, ids[i].out);
        rc_proto_decode_free(&r);
    }
}

static void accepts_safe_integer_extremes(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok(INCR("9007199254740991"), &r);
    assert_int_equal(r.value, 9007199254740991LL);
    rc_proto_decode_free(&r);
    decode_ok(INCR("-9007199254740991"), &r);
    assert_int_equal(r.value, -9007199254740991LL);
    rc_proto_decode_free(&r);
}

static void accepts_integral_numbers_in_any_notation(void **state)
{
    static const struct {
        const char *in;
        int64_t v;
    } nums[] = {{"1e3", 1000}, {"5.0", 5}, {"-0", 0}, {"2.5e1", 25}, {"0", 0}};
    (void)state;
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        char text[128];
        struct rc_request r;
        snprintf(text, sizeof text, INCR("%s"), nums[i].in);
        decode_ok(text, &r);
        assert_int_equal(r.value, nums[i].v);
        rc_proto_decode_free(&r);
    }
}

static void ignores_unknown_fields(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'ping','extra':{'deep':[1,{'x':null}]},'Op':'nope','board':7}", &r);
    assert_int_equal(r.op, RC_OP_PING);
    rc_proto_decode_free(&r);
    decode_ok(SUB("{'top':3,'colour':'red'}"), &r);
    assert_int_equal(r.view.limit, 3);
    rc_proto_decode_free(&r);
}

static void accepts_surrounding_whitespace(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok(" \r\n\t{ 'op' : 'ping' } \n\t\r ", &r);
    assert_int_equal(r.op, RC_OP_PING);
    rc_proto_decode_free(&r);
}

static void accepts_escaped_characters_in_names(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'rank','board':'\\u0062','member':'user\\u003a101'}", &r);
    assert_string_equal(r.board, "b");
    assert_string_equal(r.member, "user:101");
    rc_proto_decode_free(&r);
}

static void accepts_names_at_their_maximum_length(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'incr','board':'" S64 "','member':'" S128 "','delta':1,'req':'" S64 "'}", &r);
    assert_string_equal(r.board, S64);
    assert_string_equal(r.member, S128);
    assert_string_equal(r.req, S64);
    rc_proto_decode_free(&r);
    decode_ok("{'op':'unsubscribe','sub':'" S32 "'}", &r);
    assert_string_equal(r.sub, S32);
    rc_proto_decode_free(&r);
}

static void decodes_text_without_nul_terminator(void **state)
{
    char buf[] = "{\"op\":\"ping\"}}}}";
    struct rc_request r;
    struct rc_error err = {0, ""};
    (void)state;
    assert_int_equal(rc_proto_decode(buf, 13, &r, &err), 0);
    assert_int_equal(r.op, RC_OP_PING);
    rc_proto_decode_free(&r);
}

static void rejects_message_over_size_limit(void **state)
{
    size_t len = RC_PROTO_MAX_TEXT + 1;
    char *buf = malloc(len);
    struct rc_request r;
    struct rc_error err = {0, ""};
    (void)state;

    assert_non_null(buf);
    memset(buf, ' ', len);
    memcpy(buf, "{\"op\":\"ping\"}", 13);
    assert_int_equal(rc_proto_decode(buf, len, &r, &err), RC_E_TOO_LARGE);
    assert_int_equal(err.code, RC_E_TOO_LARGE);
    assert_non_null(strstr(err.msg, "larger than 1048576"));
    rc_proto_decode_free(&r);
    /* One byte less is at the limit, and fine. */
    assert_int_equal(rc_proto_decode(buf, len - 1, &r, &err), 0);
    rc_proto_decode_free(&r);
    free(buf);
}

static void rejects_id_string_over_256_bytes_without_echo(void **state)
{
    char text[600];
    struct rc_request r;
    struct rc_error err = {0, ""};
    (void)state;

    snprintf(text, sizeof text, "{'id':'%s','op':'ping'}", S128 S128 "x");
    assert_int_equal(decode_q(text, &r, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "id must be at most 256 bytes"));
    assert_null(r.id_json);
    rc_proto_decode_free(&r);
    snprintf(text, sizeof text, "{'id':'%s','op':'ping'}", S128 S128);
    decode_ok(text, &r);
    assert_int_equal(strlen(r.id_json), 258);
    rc_proto_decode_free(&r);
}

static void caps_and_sanitises_unknown_op_echo(void **state)
{
    char text[600];
    struct rc_request r;
    struct rc_error err = {0, ""};
    (void)state;

    snprintf(text, sizeof text, "{\"op\":\"%s\"}", S128 S128);
    assert_int_equal(rc_proto_decode(text, strlen(text), &r, &err), RC_E_BAD_REQUEST);
    assert_string_equal(err.msg, "unknown op '" S32 "...'");
    rc_proto_decode_free(&r);

    snprintf(text, sizeof text, "{\"op\":\"a'b\\u0001\xc3\xa9\"}");
    assert_int_equal(rc_proto_decode(text, strlen(text), &r, &err), RC_E_BAD_REQUEST);
    assert_string_equal(err.msg, "unknown op 'a?b\?\?\?'" /* \? dodges trigraphs */);
    rc_proto_decode_free(&r);
}

/* ---- REST write bodies ------------------------------------------------- */

static int body_q(const char *board, const char *text, struct rc_request *r, struct rc_error *err)
{
    char buf[512];
    size_t len = strlen(text);
    assert_true(len < sizeof buf);
    quote(text, len, buf);
    return rc_proto_decode_write_body(board, buf, len, r, err);
}

static void decodes_write_bodies_of_every_write_op(void **state)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    (void)state;

    assert_int_equal(body_q("b", "{'member':'m','op':'incr','delta':5,'req':'r1'}", &r, &err), 0);
    assert_int_equal(r.op, RC_OP_INCR);
    assert_string_equal(r.board, "b");
    assert_string_equal(r.member, "m");
    assert_int_equal(r.value, 5);
    assert_string_equal(r.req, "r1");
    rc_proto_decode_free(&r);

    assert_int_equal(body_q("b", "{'member':'m','op':'set','value':7}", &r, &err), 0);
    assert_int_equal(r.op, RC_OP_SET);
    assert_int_equal(r.value, 7);
    rc_proto_decode_free(&r);

    assert_int_equal(body_q("b", "{'member':'m','op':'best','value':-7}", &r, &err), 0);
    assert_int_equal(r.op, RC_OP_BEST);
    assert_int_equal(r.value, -7);
    rc_proto_decode_free(&r);

    assert_int_equal(body_q("match:1", "{'member':'m','op':'submit','fields':{'k':1}}", &r, &err),
                     0);
    assert_int_equal(r.op, RC_OP_SUBMIT);
    assert_string_equal(r.board, "match:1");
    assert_int_equal(r.nfields, 1);
    rc_proto_decode_free(&r);
}

static void write_body_takes_board_from_path_and_ignores_id(void **state)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    (void)state;

    assert_int_equal(
        body_q("path", "{'board':'body','id':1,'member':'m','op':'incr','delta':1}", &r, &err), 0);
    assert_string_equal(r.board, "path");
    assert_null(r.id_json);
    rc_proto_decode_free(&r);
}

static void write_body_rejects_non_write_ops(void **state)
{
    static const char *const bodies[] = {
        "{'member':'m','op':'subscribe','view':{'top':1}}",
        "{'member':'m','op':'rank'}",
        "{'op':'ping'}",
        "{'op':'unsubscribe','sub':'s1'}",
        "{'member':'m','op':'decr','delta':1}",
    };
    (void)state;
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        struct rc_request r;
        struct rc_error err = {0, ""};
        assert_int_equal(body_q("b", bodies[i], &r, &err), RC_E_BAD_REQUEST);
        assert_string_equal(err.msg, "op must be one of incr, set, best, submit");
        rc_proto_decode_free(&r);
    }
}

static void write_body_rejects_bad_path_board(void **state)
{
    static const char *const boards[] = {NULL, "", "a b", "a/b", S64 "x"};
    (void)state;
    for (size_t i = 0; i < sizeof boards / sizeof boards[0]; i++) {
        struct rc_request r;
        struct rc_error err = {0, ""};
        assert_int_equal(body_q(boards[i], "{'member':'m','op':'incr','delta':1}", &r, &err),
                         RC_E_BAD_REQUEST);
        assert_non_null(strstr(err.msg, "board must be 1..64 characters"));
        rc_proto_decode_free(&r);
    }
}

static void write_body_rejects_malformed_bodies(void **state)
{
    static const struct {
        const char *body, *msg;
    } cases[] = {
        {"{'member':'m','delta':1}", "missing field op"},
        {"{'op':'incr','delta':1}", "missing field member"},
        {"{'member':'m','op':'incr','delta':'1'}", "delta must be an integer"},
        {"{'member':'m','op':'set','value':1e400}", "overflows"},
        {"{'member':'m','op':'submit','fields':{}}", "fields must have 1..8 entries"},
        {"{'member':'m','op':'incr','delta':1,'req':''}", "req must be 1..64"},
        {"{'member':'m','op':'incr','delta':1} x", "invalid JSON"},
        {"[]", "message must be a JSON object"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct rc_request r;
        struct rc_error err = {0, ""};
        assert_int_equal(body_q("b", cases[i].body, &r, &err), RC_E_BAD_REQUEST);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("body %s: \"%s\" lacks \"%s\"", cases[i].body, err.msg, cases[i].msg);
        rc_proto_decode_free(&r);
    }
}

static void write_body_rejects_oversize_body(void **state)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    char *buf = malloc(RC_PROTO_MAX_TEXT + 1);
    (void)state;
    assert_non_null(buf);
    memset(buf, ' ', RC_PROTO_MAX_TEXT + 1);
    assert_int_equal(rc_proto_decode_write_body("b", buf, RC_PROTO_MAX_TEXT + 1, &r, &err),
                     RC_E_TOO_LARGE);
    rc_proto_decode_free(&r);
    free(buf);
}

/* ---- op names, free, robustness ---------------------------------------- */

static void op_names_round_trip(void **state)
{
    static const char *const names[] = {"subscribe", "unsubscribe", "incr", "set",
                                        "best",      "submit",      "rank", "ping"};
    (void)state;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int op = rc_proto_op_parse(names[i]);
        assert_int_equal(op, (int)i);
        assert_string_equal(rc_proto_op_name((enum rc_op)op), names[i]);
    }
    assert_int_equal(rc_proto_op_parse("decr"), RC_E_BAD_REQUEST);
    assert_int_equal(rc_proto_op_parse(""), RC_E_BAD_REQUEST);
    assert_int_equal(rc_proto_op_parse(NULL), RC_E_BAD_REQUEST);
}

static void request_free_is_idempotent(void **state)
{
    struct rc_request r;
    (void)state;
    decode_ok("{'op':'ping','id':1}", &r);
    rc_proto_decode_free(&r);
    assert_null(r.id_json);
    rc_proto_decode_free(&r);
    rc_proto_decode_free(NULL);
}

static const char *const CORPUS[] = {
    "{'op':'subscribe','id':1,'board':'b','view':{'top':10},'period':'2026-W47'}",
    "{'op':'subscribe','board':'b','view':{'offset':20,'limit':10}}",
    "{'op':'subscribe','board':'b','view':{'around':'user:101','radius':3}}",
    "{'op':'subscribe','board':'b','view':{'feed':true},'since':{'seq':41}}",
    "{'op':'unsubscribe','id':'u1','sub':'s1'}",
    "{'op':'incr','id':2,'board':'b','member':'user:101','delta':-50,'req':'r-1'}",
    "{'op':'set','board':'b','member':'m','value':1100}",
    "{'op':'submit','board':'b','member':'m','fields':{'kills':12,'deaths':3}}",
    "{'op':'rank','id':[1],'board':'b','member':'user:101'}",
    "{'op':'ping','id':'\\u00e9\\ud83d\\ude00'}",
};

#define NCORPUS (sizeof CORPUS / sizeof CORPUS[0])

/* Decodes text and checks the result is coherent: 0, or a known code with a
 * message. Under ASan this is where a crash or leak would show. */
static void decode_anything(const char *text, size_t len)
{
    struct rc_request r;
    struct rc_error err = {0, ""};
    int rc = rc_proto_decode(text, len, &r, &err);

    if (rc != 0) {
        assert_true(rc == RC_E_BAD_REQUEST || rc == RC_E_TOO_LARGE || rc == RC_E_INTERNAL);
        assert_int_equal(err.code, rc);
        assert_true(strlen(err.msg) > 0);
    }
    rc_proto_decode_free(&r);
}

static void survives_every_truncation(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCORPUS; i++) {
        size_t len = strlen(CORPUS[i]);
        char *buf = malloc(len + 1);
        assert_non_null(buf);
        quote(CORPUS[i], len, buf);
        for (size_t n = 0; n <= len; n++) {
            /* A private copy of exactly n bytes, so ASan sees any overread. */
            char *cut = malloc(n ? n : 1);
            assert_non_null(cut);
            memcpy(cut, buf, n);
            decode_anything(cut, n);
            free(cut);
        }
        free(buf);
    }
}

static void survives_random_mutations(void **state)
{
    static const char bytes[] = "{}[]\",:\\u0123456789eE.+-tfn \x01\x80\xc3\xff";
    uint32_t seed = 12345;
    (void)state;
    for (int iter = 0; iter < 20000; iter++) {
        const char *src = CORPUS[(size_t)iter % NCORPUS];
        size_t len = strlen(src);
        char *buf = malloc(len + 1);
        int flips;
        assert_non_null(buf);
        quote(src, len, buf);
        seed = seed * 1103515245u + 12345u;
        flips = 1 + (int)((seed >> 16) % 4);
        for (int k = 0; k < flips; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            buf[at] = bytes[(seed >> 16) % (sizeof bytes - 1)];
        }
        decode_anything(buf, len);
        free(buf);
    }
}

static void survives_deep_nesting(void **state)
{
    size_t depth = 5000, len = 2 * depth + 64;
    char *buf = malloc(len);
    size_t n = 0;
    (void)state;
    assert_non_null(buf);
    n += (size_t)sprintf(buf, "{\"op\":\"ping\",\"x\":");
    for (size_t i = 0; i < depth; i++)
        buf[n++] = '[';
    for (size_t i = 0; i < depth; i++)
        buf[n++] = ']';
    buf[n++] = '}';
    decode_anything(buf, n);
    free(buf);
}

/* cJSON allocations that fail at the k-th call, for every k until none does:
 * the decoder must report an error and leak nothing. */
static long alloc_budget = -1;

static void *failing_malloc(size_t size)
{
    if (alloc_budget == 0)
        return NULL;
    if (alloc_budget > 0)
        alloc_budget--;
    return malloc(size);
}

static void survives_allocation_failures(void **state)
{
    cJSON_Hooks hooks = {failing_malloc, free};
    (void)state;
    cJSON_InitHooks(&hooks);
    for (size_t i = 0; i < NCORPUS; i++) {
        size_t len = strlen(CORPUS[i]);
        char *buf = malloc(len + 1);
        assert_non_null(buf);
        quote(CORPUS[i], len, buf);
        for (long k = 0; k < 200; k++) {
            alloc_budget = k;
            decode_anything(buf, len);
        }
        alloc_budget = -1;
        free(buf);
    }
    cJSON_InitHooks(NULL);
}

/* A client matches replies by id: a fractional id (JavaScript's
 * Math.random()) must come back as the very same double, not a near one. */
static void fractional_ids_echo_exactly(void **state)
{
    (void)state;
    static const char *const ids[] = {"0.5", "0.12345678901234566", "0.30000000000000004", "-2.5e-300",
                                      "0.7379847652187253", "123456.789"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char msg[128];
        struct rc_request r;
        struct rc_error err;
        snprintf(msg, sizeof msg, "{\"op\":\"ping\",\"id\":%s}", ids[i]);
        assert_int_equal(rc_proto_decode(msg, strlen(msg), &r, &err), 0);
        assert_non_null(r.id_json);
        assert_true(strtod(r.id_json, NULL) == strtod(ids[i], NULL));
        rc_proto_decode_free(&r);
    }
}

/* ---- the strict gate: what it still lets through ----------------------- */

/* Decodes {"op":"ping","x":<x>} (x in ' quoting), which must be accepted. */
static void ping_with_x_ok(const char *x)
{
    char text[256];
    struct rc_request r;
    snprintf(text, sizeof text, "{'op':'ping','x':%s}", x);
    decode_ok(text, &r);
    assert_int_equal(r.op, RC_OP_PING);
    rc_proto_decode_free(&r);
}

static void accepts_every_number_form_rfc_8259_allows(void **state)
{
    static const char *const nums[] = {"0",    "-0",   "0.5",  "-0.5", "10",    "0e5",
                                       "0E+5", "1e-2", "1E+2", "2.50", "-0.0e0"};
    (void)state;
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        ping_with_x_ok(nums[i]);
}

static void accepts_zero_written_with_a_huge_exponent(void **state)
{
    struct rc_request r;
    (void)state;
    ping_with_x_ok("0e-400");
    decode_ok(INCR("0.0e999"), &r);
    assert_int_equal(r.value, 0);
    rc_proto_decode_free(&r);
}

static void accepts_the_smallest_and_largest_doubles(void **state)
{
    (void)state;
    ping_with_x_ok("5e-324");
    ping_with_x_ok("-1.7976931348623157e308");
}

static void accepts_a_byte_order_mark_inside_a_string(void **state)
{
    (void)state;
    ping_with_x_ok("'\xef\xbb\xbf'");
}

static void accepts_escaped_control_characters(void **state)
{
    (void)state;
    ping_with_x_ok("'\\t\\n\\u0001\\u001f'");
}

static void accepts_the_same_key_in_different_objects(void **state)
{
    (void)state;
    ping_with_x_ok("{'op':1,'x':[{'a':1},{'a':2}]}");
}

/* {"op":"ping","k0":0,...,"k<n-1>":0} plus, when dup, a second "k5". */
static char *many_keys(unsigned n, int dup)
{
    char *buf = malloc(16 + (size_t)n * 16 + 16);
    size_t at = 0;
    assert_non_null(buf);
    at += (size_t)sprintf(buf, "{\"op\":\"ping\"");
    for (unsigned i = 0; i < n; i++)
        at += (size_t)sprintf(buf + at, ",\"k%u\":0", i);
    if (dup)
        at += (size_t)sprintf(buf + at, ",\"k5\":1");
    memcpy(buf + at, "}", 2);
    return buf;
}

static void accepts_an_object_with_thousands_of_distinct_keys(void **state)
{
    char *text = many_keys(5000, 0);
    struct rc_request r;
    struct rc_error err = {0, ""};
    (void)state;
    assert_int_equal(rc_proto_decode(text, strlen(text), &r, &err), 0);
    rc_proto_decode_free(&r);
    free(text);
}

static void finds_a_duplicate_among_thousands_of_keys(void **state)
{
    char *text = many_keys(5000, 1);
    struct rc_request r;
    struct rc_error err = {0, ""};
    (void)state;
    assert_int_equal(rc_proto_decode(text, strlen(text), &r, &err), RC_E_BAD_REQUEST);
    assert_string_equal(err.msg, "duplicate field k5");
    rc_proto_decode_free(&r);
    free(text);
}

/* ---- the gate alone, and the REST bodies that go through it ------------- */

static void json_gate_hands_back_the_object(void **state)
{
    static const char text[] = "{\"a\":1,\"b\":[true]}";
    cJSON *o = NULL;
    struct rc_error err = {0, ""};
    (void)state;
    assert_int_equal(rc_json_gate_parse_strict(text, sizeof text - 1, &o, &err), 0);
    assert_non_null(o);
    assert_true(cJSON_IsObject(o));
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(o, "a")->valuedouble, 1);
    cJSON_Delete(o);
}

static void json_gate_leaves_out_null_when_it_refuses(void **state)
{
    static const char text[] = "{\"a\":01}";
    cJSON *o = (cJSON *)&o; /* anything but NULL */
    struct rc_error err = {0, ""};
    (void)state;
    assert_int_equal(rc_json_gate_parse_strict(text, sizeof text - 1, &o, &err), RC_E_BAD_REQUEST);
    assert_null(o);
    assert_int_equal(err.code, RC_E_BAD_REQUEST);
}

static void json_gate_refuses_a_json_value_that_is_not_an_object(void **state)
{
    cJSON *o = NULL;
    struct rc_error err = {0, ""};
    (void)state;
    assert_int_equal(rc_json_gate_parse_strict("[{}]", 4, &o, &err), RC_E_BAD_REQUEST);
    assert_string_equal(err.msg, "message must be a JSON object");
    assert_null(o);
}

/* Every hostile body of the issue, as a WebSocket message and as a REST
 * write body: both refuse it with the same code, naming the same fault. */
static void write_body_refuses_every_hostile_input_like_a_message(void **state)
{
    static const struct {
        const char *ws, *body, *msg;
    } cases[] = {
        {INCR("01"), "{'op':'incr','member':'m','delta':01}", "leading zero"},
        {"\xef\xbb\xbf" INCR("1"), "\xef\xbb\xbf{'op':'incr','member':'m','delta':1}",
         "byte order mark"},
        {INCR("1e-400"), "{'op':'incr','member':'m','delta':1e-400}", "underflows"},
        {INCR("1e400"), "{'op':'incr','member':'m','delta':1e400}", "overflows"},
        {INCRX("'x':1,'x':2"), "{'op':'incr','member':'m','delta':1,'x':1,'x':2}",
         "duplicate field x"},
        {INCRX("'x':'a\x01'"), "{'op':'incr','member':'m','delta':1,'x':'a\x01'}",
         "raw control character U+0001"},
        {INCRX("'x':'\\u0000'"), "{'op':'incr','member':'m','delta':1,'x':'\\u0000'}",
         "\\u0000"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct rc_request r;
        struct rc_error ws_err = {0, ""}, body_err = {0, ""};
        assert_int_equal(decode_q(cases[i].ws, &r, &ws_err), RC_E_BAD_REQUEST);
        rc_proto_decode_free(&r);
        assert_int_equal(body_q("b", cases[i].body, &r, &body_err), RC_E_BAD_REQUEST);
        rc_proto_decode_free(&r);
        if (!strstr(ws_err.msg, cases[i].msg) || !strstr(body_err.msg, cases[i].msg))
            fail_msg("case %zu: \"%s\" / \"%s\" lack \"%s\"", i, ws_err.msg, body_err.msg,
                     cases[i].msg);
    }
}

int main(void)
{
    static struct CMUnitTest table[NBAD];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decodes_subscribe_top_from_protocol_example),
        cmocka_unit_test(decodes_auth_with_its_token),
        cmocka_unit_test(refuses_auth_without_a_jwt_shaped_token),
        cmocka_unit_test(decodes_subscribe_page),
        cmocka_unit_test(decodes_places_shared_and_unique),
        cmocka_unit_test(decodes_subscribe_around_with_radius),
        cmocka_unit_test(decodes_around_radius_default_of_five),
        cmocka_unit_test(decodes_subscribe_feed_with_since),
        cmocka_unit_test(decodes_max_rate_on_window_views),
        cmocka_unit_test(decodes_freeze_reveal_and_live),
        cmocka_unit_test(decodes_period_selectors),
        cmocka_unit_test(decodes_view_limits_at_their_maximum),
        cmocka_unit_test(decodes_unsubscribe),
        cmocka_unit_test(decodes_incr_with_negative_delta_and_req),
        cmocka_unit_test(decodes_set_and_best),
        cmocka_unit_test(decodes_submit_fields_in_order),
        cmocka_unit_test(decodes_submit_with_max_fields),
        cmocka_unit_test(decodes_rank_with_period),
        cmocka_unit_test(decodes_ping),
        cmocka_unit_test(echoes_scalar_ids_as_json),
        cmocka_unit_test(accepts_safe_integer_extremes),
        cmocka_unit_test(accepts_integral_numbers_in_any_notation),
        cmocka_unit_test(ignores_unknown_fields),
        cmocka_unit_test(accepts_surrounding_whitespace),
        cmocka_unit_test(accepts_escaped_characters_in_names),
        cmocka_unit_test(accepts_names_at_their_maximum_length),
        cmocka_unit_test(decodes_text_without_nul_terminator),
        cmocka_unit_test(rejects_message_over_size_limit),
        cmocka_unit_test(rejects_id_string_over_256_bytes_without_echo),
        cmocka_unit_test(caps_and_sanitises_unknown_op_echo),
        cmocka_unit_test(decodes_write_bodies_of_every_write_op),
        cmocka_unit_test(write_body_takes_board_from_path_and_ignores_id),
        cmocka_unit_test(write_body_rejects_non_write_ops),
        cmocka_unit_test(write_body_rejects_bad_path_board),
        cmocka_unit_test(write_body_rejects_malformed_bodies),
        cmocka_unit_test(write_body_rejects_oversize_body),
        cmocka_unit_test(op_names_round_trip),
        cmocka_unit_test(request_free_is_idempotent),
        cmocka_unit_test(survives_every_truncation),
        cmocka_unit_test(survives_random_mutations),
        cmocka_unit_test(survives_deep_nesting),
        cmocka_unit_test(survives_allocation_failures),
        cmocka_unit_test(fractional_ids_echo_exactly),
        cmocka_unit_test(accepts_every_number_form_rfc_8259_allows),
        cmocka_unit_test(accepts_zero_written_with_a_huge_exponent),
        cmocka_unit_test(accepts_the_smallest_and_largest_doubles),
        cmocka_unit_test(accepts_a_byte_order_mark_inside_a_string),
        cmocka_unit_test(accepts_escaped_control_characters),
        cmocka_unit_test(accepts_the_same_key_in_different_objects),
        cmocka_unit_test(accepts_an_object_with_thousands_of_distinct_keys),
        cmocka_unit_test(finds_a_duplicate_among_thousands_of_keys),
        cmocka_unit_test(json_gate_hands_back_the_object),
        cmocka_unit_test(json_gate_leaves_out_null_when_it_refuses),
        cmocka_unit_test(json_gate_refuses_a_json_value_that_is_not_an_object),
        cmocka_unit_test(write_body_refuses_every_hostile_input_like_a_message),
    };
    int failed;

    for (size_t i = 0; i < NBAD; i++) {
        table[i].name = BAD_CASES[i].name;
        table[i].test_func = run_bad_case;
        table[i].setup_func = NULL;
        table[i].teardown_func = NULL;
        table[i].initial_state = (void *)&BAD_CASES[i];
    }
    failed = _cmocka_run_group_tests("rc_request_decode_rejects", table, NBAD, NULL, NULL);
    failed += cmocka_run_group_tests_name("rc_request_decode_accepts", tests, NULL, NULL);
    return failed;
}
