/* rc_team_args.c - a source board -> the call of lua/teams.lua. */
#include "rc_team_args.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "rc_codec.h"
#include "rc_conf.h"
#include "rc_err.h"
#include "rc_expiry.h"
#include "rc_names.h"

#include <string.h>

int rc_team_args_build(const struct rc_board *b, const struct rc_period *p, int reset, int64_t now_ms, int cluster,
                       struct rc_team_args *out, struct rc_error *err)
{
    static const char *const tkeys[] = {"z", "seq", "log", "ch", "epoch"};
    const struct rc_layout *l = &b->layout;
    if (!b->teams[0])
        return rc_err_set(err, RC_E_BAD_REQUEST, "board %s has no team board (no teams = in its config)", b->name);
    /* the period's own membership (rc_team_args.h, "a period's membership") */
    if (rc_keys_board(out->keys[0], RC_KEY_MAX, b->name, p->id, "z", NULL) ||
        rc_team_args_tm_key(out->keys[1], RC_KEY_MAX, b->name, p->id, "tm"))
        return rc_err_set(err, RC_E_INTERNAL, "key name too long");
    int64_t ttl_ms;
    if (rc_expiry_period_ttl_ms(b, p, now_ms, &ttl_ms, err))
        return err->code;
    for (unsigned i = 0; i < 5; i++)
        if (rc_keys_board(out->keys[2 + i], RC_KEY_MAX, b->teams, p->id, tkeys[i], NULL))
            return rc_err_set(err, RC_E_INTERNAL, "key name too long");
    uint64_t slot = 0;
    int64_t base = b->period.kind == RC_PERIOD_NONE ? l->tb_base_ms : p->start_ms;
    int64_t at = now_ms;
    if (b->period.kind != RC_PERIOD_NONE && at >= p->end_ms)
        at = p->end_ms - 1; /* a finished period rebuilt: a changed sum takes its last instant */
    if (rc_codec_tb_slot(l, base, at, &slot))
        return rc_err_set(err, RC_E_OUT_OF_RANGE, "now is outside board %s's tie-break horizon", b->name);
    for (unsigned i = 0; i < RC_TEAM_NKEYS; i++)
        out->words[i] = out->keys[i];
    const char **a = out->words + RC_TEAM_NKEYS;
    a[0] = reset ? "reset" : "rebuild";
    snprintf(out->num[1], sizeof out->num[1], "%" PRId64, now_ms);
    snprintf(out->num[2], sizeof out->num[2], "%" PRIu64, slot);
    snprintf(out->num[3], sizeof out->num[3], "%" PRIu64, (uint64_t)1 << l->tb_bits);
    snprintf(out->num[5], sizeof out->num[5], "%u", rc_conf_board_log_keep(b));
    a[1] = out->num[1];
    a[2] = out->num[2];
    a[3] = out->num[3];
    a[4] = l->order == RC_ORDER_DESC ? "desc" : "asc";
    a[5] = out->num[5];
    a[6] = cluster ? "SPUBLISH" : "PUBLISH";
    out->epoch[0] = '\0';
    a[7] = out->epoch;
    snprintf(out->num[8], sizeof out->num[8], "%" PRId64, ttl_ms);
    a[8] = out->num[8];
    a[9] = p->id[0] ? "1" : "0"; /* a period's membership must be seeded first */
    return 0;
}

int rc_team_args_roster_at(const struct rc_board *b, const char *period, const char *team, int by_time,
                           int64_t target, struct rc_team_args *out, struct rc_error *err)
{
    if (!b->teams[0])
        return rc_err_set(err, RC_E_BAD_REQUEST, "a roster needs a board with teams (docs/teams.md)");
    if (rc_team_args_tm_key(out->keys[0], RC_KEY_MAX, b->name, period, "tm") ||
        rc_team_args_tm_key(out->keys[1], RC_KEY_MAX, b->name, period, "tml") ||
        rc_keys_board(out->keys[2], RC_KEY_MAX, b->name, period, "seq", NULL))
        return rc_err_set(err, RC_E_INTERNAL, "key name too long");
    for (unsigned i = 0; i < RC_TEAM_AT_NKEYS; i++)
        out->words[i] = out->keys[i];
    snprintf(out->num[0], sizeof out->num[0], "%" PRId64, target);
    out->words[3] = "roster_at";
    out->words[4] = team;
    out->words[5] = by_time ? "time" : "seq";
    out->words[6] = out->num[0];
    return 0;
}

int rc_team_args_roster_at_parse(const struct rc_reply_item *items, size_t n, int *gone, int64_t *oldest,
                                 size_t *nmembers)
{
    *gone = 0;
    *oldest = 0;
    *nmembers = 0;
    if (n < 2 || items[0].is_int || !items[0].str || !items[1].is_int)
        return RC_E_INTERNAL;
    if (strcmp(items[0].str, "gone") == 0) {
        *gone = 1;
        *oldest = items[1].integer;
        return n == 2 && *oldest >= 0 ? 0 : RC_E_INTERNAL;
    }
    if (strcmp(items[0].str, "ok") != 0 || items[1].integer < 0 || (uint64_t)items[1].integer != n - 2)
        return RC_E_INTERNAL;
    for (size_t i = 2; i < n; i++)
        if (items[i].is_int || !items[i].str || !rc_names_member_name_valid(items[i].str, strlen(items[i].str)))
            return RC_E_INTERNAL;
    *nmembers = n - 2;
    return 0;
}

