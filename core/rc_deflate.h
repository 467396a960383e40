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
 * A message not worth compressing can still go as a permessage-deflate
 * message: rc_deflate_stored wraps it in DEFLATE "stored" blocks (5 bytes
 * of header per 65,535 bytes and one byte at the end, no compression; RFC
 * 7692, 7.2.3.3), which any receiver inflates at the cost of a copy.
 *
 * Pure computation over zlib; no I/O. One deflater serves any number of
 * messages, one at a time.
 */
#ifndef RC_DEFLATE_H
#define RC_DEFLATE_H

#include <stddef.h>

#define RC_DEFLATE_STORED_BLOCK 65535u /* the most one stored block holds */

struct rc_deflater;

/* A deflater at zlib level (1..9), window 32 KiB; NULL on OOM or a bad
 * level. */
struct rc_deflater *rc_deflate_new(int level);
void rc_deflate_free(struct rc_deflater *d);

/* Compresses in[0..n) as one message into out (cap bytes). Returns the
 * length of the compressed message (the 00 00 ff ff tail already removed),
 * or 0 when it would not be shorter than n (send it uncompressed), when it
 * does not fit in cap, or on a zlib error. n may be 0 (then 0: nothing to
 * gain). */
size_t rc_deflate_message(struct rc_deflater *d, const unsigned char *in, size_t n, unsigned char *out, size_t cap);

/* The length of in[0..n) wrapped in stored blocks: n, plus 5 per block,
 * plus the first byte of the sync flush's empty block. */
size_t rc_deflate_stored_len(size_t n);

/* Writes in[0..n) into out as stored blocks, none of them final: what a
 * sync flush would produce for uncompressed data, with the 00 00 ff ff tail
 * removed. Returns rc_deflate_stored_len(n), or 0 when cap is smaller. */
size_t rc_deflate_stored(const unsigned char *in, size_t n, unsigned char *out, size_t cap);

#endif
