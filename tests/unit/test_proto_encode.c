/* test_proto_encode.c - the rc_encode_* functions against PROTOCOL.md: the
 * documented examples byte for byte, exact integer printing, id echo, null
 * prev_rank and rank, the profile join, and no leak on any allocation failure
 * (run under -fsanitize=address,undefined too).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
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
    assert_true(rc_names_utf8_valid(text, strlen(text)));
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

static struct rc_kv PLAYER_ONE_KV[] = {{"name", "PlayerOne"}};
static struct rc_profile PLAYER_ONE = {.n = 1, .kv = PLAYER_ONE_KV};

/* A board layout whose multi-field rows name their values kills, deaths. */
static struct rc_layout KD_LAYOUT;

static int setup_layout(void **state)
{
    (void)state;
    snprintf(KD_LAYOUT.fields[0].name, sizeof KD_LAYOUT.fields[0].name, "kills");
    snprintf(KD_LAYOUT.fields[1].name, sizeof KD_LAYOUT.fields[1].name, "deaths");
    return 0;
}

/* The delta of sub s1 with rows[0..n) printed (ranks from first_rank) and
 * nothing removed. */
static char *delta_of(int64_t seq, int64_t total, const struct rc_row *rows, size_t n, int64_t first_rank)
{
    struct rc_delta_msg m = {.sub = "s1", .seq = seq, .total = total,
                             .rows = {.rows = rows, .n = n, .first_rank = first_rank, .layout = &KD_LAYOUT}};
    return rc_proto_rows_delta(&m);
}

static char *ack_of(const char *id, const char *board, const char *member, double score, int64_t rank, int64_t seq,
                    int duplicate)
{
    struct rc_ack_msg m = {id, board, member, score, rank, seq, duplicate, NULL, 0, -1, 0, NULL, 0, NULL, 0, 0, 0};
    return rc_proto_encode_ack(&m);
}

static char *event_of(const char *sub, int64_t seq, const char *member, double score, double delta, int64_t rank,
                      int64_t prev_rank, int64_t at_ms, const struct rc_field_value *fields, unsigned nfields)
{
    struct rc_event_msg m = {sub, seq, member, score, delta, rank, prev_rank, at_ms, fields, nfields, {0}};
    return rc_proto_encode_event(&m);
}

/* ---- the PROTOCOL.md examples, byte for byte --------------------------- */

static void encodes_snapshot_as_protocol_example(void **state)
{
    const struct rc_row rows[] = {
        {.member = "user:101", .score = 1050, .profile = &PLAYER_ONE},
        {.member = "user:7", .score = 990},
    };
    struct rc_snapshot_msg m = {"1", "s1", "b", "2026-W47", 42, 2, 0, {.rows = rows, .n = 2, .first_rank = 1}, {0}, 0, NULL, 0, 0, 0, 0, 0, 0};
    (void)state;
    assert_text(rc_proto_rows_snapshot(&m),
                "{\"op\":\"snapshot\",\"id\":1,\"sub\":\"s1\",\"board\":\"b\","
                "\"period\":\"2026-W47\",\"seq\":42,\"total\":2,\"rows\":["
                "{\"rank\":1,\"member\":\"user:101\",\"score\":1050,\"name\":\"PlayerOne\"},"
                "{\"rank\":2,\"member\":\"user:7\",\"score\":990}]}");
}

static void encodes_delta_as_protocol_example(void **state)
{
    const struct rc_row rows[] = {{.member = "user:101", .score = 1100}};
    const struct rc_row old[] = {{.member = "user:5"}, {.member = "user:77"}};
    const size_t removed[] = {1};
    struct rc_delta_msg m = {"s1", 43, 120, {.rows = rows, .n = 1, .first_rank = 3}, old, removed, 1, {0}};
    (void)state;
    assert_text(rc_proto_rows_delta(&m),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":43,\"total\":120,\"rows\":["
                "{\"rank\":3,\"member\":\"user:101\",\"score\":1100}],\"removed\":[\"user:77\"]}");
}

/* v1.1: every delta row says where its member stood before (null: new). */
static void encodes_delta_with_prev_rank(void **state)
{
    /* a window from rank 1, rows 0 and 8 sent (picked in place) */
    struct rc_row rows[9] = {{.member = "user:101", .score = 1100, .profile = &PLAYER_ONE}};
    rows[8] = (struct rc_row){.member = "user:5", .score = 30};
    const size_t pick[] = {0, 8};
    const int64_t prev[] = {57, 0};
    struct rc_delta_msg m = {"s1", 43, 120, {rows, 2, pick, 1, NULL, prev}, NULL, NULL, 0, {0}};
    (void)state;
    assert_text(rc_proto_rows_delta(&m),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":43,\"total\":120,\"rows\":["
                "{\"rank\":1,\"prev_rank\":57,\"member\":\"user:101\",\"score\":1100,\"name\":\"PlayerOne\"},"
                "{\"rank\":9,\"prev_rank\":null,\"member\":\"user:5\",\"score\":30}],\"removed\":[]}");
}

