/* test_proto_encode.c - the rc_encode_* functions against PROTOCOL.md: the
 * documented examples byte for byte, exact integer printing, id echo, null
 * prev_rank and rank, the profile join, and no leak on any allocation failure
 * (run under -fsanitize=address,undefined too).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "rc_proto.h"

/* Parses text (which must be valid JSON) and frees it. */
static cJSON *parse_and_free(char *text)
{
    cJSON *json;

    assert_non_null(text);
    assert_true(rc_utf8_valid(text, strlen(text)));
    json = cJSON_Parse(text);
    if (!json)
        fail_msg("not JSON: %s", text);
    free(text);
    return json;
}

static void assert_text(char *text, const char *expected)
{
    assert_non_null(text);
    assert_string_equal(text, expected);
    free(text);
}

static const char *str_of(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsString(item))
        fail_msg("%s is not a string", key);
    return item->valuestring;
}

static double num_of(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(item))
        fail_msg("%s is not a number", key);
    return item->valuedouble;
}

static const struct rc_kv PLAYER_ONE[] = {{"name", "PlayerOne"}};

/* ---- the PROTOCOL.md examples, byte for byte --------------------------- */

static void encodes_snapshot_as_protocol_example(void **state)
{
    const struct rc_out_row rows[] = {
        {1, "user:101", 1050, NULL, 0, PLAYER_ONE, 1, 0, 0},
        {2, "user:7", 990, NULL, 0, NULL, 0, 0, 0},
    };
    (void)state;
    assert_text(rc_encode_snapshot("1", "s1", "b", "2026-W47", 42, 2, rows, 2, 0),
                "{\"op\":\"snapshot\",\"id\":1,\"sub\":\"s1\",\"board\":\"b\","
                "\"period\":\"2026-W47\",\"seq\":42,\"total\":2,\"rows\":["
                "{\"rank\":1,\"member\":\"user:101\",\"score\":1050,\"name\":\"PlayerOne\"},"
                "{\"rank\":2,\"member\":\"user:7\",\"score\":990}]}");
}

static void encodes_delta_as_protocol_example(void **state)
{
    const struct rc_out_row rows[] = {{3, "user:101", 1100, NULL, 0, NULL, 0, 0, 0}};
    const char *const removed[] = {"user:77"};
    (void)state;
    assert_text(rc_encode_delta("s1", 43, 120, rows, 1, removed, 1),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":43,\"total\":120,\"rows\":["
                "{\"rank\":3,\"member\":\"user:101\",\"score\":1100}],\"removed\":[\"user:77\"]}");
}

/* v1.1: every delta row says where its member stood before (null: new). */
static void encodes_delta_with_prev_rank(void **state)
{
    const struct rc_out_row rows[] = {{1, "user:101", 1100, NULL, 0, PLAYER_ONE, 1, 0, 0},
                                      {9, "user:5", 30, NULL, 0, NULL, 0, 0, 0}};
    const int64_t prev[] = {57, 0};
    (void)state;
    assert_text(rc_encode_delta_prev("s1", 43, 120, rows, prev, 2, NULL, 0),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":43,\"total\":120,\"rows\":["
                "{\"rank\":1,\"prev_rank\":57,\"member\":\"user:101\",\"score\":1100,\"name\":\"PlayerOne\"},"
                "{\"rank\":9,\"prev_rank\":null,\"member\":\"user:5\",\"score\":30}],\"removed\":[]}");
}

static void encodes_event_as_protocol_example(void **state)
{
    (void)state;
    assert_text(rc_encode_event("s1", 44, "user:101", 1100, 50, 3, 57, 1763769600123LL, NULL, 0),
                "{\"op\":\"event\",\"sub\":\"s1\",\"seq\":44,\"member\":\"user:101\","
                "\"score\":1100,\"delta\":50,\"rank\":3,\"prev_rank\":57,\"at\":1763769600123}");
}

static void encodes_ack_as_protocol_example(void **state)
{
    (void)state;
    assert_text(rc_encode_ack("7", "b", "user:101", 1100, 3, 45, 0, NULL, 0),
                "{\"op\":\"ack\",\"id\":7,\"board\":\"b\",\"member\":\"user:101\",\"score\":1100,"
                "\"rank\":3,\"seq\":45,\"duplicate\":false}");
}

