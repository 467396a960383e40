/* rc_freeze.c - the freeze state, its events and lua/freeze.lua's call
 * (rc_freeze.h). */
#include "rc_freeze.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rc_err.h"

#define CTL_PREFIX "{\"ctl\":"

int rc_freeze_newer(const struct rc_freeze *have, const struct rc_freeze *heard)
{
    return heard->version > have->version;
}

int rc_freeze_same(const struct rc_freeze *a, const struct rc_freeze *b)
{
    if (a->frozen != b->frozen)
        return 0;
    return !a->frozen || (a->seq == b->seq && a->shown == b->shown);
}

int rc_freeze_is_event(const char *text, size_t len)
{
    return text && len >= sizeof CTL_PREFIX - 1 && memcmp(text, CTL_PREFIX, sizeof CTL_PREFIX - 1) == 0;
}

/* A whole number 0 .. 2^53 - 1 in field k of o. */
static int count(const cJSON *o, const char *k, int64_t *v)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) || x->valuedouble > 9007199254740991.0 ||
        x->valuedouble != floor(x->valuedouble))
        return -1;
    *v = (int64_t)x->valuedouble;
    return 0;
}

int rc_freeze_event_parse(const char *text, size_t len, struct rc_freeze_event *ev)
{
    memset(ev, 0, sizeof *ev);
    cJSON *o = rc_freeze_is_event(text, len) ? cJSON_ParseWithLength(text, len) : NULL;
    if (!o)
        return RC_E_BAD_REQUEST;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "ctl");
    int bad = !cJSON_IsString(k) || count(o, "v", &ev->state.version) || ev->state.version < 1;
    if (!bad && strcmp(k->valuestring, "freeze") == 0) {
        ev->kind = RC_CTL_FREEZE;
        bad = count(o, "frozen", &ev->state.seq) || count(o, "shown", &ev->state.shown) ||
              ev->state.shown != ev->state.seq;
        ev->state.frozen = 1;
        ev->from = ev->to = ev->state.shown;
    } else if (!bad && strcmp(k->valuestring, "reveal") == 0) {
        ev->kind = RC_CTL_REVEAL;
        bad = count(o, "frozen", &ev->state.seq) || count(o, "from", &ev->from) ||
              count(o, "shown", &ev->state.shown) || count(o, "skipped", &ev->skipped) ||
              ev->from < ev->state.seq || ev->state.shown < ev->from;
        ev->state.frozen = 1;
        ev->to = ev->state.shown;
    } else if (!bad && strcmp(k->valuestring, "unfreeze") == 0) {
        ev->kind = RC_CTL_UNFREEZE;
        bad = count(o, "from", &ev->from) || count(o, "shown", &ev->to) || ev->to < ev->from;
    } else {
        bad = 1;
    }
    cJSON_Delete(o);
    if (bad) {
        memset(ev, 0, sizeof *ev);
        return RC_E_BAD_REQUEST;
    }
    return 0;
}

int rc_freeze_args_build(const char *board, const char *period, enum rc_freeze_action action, int64_t steps,
                         int sharded, struct rc_freeze_args *out)
{
    static const char *const suffix[RC_FREEZE_NKEYS] = {"z", "seq", "log", "ch", "epoch", "frz", "fz"};
    static const char *const words[] = {"freeze", "reveal", "state"};
    if ((unsigned)action > RC_FREEZE_DO_STATE)
        return RC_E_BAD_REQUEST;
    if (action == RC_FREEZE_DO_REVEAL && steps != RC_FREEZE_STEPS_ALL && (steps < 1 || steps > 9007199254740991LL))
        return RC_E_BAD_REQUEST;
    for (int i = 0; i < RC_FREEZE_NKEYS; i++) {
        if (rc_keys_board(out->keys[i], RC_KEY_MAX, board, period, suffix[i], NULL))
            return RC_E_INTERNAL;
        out->words[i] = out->keys[i];
    }
    if (action == RC_FREEZE_DO_REVEAL && steps != RC_FREEZE_STEPS_ALL)
        snprintf(out->steps, sizeof out->steps, "%" PRId64, steps);
    else
        snprintf(out->steps, sizeof out->steps, "%s", action == RC_FREEZE_DO_REVEAL ? "all" : "0");
    out->words[RC_FREEZE_NKEYS] = words[action];
    out->words[RC_FREEZE_NKEYS + 1] = out->steps;
    out->words[RC_FREEZE_NKEYS + 2] = sharded ? "SPUBLISH" : "PUBLISH";
    for (size_t i = 0; i < RC_FREEZE_NKEYS + RC_FREEZE_NARGV; i++)
        out->lens[i] = strlen(out->words[i]);
    return 0;
}

static int item_count(const struct rc_reply_item *it, int64_t *v)
{
    if (!it->is_int || it->integer < 0)
        return -1;
    *v = it->integer;
    return 0;
}

int rc_freeze_result_parse(const struct rc_reply_item *items, size_t n, struct rc_freeze_result *res)
{
    int64_t frozen, changed;
    memset(res, 0, sizeof *res);
    struct rc_freeze *f = &res->state;
    if (!items || n != 8 || items[0].is_int || !items[0].str || strcmp(items[0].str, "ok") != 0 ||
        item_count(&items[1], &frozen) || frozen > 1 || item_count(&items[2], &f->seq) ||
        item_count(&items[3], &f->shown) || item_count(&items[4], &res->seq) ||
        item_count(&items[5], &f->version) || item_count(&items[6], &res->skipped) ||
        item_count(&items[7], &changed) || changed > 1)
        return RC_E_INTERNAL;
    f->frozen = (int)frozen;
    res->changed = (int)changed;
    if (f->frozen ? (f->shown < f->seq || f->shown > res->seq) : (f->seq != 0 || f->shown != res->seq))
        return RC_E_INTERNAL;
    if (!f->frozen)
        f->shown = 0; /* the state's convention: 0 0 when not frozen */
    return 0;
}

int64_t rc_freeze_pending(const struct rc_freeze *f, int64_t live_seq)
{
    return f->frozen && live_seq > f->shown ? live_seq - f->shown : 0;
}