static void encodes_event_as_protocol_example(void **state)
{
    (void)state;
    assert_text(event_of("s1", 44, "user:101", 1100, 50, 3, 57, 1763769600123LL, NULL, 0),
                "{\"op\":\"event\",\"sub\":\"s1\",\"seq\":44,\"member\":\"user:101\","
                "\"score\":1100,\"delta\":50,\"rank\":3,\"prev_rank\":57,\"at\":1763769600123}");
}

static void encodes_ack_as_protocol_example(void **state)
{
    (void)state;
    assert_text(ack_of("7", "b", "user:101", 1100, 3, 45, 0),
                "{\"op\":\"ack\",\"id\":7,\"board\":\"b\",\"member\":\"user:101\",\"score\":1100,"
                "\"rank\":3,\"seq\":45,\"duplicate\":false}");
}

static void encodes_unranked_ack_with_null_rank_and_seq(void **state)
{
    (void)state;
    struct rc_ack_msg m = {.id_json = "7", .board = "global", .member = "u:1", .score = 1100, .replicas = -1,
                           .unranked = 1};
    assert_text(rc_proto_encode_ack(&m),
                "{\"op\":\"ack\",\"id\":7,\"board\":\"global\",\"member\":\"u:1\",\"score\":1100,"
                "\"rank\":null,\"seq\":null,\"rank_unknown\":true,\"duplicate\":false}");
    m = (struct rc_ack_msg){.board = "global", .member = "u:1", .score = 5, .duplicate = 1, .replicas = 1,
                            .unranked = 1};
    assert_text(rc_proto_encode_ack(&m),
                "{\"op\":\"ack\",\"board\":\"global\",\"member\":\"u:1\",\"score\":5,"
                "\"rank\":null,\"seq\":null,\"rank_unknown\":true,\"duplicate\":true,\"replicas\":1}");
}

static void encodes_rank_as_protocol_example(void **state)
{
    (void)state;
    struct rc_rank_msg m = {"\"r\"", "user:101", 1100, 3, 120, {0}};
    assert_text(rc_proto_encode_rank(&m),
                "{\"op\":\"rank\",\"id\":\"r\",\"member\":\"user:101\",\"score\":1100,\"rank\":3,"
                "\"total\":120}");
}

static void encodes_error_as_protocol_example(void **state)
{
    (void)state;
    assert_text(rc_proto_encode_error("9", RC_E_BAD_REQUEST, "delta must be a finite number"),
                "{\"op\":\"error\",\"id\":9,\"code\":\"bad_request\","
                "\"message\":\"delta must be a finite number\"}");
}

static void encodes_pong_and_unsubscribed(void **state)
{
    (void)state;
    assert_text(rc_proto_encode_pong("\"p\""), "{\"op\":\"pong\",\"id\":\"p\"}");
    assert_text(rc_proto_encode_unsubscribed("2", "s1"),
                "{\"op\":\"unsubscribed\",\"id\":2,\"sub\":\"s1\"}");
}

static void encodes_authed_and_a_view_error(void **state)
{
    (void)state;
    assert_text(rc_proto_encode_authed("4", 1800000000), "{\"op\":\"authed\",\"id\":4,\"exp\":1800000000}");
    assert_text(rc_proto_encode_view_error("s3", RC_E_UNAUTHORIZED, "the token expired"),
                "{\"op\":\"error\",\"code\":\"unauthorized\",\"message\":\"the token expired\",\"sub\":\"s3\"}");
}

/* ---- optional parts ---------------------------------------------------- */

static void omits_id_when_request_had_none(void **state)
{
    (void)state;
    assert_text(rc_proto_encode_pong(NULL), "{\"op\":\"pong\"}");
    assert_text(rc_proto_encode_unsubscribed(NULL, "s1"), "{\"op\":\"unsubscribed\",\"sub\":\"s1\"}");
    assert_text(rc_proto_encode_error(NULL, RC_E_TOO_LARGE, "x"),
                "{\"op\":\"error\",\"code\":\"too_large\",\"message\":\"x\"}");
    assert_text(ack_of(NULL, "b", "m", 1, 1, 1, 1),
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
        assert_text(rc_proto_encode_pong(ids[i]), expected);
    }
}