static void encodes_unranked_ack_with_null_rank_and_seq(void **state)
{
    (void)state;
    assert_text(rc_encode_ack_unranked("7", "global", "u:1", 1100, 0, NULL, 0, -1),
                "{\"op\":\"ack\",\"id\":7,\"board\":\"global\",\"member\":\"u:1\",\"score\":1100,"
                "\"rank\":null,\"seq\":null,\"rank_unknown\":true,\"duplicate\":false}");
    assert_text(rc_encode_ack_unranked(NULL, "global", "u:1", 5, 1, NULL, 0, 1),
                "{\"op\":\"ack\",\"board\":\"global\",\"member\":\"u:1\",\"score\":5,"
                "\"rank\":null,\"seq\":null,\"rank_unknown\":true,\"duplicate\":true,\"replicas\":1}");
}

static void encodes_rank_as_protocol_example(void **state)
{
    (void)state;
    assert_text(rc_encode_rank("\"r\"", "user:101", 1100, 3, 120),
                "{\"op\":\"rank\",\"id\":\"r\",\"member\":\"user:101\",\"score\":1100,\"rank\":3,"
                "\"total\":120}");
}

static void encodes_error_as_protocol_example(void **state)
{
    (void)state;
    assert_text(rc_encode_error("9", RC_E_BAD_REQUEST, "delta must be a finite number"),
                "{\"op\":\"error\",\"id\":9,\"code\":\"bad_request\","
                "\"message\":\"delta must be a finite number\"}");
}

static void encodes_pong_and_unsubscribed(void **state)
{
    (void)state;
    assert_text(rc_encode_pong("\"p\""), "{\"op\":\"pong\",\"id\":\"p\"}");
    assert_text(rc_encode_unsubscribed("2", "s1"),
                "{\"op\":\"unsubscribed\",\"id\":2,\"sub\":\"s1\"}");
}

static void encodes_authed_and_a_view_error(void **state)
{
    (void)state;
    assert_text(rc_encode_authed("4", 1800000000), "{\"op\":\"authed\",\"id\":4,\"exp\":1800000000}");
    assert_text(rc_encode_view_error("s3", RC_E_UNAUTHORIZED, "the token expired"),
                "{\"op\":\"error\",\"code\":\"unauthorized\",\"message\":\"the token expired\",\"sub\":\"s3\"}");
}

/* ---- optional parts ---------------------------------------------------- */

static void omits_id_when_request_had_none(void **state)
{
    (void)state;
    assert_text(rc_encode_pong(NULL), "{\"op\":\"pong\"}");
    assert_text(rc_encode_unsubscribed(NULL, "s1"), "{\"op\":\"unsubscribed\",\"sub\":\"s1\"}");
    assert_text(rc_encode_error(NULL, RC_E_TOO_LARGE, "x"),
                "{\"op\":\"error\",\"code\":\"too_large\",\"message\":\"x\"}");
    assert_text(rc_encode_ack(NULL, "b", "m", 1, 1, 1, 1, NULL, 0),
                "{\"op\":\"ack\",\"board\":\"b\",\"member\":\"m\",\"score\":1,\"rank\":1,\"seq\":1,"
                "\"duplicate\":true}");
}

static void echoes_every_scalar_id_raw(void **state)
{
    static const char *const ids[] = {"null", "true", "false", "0", "-3", "1.5",
                                      "1000000000000000", "\"x\"", "\"a\\\"b\"", "\"\xc3\xa9\""};
    (void)state;
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char expected[64];
        snprintf(expected, sizeof expected, "{\"op\":\"pong\",\"id\":%s}", ids[i]);
        assert_text(rc_encode_pong(ids[i]), expected);
    }
}

