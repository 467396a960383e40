/* test_import_row.c - rows of an import file (CSV and JSON Lines) parse into
 * the write that loads them, bad rows are refused with a message naming the
 * column, and the req derived from a row is stable, fits the req rules and
 * tells rows apart; the export lines read back as the same rows. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_codec.h"
#include "rc_conf.h"
#include "rc_export_fmt.h"
#include "rc_import_row.h"
#include "rc_write_args.h"

static const char *text =
    "[board demo]\n"
    "ops = incr, set, best\n"
    "tiebreak_resolution = 1s\n"
    "tiebreak_horizon = 3650d\n"
    "tiebreak_base = 2026-01-01T00:00:00Z\n"
    "[board laps]\n"
    "order = asc\n"
    "ops = best\n"
    "points_min = 0\n"
    "points_max = 3600000\n"
    "tiebreak = none\n"
    "[board inc]\n"
    "ops = incr\n"
    "tiebreak = none\n"
    "[board clears]\n"
    "fields = clears desc 16, revives asc 8, first_clear_ms asc 27\n"
    "ops = submit\n"
    "tiebreak = none\n"
    "[board hot]\n"
    "ops = incr\n"
    "decay = buckets\n"
    "bucket_span = 1h\n"
    "window = 24h\n";

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

static const struct rc_board *board(const char *name)
{
    const struct rc_board *b = rc_conf_board_find(conf, name);
    assert_non_null(b);
    return b;
}

static int header(const char *board_name, const char *line, struct rc_import_cols *cols, struct rc_error *err)
{
    return rc_import_row_csv_header(board(board_name), line, strlen(line), cols, err);
}

static int csv_row(const char *board_name, const char *hdr, const char *line, struct rc_import_row *row,
                   struct rc_error *err)
{
    struct rc_import_cols cols;
    assert_int_equal(header(board_name, hdr, &cols, err), 0);
    return rc_import_row_csv_row(board(board_name), &cols, line, strlen(line), row, err);
}

static int json_row(const char *board_name, const char *line, struct rc_import_row *row, struct rc_error *err)
{
    return rc_import_row_json_row(board(board_name), line, strlen(line), row, err);
}

static void test_the_import_op_is_set_best_or_submit_by_board(void **state)
{
    (void)state;
    enum rc_op op;
    struct rc_error err;
    assert_int_equal(rc_import_row_op(board("demo"), &op, &err), 0);
    assert_int_equal(op, RC_OP_SET);
    assert_int_equal(rc_import_row_op(board("laps"), &op, &err), 0);
    assert_int_equal(op, RC_OP_BEST);
    assert_int_equal(rc_import_row_op(board("clears"), &op, &err), 0);
    assert_int_equal(op, RC_OP_SUBMIT);
    assert_int_equal(rc_import_row_op(board("inc"), &op, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "neither set nor best"));
    assert_int_equal(rc_import_row_op(board("hot"), &op, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "hot board"));
}

static void test_a_csv_row_gives_member_score_and_name(void **state)
{
    (void)state;
    struct rc_import_row row;
    struct rc_error err;
    assert_int_equal(csv_row("demo", "rank,member,score,name", "7, user:1 ,-42,\"Bob, \"\"the\"\" B\"", &row, &err),
                     0);
    assert_string_equal(row.member, "user:1");
    assert_int_equal(row.score, -42);
    assert_int_equal(row.has_name, 1);
    assert_string_equal(row.name, "Bob, \"the\" B");
    /* an empty name leaves the profile alone */
    assert_int_equal(csv_row("demo", "member,score,name", "user:2,9007199254740991,", &row, &err), 0);
    assert_int_equal(row.score, 9007199254740991LL);
    assert_int_equal(row.has_name, 0);
}

static void test_csv_headers_that_cannot_load_are_refused_naming_the_column(void **state)
{
    (void)state;
    struct rc_import_cols cols;
    struct rc_error err;
    assert_int_equal(header("demo", "member,points", &cols, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "column 2: unknown column 'points'"));
    assert_int_equal(header("demo", "member,score,member", &cols, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "column 3"));
    assert_int_equal(header("demo", "score,name", &cols, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "no member column"));
    assert_int_equal(header("demo", "member,name", &cols, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "no score column"));
    assert_int_equal(header("clears", "member,score", &cols, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "name them as columns"));
    assert_int_equal(header("clears", "member,name", &cols, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "none of board clears's fields"));
    assert_int_equal(header("clears", "member,revives,clears", &cols, &err), 0);
}