static void snapshot_omits_period_and_reset_unless_given(void **state)
{
    cJSON *j;
    (void)state;
    struct rc_snapshot_msg m = {.sub = "s1", .board = "b", .seq = 1};
    j = parse_and_free(rc_proto_rows_snapshot(&m));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "id"));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "period"));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "reset"));
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "rows")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "rows")), 0);
    cJSON_Delete(j);

    m = (struct rc_snapshot_msg){.id_json = "\"q\"", .sub = "s1", .board = "b", .period = "previous", .seq = 1,
                                 .reset = 1};
    j = parse_and_free(rc_proto_rows_snapshot(&m));
    assert_string_equal(str_of(j, "id"), "q");
    assert_string_equal(str_of(j, "period"), "previous");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "reset")));
    cJSON_Delete(j);
}

static void snapshot_carries_the_epoch_when_given(void **state)
{
    (void)state;
    struct rc_snapshot_msg m = {.sub = "s1", .board = "b", .seq = 7, .reset = 1, .more = {.epoch = "00ff"}};
    assert_text(rc_proto_rows_snapshot(&m),
                "{\"op\":\"snapshot\",\"sub\":\"s1\",\"board\":\"b\",\"seq\":7,\"total\":0,\"epoch\":\"00ff\","
                "\"reset\":true,\"rows\":[]}");
    m = (struct rc_snapshot_msg){.board = "b", .more = {.epoch = ""}};
    assert_text(rc_proto_rows_snapshot(&m),
                "{\"op\":\"snapshot\",\"board\":\"b\",\"seq\":0,\"total\":0,\"epoch\":\"\",\"rows\":[]}");
}

static void a_delta_carries_the_viewer_count_when_given(void **state)
{
    (void)state;
    struct rc_delta_msg m = {.sub = "s1", .seq = 4, .total = 2, .more = {.has_viewers = 1, .viewers = 12345678901LL}};
    assert_text(rc_proto_rows_delta(&m),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":4,\"total\":2,\"rows\":[],\"removed\":[],"
                "\"viewers\":12345678901}");
    m.more.viewers = 0;
    assert_text(rc_proto_rows_delta(&m),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":4,\"total\":2,\"rows\":[],\"removed\":[],\"viewers\":0}");
    m.more.viewers = -1;
    assert_null(rc_proto_rows_delta(&m)); /* never a negative count */
}

/* A snapshot's extras come after its rows: viewers, the freeze, a sharded
 * feed's cursor; its epoch sits after total. */
static void a_snapshot_carries_viewers_freeze_and_cursor_after_its_rows(void **state)
{
    (void)state;
    struct rc_snapshot_msg m = {.sub = "s1", .board = "b", .seq = 9, .total = 2,
                                .more = {.epoch = "ab", .has_viewers = 1, .viewers = 3, .frozen = 1, .freeze_seq = 7,
                                         .live = 1, .shown = 8, .cursor = "0a:1"}};
    assert_text(rc_proto_rows_snapshot(&m),
                "{\"op\":\"snapshot\",\"sub\":\"s1\",\"board\":\"b\",\"seq\":9,\"total\":2,\"epoch\":\"ab\","
                "\"rows\":[],\"viewers\":3,\"frozen\":7,\"shown\":8,\"cursor\":\"0a:1\"}");
    m.more.cursor = "a\"b"; /* never a cursor the JSON must escape */
    assert_null(rc_proto_rows_snapshot(&m));
}

static void freeze_fields_and_replies(void **state)
{
    (void)state;
    struct rc_delta_msg d = {.sub = "s1", .seq = 4, .total = 2, .more = {.frozen = 1, .freeze_seq = 3, .shown = 4}};
    assert_text(rc_proto_rows_delta(&d),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":4,\"total\":2,\"rows\":[],\"removed\":[],\"frozen\":3}");
    d.seq = 9;
    d.more.live = 1;
    assert_text(rc_proto_rows_delta(&d),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":9,\"total\":2,\"rows\":[],\"removed\":[],\"frozen\":3,"
                "\"shown\":4}");
    d.more.frozen = 0; /* not frozen: no freeze fields */
    assert_text(rc_proto_rows_delta(&d), "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":9,\"total\":2,\"rows\":[],\"removed\":[]}");
    /* a frozen board's audience asks its rank: the frozen one, and said so */
    struct rc_rank_msg r = {"1", "m", 5, 2, 9, {.frozen = 1, .freeze_seq = 3, .shown = 4}};
    assert_text(rc_proto_encode_rank(&r),
                "{\"op\":\"rank\",\"id\":1,\"member\":\"m\",\"score\":5,\"rank\":2,\"total\":9,\"frozen\":3}");
    assert_text(rc_proto_encode_frozen("7", "b", NULL, 12), "{\"op\":\"frozen\",\"id\":7,\"board\":\"b\",\"seq\":12,\"frozen\":12}");
    assert_text(rc_proto_encode_revealed(NULL, "b", "2026-11-26", 13, 2, 1, 12, 0),
                "{\"op\":\"revealed\",\"board\":\"b\",\"period\":\"2026-11-26\",\"seq\":13,\"pending\":2,\"frozen\":12}");
    assert_text(rc_proto_encode_revealed(NULL, "b", NULL, 20, 0, 0, 0, 5),
                "{\"op\":\"revealed\",\"board\":\"b\",\"seq\":20,\"pending\":0,\"skipped\":5}");
    assert_text(rc_proto_encode_freeze_state("b", NULL, 0, 0, 0, 20),
                "{\"board\":\"b\",\"frozen\":null,\"shown\":null,\"seq\":20,\"pending\":0}");
    assert_text(rc_proto_encode_freeze_state("b", NULL, 1, 12, 13, 20),
                "{\"board\":\"b\",\"frozen\":12,\"shown\":13,\"seq\":20,\"pending\":7}");
}