static void snapshot_omits_period_and_reset_unless_given(void **state)
{
    cJSON *j;
    (void)state;
    j = parse_and_free(rc_encode_snapshot(NULL, "s1", "b", NULL, 1, 0, NULL, 0, 0));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "id"));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "period"));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "reset"));
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "rows")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "rows")), 0);
    cJSON_Delete(j);

    j = parse_and_free(rc_encode_snapshot("\"q\"", "s1", "b", "previous", 1, 0, NULL, 0, 1));
    assert_string_equal(str_of(j, "id"), "q");
    assert_string_equal(str_of(j, "period"), "previous");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "reset")));
    cJSON_Delete(j);
}

static void snapshot_carries_the_epoch_when_given(void **state)
{
    (void)state;
    assert_text(rc_encode_snapshot_epoch(NULL, "s1", "b", NULL, 7, 0, NULL, 0, 1, "00ff"),
                "{\"op\":\"snapshot\",\"sub\":\"s1\",\"board\":\"b\",\"seq\":7,\"total\":0,\"epoch\":\"00ff\","
                "\"reset\":true,\"rows\":[]}");
    assert_text(rc_encode_snapshot_epoch(NULL, NULL, "b", NULL, 0, 0, NULL, 0, 0, ""),
                "{\"op\":\"snapshot\",\"board\":\"b\",\"seq\":0,\"total\":0,\"epoch\":\"\",\"rows\":[]}");
}

static void add_viewers_splices_the_count_into_a_delta(void **state)
{
    (void)state;
    char *d = rc_encode_delta("s1", 4, 2, NULL, 0, NULL, 0);
    assert_text(rc_encode_add_viewers(d, 12345678901LL),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":4,\"total\":2,\"rows\":[],\"removed\":[],"
                "\"viewers\":12345678901}");
    assert_text(rc_encode_add_viewers(strdup("{}"), 0), "{\"viewers\":0}");
    assert_null(rc_encode_add_viewers(strdup("{}"), -1)); /* never a negative count */
    assert_null(rc_encode_add_viewers(strdup("[1]"), 1));
    assert_null(rc_encode_add_viewers(NULL, 1));
}

static void freeze_fields_and_replies(void **state)
{
    (void)state;
    char *d = rc_encode_delta("s1", 4, 2, NULL, 0, NULL, 0);
    assert_text(rc_encode_add_freeze(d, 1, 3, 4, 0),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":4,\"total\":2,\"rows\":[],\"removed\":[],\"frozen\":3}");
    d = rc_encode_delta("s1", 9, 2, NULL, 0, NULL, 0);
    assert_text(rc_encode_add_freeze(d, 1, 3, 4, 1),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":9,\"total\":2,\"rows\":[],\"removed\":[],\"frozen\":3,"
                "\"shown\":4}");
    assert_text(rc_encode_add_freeze(strdup("{}"), 0, 0, 0, 1), "{}"); /* not frozen: as it was */
    assert_null(rc_encode_add_freeze(NULL, 1, 1, 1, 0));
    assert_text(rc_encode_frozen("7", "b", NULL, 12), "{\"op\":\"frozen\",\"id\":7,\"board\":\"b\",\"seq\":12,\"frozen\":12}");
    assert_text(rc_encode_revealed(NULL, "b", "2026-11-26", 13, 2, 1, 12, 0),
                "{\"op\":\"revealed\",\"board\":\"b\",\"period\":\"2026-11-26\",\"seq\":13,\"pending\":2,\"frozen\":12}");
    assert_text(rc_encode_revealed(NULL, "b", NULL, 20, 0, 0, 0, 5),
                "{\"op\":\"revealed\",\"board\":\"b\",\"seq\":20,\"pending\":0,\"skipped\":5}");
    assert_text(rc_encode_freeze_state("b", NULL, 0, 0, 0, 20),
                "{\"board\":\"b\",\"frozen\":null,\"shown\":null,\"seq\":20,\"pending\":0}");
    assert_text(rc_encode_freeze_state("b", NULL, 1, 12, 13, 20),
                "{\"board\":\"b\",\"frozen\":12,\"shown\":13,\"seq\":20,\"pending\":7}");
}

