/* rc_json_gate.h - the strict JSON gate every client text passes before any
 * of its fields is read: WebSocket messages (rc_proto_decode.c) and REST
 * bodies (gateway/gw_http.c) alike, so both transports refuse the same input
 * with the same error. Pure: no I/O.
 *
 * cJSON is lenient in ways a wire contract cannot be. The gate accepts one
 * JSON object per RFC 8259 and refuses, with RC_E_BAD_REQUEST and a message
 * that says what and where:
 *   - text that is not valid UTF-8, or not JSON, or with anything but
 *     whitespace after the object;
 *   - a byte order mark (RFC 8259 8.1: senders must not add one);
 *   - numbers outside the RFC grammar: leading zeros ("01", "-01"), a bare
 *     "1." or "-.5";
 *   - numbers a double cannot hold: "1e400" (overflows) or "1e-400" (a
 *     non-zero number that would read as 0);
 *   - raw control characters U+0000..U+001F inside strings, and any control
 *     byte between tokens other than the four JSON whitespace bytes;
 *   - by policy, "\u0000" inside a string (it would cut C strings short);
 *   - by policy, a key given twice in one object, at any depth (which copy
 *     wins is undefined in JSON, and a proxy in front of us may have read the
 *     other one); keys are compared after unescaping, so "op" and "\u006fp"
 *     are the same key.
 * A text over RC_JSON_MAX_TEXT bytes is RC_E_TOO_LARGE; running out of
 * memory is RC_E_INTERNAL.
 */
#ifndef RC_JSON_GATE_H
#define RC_JSON_GATE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "rc_err.h"

#define RC_JSON_MAX_TEXT (1u << 20) /* hard cap; the gateway's max_frame is lower */

/* Parses text[0..len) (borrowed; need not be NUL-terminated) as one strict
 * JSON object. On success sets *out to the parsed object, which the caller
 * owns and frees with cJSON_Delete, and returns 0. On failure sets *out to
 * NULL, fills err (may be NULL) and returns the negative RC_E_* code. */
int rc_json_gate_parse_strict(const char *text, size_t len, cJSON **out, struct rc_error *err);

#endif