static void stats_names_the_period_only_when_given(void **state)
{
    (void)state;
    assert_text(rc_proto_encode_stats("demo", NULL, 3, 10, 42),
                "{\"board\":\"demo\",\"viewers\":3,\"total\":10,\"seq\":42}");
    assert_text(rc_proto_encode_stats("daily", "2026-11-25", 0, 0, 0),
                "{\"board\":\"daily\",\"period\":\"2026-11-25\",\"viewers\":0,\"total\":0,\"seq\":0}");
}

/* The delta or event that tells viewers the board's history began. */
static void a_delta_and_an_event_carry_the_epoch_when_given(void **state)
{
    (void)state;
    struct rc_delta_msg d = {.sub = "s1", .seq = 1, .total = 1,
                             .more = {.epoch = "abc123", .frozen = 1, .freeze_seq = 1, .has_viewers = 1, .viewers = 2}};
    assert_text(rc_proto_rows_delta(&d),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":1,\"total\":1,\"rows\":[],\"removed\":[],"
                "\"frozen\":1,\"epoch\":\"abc123\",\"viewers\":2}");
    d.more.epoch = "a\"b"; /* never an id the JSON must escape */
    assert_null(rc_proto_rows_delta(&d));
    struct rc_event_msg e = {.sub = "s1", .seq = 1, .member = "m", .rank = 1, .more = {.epoch = "e1"}};
    assert_text(rc_proto_encode_event(&e),
                "{\"op\":\"event\",\"sub\":\"s1\",\"seq\":1,\"member\":\"m\",\"score\":0,\"delta\":0,"
                "\"rank\":1,\"prev_rank\":null,\"at\":0,\"epoch\":\"e1\"}");
}

static void an_event_carries_a_sharded_feeds_cursor(void **state)
{
    (void)state;
    struct rc_event_msg e = {.sub = "s1", .seq = 5, .member = "m", .rank = 1, .more = {.cursor = "0a1b2c3d:5.:0"}};
    assert_text(rc_proto_encode_event(&e),
                "{\"op\":\"event\",\"sub\":\"s1\",\"seq\":5,\"member\":\"m\",\"score\":0,\"delta\":0,"
                "\"rank\":1,\"prev_rank\":null,\"at\":0,\"cursor\":\"0a1b2c3d:5.:0\"}");
    e.more.cursor = "a\"b";
    assert_null(rc_proto_encode_event(&e));
    e.more.cursor = "";
    assert_null(rc_proto_encode_event(&e));
}

/* A queued board's ack: score, rank and seq come when it is applied. */
static void a_queued_ack_has_the_entry_and_null_score_rank_seq(void **state)
{
    (void)state;
    struct rc_ack_msg m = {.id_json = "3", .board = "q", .member = "u:1", .score = 9, .rank = 2, .seq = 4,
                           .replicas = 0, .queued_entry = "1700000000000-0"};
    assert_text(rc_proto_encode_ack(&m),
                "{\"op\":\"ack\",\"id\":3,\"board\":\"q\",\"member\":\"u:1\",\"score\":null,\"rank\":null,"
                "\"seq\":null,\"queued\":true,\"entry\":\"1700000000000-0\",\"duplicate\":false,\"replicas\":0}");
}

static void delta_without_changes_has_empty_arrays(void **state)
{
    (void)state;
    assert_text(delta_of(5, 9, NULL, 0, 1),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":5,\"total\":9,\"rows\":[],"
                "\"removed\":[]}");
}

