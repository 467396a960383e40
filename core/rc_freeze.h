/* rc_freeze.h - freeze and reveal (PROTOCOL v1.1, "Freeze and reveal"): the
 * state a board's freeze is in, the control events lua/freeze.lua publishes
 * on the board's change channel, and that script's call and reply. Pure: the
 * gateway sends the call (ops/gw_freeze.c) and follows the events
 * (fanout/gw_frozen.c).
 *
 * The audience of a frozen board sees it as of seq `shown` (the freeze's seq,
 * then the end of each reveal); an admin's `live` view sees the live board.
 * Every change of the state (freeze, reveal, unfreeze, reset) bumps the
 * freeze version, so a gateway that hears of the state twice (a read's
 * reply and an event, which travel on different connections) keeps the
 * newer. */
#ifndef RC_FREEZE_H
#define RC_FREEZE_H

#include <stddef.h>
#include <stdint.h>

#include "rc_keys.h"
#include "rc_write_args.h" /* struct rc_reply_item */

struct rc_freeze {
    int frozen;          /* 1 while frozen */
    int64_t seq;         /* S: frozen at (0 when not frozen) */
    int64_t shown;       /* R: what the audience sees (0 when not frozen) */
    int64_t version;     /* the freeze version (0: never frozen) */
};

/* 1 when `heard` is newer than `have` (a later version), else 0. */
int rc_freeze_newer(const struct rc_freeze *have, const struct rc_freeze *heard);

/* 1 when two states show the audience the same thing (both live, or both
 * frozen at the same S and shown R). */
int rc_freeze_same(const struct rc_freeze *a, const struct rc_freeze *b);

enum rc_freeze_ctl { RC_CTL_FREEZE, RC_CTL_REVEAL, RC_CTL_UNFREEZE };

/* A control event of lua/freeze.lua (header comment there), decoded. */
struct rc_freeze_event {
    enum rc_freeze_ctl kind;
    struct rc_freeze state; /* after the event (unfreeze: frozen 0, seq/shown 0) */
    int64_t from;           /* reveal, unfreeze: what the audience saw before */
    int64_t to;             /* reveal: the new shown; unfreeze: the live seq */
    int64_t skipped;        /* reveal: changes merged into one step (a gap in the log) */
};

/* 1 when text[0..len) is a control event (it starts with {"ctl":), else 0:
 * a change event (core/rc_event.h). */
int rc_freeze_is_event(const char *text, size_t len);

/* Parses a control event. Returns 0, or RC_E_BAD_REQUEST (malformed). */
int rc_freeze_event_parse(const char *text, size_t len, struct rc_freeze_event *ev);

/* ---- lua/freeze.lua's call and reply -------------------------------- */

#define RC_FREEZE_NKEYS 7 /* z seq log ch epoch frz fz */
#define RC_FREEZE_NARGV 3 /* action steps publish */
#define RC_FREEZE_STEPS_ALL (-1)

enum rc_freeze_action { RC_FREEZE_DO_FREEZE, RC_FREEZE_DO_REVEAL, RC_FREEZE_DO_STATE };

struct rc_freeze_args {
    const char *words[RC_FREEZE_NKEYS + RC_FREEZE_NARGV]; /* KEYS then ARGV */
    size_t lens[RC_FREEZE_NKEYS + RC_FREEZE_NARGV];
    char keys[RC_FREEZE_NKEYS][RC_KEY_MAX];
    char steps[24];
};

/* The call for `action` on board `board` in period `period` ("" all-time);
 * steps (reveal) 1.. or RC_FREEZE_STEPS_ALL; sharded: 1 on a cluster
 * (SPUBLISH). Returns 0, RC_E_BAD_REQUEST (steps out of range) or
 * RC_E_INTERNAL (a key too long). */
int rc_freeze_args_build(const char *board, const char *period, enum rc_freeze_action action, int64_t steps,
                         int sharded, struct rc_freeze_args *out);

struct rc_freeze_result {
    struct rc_freeze state; /* after the call */
    int64_t seq;            /* the live seq */
    int64_t skipped;
    int changed;            /* the call changed the state (an event went out) */
};

/* Decodes the reply items[0..n). Returns 0 or RC_E_INTERNAL (another shape). */
int rc_freeze_result_parse(const struct rc_reply_item *items, size_t n, struct rc_freeze_result *res);

/* Hidden changes: the live seq minus what the audience sees (0 when not frozen). */
int64_t rc_freeze_pending(const struct rc_freeze *f, int64_t live_seq);

#endif
