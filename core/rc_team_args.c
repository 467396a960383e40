/* rc_team_args.c - a source board -> the call of lua/teams.lua. */
#include "rc_team_args.h"

#include <inttypes.h>
#include <stdio.h>

#include "rc_codec.h"
#include "rc_conf.h"
#include "rc_err.h"
#include "rc_names.h"

#include <string.h>

int rc_team_args_build(const struct rc_board *b, const struct rc_period *p, int reset, int64_t now_ms, int cluster,
                       struct rc_team_args *out, struct rc_error *err)
{
    static const char *const tkeys[] = {"z", "seq", "log", "ch", "epoch"};
    const struct rc_layout *l = &b->layout;
    if (!b->teams[0])
        return rc_err_set(err, RC_E_BAD_REQUEST, "board %s has no team board (no teams = in its config)", b->name);
    /* membership holds across periods: the board's tag without a period
     * (all-time sources only: rc_conf_teams.c) */
    if (rc_keys_board(out->keys[0], RC_KEY_MAX, b->name, p->id, "z", NULL) ||
        rc_keys_board(out->keys[1], RC_KEY_MAX, b->name, "", "tm", NULL))
        return rc_err_set(err, RC_E_INTERNAL, "key name too long");
    for (unsigned i = 0; i < 5; i++)
        if (rc_keys_board(out->keys[2 + i], RC_KEY_MAX, b->teams, p->id, tkeys[i], NULL))
            return rc_err_set(err, RC_E_INTERNAL, "key name too long");
    uint64_t slot = 0;
    int64_t base = b->period.kind == RC_PERIOD_NONE ? l->tb_base_ms : p->start_ms;
    if (rc_codec_tb_slot(l, base, now_ms, &slot))
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
    return 0;
}

int rc_team_args_roster_at(const struct rc_board *b, const char *team, int by_time, int64_t target,
                           struct rc_team_args *out, struct rc_error *err)
{
    if (!b->teams[0])
        return rc_err_set(err, RC_E_BAD_REQUEST, "a roster needs a board with teams (docs/teams.md)");
    if (rc_keys_board(out->keys[0], RC_KEY_MAX, b->name, "", "tm", NULL) ||
        rc_keys_board(out->keys[1], RC_KEY_MAX, b->name, "", "tml", NULL) ||
        rc_keys_board(out->keys[2], RC_KEY_MAX, b->name, "", "seq", NULL))
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