static void event_prints_null_prev_rank_for_a_newcomer(void **state)
{
    cJSON *j;
    (void)state;
    j = parse_and_free(event_of("s1", 1, "m", 10, 10, 4, 0, 1, NULL, 0));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "prev_rank")));
    assert_int_equal(num_of(j, "rank"), 4);
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "fields"));
    cJSON_Delete(j);
}

static void rank_prints_nulls_when_member_is_absent(void **state)
{
    (void)state;
    struct rc_rank_msg m = {"1", "user:9", 0, 0, 120, {0}};
    assert_text(rc_proto_encode_rank(&m),
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
        cJSON *j = parse_and_free(rc_proto_encode_error(NULL, codes[i].code, "m"));
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
    j = parse_and_free(rc_proto_encode_error(NULL, RC_E_BAD_REQUEST, "unknown op 'a\"b\\c\n'"));
    assert_string_equal(str_of(j, "message"), "unknown op 'a\"b\\c\n'");
    cJSON_Delete(j);
    j = parse_and_free(rc_proto_encode_error(NULL, RC_E_INTERNAL, NULL));
    assert_string_equal(str_of(j, "message"), "");
    cJSON_Delete(j);
}

/* ---- fields and profiles ----------------------------------------------- */

static const struct rc_field_value KD[] = {{"kills", 12}, {"deaths", 3}};

static void event_and_ack_carry_fields_when_given(void **state)
{
    (void)state;
    assert_text(event_of("s1", 2, "m", 5, 1, 1, 2, 3, KD, 2),
                "{\"op\":\"event\",\"sub\":\"s1\",\"seq\":2,\"member\":\"m\",\"score\":5,"
                "\"delta\":1,\"rank\":1,\"prev_rank\":2,\"at\":3,"
                "\"fields\":{\"kills\":12,\"deaths\":3}}");
    struct rc_ack_msg m = {"1", "b", "m", 5, 1, 9, 0, KD, 2, -1, 0, NULL, 0, NULL, 0, 0, 0};
    assert_text(rc_proto_encode_ack(&m),
                "{\"op\":\"ack\",\"id\":1,\"board\":\"b\",\"member\":\"m\",\"score\":5,\"rank\":1,"
                "\"seq\":9,\"duplicate\":false,\"fields\":{\"kills\":12,\"deaths\":3}}");
}

static void rows_with_shared_places_carry_place_and_tied(void **state)
{
    static struct rc_kv kv[] = {{"tied", "no"}, {"place", "Paris"}, {"name", "P"}};
    struct rc_profile profile = {.n = 3, .kv = kv};
    const struct rc_row rows[] = {
        {.member = "a", .score = 30, .profile = &profile, .place = 2, .tied = 1},
        {.member = "b"},
        {.member = "c", .score = 20, .place = 4},
        {.member = "d", .score = 10, .profile = &profile},
    };
    const size_t pick[] = {0, 2, 3};
    struct rc_delta_msg m = {"s1", 1, 5, {rows, 3, pick, 2, NULL, NULL}, NULL, NULL, 0, {0}};
    (void)state;
    /* a profile never shadows place or tied of a row that has places; a
     * row without places keeps its profile's "place" and "tied" */
    assert_text(rc_proto_rows_delta(&m),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":1,\"total\":5,\"rows\":["
                "{\"rank\":2,\"member\":\"a\",\"score\":30,\"place\":2,\"tied\":true,\"name\":\"P\"},"
                "{\"rank\":4,\"member\":\"c\",\"score\":20,\"place\":4},"
                "{\"rank\":5,\"member\":\"d\",\"score\":10,\"tied\":\"no\",\"place\":\"Paris\",\"name\":\"P\"}],"
                "\"removed\":[]}");
}

static void row_puts_fields_before_profile(void **state)
{
    const struct rc_row rows[] = {{.member = "m", .score = 7, .fields = {12, 3}, .nfields = 2, .profile = &PLAYER_ONE}};
    (void)state;
    assert_text(delta_of(1, 1, rows, 1, 1),
                "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":1,\"total\":1,\"rows\":[{\"rank\":1,"
                "\"member\":\"m\",\"score\":7,\"fields\":{\"kills\":12,\"deaths\":3},"
                "\"name\":\"PlayerOne\"}],\"removed\":[]}");
}

static void profile_join_never_shadows_row_keys(void **state)
{
    struct rc_kv kv[] = {
        {"rank", "99"},     {"member", "evil"}, {"score", "1e9"}, {"fields", "x"},
        {"name", "P\"1\n"}, {"name", "second"}, {"avatar", "a.png"},
        {"bad", "\xff"},    {"\xc3\x28", "v"},  {NULL, "v"},      {"k", NULL},
    };
    struct rc_profile profile = {.n = 11, .kv = kv};
    const struct rc_row rows[] = {{.member = "user:1", .score = 70, .profile = &profile}};
    struct rc_snapshot_msg m = {.sub = "s1", .board = "b", .seq = 1, .total = 1,
                                .rows = {.rows = rows, .n = 1, .first_rank = 4}};
    cJSON *j, *row;
    (void)state;

    j = parse_and_free(rc_proto_rows_snapshot(&m));
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
    char *text = ack_of(NULL, "b", "m", score, 1, 1, 0);

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
    text = ack_of(NULL, "b", "m", third, 1, 1, 0);
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
    assert_text(event_of("s", 1, "m", NAN, INFINITY, 1, 1, 1, NULL, 0),
                "{\"op\":\"event\",\"sub\":\"s\",\"seq\":1,\"member\":\"m\",\"score\":null,"
                "\"delta\":null,\"rank\":1,\"prev_rank\":1,\"at\":1}");
}

static void prints_counters_exactly_at_any_size(void **state)
{
    (void)state;
    struct rc_delta_msg m = {.sub = "s", .seq = INT64_MAX, .total = INT64_MIN};
    assert_text(rc_proto_rows_delta(&m),
                "{\"op\":\"delta\",\"sub\":\"s\",\"seq\":9223372036854775807,"
                "\"total\":-9223372036854775808,\"rows\":[],\"removed\":[]}");
}

static void prints_field_values_exactly(void **state)
{
    const struct rc_field_value f[] = {{"a", 9007199254740991LL}, {"b", -1000000000000000LL}};
    (void)state;
    assert_text(event_of("s", 1, "m", 0, 0, 1, 0, 0, f, 2),
                "{\"op\":\"event\",\"sub\":\"s\",\"seq\":1,\"member\":\"m\",\"score\":0,"
                "\"delta\":0,\"rank\":1,\"prev_rank\":null,\"at\":0,"
                "\"fields\":{\"a\":9007199254740991,\"b\":-1000000000000000}}");
}

/* Integers (ranks, seqs, totals, safe-integer scores) print as
 * "%" PRId64 would, without printf: the ends of int64_t, powers of ten and
 * their neighbours, and random values of every length. */
static void prints_integers_as_printf_would(void **state)
{
    (void)state;
    char want[RC_NUMBER_TEXT_MAX], got[RC_NUMBER_TEXT_MAX];
    int64_t fixed[] = {0, 1, -1, 9, 10, -10, 99, 100, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        snprintf(want, sizeof want, "%" PRId64, fixed[i]);
        assert_int_equal(rc_proto_encode_int_text(fixed[i], got), strlen(want));
        assert_string_equal(got, want);
    }
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t v = (int64_t)(x >> (x % 64)); /* (every length, both signs) */
        if (i % 2)
            v = -v;
        snprintf(want, sizeof want, "%" PRId64, v);
        assert_int_equal(rc_proto_encode_int_text(v, got), strlen(want));
        assert_string_equal(got, want);
    }
    for (int64_t p = 1; p <= INT64_MAX / 10; p *= 10)
        for (int64_t d = -1; d <= 1; d++) {
            snprintf(want, sizeof want, "%" PRId64, p + d);
            rc_proto_encode_int_text(p + d, got);
            assert_string_equal(got, want);
            rc_proto_encode_number_text((double)(p + d), got, sizeof got);
            if ((double)(p + d) <= 9007199254740991.0) {
                snprintf(want, sizeof want, "%" PRId64, (int64_t)(double)(p + d));
                assert_string_equal(got, want);
            }
        }
}

