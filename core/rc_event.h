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
 * lua/write.lua's op team: {"team_of":M,"team":T|null,"v":V}. Not a change
 * event (no seq: no member's points changed); the fan-out keeps rows' "team"
 * by it. V is the membership's version after the change ("#" in rc:{B|}:tm,
 * +1 per change): a message from a node that ran a held call after it lost
 * its primary role can come after newer ones, and only V tells them apart. */
#define RC_EVENT_TEAM_PREFIX "{\"team_of\":"

/* 1 when text[0..len) is such a message (by its prefix). */
int rc_event_team_is(const char *text, size_t len);

/* Parses one into member and team (RC_MEMBER_MAX + 1 bytes each; team ""
 * for null: no team) and *version (0 when the message has none: one from
 * a script before versions). Returns 0 or RC_E_BAD_REQUEST (a name that
 * breaks the member rules, another shape, a version that is not a positive
 * integer). */
int rc_event_team_parse(const char *text, size_t len, char *member, char *team, uint64_t *version);

/* What the fan-out does with a team message of version v, when the
 * membership it holds is at version `held` and its last read of Redis saw
 * version `read` (read <= held):
 *  - RC_TEAMV_APPLY: v is the next one (held + 1), or the message has no
 *    version (v = 0);
 *  - RC_TEAMV_KNOWN: v <= read: the read already had it, nothing to do;
 *  - RC_TEAMV_READ: anything else: a message was lost (v > held + 1), or
 *    it repeats a version already applied from a message (v <= held),
 *    which a node that was a primary sends when it wakes from a pause and
 *    runs what it held on its stale data: read the membership again. */
enum rc_teamv { RC_TEAMV_APPLY, RC_TEAMV_KNOWN, RC_TEAMV_READ };
enum rc_teamv rc_event_team_judge(uint64_t held, uint64_t read, uint64_t v);

#endif