static void test_bad_csv_rows_are_refused_with_a_reason(void **state)
{
    (void)state;
    struct rc_import_row row;
    struct rc_error err;
    static const struct {
        const char *line, *says;
    } cases[] = {
        {"user:1,1.5", "score '1.5' is not an integer"},
        {"user:1,", "score '' is not an integer"},
        {"user:1,9007199254740992", "not an integer within"},
        {"user:1,1e3", "not an integer"},
        {"user:1,10,extra", "3 cells, the header has 2"},
        {"user 1,10", "member must be"},
        {",10", "member must be"},
        {"\"user:1,10", "runs past the end of the line"},
        {"\"user:1\"x,10", "text after a closing quote"},
        {"us\"er,10", "a quote inside an unquoted cell"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err.msg[0] = '\0';
        if (csv_row("demo", "member,score", cases[i].line, &row, &err) != RC_E_BAD_REQUEST ||
            !strstr(err.msg, cases[i].says))
            fail_msg("%s: got '%s', expected '%s'", cases[i].line, err.msg, cases[i].says);
    }
    /* a tab in a name is fine, as in a profile written over the API */
    assert_int_equal(csv_row("demo", "member,score,name", "user:1,1,\"a\tb\"", &row, &err), 0);
    assert_string_equal(row.name, "a\tb");
    assert_int_equal(csv_row("demo", "member,score,name", "user:1,1,\xff", &row, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "UTF-8"));
    char big[400];
    memset(big, 'x', sizeof big);
    memcpy(big, "user:1,1,", 9);
    big[sizeof big - 1] = '\0';
    assert_int_equal(csv_row("demo", "member,score,name", big, &row, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "longer than 256 bytes"));
}

static void test_a_multi_field_csv_row_gives_the_fields_it_names(void **state)
{
    (void)state;
    struct rc_import_row row;
    struct rc_error err;
    assert_int_equal(csv_row("clears", "member,first_clear_ms,clears,revives", "u1,1500,5,", &row, &err), 0);
    assert_int_equal(row.nfields, 2); /* revives empty: left as stored */
    assert_string_equal(row.fields[0].name, "first_clear_ms");
    assert_int_equal(row.fields[0].value, 1500);
    assert_string_equal(row.fields[1].name, "clears");
    assert_int_equal(row.fields[1].value, 5);
    assert_int_equal(csv_row("clears", "member,clears,revives", "u1,,", &row, &err), RC_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "every field cell is empty"));
}

