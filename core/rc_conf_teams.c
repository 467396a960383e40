/* rc_conf_teams.c - one job: `teams = T` on a [board] section (docs/teams.md):
 * the key's value, what a source board with teams cannot be, and the team
 * board T it declares (T has no [board] section of its own). */
#include "rc_conf_int.h"

#include <string.h>

#include "rc_keys.h"
#include "rc_names.h"

int rc_conf__set_teams(struct parser *p, const struct key_spec *k, void *obj, const char *v)
{
    size_t n = strlen(v);
    if (!rc_names_board_name_valid(v, n))
        return rc_conf__fail(p, p->lineno, "%s = '%.70s' is not a board name: 1..%d of A-Z a-z 0-9 _ . : -",
                             k->name, v, RC_BOARD_MAX);
    memcpy(FIELD(char, obj, k), v, n + 1);
    return 0;
}

/* What a team board cannot be fed by. Each reason says why, at the line of
 * `teams`; everything here would make a team's sum inexact or its write
 * touch two slots. */
static int refuse(struct parser *p, const struct rc_board *b, int line)
{
    if (b->is_template)
        return rc_conf__fail(p, line, "teams needs an exact board name, not template %s: its boards "
                             "would all feed one team board", b->name);
    if (b->decay.kind != RC_DECAY_NONE)
        return rc_conf__fail(p, line, "teams cannot be combined with decay: scores are rebuilt from "
                             "buckets, so no write could keep a team's sum");
    if (b->layout.nfields)
        return rc_conf__fail(p, line, "teams cannot be combined with fields: a multi-field score "
                             "does not sum");
    if (b->shards > 1)
        return rc_conf__fail(p, line, "teams cannot be combined with shards: a team's members are on "
                             "several shards (slots), so no one script keeps its sum");
    if (b->queue.mode == RC_WRITE_QUEUED)
        return rc_conf__fail(p, line, "teams cannot be combined with write_mode = queued (not "
                             "supported yet): its ack could not carry the team's score");
    if (b->layout.tiebreak == RC_TB_ARRIVAL)
        return rc_conf__fail(p, line, "teams cannot be combined with tiebreak = arrival: team sums "
                             "have no arrival counters (use earliest)");
    if (strcmp(b->teams, b->name) == 0)
        return rc_conf__fail(p, line, "teams = %s names the board itself", b->teams);
    return 0;
}

int rc_conf__finish_teams(struct parser *p, struct rc_board *b)
{
    struct rc_conf *c = p->c;
    int line = p->key_line[K_TEAMS], rc;
    if (!b->teams[0])
        return 0;
    if ((rc = refuse(p, b, line)) != 0)
        return rc;
    for (size_t i = 0; i < c->nboards; i++)
        if (strcmp(c->boards[i].name, b->teams) == 0)
            return rc_conf__fail(p, line, "teams = %s: board %s is declared at line %d; a team board has "
                                 "no [board] section", b->teams, b->teams, c->boards[i].config_line);
    if (c->nboards == RC_CONF_MAX_BOARDS)
        return rc_conf__fail(p, line, "too many boards: at most %d (a team board counts)", RC_CONF_MAX_BOARDS);
    /* T has the source's layout (order, range, tie-break), period and log;
     * it takes no writes (ops 0: rc_write_args refuses them) */
    struct rc_board *t = &c->boards[c->nboards++];
    *t = *b;
    memcpy(t->name, b->teams, strlen(b->teams) + 1);
    memcpy(t->team_of, b->name, strlen(b->name) + 1);
    t->teams[0] = '\0';
    t->ops = 0;
    t->config_line = line;
    return 0;
}

void rc_conf__register_teams(const struct rc_conf *c)
{
    rc_keys_teams_reset();
    for (size_t i = 0; i < c->nboards; i++)
        if (c->boards[i].team_of[0])
            rc_keys_team_board(c->boards[i].name, c->boards[i].team_of);
}
