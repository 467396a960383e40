/* rc_names.h - name rules of PROTOCOL.md for boards, members, request ids
 * and the config's field names. All functions borrow their input. */
#ifndef RC_NAMES_H
#define RC_NAMES_H

#include <stddef.h>

#define RC_BOARD_MAX 64   /* board: 1..64 of [A-Za-z0-9_.:-] */
#define RC_MEMBER_MAX 128 /* member: 1..128 of [A-Za-z0-9_.:@-] */
#define RC_REQ_MAX 64     /* req: 1..64 printable ASCII, no space */
#define RC_FIELD_NAME_MAX 32 /* multi-field name: 1..32 of [a-z0-9_], letter first */

/* Each returns 1 when s[0..len) is a valid name of its kind, else 0. */
int rc_names_board_name_valid(const char *s, size_t len);
int rc_names_member_name_valid(const char *s, size_t len);
int rc_names_req_valid(const char *s, size_t len);
int rc_names_field_name_valid(const char *s, size_t len);
/* A board template: a valid board name followed by a final '*'. */
int rc_names_board_template_valid(const char *s, size_t len);

/* 1 when s[0..len) is well-formed UTF-8 (no overlongs, no surrogates). */
int rc_names_utf8_valid(const char *s, size_t len);

#endif
