/* test_deflate.c - rc_deflate_message: each message is a complete raw
 * DEFLATE stream up to a sync flush with its 00 00 ff ff removed, which a
 * receiver inflates back (alone, or after earlier messages in one inflate
 * context, as a client with context takeover does), and nothing that would
 * not shrink is ever handed out compressed; stored blocks carry any message
 * uncompressed and inflate back to it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "rc_deflate.h"

#define BIG 8192

static size_t delta_text(char *out, size_t cap, int seed)
{
    size_t n = (size_t)snprintf(out, cap, "{\"op\":\"delta\",\"sub\":\"s1\",\"seq\":%d,\"rows\":[", seed);
    for (int i = 0; i < 60 && n + 80 < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "{\"rank\":%d,\"member\":\"user:%d\",\"score\":%d},", i + 1,
                              (i * 7919 + seed) % 1000, 100000 - i * 13 - seed);
    n += (size_t)snprintf(out + n, cap - n, "{}]}");
    return n;
}

/* Inflates one message (payload + the tail put back) with an existing
 * raw inflate stream z; returns the bytes produced. */
static size_t inflate_into(z_stream *z, const unsigned char *p, size_t n, unsigned char *out, size_t cap)
{
    static const unsigned char tail[4] = {0, 0, 0xff, 0xff};
    size_t got = 0;
    for (int part = 0; part < 2; part++) {
        z->next_in = (Bytef *)(uintptr_t)(part ? tail : p);
        z->avail_in = (uInt)(part ? 4 : n);
        z->next_out = out + got;
        z->avail_out = (uInt)(cap - got);
        int rc = inflate(z, Z_SYNC_FLUSH);
        assert_true(rc == Z_OK || rc == Z_BUF_ERROR);
        assert_int_equal(z->avail_in, 0);
        got = cap - z->avail_out;
    }
    return got;
}

static void a_message_inflates_back_to_itself(void **state)
{
    (void)state;
    char text[BIG];
    unsigned char z[BIG], back[BIG];
    size_t n = delta_text(text, sizeof text, 1);
    struct rc_deflater *d = rc_deflate_new(6);
    assert_non_null(d);
    size_t zn = rc_deflate_message(d, (const unsigned char *)text, n, z, sizeof z);
    assert_true(zn > 0 && zn < n / 2);
    /* the tail is gone: a sync flush would end in 00 00 ff ff */
    assert_false(zn >= 4 && memcmp(z + zn - 4, "\x00\x00\xff\xff", 4) == 0);
    z_stream s;
    memset(&s, 0, sizeof s);
    assert_int_equal(inflateInit2(&s, -15), Z_OK);
    assert_int_equal(inflate_into(&s, z, zn, back, sizeof back), n);
    assert_memory_equal(back, text, n);
    inflateEnd(&s);
    rc_deflate_free(d);
}

/* A receiver with context takeover keeps one inflate stream: every message,
 * compressed independently, still comes back exactly. */
static void messages_decode_in_one_continuing_inflate_context(void **state)
{
    (void)state;
    char text[BIG];
    unsigned char z[BIG], back[BIG];
    struct rc_deflater *d = rc_deflate_new(6);
    z_stream s;
    memset(&s, 0, sizeof s);
    assert_int_equal(inflateInit2(&s, -15), Z_OK);
    for (int i = 0; i < 50; i++) {
        size_t n = delta_text(text, sizeof text, i);
        size_t zn = rc_deflate_message(d, (const unsigned char *)text, n, z, sizeof z);
        assert_true(zn > 0);
        assert_int_equal(inflate_into(&s, z, zn, back, sizeof back), n);
        assert_memory_equal(back, text, n);
    }
    inflateEnd(&s);
    rc_deflate_free(d);
}

/* The same text gives the same bytes whatever came before: nothing refers
 * back to an earlier message (no context takeover on our side). */
static void the_same_message_compresses_to_the_same_bytes_every_time(void **state)
{
    (void)state;
    char text[BIG], other[BIG];
    unsigned char z1[BIG], z2[BIG];
    struct rc_deflater *d = rc_deflate_new(6);
    size_t n = delta_text(text, sizeof text, 5);
    size_t z1n = rc_deflate_message(d, (const unsigned char *)text, n, z1, sizeof z1);
    size_t on = delta_text(other, sizeof other, 6);
    assert_true(rc_deflate_message(d, (const unsigned char *)other, on, z2, sizeof z2) > 0);
    size_t z2n = rc_deflate_message(d, (const unsigned char *)text, n, z2, sizeof z2);
    assert_int_equal(z1n, z2n);
    assert_memory_equal(z1, z2, z1n);
    rc_deflate_free(d);
}

static void what_would_not_shrink_or_fit_is_refused(void **state)
{
    (void)state;
    unsigned char noise[256], z[BIG];
    uint32_t x = 99;
    for (size_t i = 0; i < sizeof noise; i++) {
        x = x * 1664525u + 1013904223u;
        noise[i] = (unsigned char)(x >> 24);
    }
    struct rc_deflater *d = rc_deflate_new(6);
    assert_int_equal(rc_deflate_message(d, noise, sizeof noise, z, sizeof z), 0);
    char text[BIG];
    size_t n = delta_text(text, sizeof text, 2);
    assert_int_equal(rc_deflate_message(d, (const unsigned char *)text, n, z, 8), 0); /* no room */
    assert_int_equal(rc_deflate_message(d, (const unsigned char *)text, 0, z, sizeof z), 0);
    assert_int_equal(rc_deflate_message(d, (const unsigned char *)"a", 1, z, sizeof z), 0);
    /* after a refusal the deflater still works */
    assert_true(rc_deflate_message(d, (const unsigned char *)text, n, z, sizeof z) > 0);
    rc_deflate_free(d);
}

static void stored_blocks_inflate_back_whatever_the_size(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 127, 65535, 65536, 200000};
    unsigned char *in = malloc(200000), *out = malloc(200100), *back = malloc(200000);
    assert_non_null(in);
    assert_non_null(out);
    assert_non_null(back);
    for (size_t i = 0; i < 200000; i++)
        in[i] = (unsigned char)(i * 31 + (i >> 8));
    z_stream s;
    memset(&s, 0, sizeof s);
    assert_int_equal(inflateInit2(&s, -15), Z_OK);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        size_t zn = rc_deflate_stored(in, n, out, 200100);
        assert_int_equal(zn, rc_deflate_stored_len(n));
        assert_int_equal(zn, n + 5 * ((n + 65534) / 65535) + 1);
        assert_int_equal(rc_deflate_stored(in, n, out, zn - 1), 0); /* too small */
        assert_int_equal(inflate_into(&s, out, zn, back, 200000), n); /* one context, as a client keeps it */
        assert_memory_equal(back, in, n);
    }
    inflateEnd(&s);
    free(in);
    free(out);
    free(back);
}

static void bad_levels_make_no_deflater(void **state)
{
    (void)state;
    assert_null(rc_deflate_new(0));
    assert_null(rc_deflate_new(10));
    rc_deflate_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_message_inflates_back_to_itself),
        cmocka_unit_test(messages_decode_in_one_continuing_inflate_context),
        cmocka_unit_test(the_same_message_compresses_to_the_same_bytes_every_time),
        cmocka_unit_test(what_would_not_shrink_or_fit_is_refused),
        cmocka_unit_test(stored_blocks_inflate_back_whatever_the_size),
        cmocka_unit_test(bad_levels_make_no_deflater),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