static void test_jsonl_rows_parse_like_the_protocol(void **state)
{
    (void)state;
    struct rc_import_row row;
    struct rc_error err;
    assert_int_equal(json_row("demo", "{\"rank\":3,\"member\":\"user:1\",\"score\":50,\"name\":\"Bea\",\"x\":1}", &row,
                              &err), 0);
    assert_string_equal(row.member, "user:1");
    assert_int_equal(row.score, 50);
    assert_string_equal(row.name, "Bea");
    /* an export row of a multi-field board: score ignored, fields used */
    assert_int_equal(json_row("clears",
                              "{\"member\":\"u\",\"score\":5,\"fields\":{\"clears\":5,\"revives\":1,\"first_clear_ms\":9}}",
                              &row, &err), 0);
    assert_int_equal(row.nfields, 3);
    assert_int_equal(row.fields[2].value, 9);
    static const struct {
        const char *board, *line, *says;
    } bad[] = {
        {"demo", "{\"member\":\"u\",\"score\":1.5}", "score is missing or not an integer"},
        {"demo", "{\"member\":\"u\"}", "score is missing"},
        {"demo", "{\"score\":1}", "member is missing"},
        {"demo", "[1]", "must be a JSON object"},
        {"demo", "{\"member\":\"u\",\"score\":01}", "leading zero"},
        {"demo", "{\"member\":\"u\",\"score\":1,\"score\":2}", "duplicate field"},
        {"demo", "{\"member\":\"u\",\"score\":1,\"name\":5}", "name must be a string"},
        {"clears", "{\"member\":\"u\",\"fields\":{\"laps\":1}}", "has no field 'laps'"},
        {"clears", "{\"member\":\"u\",\"fields\":{}}", "at least one field"},
        {"clears", "{\"member\":\"u\",\"score\":3}", "fields is missing"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = '\0';
        if (json_row(bad[i].board, bad[i].line, &row, &err) != RC_E_BAD_REQUEST || !strstr(err.msg, bad[i].says))
            fail_msg("%s: got '%s', expected '%s'", bad[i].line, err.msg, bad[i].says);
    }
}

static void test_the_req_of_a_row_is_stable_valid_and_tells_rows_apart(void **state)
{
    (void)state;
    char a[RC_REQ_MAX + 1], b[RC_REQ_MAX + 1];
    const char *h = "member,score";
    assert_int_equal(rc_import_row_req("demo", h, strlen(h), 2, "u,1", 3, a), 0);
    assert_int_equal(rc_import_row_req("demo", h, strlen(h), 2, "u,1", 3, b), 0);
    assert_string_equal(a, b);
    assert_int_equal(strlen(a), 4 + 32);
    assert_true(rc_names_req_valid(a, strlen(a)));
    assert_int_equal(strncmp(a, "imp-", 4), 0);
    /* pinned: a rerun on another machine or build must give the same id */
    assert_string_equal(a, "imp-" "08284d06b1cbe06f" "3c1e9d488d22eac8");
    /* the same text on another line, board, header or content is another row */
    assert_int_equal(rc_import_row_req("demo", h, strlen(h), 3, "u,1", 3, b), 0);
    assert_string_not_equal(a, b);
    assert_int_equal(rc_import_row_req("demo2", h, strlen(h), 2, "u,1", 3, b), 0);
    assert_string_not_equal(a, b);
    assert_int_equal(rc_import_row_req("demo", "score,member", 12, 2, "u,1", 3, b), 0);
    assert_string_not_equal(a, b);
    assert_int_equal(rc_import_row_req("demo", h, strlen(h), 2, "u,2", 3, b), 0);
    assert_string_not_equal(a, b);
    /* the separators keep parts from sliding into each other */
    assert_int_equal(rc_import_row_req("dem", "omember,score", 13, 2, "u,1", 3, b), 0);
    assert_string_not_equal(a, b);
}

static void test_a_row_becomes_a_write_the_builder_takes(void **state)
{
    (void)state;
    struct rc_import_row row;
    struct rc_request r;
    struct rc_write_args a;
    struct rc_period p;
    struct rc_error err;
    int64_t now = 1767225600000LL + 1000; /* 2026-01-01T00:00:01Z */
    assert_int_equal(csv_row("laps", "member,score", "car:7,81234", &row, &err), 0);
    assert_int_equal(rc_import_row_request("laps", RC_OP_BEST, &row, "imp-1", &r, &err), 0);
    assert_int_equal(rc_period_at(&board("laps")->period, now, &p), 0);
    assert_int_equal(rc_write_args_build(board("laps"), &r, &p, now, 0, &a, &err), 0);
    assert_string_equal(a.argv[0], "best");
    assert_string_equal(a.argv[1], "car:7");
    assert_string_equal(a.argv[2], "81234");
    assert_string_equal(a.keys[3], "rc:{laps|}:req:imp-1");
    /* a row outside the board's range is refused before Redis is asked */
    assert_int_equal(csv_row("laps", "member,score", "car:7,3600001", &row, &err), 0);
    assert_int_equal(rc_import_row_request("laps", RC_OP_BEST, &row, "imp-2", &r, &err), 0);
    assert_int_equal(rc_write_args_build(board("laps"), &r, &p, now, 0, &a, &err), RC_E_OUT_OF_RANGE);
}

/* ---- export lines --------------------------------------------------------- */

static void test_export_headers_name_the_columns_import_reads(void **state)
{
    (void)state;
    char buf[256];
    struct rc_import_cols cols;
    struct rc_error err;
    assert_int_equal(rc_export_fmt_header(board("demo"), RC_EXPORT_CSV, buf, sizeof buf), strlen("rank,member,score,name\n"));
    assert_string_equal(buf, "rank,member,score,name\n");
    rc_export_fmt_header(board("clears"), RC_EXPORT_CSV, buf, sizeof buf);
    assert_string_equal(buf, "rank,member,clears,revives,first_clear_ms,name\n");
    buf[strlen(buf) - 1] = '\0';
    assert_int_equal(header("clears", buf, &cols, &err), 0);
    assert_int_equal(rc_export_fmt_header(board("demo"), RC_EXPORT_JSONL, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
}

static void test_export_rows_decode_scores_and_escape_text(void **state)
{
    (void)state;
    char buf[512];
    const struct rc_board *demo = board("demo");
    double c;
    int64_t now = 1767225600000LL + 5000, base = demo->layout.tb_base_ms;
    uint64_t slot;
    assert_int_equal(rc_codec_tb_slot(&demo->layout, base, now, &slot), 0);
    assert_int_equal(rc_codec_encode_points(&demo->layout, -17, slot, &c, NULL), 0);
    rc_export_fmt_row(demo, RC_EXPORT_CSV, 3, "user:1", c, "Bob, \"B\"", buf, sizeof buf);
    assert_string_equal(buf, "3,user:1,-17,\"Bob, \"\"B\"\"\"\n");
    rc_export_fmt_row(demo, RC_EXPORT_CSV, 4, "user:2", c, NULL, buf, sizeof buf);
    assert_string_equal(buf, "4,user:2,-17,\n");
    rc_export_fmt_row(demo, RC_EXPORT_JSONL, 3, "user:1", c, "a\"b\\c\x01", buf, sizeof buf);
    assert_string_equal(buf, "{\"rank\":3,\"member\":\"user:1\",\"score\":-17,\"name\":\"a\\\"b\\\\c\\u0001\"}\n");
    rc_export_fmt_row(demo, RC_EXPORT_JSONL, 4, "user:2", c, "", buf, sizeof buf);
    assert_string_equal(buf, "{\"rank\":4,\"member\":\"user:2\",\"score\":-17}\n");

    const struct rc_board *cl = board("clears");
    int64_t v[3] = {5, 1, 1500};
    assert_int_equal(rc_codec_encode_fields(&cl->layout, v, 0, &c, NULL), 0);
    rc_export_fmt_row(cl, RC_EXPORT_CSV, 1, "u", c, "Z", buf, sizeof buf);
    assert_string_equal(buf, "1,u,5,1,1500,Z\n");
    rc_export_fmt_row(cl, RC_EXPORT_JSONL, 1, "u", c, NULL, buf, sizeof buf);
    assert_string_equal(buf, "{\"rank\":1,\"member\":\"u\",\"score\":5,\"fields\":{\"clears\":5,\"revives\":1,"
                             "\"first_clear_ms\":1500}}\n");
    /* both lines load back as the same row */
    struct rc_import_row row;
    struct rc_error err;
    buf[strlen(buf) - 1] = '\0';
    assert_int_equal(json_row("clears", buf, &row, &err), 0);
    assert_int_equal(row.nfields, 3);
    assert_int_equal(row.fields[1].value, 1);
}

static void test_a_hot_board_exports_its_weighted_scores_as_they_are(void **state)
{
    (void)state;
    char buf[256];
    rc_export_fmt_row(board("hot"), RC_EXPORT_CSV, 1, "h:1", 12.5, NULL, buf, sizeof buf);
    assert_string_equal(buf, "1,h:1,12.5,\n");
    rc_export_fmt_row(board("hot"), RC_EXPORT_JSONL, 2, "h:2", 0.1, NULL, buf, sizeof buf);
    assert_string_equal(buf, "{\"rank\":2,\"member\":\"h:2\",\"score\":0.1}\n");
}

static void test_export_rows_report_the_length_a_short_buffer_needs(void **state)
{
    (void)state;
    char small[8], big[128];
    size_t need = rc_export_fmt_row(board("demo"), RC_EXPORT_JSONL, 1, "user:1", 0, "Ann", small, sizeof small);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_int_equal(rc_export_fmt_row(board("demo"), RC_EXPORT_JSONL, 1, "user:1", 0, "Ann", big, sizeof big), need);
    assert_int_equal(strlen(big), need);
    assert_memory_equal(small, big, sizeof small - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_import_op_is_set_best_or_submit_by_board),
        cmocka_unit_test(test_a_csv_row_gives_member_score_and_name),
        cmocka_unit_test(test_csv_headers_that_cannot_load_are_refused_naming_the_column),
        cmocka_unit_test(test_bad_csv_rows_are_refused_with_a_reason),
        cmocka_unit_test(test_a_multi_field_csv_row_gives_the_fields_it_names),
        cmocka_unit_test(test_jsonl_rows_parse_like_the_protocol),
        cmocka_unit_test(test_the_req_of_a_row_is_stable_valid_and_tells_rows_apart),
        cmocka_unit_test(test_a_row_becomes_a_write_the_builder_takes),
        cmocka_unit_test(test_export_headers_name_the_columns_import_reads),
        cmocka_unit_test(test_export_rows_decode_scores_and_escape_text),
        cmocka_unit_test(test_a_hot_board_exports_its_weighted_scores_as_they_are),
        cmocka_unit_test(test_export_rows_report_the_length_a_short_buffer_needs),
    };
    return cmocka_run_group_tests(tests, load, unload);
}