int rc_team_args_tm_key(char *out, size_t cap, const char *name, const char *period, const char *what)
{
    /* the pointer is the board's, in the tag without a period */
    return rc_keys_board(out, cap, name, strcmp(what, "tmp") == 0 ? "" : period, what, NULL) ? -1 : 0;
}

int rc_team_args_seed_source(const struct rc_board *b, const struct rc_period *p, unsigned i, struct rc_period *out)
{
    if (i < 1 || i > RC_TEAM_SEED_WALK || b->period.kind == RC_PERIOD_NONE)
        return -1;
    struct rc_period cur = *p;
    for (unsigned k = 0; k < i; k++)
        if (rc_period_prev(&b->period, &cur, out) != 0)
            return -1;
        else
            cur = *out;
    return 0;
}

int rc_team_args_seed_pointer(const struct rc_board *b, const struct rc_period *p, const char *value,
                              struct rc_period *out)
{
    const char *sp = value ? strchr(value, ' ') : NULL;
    if (!sp || b->period.kind == RC_PERIOD_NONE || rc_period_parse(&b->period, sp + 1, out) != 0)
        return -1;
    char *end;
    long long start = strtoll(value, &end, 10);
    /* the start is the id's (a pointer of another calendar names no period of b) */
    if (end != sp || start != out->start_ms || out->start_ms >= p->start_ms)
        return -1;
    return 0;
}

enum rc_team_walk_step rc_team_args_walk_next(struct rc_team_walk *w, const struct rc_board *b,
                                              const struct rc_period *p, const char *pointer, struct rc_period *out)
{
    struct rc_period prev;
    switch (w->state) {
    case 0: /* the period just before: the usual case, a rollover */
        w->state = 1;
        return rc_team_args_seed_source(b, p, 1, out) == 0 ? RC_TEAM_WALK_READ : RC_TEAM_WALK_NONE;
    case 1: /* none there: the latest period started, if older */
        w->state = 2;
        return RC_TEAM_WALK_POINTER;
    case 2:
        w->state = 3;
        w->i = 2;
        if (rc_team_args_seed_pointer(b, p, pointer, out) == 0 && rc_team_args_seed_source(b, p, 1, &prev) == 0 &&
            out->start_ms < prev.start_ms)
            return RC_TEAM_WALK_READ;
        /* fall through - no pointer to follow */
    default: /* each period before, back to RC_TEAM_SEED_WALK */
        w->state = 3;
        return rc_team_args_seed_source(b, p, w->i++, out) == 0 ? RC_TEAM_WALK_READ : RC_TEAM_WALK_NONE;
    }
}

int rc_team_args_seed_is_latest(const struct rc_period *p, int64_t now_ms)
{
    return p->end_ms > now_ms;
}

int rc_team_args_seed(const struct rc_board *b, const struct rc_period *p, int64_t now_ms, struct rc_team_args *out)
{
    struct rc_error err = {0, ""};
    int64_t ttl = 0;
    if (rc_team_args_tm_key(out->keys[0], RC_KEY_MAX, b->name, p->id, "tm") ||
        rc_team_args_tm_key(out->keys[1], RC_KEY_MAX, b->name, p->id, "tml") ||
        (!rc_team_args_seed_is_latest(p, now_ms) && rc_expiry_period_ttl_ms(b, p, now_ms, &ttl, &err) != 0))
        return -1;
    snprintf(out->num[0], sizeof out->num[0], "%" PRId64, ttl);
    out->words[0] = out->keys[0];
    out->words[1] = out->keys[1];
    out->words[2] = "seed";
    out->words[3] = out->num[0];
    return 0;
}

int rc_team_args_point(const char *name, const struct rc_period *p, struct rc_team_args *out)
{
    if (rc_team_args_tm_key(out->keys[0], RC_KEY_MAX, name, "", "tmp"))
        return -1;
    snprintf(out->num[0], sizeof out->num[0], "%" PRId64, p->start_ms);
    out->words[0] = out->keys[0];
    out->words[1] = "point";
    out->words[2] = out->num[0];
    out->words[3] = p->id;
    return 0;
}

size_t rc_team_args_seed_head(const struct rc_team_args *a, const char *script, const char **argv, size_t *lens)
{
    argv[0] = "EVAL";
    argv[1] = script;
    argv[2] = "2"; /* RC_TEAM_SEED_NKEYS */
    for (unsigned i = 0; i < RC_TEAM_SEED_NWORDS; i++)
        argv[3 + i] = a->words[i];
    for (unsigned i = 0; i < RC_TEAM_SEED_HEAD; i++)
        lens[i] = strlen(argv[i]);
    return RC_TEAM_SEED_HEAD;
}