/* ---- the row writer against cJSON ------------------------------------- */

/* The delta's rows as the cJSON tree rc_proto_encode.c built before the
 * rows were written straight into a buffer (the reference): the same rules
 * for keys, profile entries and numbers. */
static cJSON *ref_number(double d)
{
    char buf[RC_NUMBER_TEXT_MAX];
    if (!isfinite(d))
        return cJSON_CreateNull();
    rc_proto_encode_number_text(d, buf, sizeof buf);
    return cJSON_CreateRaw(buf);
}

static cJSON *ref_int(int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return cJSON_CreateRaw(buf);
}

static cJSON *ref_row(const struct rc_row *r, int64_t rank, const int64_t *prev)
{
    static const char *const reserved[] = {"rank", "member", "score", "fields"};
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "rank", ref_int(rank));
    if (prev)
        cJSON_AddItemToObject(o, "prev_rank", *prev > 0 ? ref_int(*prev) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "member", cJSON_CreateString(r->member));
    cJSON_AddItemToObject(o, "score", ref_number(r->score));
    if (r->place > 0) {
        cJSON_AddItemToObject(o, "place", ref_int(r->place));
        if (r->tied)
            cJSON_AddItemToObject(o, "tied", cJSON_CreateTrue());
    }
    if (r->nfields) {
        cJSON *f = cJSON_CreateObject();
        for (unsigned k = 0; k < r->nfields; k++)
            cJSON_AddItemToObject(f, KD_LAYOUT.fields[k].name, ref_int(r->fields[k]));
        cJSON_AddItemToObject(o, "fields", f);
    }
    for (unsigned k = 0; r->profile && k < r->profile->n; k++) {
        const struct rc_kv *kv = &r->profile->kv[k];
        int ok = kv->key && kv->value && rc_names_utf8_valid(kv->key, strlen(kv->key)) &&
                 rc_names_utf8_valid(kv->value, strlen(kv->value));
        for (size_t i = 0; ok && i < 4; i++)
            ok = strcmp(kv->key, reserved[i]) != 0;
        if (ok && strcmp(kv->key, "tied") == 0 && cJSON_GetObjectItemCaseSensitive(o, "place"))
            ok = 0;
        if (ok && !cJSON_GetObjectItemCaseSensitive(o, kv->key))
            cJSON_AddItemToObject(o, kv->key, cJSON_CreateString(kv->value));
    }
    return o;
}

