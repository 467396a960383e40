/* rc_event.h - change events: the JSON that lua/write.lua (and admin.lua)
 * publishes on a board's change channel and appends to its change log,
 * decoded. Pure: no Redis, no clock. */
#ifndef RC_EVENT_H
#define RC_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "rc_epoch.h"
#include "rc_names.h"

/* One change event of the log or of the change channel, decoded. */
struct rc_event {
    int64_t seq;
    char op[12];                   /* incr set best submit | remove reverse reset (admin) */
    char member[RC_MEMBER_MAX + 1]; /* "" for reset */
    int has_new;                   /* 0: the member left the board (remove) */
    double c;                      /* new composite */
    int has_old;
    double old_c;
    int64_t rank;
    int64_t old_rank;              /* 0 when new on the board */
    int64_t at_ms;
    unsigned shard;                /* a sharded board's events: the shard it came from (the
                                      channel's, set by the fan-out; the parser leaves 0) */
    char epoch[RC_EPOCH_MAX + 1];  /* the new epoch when this change started the board's history over
                                      (a reset, the first write after the history was lost), else "" */
};

/* Parses a change event (JSON text, len bytes, no NUL needed). seq and at
 * are required, and member unless op is "reset"; "epoch", when present, must
 * be a valid epoch id (rc_epoch_valid). Returns 0 with *ev filled,
 * or RC_E_BAD_REQUEST (*ev zeroed). */
int rc_event_parse(const char *text, size_t len, struct rc_event *ev);

/* A team change on a source board's channel (docs/teams.md), published by
 * lua/write.lua's op team: {"team_of":M,"team":T|null}. Not a change event
 * (no seq: no member's points changed); the fan-out keeps rows' "team" by
 * it. */
#define RC_EVENT_TEAM_PREFIX "{\"team_of\":"

/* 1 when text[0..len) is such a message (by its prefix). */
int rc_event_team_is(const char *text, size_t len);

/* Parses one into member and team (RC_MEMBER_MAX + 1 bytes each; team ""
 * for null: no team). Returns 0 or RC_E_BAD_REQUEST (a name that breaks
 * the member rules, another shape). */
int rc_event_team_parse(const char *text, size_t len, char *member, char *team);

#endif
