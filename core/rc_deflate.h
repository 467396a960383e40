/* rc_deflate.h - one WebSocket message compressed for permessage-deflate
 * (RFC 7692), the same bytes for every receiver.
 *
 * Each message is a fresh raw DEFLATE stream: the compressor is reset before
 * it, so nothing in it refers back to an earlier message. That is what
 * "server_no_context_takeover" promises, and it is also a valid message for
 * a receiver that keeps its context across messages (the default): such a
 * receiver simply never sees a reference into its window. So one compressed
 * buffer can go to every connection that negotiated the extension, whatever
 * else each of them received before (RFC 7692, 7.2.1 and 7.2.3).
 *
 * The stream is ended with a sync flush (an empty stored block, whose last
 * four bytes 00 00 ff ff are removed, 7.2.1); the receiver appends them back.
 * No block has BFINAL set.
 *
 * Pure computation over zlib; no I/O. One deflater serves any number of
 * messages, one at a time.
 */
#ifndef RC_DEFLATE_H
#define RC_DEFLATE_H

#include <stddef.h>

struct rc_deflater;

/* A deflater at zlib level (1..9), window 32 KiB; NULL on OOM or a bad
 * level. */
struct rc_deflater *rc_deflater_new(int level);
void rc_deflater_free(struct rc_deflater *d);

/* Compresses in[0..n) as one message into out (cap bytes). Returns the
 * length of the compressed message (the 00 00 ff ff tail already removed),
 * or 0 when it would not be shorter than n (send it uncompressed), when it
 * does not fit in cap, or on a zlib error. n may be 0 (then 0: nothing to
 * gain). */
size_t rc_deflate_message(struct rc_deflater *d, const unsigned char *in, size_t n, unsigned char *out, size_t cap);

#endif