static void stats_names_the_period_only_when_given(void **state)
{
    (void)state;
    assert_text(rc_encode_stats("demo", NULL, 3, 10, 42),
                "{\"board\":\"demo\",\"viewers\":3,\"total\":10,\"seq\":42}");
    assert_text(rc_encode_stats("daily", "2026-11-25", 0, 0, 0),
                "{\"board\":\"daily\",\"period\":\"2026-11-25\",\"viewers\":0,\"total\":0,\"seq\":0}");
}

static void add_epoch_splices_the_field_into_a_message(void **state)
{
    (void)state;
    char *d = rc_encode_delta("s1", 1, 1, NULL, 0, NULL, 0);
    assert_text(rc_encode_add_epoch(d, "abc123"),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":1,\"total\":1,\"rows\":[],\"removed\":[],"
                "\"epoch\":\"abc123\"}");
    assert_text(rc_encode_add_epoch(strdup("{}"), "e"), "{\"epoch\":\"e\"}");
    assert_null(rc_encode_add_epoch(strdup("{}"), "a\"b")); /* never an id the JSON must escape */
    assert_null(rc_encode_add_epoch(strdup("[1]"), "e"));
    assert_null(rc_encode_add_epoch(NULL, "e"));
}

static void add_cursor_splices_the_field_into_a_message(void **state)
{
    (void)state;
    assert_text(rc_encode_add_cursor(strdup("{\"op\":\"event\"}"), "0a1b2c3d:5.:0"),
                "{\"op\":\"event\",\"cursor\":\"0a1b2c3d:5.:0\"}");
    assert_text(rc_encode_add_cursor(strdup("{}"), ":1"), "{\"cursor\":\":1\"}");
    assert_null(rc_encode_add_cursor(strdup("{}"), "a\"b"));
    assert_null(rc_encode_add_cursor(strdup("{}"), ""));
    assert_null(rc_encode_add_cursor(NULL, ":1"));
}

static void delta_without_changes_has_empty_arrays(void **state)
{
    (void)state;
    assert_text(rc_encode_delta("s1", 5, 9, NULL, 0, NULL, 0),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":5,\"total\":9,\"rows\":[],"
                "\"removed\":[]}");
}

static void event_prints_null_prev_rank_for_a_newcomer(void **state)
{
    cJSON *j;
    (void)state;
    j = parse_and_free(rc_encode_event("s1", 1, "m", 10, 10, 4, 0, 1, NULL, 0));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "prev_rank")));
    assert_int_equal(num_of(j, "rank"), 4);
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "fields"));
    cJSON_Delete(j);
}

static void rank_prints_nulls_when_member_is_absent(void **state)
{
    (void)state;
    assert_text(rc_encode_rank("1", "user:9", 0, 0, 120),
                "{\"op\":\"rank\",\"id\":1,\"member\":\"user:9\",\"score\":null,\"rank\":null,"
                "\"total\":120}");
}

