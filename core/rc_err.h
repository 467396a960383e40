/* rc_err.h - error codes shared by core/ and the gateway.
 *
 * Functions return 0 on success or one of the negative RC_E_* codes below.
 * Each code maps one-to-one onto a PROTOCOL.md error code and an HTTP status.
 * A struct rc_error carries the code plus a human message for the client.
 */
#ifndef RC_ERR_H
#define RC_ERR_H

#include <stddef.h>

enum rc_code {
    RC_OK = 0,
    RC_E_BAD_REQUEST = -1,   /* malformed message or value */
    RC_E_UNKNOWN_BOARD = -2, /* board name matches no declaration */
    RC_E_UNAUTHORIZED = -3,  /* no or bad credentials */
    RC_E_FORBIDDEN = -4,     /* credentials lack the scope */
    RC_E_OUT_OF_RANGE = -5,  /* result would leave the board's score layout */
    RC_E_RATE_LIMITED = -6,  /* token bucket empty */
    RC_E_UNAVAILABLE = -7,   /* Redis unreachable: nothing was written */
    RC_E_TOO_LARGE = -8,     /* request exceeds a size limit */
    RC_E_INTERNAL = -9,      /* a bug or resource failure on our side */
    RC_E_NOT_FOUND = -10     /* HTTP only: no such path (PROTOCOL code bad_request, status 404) */
};

#define RC_ERROR_MSG_MAX 200

struct rc_error {
    int code;                    /* one of enum rc_code */
    char msg[RC_ERROR_MSG_MAX];  /* NUL-terminated, for humans */
};

/* The PROTOCOL.md code string for code ("bad_request", ...). Never NULL. */
const char *rc_err_code_name(int code);

/* The HTTP status that goes with code (400, 401, ...). */
int rc_err_code_http_status(int code);

/* Fills err (may be NULL) with code and a printf-style message; returns code. */
int rc_err_set(struct rc_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
