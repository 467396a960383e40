/* rc_test_writer.h - drives the gateway's real write path (gw_write_submit
 * through redis/gw_redis on a libuv loop) from a blocking test: one call = one write
 * as a PROTOCOL.md JSON message, decoded by core/rc_proto like the gateway
 * does. */
#ifndef RC_TEST_WRITER_H
#define RC_TEST_WRITER_H

#include <stdint.h>

#include <uv.h>
#include <hiredis/async.h>

#include "redis/gw_redis.h"
#include "redis/gw_script.h"
#include "redis/gw_write.h"
#include "rc_conf.h"

#define RC_TEST_MAX_CONNS 8

struct rc_test_writer {
    uv_loop_t loop;
    struct gw_redis *redis[RC_TEST_MAX_CONNS]; /* one front each: its own connections */
    unsigned nconns;
    struct gw_script script;
};

/* Opens nconns fronts (redis/gw_redis.h) to 127.0.0.1:port on a private
 * loop and waits until they are up. Returns 0 or -1. */
int rc_test_writer_open(struct rc_test_writer *w, int port, unsigned nconns);

/* The same for a seed list ("H:P,H:P"): one server or a cluster. */
int rc_test_writer_open_seeds(struct rc_test_writer *w, const char *seeds, unsigned nconns);
void rc_test_writer_close(struct rc_test_writer *w);

/* Sends the write `json` (an incr/set/best/submit message) for a board of c
 * at now_ms through front 0 and waits for the answer. Returns what the
 * gateway would answer: 0 with *res filled (res->status may be an error
 * from the script), or an RC_E_* with err filled. */
int rc_test_write(struct rc_test_writer *w, const struct rc_conf *c, const char *json, int64_t now_ms,
                  struct rc_write_result *res, struct rc_error *err);

/* Parses conf text (aborts the test on a parse error). Caller frees. */
struct rc_conf *rc_test_conf(const char *text);

#endif