static void error_carries_the_code_name_of_every_code(void **state)
{
    static const struct {
        int code;
        const char *name;
    } codes[] = {
        {RC_E_BAD_REQUEST, "bad_request"},   {RC_E_UNKNOWN_BOARD, "unknown_board"},
        {RC_E_UNAUTHORIZED, "unauthorized"}, {RC_E_FORBIDDEN, "forbidden"},
        {RC_E_OUT_OF_RANGE, "out_of_range"}, {RC_E_RATE_LIMITED, "rate_limited"},
        {RC_E_UNAVAILABLE, "unavailable"},   {RC_E_TOO_LARGE, "too_large"},
        {RC_E_INTERNAL, "internal"},         {RC_E_NOT_FOUND, "bad_request"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        cJSON *j = parse_and_free(rc_encode_error(NULL, codes[i].code, "m"));
        assert_string_equal(str_of(j, "op"), "error");
        assert_string_equal(str_of(j, "code"), codes[i].name);
        assert_string_equal(str_of(j, "message"), "m");
        cJSON_Delete(j);
    }
}

static void error_message_is_escaped(void **state)
{
    cJSON *j;
    (void)state;
    j = parse_and_free(rc_encode_error(NULL, RC_E_BAD_REQUEST, "unknown op 'a\"b\\c\n'"));
    assert_string_equal(str_of(j, "message"), "unknown op 'a\"b\\c\n'");
    cJSON_Delete(j);
    j = parse_and_free(rc_encode_error(NULL, RC_E_INTERNAL, NULL));
    assert_string_equal(str_of(j, "message"), "");
    cJSON_Delete(j);
}

/* ---- fields and profiles ----------------------------------------------- */

static const struct rc_field_value KD[] = {{"kills", 12}, {"deaths", 3}};

static void event_and_ack_carry_fields_when_given(void **state)
{
    (void)state;
    assert_text(rc_encode_event("s1", 2, "m", 5, 1, 1, 2, 3, KD, 2),
                "{\"op\":\"event\",\"sub\":\"s1\",\"seq\":2,\"member\":\"m\",\"score\":5,"
                "\"delta\":1,\"rank\":1,\"prev_rank\":2,\"at\":3,"
                "\"fields\":{\"kills\":12,\"deaths\":3}}");
    assert_text(rc_encode_ack("1", "b", "m", 5, 1, 9, 0, KD, 2),
                "{\"op\":\"ack\",\"id\":1,\"board\":\"b\",\"member\":\"m\",\"score\":5,\"rank\":1,"
                "\"seq\":9,\"duplicate\":false,\"fields\":{\"kills\":12,\"deaths\":3}}");
}

static void rows_with_shared_places_carry_place_and_tied(void **state)
{
    static const struct rc_kv profile[] = {{"tied", "no"}, {"place", "Paris"}, {"name", "P"}};
    const struct rc_out_row rows[] = {
        {2, "a", 30, NULL, 0, profile, 3, 2, 1},
        {4, "c", 20, NULL, 0, NULL, 0, 4, 0},
        {5, "d", 10, NULL, 0, profile, 3, 0, 0},
    };
    (void)state;
    /* a profile never shadows place or tied of a row that has places; a
     * row without places keeps its profile's "place" and "tied" */
    assert_text(rc_encode_delta("s1", 1, 5, rows, 3, NULL, 0),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":1,\"total\":5,\"rows\":["
                "{\"rank\":2,\"member\":\"a\",\"score\":30,\"place\":2,\"tied\":true,\"name\":\"P\"},"
                "{\"rank\":4,\"member\":\"c\",\"score\":20,\"place\":4},"
                "{\"rank\":5,\"member\":\"d\",\"score\":10,\"tied\":\"no\",\"place\":\"Paris\",\"name\":\"P\"}],"
                "\"removed\":[]}");
}

static void row_puts_fields_before_profile(void **state)
{
    const struct rc_out_row rows[] = {{1, "m", 7, KD, 2, PLAYER_ONE, 1, 0, 0}};
    (void)state;
    assert_text(rc_encode_delta("s1", 1, 1, rows, 1, NULL, 0),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":1,\"total\":1,\"rows\":[{\"rank\":1,"
                "\"member\":\"m\",\"score\":7,\"fields\":{\"kills\":12,\"deaths\":3},"
                "\"name\":\"PlayerOne\"}],\"removed\":[]}");
}

static void profile_join_never_shadows_row_keys(void **state)
{
    const struct rc_kv profile[] = {
        {"rank", "99"},     {"member", "evil"}, {"score", "1e9"}, {"fields", "x"},
        {"name", "P\"1\n"}, {"name", "second"}, {"avatar", "a.png"},
        {"bad", "\xff"},    {"\xc3\x28", "v"},  {NULL, "v"},      {"k", NULL},
    };
    const struct rc_out_row rows[] = {{4, "user:1", 70, NULL, 0, profile, 11, 0, 0}};
    cJSON *j, *row;
    (void)state;

    j = parse_and_free(rc_encode_snapshot(NULL, "s1", "b", NULL, 1, 1, rows, 1, 0));
    row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "rows"), 0);
    assert_non_null(row);
    assert_int_equal(cJSON_GetArraySize(row), 5);
    assert_int_equal(num_of(row, "rank"), 4);
    assert_string_equal(str_of(row, "member"), "user:1");
    assert_int_equal(num_of(row, "score"), 70);
    assert_string_equal(str_of(row, "name"), "P\"1\n");
    assert_string_equal(str_of(row, "avatar"), "a.png");
    cJSON_Delete(j);
}

