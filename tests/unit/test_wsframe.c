/* test_wsframe.c - rc_wsframe catches each RFC 6455 violation it names at the
 * byte that makes it one, wherever the stream is split, and never misfires
 * on well-formed masked frames split at random points. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rc_wsframe.h"

#define STREAM_MAX (1u << 20)
#define ROUNDS 500

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static unsigned below(unsigned n)
{
    return (unsigned)(rnd() % n);
}

struct stream {
    unsigned char *b;
    size_t n;
};

/* Length forms: 7-bit, 16-bit, or 64-bit (legal for any length). */
enum { LEN_AUTO, LEN_16, LEN_64 };

/* Appends one frame: byte 0 as given, masked unless told, payload of len
 * random bytes in the given length form. Returns the offset of its byte 0. */
static size_t put_frame(struct stream *s, unsigned b0, int masked, uint64_t len, int form)
{
    size_t at = s->n;
    unsigned m = masked ? 0x80u : 0;
    s->b[s->n++] = (unsigned char)b0;
    if (form == LEN_AUTO && len < 126) {
        s->b[s->n++] = (unsigned char)(m | len);
    } else if (form != LEN_64 && len < 65536) {
        s->b[s->n++] = (unsigned char)(m | 126);
        s->b[s->n++] = (unsigned char)(len >> 8);
        s->b[s->n++] = (unsigned char)len;
    } else {
        s->b[s->n++] = (unsigned char)(m | 127);
        for (int i = 7; i >= 0; i--)
            s->b[s->n++] = (unsigned char)(len >> (8 * i));
    }
    if (masked)
        for (int i = 0; i < 4; i++)
            s->b[s->n++] = (unsigned char)rnd();
    for (uint64_t i = 0; i < len; i++)
        s->b[s->n++] = (unsigned char)rnd(); /* anything: headers-lookalikes included */
    return at;
}

/* A random well-formed masked frame: text, binary or continuation data in
 * any length form (FIN or not), or a control frame (close, ping, pong) with
 * FIN and at most 125 bytes. */
static void put_valid(struct stream *s)
{
    static const unsigned data_ops[] = {0x0, 0x1, 0x2};
    static const unsigned control_ops[] = {0x8, 0x9, 0xa};
    if (below(4) == 0) {
        put_frame(s, 0x80u | control_ops[below(3)], 1, below(126), LEN_AUTO);
        return;
    }
    unsigned b0 = (below(2) ? 0x80u : 0) | data_ops[below(3)];
    uint64_t len = below(8) == 0 ? 126 + below(70000) : below(300);
    put_frame(s, b0, 1, len, (int)below(3));
}

/* Feeds s in random pieces; returns the offset one past the end of the
 * piece on which the checker first returned nonzero (with that code in
 * *code), or 0 when it never did. */
static size_t feed_split(const struct stream *s, int *code)
{
    struct rc_wsframe w;
    rc_wsframe_init(&w);
    size_t at = 0;
    *code = 0;
    while (at < s->n) {
        size_t piece = below(4) == 0 ? 1 : 1 + below(below(2) ? 16 : 4096);
        if (piece > s->n - at)
            piece = s->n - at;
        int r = rc_wsframe_feed(&w, s->b + at, piece);
        at += piece;
        if (r) {
            *code = r;
            return at;
        }
    }
    return 0;
}

static struct stream new_stream(void)
{
    struct stream s = {malloc(STREAM_MAX + 1024), 0};
    assert_non_null(s.b);
    return s;
}

static void valid_masked_streams_split_anywhere_never_trigger(void **state)
{
    (void)state;
    struct stream s = new_stream();
    for (int round = 0; round < ROUNDS; round++) {
        s.n = 0;
        int frames = 1 + (int)below(40);
        for (int f = 0; f < frames && s.n < STREAM_MAX - 80000; f++)
            put_valid(&s);
        int code;
        size_t where = feed_split(&s, &code);
        assert_int_equal(code, 0);
        assert_int_equal(where, 0);
    }
    free(s.b);
}

/* A control frame of exactly 125 bytes, and an empty one, are fine. */
static void control_frames_up_to_125_bytes_are_fine(void **state)
{
    (void)state;
    struct stream s = new_stream();
    put_frame(&s, 0x89, 1, 125, LEN_AUTO);
    put_frame(&s, 0x8a, 1, 0, LEN_AUTO);
    put_frame(&s, 0x88, 1, 2, LEN_AUTO);
    int code;
    assert_int_equal(feed_split(&s, &code), 0);
    free(s.b);
}

