/* fuzz_request.c - libFuzzer target: every byte string a client could send
 * as a WebSocket message or a REST write body goes through the decoders
 * (core/rc_proto_decode.c) and, when accepted, back out through an encoder.
 * Sanitizers catch what the decoders must never do: read out of bounds, leak,
 * overflow. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rc_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rc_request r;
    struct rc_error err;
    if (rc_proto_decode((const char *)data, size, &r, &err) == 0 && r.op == RC_OP_PING)
        free(rc_proto_encode_pong(r.id_json));
    else
        free(rc_proto_encode_error(r.id_json, err.code, err.msg));
    rc_proto_decode_free(&r);
    if (rc_proto_decode_write_body("demo", (const char *)data, size, &r, &err) == 0)
        free(rc_proto_encode_ack(&(struct rc_ack_msg){.id_json = r.id_json, .board = r.board, .member = r.member, .score = (double)r.value, .rank = 1, .seq = 1, .fields = r.fields, .nfields = r.nfields, .replicas = -1}));
    rc_proto_decode_free(&r);
    return 0;
}