/* ---- numbers ----------------------------------------------------------- */

/* The "score" text of an ack for score. */
static void assert_score_text(double score, const char *expected)
{
    char want[128];
    char *text = rc_encode_ack(NULL, "b", "m", score, 1, 1, 0, NULL, 0);

    snprintf(want, sizeof want, "\"score\":%s,", expected);
    assert_non_null(text);
    if (!strstr(text, want))
        fail_msg("%.17g printed as %s, wanted %s", score, text, want);
    free(text);
}

static void prints_safe_integers_exactly(void **state)
{
    (void)state;
    assert_score_text(0, "0");
    assert_score_text(-0.0, "0");
    assert_score_text(1, "1");
    assert_score_text(-1100, "-1100");
    assert_score_text(1e15, "1000000000000000");
    assert_score_text(1e15 + 1, "1000000000000001");
    assert_score_text(123456789012345.0, "123456789012345");
    assert_score_text(9007199254740991.0, "9007199254740991");
    assert_score_text(-9007199254740991.0, "-9007199254740991");
}

static void prints_fractions_in_shortest_round_trip_form(void **state)
{
    double third = 1.0 / 3.0;
    char *text;
    cJSON *j;
    (void)state;

    assert_score_text(1.5, "1.5");
    assert_score_text(0.1, "0.1");
    assert_score_text(-2.25, "-2.25");
    assert_score_text(0.1 + 0.2, "0.30000000000000004");
    assert_score_text(9007199254740992.0, "9007199254740992");
    assert_score_text(1e300, "1e+300");
    assert_score_text(5e-324, "4.94065645841247e-324"); /* denormal: 15 digits suffice */
    text = rc_encode_ack(NULL, "b", "m", third, 1, 1, 0, NULL, 0);
    j = parse_and_free(text);
    assert_true(num_of(j, "score") == third);
    cJSON_Delete(j);
}

static void prints_non_finite_scores_as_null(void **state)
{
    (void)state;
    assert_score_text(NAN, "null");
    assert_score_text(INFINITY, "null");
    assert_score_text(-INFINITY, "null");
    assert_text(rc_encode_event("s", 1, "m", NAN, INFINITY, 1, 1, 1, NULL, 0),
                "{\"op\":\"event\",\"sub\":\"s\",\"seq\":1,\"member\":\"m\",\"score\":null,"
                "\"delta\":null,\"rank\":1,\"prev_rank\":1,\"at\":1}");
}

static void prints_counters_exactly_at_any_size(void **state)
{
    (void)state;
    assert_text(rc_encode_delta("s", INT64_MAX, INT64_MIN, NULL, 0, NULL, 0),
                "{\"op\":\"delta\",\"sub\":\"s\",\"seq\":9223372036854775807,"
                "\"total\":-9223372036854775808,\"rows\":[],\"removed\":[]}");
}

static void prints_field_values_exactly(void **state)
{
    const struct rc_field_value f[] = {{"a", 9007199254740991LL}, {"b", -1000000000000000LL}};
    (void)state;
    assert_text(rc_encode_event("s", 1, "m", 0, 0, 1, 0, 0, f, 2),
                "{\"op\":\"event\",\"sub\":\"s\",\"seq\":1,\"member\":\"m\",\"score\":0,"
                "\"delta\":0,\"rank\":1,\"prev_rank\":null,\"at\":0,"
                "\"fields\":{\"a\":9007199254740991,\"b\":-1000000000000000}}");
}

/* ---- allocation failures ----------------------------------------------- */

static long alloc_budget = -1;

static void *failing_malloc(size_t size)
{
    if (alloc_budget == 0)
        return NULL;
    if (alloc_budget > 0)
        alloc_budget--;
    return malloc(size);
}

