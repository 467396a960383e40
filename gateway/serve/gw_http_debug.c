/* gw_http_debug.c - the test-only endpoints (POST /api/v1/debug/clock),
 * answered only with [server] test_clock = on. */
#include "serve/gw_http_debug.h"

#include <uv.h>
#include <libwebsockets.h>


#include <math.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "gw_app.h"
#include "base/gw_log.h"
#include "serve/gw_http_req.h"
#include "rc_json_gate.h"

/* POST /api/v1/debug/clock {"offset_ms": N} or {"now_ms": T}: shifts the
 * gateway's clock, so tests cross period boundaries and decay windows
 * without waiting. The route table routes it only with [server] test_clock
 * = on and for the admin scope; the test_clock check is repeated here
 * because a production gateway must never move its clock. In a worker
 * group the offset is the group's (base/gw_clock.h): every worker moves. */
void gw_http_debug_clock(struct gw_http_req *q)
{
    struct rc_error err = {0, ""};
    if (!q->app->conf->test_clock) {
        gw_http_req_respond_error(q, RC_E_NOT_FOUND, "no such path");
        return;
    }
    cJSON *o = NULL;
    if (rc_json_gate_parse_strict(q->body ? q->body : "", q->body_len, &o, &err) < 0) {
        gw_http_req_respond_error(q, err.code, err.msg);
        return;
    }
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(o, "offset_ms");
    const cJSON *now = cJSON_GetObjectItemCaseSensitive(o, "now_ms");
    if (cJSON_IsNumber(off) && fabs(off->valuedouble) < 1e15) {
        gw_clock_set_offset_ms(&q->app->clock, (int64_t)off->valuedouble);
    } else if (cJSON_IsNumber(now) && now->valuedouble > 0 && now->valuedouble < 1e15) {
        gw_clock_set_offset_ms(&q->app->clock, gw_clock_offset_ms(&q->app->clock) +
                                                     (int64_t)now->valuedouble - gw_now_ms(q->app));
    } else {
        cJSON_Delete(o);
        gw_http_req_respond_error(q, RC_E_BAD_REQUEST, "give {\"offset_ms\": N} or {\"now_ms\": T}");
        return;
    }
    cJSON_Delete(o);
    cJSON *a = cJSON_CreateObject();
    char *json = NULL;
    if (a && cJSON_AddNumberToObject(a, "now_ms", (double)gw_now_ms(q->app)) &&
        cJSON_AddNumberToObject(a, "offset_ms", (double)gw_clock_offset_ms(&q->app->clock)))
        json = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    gw_log_warn("test clock: offset now %lld ms", (long long)gw_clock_offset_ms(&q->app->clock));
    gw_http_req_respond_json(q, json ? 0 : RC_E_INTERNAL, json);
}