/* One kind of violation: writes the bad frame at the end of s and returns
 * the offset of the byte that makes it one. */
typedef size_t put_bad_fn(struct stream *s);

static size_t unmasked_text(struct stream *s)
{
    return put_frame(s, 0x81, 0, below(200), LEN_AUTO) + 1;
}
static size_t ping_of_126_bytes(struct stream *s)
{
    return put_frame(s, 0x89, 1, 126, LEN_AUTO) + 1;
}
static size_t control_without_fin(struct stream *s)
{
    return put_frame(s, 0x09, 1, 4, LEN_AUTO);
}
static size_t reserved_opcode(struct stream *s)
{
    static const unsigned ops[] = {3, 4, 5, 6, 7, 11, 12, 13, 14, 15};
    return put_frame(s, 0x80u | ops[below(10)], 1, below(20), LEN_AUTO);
}
static size_t rsv_bit(struct stream *s)
{
    return put_frame(s, 0x81u | (0x10u << below(3)), 1, below(20), LEN_AUTO);
}
static size_t length_top_bit(struct stream *s)
{
    size_t at = put_frame(s, 0x82, 1, 0, LEN_64);
    s->b[at + 2] |= 0x80; /* the payload is absent: the checker stops there */
    return at + 2;
}

/* Every violation after a random valid prefix, split at random points: the
 * checker returns 1002 on the piece holding the bad byte, not before. */
static void each_violation_is_caught_wherever_the_split_falls(void **state)
{
    (void)state;
    static put_bad_fn *const bad[] = {unmasked_text,  ping_of_126_bytes, control_without_fin,
                                      reserved_opcode, rsv_bit,           length_top_bit};
    struct stream s = new_stream();
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        for (int round = 0; round < ROUNDS; round++) {
            s.n = 0;
            int frames = (int)below(10);
            for (int f = 0; f < frames; f++)
                put_valid(&s);
            size_t byte = bad[k](&s);
            if (below(2))
                put_valid(&s); /* what follows does not matter */
            int code;
            size_t end = feed_split(&s, &code);
            assert_int_equal(code, RC_WSFRAME_PROTOCOL_ERROR);
            /* The piece that failed holds the bad byte. */
            assert_true(end > byte);
            /* Fed exactly up to the bad byte, it is still fine. */
            struct rc_wsframe w;
            rc_wsframe_init(&w);
            assert_int_equal(rc_wsframe_feed(&w, s.b, byte), 0);
            assert_int_equal(rc_wsframe_feed(&w, s.b + byte, 1), RC_WSFRAME_PROTOCOL_ERROR);
        }
    }
    free(s.b);
}

static void a_failed_checker_stays_failed(void **state)
{
    (void)state;
    struct rc_wsframe w;
    rc_wsframe_init(&w);
    const unsigned char bad[] = {0x81, 0x05};
    const unsigned char good[] = {0x89, 0x80, 1, 2, 3, 4};
    assert_int_equal(rc_wsframe_feed(&w, bad, sizeof bad), RC_WSFRAME_PROTOCOL_ERROR);
    assert_int_equal(rc_wsframe_feed(&w, good, sizeof good), RC_WSFRAME_PROTOCOL_ERROR);
    assert_int_equal(rc_wsframe_feed(&w, good, 0), RC_WSFRAME_PROTOCOL_ERROR);
}

/* Fed one frame with byte 0 = b0 (masked, 3 payload bytes): the code. */
static int feed_one(int compressed, unsigned b0)
{
    struct rc_wsframe w;
    rc_wsframe_init(&w);
    if (compressed)
        rc_wsframe_allow_compressed(&w);
    const unsigned char f[] = {(unsigned char)b0, 0x83, 1, 2, 3, 4, 'a', 'b', 'c'};
    return rc_wsframe_feed(&w, f, sizeof f);
}

static void rsv1_is_refused_unless_compression_was_negotiated(void **state)
{
    (void)state;
    assert_int_equal(feed_one(0, 0xc1), RC_WSFRAME_PROTOCOL_ERROR); /* FIN RSV1 text */
    assert_int_equal(feed_one(1, 0xc1), 0);
    assert_int_equal(feed_one(1, 0xc2), 0);                         /* binary */
    assert_int_equal(feed_one(1, 0x41), 0);                         /* first fragment */
}