/* A string of up to 6 bytes from a small alphabet with every kind of byte
 * the escaping treats apart (quote, backslash, short escapes, other control
 * bytes, UTF-8, bytes that are not UTF-8) and the keys rows print. */
static void random_text(uint64_t *x, char *out)
{
    static const char *const parts[] = {"a", "\"", "\\", "\n", "\t", "\b", "\f", "\r", "\x01", "\x1f", "\x7f",
                                        "\xc3\xa9", "\xff", "/", "rank", "tied", "place", "prev_rank", "name", "n"};
    out[0] = '\0';
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    unsigned n = (unsigned)(*x >> 60) % 3 + 1;
    for (unsigned i = 0; i < n; i++) {
        *x = *x * 6364136223846793005ull + 1442695040888963407ull;
        strcat(out, parts[(*x >> 33) % (sizeof parts / sizeof parts[0])]);
    }
}

static void the_row_writer_prints_what_cjson_printed(void **state)
{
    (void)state;
    uint64_t x = 42;
    for (int run = 0; run < 3000; run++) {
        char members[4][40], keys[4][6][40], values[4][6][40];
        struct rc_kv kv[4][6];
        struct rc_profile prof[4];
        struct rc_row rows[4];
        int64_t prev[4];
        size_t pick[4];
        size_t n = (size_t)(run % 5);
        int with_prev = run % 2;
        for (size_t i = 0; i < n; i++) {
            random_text(&x, members[i]);
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            unsigned np = (unsigned)(x >> 61);
            for (unsigned k = 0; k < np && k < 6; k++) {
                random_text(&x, keys[i][k]);
                random_text(&x, values[i][k]);
                kv[i][k] = (struct rc_kv){keys[i][k], values[i][k]};
            }
            prof[i] = (struct rc_profile){.n = np < 6 ? np : 6, .kv = kv[i]};
            double scores[] = {0, -1.5, 1e300, NAN, 0.1 + 0.2, 9007199254740993.0};
            rows[i] = (struct rc_row){.member = members[i], .score = scores[(x >> 20) % 6],
                                      .profile = (x >> 24) % 3 ? &prof[i] : NULL,
                                      .place = (x >> 26) % 2 ? (int64_t)(x >> 40) % 9 : 0, .tied = (x >> 28) % 2,
                                      .nfields = (unsigned)((x >> 30) % 3)};
            rows[i].fields[0] = -(int64_t)(x >> 34);
            rows[i].fields[1] = (int64_t)(x >> 36);
            prev[i] = (int64_t)((x >> 44) % 4);
            pick[i] = i;
        }
        struct rc_delta_msg m = {"s\"1", 3, 9, {rows, n, pick, 5, &KD_LAYOUT, with_prev ? prev : NULL}, rows, pick,
                                 n, {0}};
        char *got = rc_proto_rows_delta(&m);
        cJSON *o = cJSON_CreateObject(), *arr = cJSON_CreateArray(), *rem = cJSON_CreateArray();
        cJSON_AddItemToObject(o, "op", cJSON_CreateString("delta"));
        cJSON_AddItemToObject(o, "sub", cJSON_CreateString("s\"1"));
        cJSON_AddItemToObject(o, "seq", ref_int(3));
        cJSON_AddItemToObject(o, "total", ref_int(9));
        for (size_t i = 0; i < n; i++) {
            cJSON_AddItemToArray(arr, ref_row(&rows[i], 5 + (int64_t)i, with_prev ? &prev[i] : NULL));
            cJSON_AddItemToArray(rem, cJSON_CreateString(members[i]));
        }
        cJSON_AddItemToObject(o, "rows", arr);
        cJSON_AddItemToObject(o, "removed", rem);
        char *want = cJSON_PrintUnformatted(o);
        assert_non_null(got);
        if (strcmp(got, want) != 0) {
            size_t d = 0;
            while (got[d] == want[d])
                d++;
            fprintf(stderr, "run %d differ at %zu:\n got  %s\n want %s\n", run, d, got + (d > 40 ? d - 40 : 0),
                    want + (d > 40 ? d - 40 : 0));
        }
        assert_string_equal(got, want);
        free(got);
        free(want);
        cJSON_Delete(o);
    }
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
    static struct rc_kv kv[] = {{"name", "P"}, {"avatar", "a"}, {"rank", "x"}};
    static struct rc_profile profile = {.n = 3, .kv = kv};
    static const struct rc_row rows[] = {
        {.member = "a", .score = 1.5, .fields = {12, 3}, .nfields = 2, .profile = &profile, .place = 1, .tied = 1},
        {.member = "b", .score = 2},
    };
    static const struct rc_row old[] = {{.member = "c"}, {.member = "d"}};
    static const size_t removed[] = {0, 1};
    static const int64_t prev[] = {4, 0};
    const struct rc_msg_more more = {.epoch = "e1", .frozen = 1, .freeze_seq = 2, .live = 1, .shown = 3,
                                     .has_viewers = 1, .viewers = 7};
    struct rc_snapshot_msg snap = {"\"i\"", "s1", "b", "p", 1, 2, 1, {rows, 2, NULL, 1, &KD_LAYOUT, NULL}, more, 0, NULL, 0, 0, 0, 0, 0, 0};
    struct rc_delta_msg delta = {"s1", 1, 2, {rows, 2, NULL, 1, &KD_LAYOUT, prev}, old, removed, 2, more};
    struct rc_event_msg event = {"s1", 1, "m", 1, 2, 3, 0, 5, KD, 2, {.epoch = "e1", .cursor = "1:2"}};
    struct rc_ack_msg ack = {"1", "b", "m", 1, 2, 3, 1, KD, 2, 2, 0, NULL, 0, NULL, 0, 0, 0};
    struct rc_ack_msg queued = {"1", "b", "m", 1, 2, 3, 1, NULL, 0, 2, 0, "1-0", 0, NULL, 0, 0, 0};
    struct rc_rank_msg rank = {"1", "m", 1, 2, 3, more};
    struct rc_rank_msg absent = {"1", "m", 1, 0, 3, {0}};

    switch (which) {
    case 0: return rc_proto_rows_snapshot(&snap);
    case 1: return rc_proto_rows_delta(&delta);
    case 2: return rc_proto_encode_event(&event);
    case 3: return rc_proto_encode_ack(&ack);
    case 4: return rc_proto_encode_rank(&rank);
    case 5: return rc_proto_encode_rank(&absent);
    case 6: return rc_proto_encode_error("1", RC_E_FORBIDDEN, "no");
    case 7: return rc_proto_encode_pong("1");
    case 8: return rc_proto_encode_unsubscribed("1", "s1");
    case 9: return rc_proto_encode_ack(&queued);
    default: return NULL;
    }
}

static void returns_null_without_leaks_on_allocation_failure(void **state)
{
    cJSON_Hooks hooks = {failing_malloc, free};
    (void)state;

    for (int which = 0; which <= 9; which++) {
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
        cmocka_unit_test(a_delta_and_an_event_carry_the_epoch_when_given),
        cmocka_unit_test(an_event_carries_a_sharded_feeds_cursor),
        cmocka_unit_test(a_delta_carries_the_viewer_count_when_given),
        cmocka_unit_test(a_snapshot_carries_viewers_freeze_and_cursor_after_its_rows),
        cmocka_unit_test(a_queued_ack_has_the_entry_and_null_score_rank_seq),
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
        cmocka_unit_test(prints_integers_as_printf_would),
        cmocka_unit_test(the_row_writer_prints_what_cjson_printed),
        cmocka_unit_test(returns_null_without_leaks_on_allocation_failure),
    };
    return cmocka_run_group_tests_name("rc_encode", tests, setup_layout, NULL);
}
