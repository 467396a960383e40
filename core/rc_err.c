/* rc_err.c - error code names, HTTP statuses and the error setter. */
#include "rc_err.h"

#include <stdarg.h>
#include <stdio.h>

const char *rc_err_code_name(int code)
{
    switch (code) {
    case RC_OK: return "ok";
    case RC_E_BAD_REQUEST: return "bad_request";
    case RC_E_UNKNOWN_BOARD: return "unknown_board";
    case RC_E_UNAUTHORIZED: return "unauthorized";
    case RC_E_FORBIDDEN: return "forbidden";
    case RC_E_OUT_OF_RANGE: return "out_of_range";
    case RC_E_RATE_LIMITED: return "rate_limited";
    case RC_E_UNAVAILABLE: return "unavailable";
    case RC_E_TOO_LARGE: return "too_large";
    case RC_E_NOT_FOUND: return "bad_request";
    default: return "internal";
    }
}

int rc_err_code_http_status(int code)
{
    switch (code) {
    case RC_OK: return 200;
    case RC_E_BAD_REQUEST: return 400;
    case RC_E_UNKNOWN_BOARD: return 404;
    case RC_E_UNAUTHORIZED: return 401;
    case RC_E_FORBIDDEN: return 403;
    case RC_E_OUT_OF_RANGE: return 422;
    case RC_E_RATE_LIMITED: return 429;
    case RC_E_UNAVAILABLE: return 503;
    case RC_E_TOO_LARGE: return 413;
    case RC_E_NOT_FOUND: return 404;
    default: return 500;
    }
}

int rc_err_set(struct rc_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}