static void rsv1_stays_refused_where_rfc_7692_forbids_it(void **state)
{
    (void)state;
    assert_int_equal(feed_one(1, 0xc0), RC_WSFRAME_PROTOCOL_ERROR); /* continuation */
    assert_int_equal(feed_one(1, 0xc9), RC_WSFRAME_PROTOCOL_ERROR); /* ping */
    assert_int_equal(feed_one(1, 0xc8), RC_WSFRAME_PROTOCOL_ERROR); /* close */
    assert_int_equal(feed_one(1, 0xa1), RC_WSFRAME_PROTOCOL_ERROR); /* RSV2 */
    assert_int_equal(feed_one(1, 0x91), RC_WSFRAME_PROTOCOL_ERROR); /* RSV3 */
    assert_int_equal(feed_one(1, 0xe1), RC_WSFRAME_PROTOCOL_ERROR); /* RSV1 + RSV2 */
}

static void a_compressed_message_in_fragments_passes(void **state)
{
    (void)state;
    struct rc_wsframe w;
    rc_wsframe_init(&w);
    rc_wsframe_allow_compressed(&w);
    const unsigned char s[] = {0x41, 0x81, 1, 2, 3, 4, 'a', /* first fragment, RSV1 */
                               0x00, 0x81, 1, 2, 3, 4, 'b', /* continuation */
                               0x80, 0x81, 1, 2, 3, 4, 'c'};
    for (size_t i = 0; i < sizeof s; i++)
        assert_int_equal(rc_wsframe_feed(&w, s + i, 1), 0);
}

static void server_text_headers_have_the_right_length_form_and_rsv1(void **state)
{
    (void)state;
    unsigned char h[RC_WSFRAME_HEADER_MAX];
    assert_int_equal(rc_wsframe_text_header(h, 125, 0), 2);
    assert_int_equal(h[0], 0x81);
    assert_int_equal(h[1], 125);
    assert_int_equal(rc_wsframe_text_header(h, 126, 1), 4);
    assert_int_equal(h[0], 0xc1);
    assert_int_equal(h[1], 126);
    assert_int_equal(h[2], 0);
    assert_int_equal(h[3], 126);
    assert_int_equal(rc_wsframe_text_header(h, 65535, 0), 4);
    assert_int_equal(h[2], 0xff);
    assert_int_equal(h[3], 0xff);
    assert_int_equal(rc_wsframe_text_header(h, 65536, 1), 10);
    assert_int_equal(h[0], 0xc1);
    assert_int_equal(h[1], 127);
    const unsigned char len64[8] = {0, 0, 0, 0, 0, 1, 0, 0};
    assert_memory_equal(h + 2, len64, 8);
    /* masked by a client, our own header parses as one valid frame */
    assert_int_equal(rc_wsframe_text_header(h, 3, 1), 2);
    assert_int_equal(feed_one(1, h[0]), 0);
}

/* Every continuation, ping and pong is counted once, by kind, however the
 * stream is split; data and close frames are not counted. */
static void frames_are_counted_by_kind_wherever_the_split_falls(void **state)
{
    (void)state;
    struct stream s = new_stream();
    for (int round = 0; round < ROUNDS; round++) {
        uint32_t want[RC_WSFRAME_KINDS] = {0, 0, 0}, got[RC_WSFRAME_KINDS] = {0, 0, 0};
        s.n = 0;
        int frames = 1 + (int)below(60);
        for (int f = 0; f < frames; f++) {
            static const unsigned ops[] = {0x0, 0x1, 0x2, 0x8, 0x9, 0xa};
            unsigned op = ops[below(6)];
            put_frame(&s, 0x80u | op, 1, op & 8 ? below(126) : below(300), LEN_AUTO);
            if (op == 0x0)
                want[RC_WSFRAME_CONT]++;
            else if (op == 0x9)
                want[RC_WSFRAME_PING]++;
            else if (op == 0xa)
                want[RC_WSFRAME_PONG]++;
        }
        struct rc_wsframe w;
        rc_wsframe_init(&w);
        for (size_t at = 0; at < s.n;) {
            size_t piece = 1 + below(below(2) ? 8 : 600);
            if (piece > s.n - at)
                piece = s.n - at;
            assert_int_equal(rc_wsframe_feed(&w, s.b + at, piece), 0);
            at += piece;
            uint32_t part[RC_WSFRAME_KINDS];
            rc_wsframe_take_counts(&w, part);
            for (int k = 0; k < RC_WSFRAME_KINDS; k++)
                got[k] += part[k];
        }
        assert_memory_equal(got, want, sizeof want);
    }
    free(s.b);
}