/* Every encoder, with the arguments that reach every branch. */
static char *encode_variant(int which)
{
    static const struct rc_kv profile[] = {{"name", "P"}, {"avatar", "a"}, {"rank", "x"}};
    static const struct rc_out_row rows[] = {
        {1, "a", 1.5, KD, 2, profile, 3, 0, 0},
        {2, "b", 2, NULL, 0, NULL, 0, 0, 0},
    };
    static const char *const removed[] = {"c", "d"};

    switch (which) {
    case 0: return rc_encode_snapshot("\"i\"", "s1", "b", "p", 1, 2, rows, 2, 1);
    case 1: return rc_encode_delta("s1", 1, 2, rows, 2, removed, 2);
    case 2: return rc_encode_event("s1", 1, "m", 1, 2, 3, 0, 5, KD, 2);
    case 3: return rc_encode_ack("1", "b", "m", 1, 2, 3, 1, KD, 2);
    case 4: return rc_encode_rank("1", "m", 1, 2, 3);
    case 5: return rc_encode_rank("1", "m", 1, 0, 3);
    case 6: return rc_encode_error("1", RC_E_FORBIDDEN, "no");
    case 7: return rc_encode_pong("1");
    case 8: return rc_encode_unsubscribed("1", "s1");
    default: return NULL;
    }
}

static void returns_null_without_leaks_on_allocation_failure(void **state)
{
    cJSON_Hooks hooks = {failing_malloc, free};
    (void)state;

    for (int which = 0; which <= 8; which++) {
        char *reference = encode_variant(which);
        long k;
        assert_non_null(reference);
        cJSON_InitHooks(&hooks);
        for (k = 0; k < 10000; k++) {
            char *text;
            alloc_budget = k;
            text = encode_variant(which);
            if (text) {
                assert_string_equal(text, reference);
                free(text);
                break;
            }
        }
        alloc_budget = -1;
        cJSON_InitHooks(NULL);
        assert_true(k > 0 && k < 10000);
        free(reference);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(encodes_snapshot_as_protocol_example),
        cmocka_unit_test(encodes_delta_as_protocol_example),
        cmocka_unit_test(encodes_delta_with_prev_rank),
        cmocka_unit_test(encodes_event_as_protocol_example),
        cmocka_unit_test(encodes_ack_as_protocol_example),
        cmocka_unit_test(encodes_unranked_ack_with_null_rank_and_seq),
        cmocka_unit_test(encodes_rank_as_protocol_example),
        cmocka_unit_test(encodes_error_as_protocol_example),
        cmocka_unit_test(encodes_pong_and_unsubscribed),
        cmocka_unit_test(omits_id_when_request_had_none),
        cmocka_unit_test(encodes_authed_and_a_view_error),
        cmocka_unit_test(echoes_every_scalar_id_raw),
        cmocka_unit_test(snapshot_omits_period_and_reset_unless_given),
        cmocka_unit_test(snapshot_carries_the_epoch_when_given),
        cmocka_unit_test(add_epoch_splices_the_field_into_a_message),
        cmocka_unit_test(add_cursor_splices_the_field_into_a_message),
        cmocka_unit_test(add_viewers_splices_the_count_into_a_delta),
        cmocka_unit_test(stats_names_the_period_only_when_given),
        cmocka_unit_test(delta_without_changes_has_empty_arrays),
        cmocka_unit_test(event_prints_null_prev_rank_for_a_newcomer),
        cmocka_unit_test(rank_prints_nulls_when_member_is_absent),
        cmocka_unit_test(error_carries_the_code_name_of_every_code),
        cmocka_unit_test(error_message_is_escaped),
        cmocka_unit_test(event_and_ack_carry_fields_when_given),
        cmocka_unit_test(row_puts_fields_before_profile),
        cmocka_unit_test(rows_with_shared_places_carry_place_and_tied),
        cmocka_unit_test(profile_join_never_shadows_row_keys),
        cmocka_unit_test(prints_safe_integers_exactly),
        cmocka_unit_test(prints_fractions_in_shortest_round_trip_form),
        cmocka_unit_test(prints_non_finite_scores_as_null),
        cmocka_unit_test(prints_counters_exactly_at_any_size),
        cmocka_unit_test(freeze_fields_and_replies),
        cmocka_unit_test(prints_field_values_exactly),
        cmocka_unit_test(returns_null_without_leaks_on_allocation_failure),
    };
    return cmocka_run_group_tests_name("rc_encode", tests, NULL, NULL);
}
