/* rc_deflate.c - permessage-deflate compression of one message (rc_deflate.h). */
#include "rc_deflate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define WINDOW_BITS 15 /* negative below: raw DEFLATE, no zlib header */
#define MEM_LEVEL 8

struct rc_deflater {
    z_stream z;
};

static const unsigned char tail[4] = {0x00, 0x00, 0xff, 0xff};

struct rc_deflater *rc_deflate_new(int level)
{
    if (level < 1 || level > 9)
        return NULL;
    struct rc_deflater *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    if (deflateInit2(&d->z, level, Z_DEFLATED, -WINDOW_BITS, MEM_LEVEL, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(d);
        return NULL;
    }
    return d;
}

void rc_deflate_free(struct rc_deflater *d)
{
    if (!d)
        return;
    (void)deflateEnd(&d->z);
    free(d);
}

size_t rc_deflate_stored_len(size_t n)
{
    size_t blocks = (n + RC_DEFLATE_STORED_BLOCK - 1) / RC_DEFLATE_STORED_BLOCK;
    return n + 5 * blocks + 1;
}

size_t rc_deflate_stored(const unsigned char *in, size_t n, unsigned char *out, size_t cap)
{
    size_t total = rc_deflate_stored_len(n);
    if (cap < total)
        return 0;
    size_t at = 0, done = 0;
    while (done < n) {
        size_t k = n - done < RC_DEFLATE_STORED_BLOCK ? n - done : RC_DEFLATE_STORED_BLOCK;
        out[at++] = 0x00; /* BFINAL 0, BTYPE 00 (stored), padding to the byte */
        out[at++] = (unsigned char)(k & 0xff);
        out[at++] = (unsigned char)(k >> 8);
        out[at++] = (unsigned char)(~k & 0xff);
        out[at++] = (unsigned char)((~k >> 8) & 0xff);
        memcpy(out + at, in + done, k);
        at += k;
        done += k;
    }
    /* The sync flush's empty stored block: its 3 header bits (and the
     * padding to the byte) stay; its LEN and NLEN are the 00 00 ff ff the
     * receiver appends. */
    out[at++] = 0x00;
    return at;
}

size_t rc_deflate_message(struct rc_deflater *d, const unsigned char *in, size_t n, unsigned char *out, size_t cap)
{
    if (!d || n == 0 || n > (uInt)-1 || cap > (uInt)-1 || deflateReset(&d->z) != Z_OK)
        return 0;
    d->z.next_in = (Bytef *)(uintptr_t)in; /* zlib does not write through next_in */
    d->z.avail_in = (uInt)n;
    d->z.next_out = out;
    d->z.avail_out = (uInt)cap;
    int rc = deflate(&d->z, Z_SYNC_FLUSH);
    /* Done only when all input was taken and the flush fit with room to
     * spare (avail_out == 0 may mean more output is pending). */
    if ((rc != Z_OK && rc != Z_BUF_ERROR) || d->z.avail_in != 0 || d->z.avail_out == 0)
        return 0;
    size_t len = cap - d->z.avail_out;
    if (len < sizeof tail || memcmp(out + len - sizeof tail, tail, sizeof tail) != 0)
        return 0;
    len -= sizeof tail;
    return len < n ? len : 0;
}