/* A text frame without FIN opens a message; pings and pongs between its
 * fragments leave it open; its final continuation closes it. An unfragmented
 * message is open only until its payload is all read. Each data message
 * gets the next number. */
static void a_fragmented_message_is_open_until_its_final_continuation(void **state)
{
    (void)state;
    struct rc_wsframe w;
    uint32_t id = 99;
    rc_wsframe_init(&w);
    const unsigned char whole[] = {0x81, 0x80, 1, 2, 3, 4};
    const unsigned char first[] = {0x01, 0x81, 1, 2, 3, 4, 'a'};
    const unsigned char more[] = {0x00, 0x80, 1, 2, 3, 4};
    const unsigned char ping[] = {0x89, 0x80, 1, 2, 3, 4};
    const unsigned char last[] = {0x80, 0x80, 1, 2, 3, 4};
    assert_int_equal(rc_wsframe_message_open(&w, &id), 0);
    assert_int_equal(id, 0);
    assert_int_equal(rc_wsframe_feed(&w, whole, sizeof whole - 1), 0);
    assert_int_equal(rc_wsframe_message_open(&w, &id), 1); /* its mask key is not all in */
    assert_int_equal(id, 1);
    assert_int_equal(rc_wsframe_feed(&w, whole + sizeof whole - 1, 1), 0);
    assert_int_equal(rc_wsframe_message_open(&w, &id), 0);
    assert_int_equal(id, 1);
    assert_int_equal(rc_wsframe_feed(&w, first, 1), 0); /* byte 0 is enough */
    assert_int_equal(rc_wsframe_message_open(&w, &id), 1);
    assert_int_equal(id, 2);
    assert_int_equal(rc_wsframe_feed(&w, first + 1, sizeof first - 1), 0);
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(rc_wsframe_feed(&w, more, sizeof more), 0);
        assert_int_equal(rc_wsframe_feed(&w, ping, 3), 0); /* a ping partly read: still open */
        assert_int_equal(rc_wsframe_message_open(&w, NULL), 1);
        assert_int_equal(rc_wsframe_feed(&w, ping + 3, sizeof ping - 3), 0);
    }
    assert_int_equal(rc_wsframe_message_open(&w, NULL), 1);
    uint32_t n[RC_WSFRAME_KINDS];
    rc_wsframe_take_counts(&w, n);
    assert_int_equal(n[RC_WSFRAME_CONT], 1000);
    assert_int_equal(n[RC_WSFRAME_PING], 1000);
    assert_int_equal(n[RC_WSFRAME_PONG], 0);
    assert_int_equal(rc_wsframe_feed(&w, last, sizeof last), 0);
    assert_int_equal(rc_wsframe_message_open(&w, &id), 0);
    assert_int_equal(rc_wsframe_feed(&w, first, sizeof first), 0);
    assert_int_equal(rc_wsframe_message_open(&w, &id), 1);
    assert_int_equal(id, 3);
    rc_wsframe_take_counts(&w, n);
    assert_int_equal(n[RC_WSFRAME_CONT], 1); /* the final one */
    rc_wsframe_take_counts(&w, n);
    assert_int_equal(n[RC_WSFRAME_CONT], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_masked_streams_split_anywhere_never_trigger),
        cmocka_unit_test(control_frames_up_to_125_bytes_are_fine),
        cmocka_unit_test(each_violation_is_caught_wherever_the_split_falls),
        cmocka_unit_test(a_failed_checker_stays_failed),
        cmocka_unit_test(rsv1_is_refused_unless_compression_was_negotiated),
        cmocka_unit_test(rsv1_stays_refused_where_rfc_7692_forbids_it),
        cmocka_unit_test(a_compressed_message_in_fragments_passes),
        cmocka_unit_test(server_text_headers_have_the_right_length_form_and_rsv1),
        cmocka_unit_test(frames_are_counted_by_kind_wherever_the_split_falls),
        cmocka_unit_test(a_fragmented_message_is_open_until_its_final_continuation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
