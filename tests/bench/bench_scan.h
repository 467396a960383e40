/* bench_scan.h - reading the few top-level fields rankcast-bench needs from a
 * server message without parsing all of it.
 *
 * The hot path (deltas to thousands of viewers, acks at tens of thousands a
 * second) needs op, id, sub and seq only. They come before any row in every
 * server message (core/rc_proto_encode.c), and no row field has those names,
 * so the first "key": in the text is the top-level one.
 */
#ifndef BENCH_SCAN_H
#define BENCH_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* qkey is the key with its quotes, e.g. "\"seq\"". 0, or -1 when absent or
 * not of the type asked for. */
int bench_scan_int(const char *js, size_t len, const char *qkey, int64_t *out);
int bench_scan_str(const char *js, size_t len, const char *qkey, char *out, size_t cap);

#endif
