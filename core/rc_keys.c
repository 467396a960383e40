/* rc_keys.c - builds the Redis key names (see rc_keys.h). */
#include "rc_keys.h"

#include <stdio.h>
#include <string.h>

#include "rc_err.h"

#define TEAMS_MAX 256 /* RC_CONF_MAX_BOARDS: at most one team board per board */
#define NAME_CAP 72   /* RC_BOARD_MAX + 2 */

/* team board -> source board; set by rc_conf_parse (see rc_keys.h) */
static struct {
    char team[NAME_CAP];
    char source[NAME_CAP];
} teams[TEAMS_MAX];
static size_t nteams;

void rc_keys_teams_reset(void)
{
    nteams = 0;
}

int rc_keys_team_board(const char *team, const char *source)
{
    if (nteams == TEAMS_MAX || strlen(team) >= NAME_CAP || strlen(source) >= NAME_CAP)
        return RC_E_INTERNAL;
    snprintf(teams[nteams].team, NAME_CAP, "%s", team);
    snprintf(teams[nteams].source, NAME_CAP, "%s", source);
    nteams++;
    return 0;
}

const char *rc_keys_team_source(const char *team)
{
    for (size_t i = 0; i < nteams; i++)
        if (strcmp(teams[i].team, team) == 0)
            return teams[i].source;
    return NULL;
}

int rc_keys_board(char *out, size_t cap, const char *board, const char *period_id, const char *suffix,
                 const char *arg)
{
    const char *src = nteams ? rc_keys_team_source(board) : NULL;
    const char *pid = period_id ? period_id : "";
    int n;
    if (src)
        n = arg ? snprintf(out, cap, "rc:{%s|%s}{%s}:%s:%s", src, pid, board, suffix, arg)
                : snprintf(out, cap, "rc:{%s|%s}{%s}:%s", src, pid, board, suffix);
    else
        n = arg ? snprintf(out, cap, "rc:{%s|%s}:%s:%s", board, pid, suffix, arg)
                : snprintf(out, cap, "rc:{%s|%s}:%s", board, pid, suffix);
    return n < 0 || (size_t)n >= cap ? RC_E_INTERNAL : 0;
}

int rc_keys_parse_tag(const char *name, char *board, size_t bcap, char *period, size_t pcap)
{
    const char *open = strstr(name, "rc:{");
    if (!open)
        return -1;
    open += 4;
    const char *bar = strchr(open, '|');
    const char *close = bar ? strchr(bar, '}') : NULL;
    if (!close || (size_t)(bar - open) >= bcap || (size_t)(close - bar - 1) >= pcap)
        return -1;
    memcpy(period, bar + 1, (size_t)(close - bar - 1));
    period[close - bar - 1] = '\0';
    if (close[1] == '{') {
        /* a team board's key: rc:{S|P}{T}:... (the hash tag is S|P) */
        const char *t = close + 2, *end = strchr(t, '}');
        if (!end || end == t || (size_t)(end - t) >= bcap)
            return -1;
        memcpy(board, t, (size_t)(end - t));
        board[end - t] = '\0';
        return 0;
    }
    memcpy(board, open, (size_t)(bar - open));
    board[bar - open] = '\0';
    return 0;
}

int rc_keys_profile(char *out, size_t cap, const char *member)
{
    int n = snprintf(out, cap, "rc:profile:%s", member);
    return n < 0 || (size_t)n >= cap ? RC_E_INTERNAL : 0;
}
